"""The ``celery`` game backend: ``leaderboard-game run GAME --out DIR --backend celery`` sends each unit of the
game as a task to the site's Celery workers and collects the results from the result store.

This side needs only the broker: it builds a bare Celery client (no Django, no site settings) that publishes
the task by name (:data:`leaderboard.gameplay.tasks.TASK`) in JSON, and accepts only JSON back. A bounded
window of tasks (``chunk`` units each) is in flight at a time, so an interrupted command leaves at most ``window``
tasks behind and the queue never holds the whole matrix; results are polled for every task in flight with one
``MGET``.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from celery import Celery
from celery.backends.base import BaseKeyValueStoreBackend

from games.executors import BackendError, Unit

#: Kept equal to ``leaderboard.gameplay.tasks.TASK`` (that module needs Django; this one must not).
TASK = "leaderboard.gameplay.tasks.play_game_units"
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
#: Failures that playing again cannot mend (the unit itself is malformed): not retried.
PERMANENT = {"GameFileError", "TypeError"}
DEFAULT_QUEUE = "leaderboard"


def client(broker: str) -> Celery:
    """A Celery client of ``broker`` that speaks JSON only (the broker is also the result store, as on the site)."""
    app = Celery("leaderboard-game", broker=broker, backend=broker, set_as_current=False)
    app.conf.update(
        task_serializer="json", result_serializer="json", accept_content=["json"], result_accept_content=["json"],
        broker_connection_timeout=5, broker_connection_retry_on_startup=True,
    )
    return app


class CeleryExecutor:
    """Units as tasks on ``queue`` of ``broker``, ``chunk`` units a task, at most ``window`` tasks in flight; a
    failed task is sent again up to ``retries`` times, then the run stops with :class:`BackendError` (the journal
    keeps what finished), as it does when no task finishes for ``stall_timeout`` seconds (``None``: wait for ever,
    as a long cell may); a malformed unit (:data:`PERMANENT`) is not retried. ``chunk`` > 1 pays the broker's
    per-task cost (milliseconds: the message, the result store, the worker's bookkeeping) once for several fast
    cells, at the price of a coarser spread."""

    name = "celery"

    def __init__(
        self, broker: str, queue: str, *, chunk: int = 1, window: int = 64, poll: float = 0.02, retries: int = 1,
        stall_timeout: float | None = None,
    ) -> None:
        self.broker, self.queue, self.window, self.poll, self.retries = broker, queue, max(1, window), poll, retries
        self.chunk, self.stall_timeout = max(1, chunk), stall_timeout
        self.app = client(broker)

    def map_unordered(self, units: Sequence[Unit]) -> Iterator[tuple[int, Unit]]:
        indices = range(len(units))
        batches = [list(indices[start:start + self.chunk]) for start in range(0, len(units), self.chunk)]
        waiting = batches[::-1]  # a stack: the next batch to send is at the end
        in_flight: dict[str, tuple[list[int], int]] = {}  # task id -> (unit indices, attempt)
        backend = self.app.backend
        if not isinstance(backend, BaseKeyValueStoreBackend):
            raise BackendError(f"the result store of {self.broker} is not a key-value store (Redis) to poll")
        last = time.monotonic()
        try:
            while waiting or in_flight:
                if self.stall_timeout is not None and time.monotonic() - last > self.stall_timeout:
                    raise BackendError(f"no task finished in {self.stall_timeout:g} s: is a worker consuming queue "
                                       f"{self.queue!r} of {self.broker}?")
                while waiting and len(in_flight) < self.window:
                    batch = waiting.pop()
                    in_flight[self._send([units[i] for i in batch])] = (batch, 0)
                # One MGET over every task in flight; it naps ``poll`` when nothing is ready yet.
                for task_id, meta in backend.get_many(list(in_flight), interval=self.poll, max_iterations=1):
                    batch, attempt = in_flight.pop(task_id)
                    last = time.monotonic()
                    backend.forget(task_id)  # from the store and from get_many's cache: we keep our own
                    results = meta["result"]
                    if meta["status"] == "SUCCESS" and isinstance(results, list) and len(results) == len(batch):
                        yield from zip(batch, results, strict=True)
                    elif attempt < self.retries and type(results).__name__ not in PERMANENT:
                        in_flight[self._send([units[i] for i in batch])] = (batch, attempt + 1)
                    else:
                        where = ", ".join(f"{i + 1} ({_describe(units[i])})" for i in batch)
                        raise BackendError(f"a worker failed unit(s) {where} {attempt + 1} time(s): {results!r}")
        except BackendError:
            self._revoke(in_flight)
            raise
        except Exception as exc:  # the broker or the result store: name it rather than show a traceback
            self._revoke(in_flight)
            raise BackendError(f"the celery backend failed (broker {self.broker}, queue {self.queue!r}): "
                               f"{type(exc).__name__}: {exc}") from exc
        except BaseException:  # Ctrl-C, or the consumer stopped early
            self._revoke(in_flight)
            raise

    def _send(self, batch: list[Unit]) -> str:
        task_id = uuid.uuid4().hex
        self.app.send_task(TASK, args=[batch], queue=self.queue, task_id=task_id, serializer="json")
        return task_id

    def _revoke(self, in_flight: dict[str, tuple[list[int], int]]) -> None:
        """Best effort: the units still queued need not be played (the journal has what finished)."""
        if in_flight:
            with contextlib.suppress(Exception):  # the broker may be what failed
                self.app.control.revoke(list(in_flight))

    def close(self) -> None:
        self.app.close()


def _describe(unit: Unit) -> str:
    where = " · ".join(str(unit.get(key)) for key in ("dataset", "defense", "attack") if key in unit)
    return f"{unit.get('kind')} {where} · seed {unit.get('seed')}"


def make(*, broker: str | None = None, queue: str | None = None, chunk: int = 1, window: int = 64,
         stall_timeout: float | None = None, jobs: int = 1, **_options: Any) -> CeleryExecutor:
    """The entry point ``leaderboard_lab.game_backends: celery``: the site's broker and queue from the command
    line, else the site's own environment (``REDIS_URL``, ``LEADERBOARD_CELERY_QUEUE``), else its defaults.
    ``jobs`` is the local backend's; here the workers decide how many units run at once."""
    return CeleryExecutor(
        broker or os.environ.get("REDIS_URL") or DEFAULT_BROKER,
        queue or os.environ.get("LEADERBOARD_CELERY_QUEUE") or DEFAULT_QUEUE,
        chunk=chunk,
        window=window,
        stall_timeout=stall_timeout,
    )

