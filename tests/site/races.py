"""Threads that start together at a barrier, for the race tests (each closes its own database connection)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from django.db import connections


def race(jobs: Sequence[Callable[[], str]], *, outcomes: Mapping[type[BaseException], str] | None = None) -> list[str]:
    """Run ``jobs`` in as many threads, released at once; each job's outcome, in the order they finished: what it
    returned, the name ``outcomes`` gives the exception it raised, else ``"ExceptionName: message"``."""
    known = dict(outcomes or {})
    barrier = threading.Barrier(len(jobs))
    results: list[str] = []
    lock = threading.Lock()

    def run(job: Callable[[], str]) -> None:
        outcome: str
        try:
            barrier.wait()
            outcome = job()
        except tuple(known) as exc:
            outcome = next(name for kind, name in known.items() if isinstance(exc, kind))
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
