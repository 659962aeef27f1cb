"""Where a game's units run: the :class:`Executor` contract, the local executor, and the plug-in registry
through which a higher layer offers others without this package importing it.

An executor takes JSON units (:mod:`games.units`) and yields ``(index, result)`` as each one finishes, in any
order. ``local`` plays them in this process or a process pool; ``celery`` (registered by the site package,
``leaderboard.gameplay``, under the entry-point group :data:`ENTRY_POINTS`) sends them as tasks to the site's
Celery workers. The layer rule keeps ``games`` free of Celery and of the site: it only looks the backend up by
name when the user asks for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from importlib.metadata import entry_points
from typing import Any, Protocol

from games.units import play_unit

#: The entry-point group where packages register game backends: ``name = "module:factory"``; the factory takes
#: the command line's backend options as keyword arguments and returns an :class:`Executor`.
ENTRY_POINTS = "leaderboard_lab.game_backends"

Unit = dict[str, Any]


class BackendError(RuntimeError):
    """A backend cannot be found or cannot play a unit (a worker failed it, the broker is unreachable)."""


class Executor(Protocol):
    """Plays units somewhere; ``map_unordered`` yields ``(index into units, result)`` as each finishes."""

    name: str

    def map_unordered(self, units: Sequence[Unit]) -> Iterator[tuple[int, Unit]]: ...

    def close(self) -> None: ...


def _wire(unit: Unit) -> Unit:
    """The unit after a JSON round trip: what a remote worker would receive."""
    return json.loads(json.dumps(unit))  # type: ignore[no-any-return]


def _play_on_the_wire(unit: Unit) -> Unit:
    """Play a unit exactly as a worker would: JSON in, JSON out."""
    return json.loads(json.dumps(play_unit(_wire(unit))))  # type: ignore[no-any-return]


class LocalExecutor:
    """Units in this process (``jobs=1``) or in ``jobs`` worker processes, through JSON as on the wire."""

    name = "local"

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)
        self._pool: ProcessPoolExecutor | None = None

    def map_unordered(self, units: Sequence[Unit]) -> Iterator[tuple[int, Unit]]:
        if self.jobs == 1:
            for index, unit in enumerate(units):
                yield index, _play_on_the_wire(unit)
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.jobs)
        futures: dict[Future[Unit], int] = {
            self._pool.submit(_play_on_the_wire, unit): index for index, unit in enumerate(units)
        }
        try:
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    yield futures.pop(future), future.result()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


def backends() -> dict[str, Callable[..., Executor]]:
    """Every backend by name: ``local`` and whatever installed packages register under :data:`ENTRY_POINTS`."""
    found: dict[str, Callable[..., Executor]] = {"local": lambda jobs=1, **_options: LocalExecutor(jobs)}
    for point in entry_points(group=ENTRY_POINTS):
        found.setdefault(point.name, _loader(point))
    return found


def _loader(point: Any) -> Callable[..., Executor]:
    def make(**options: Any) -> Executor:
        return point.load()(**options)  # type: ignore[no-any-return]

    return make


def make_executor(name: str, **options: Any) -> Executor:
    """The backend ``name`` built with ``options`` (``jobs``, ``broker``, ``queue``, … as each accepts)."""
    available = backends()
    if name not in available:
        raise BackendError(
            f"no game backend {name!r}; available: {', '.join(sorted(available))} (backends other than local are "
            f"registered by installed packages under the entry-point group {ENTRY_POINTS!r}: reinstall the project "
            "with pip install -e .)"
        )
    return available[name](**options)
