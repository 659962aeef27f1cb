"""Cells per second of a game: the local backend (1 and 2 processes) beside the celery backend with 1 and 2 real
Celery workers on the real Redis broker, measured in the same run, and whether the reports are identical.

Celery with 1 worker against local ``--jobs 1`` is the cost of going through the broker (per unit: the
message, the result store, the journal); 2 workers against 1 is how the work spreads; ``--chunk 4`` sends four
cells a task, paying that cost once for four. On a shared machine read
them with the load average printed beside them: two workers cannot beat one when the cores are already busy.

Every configuration plays the same game ``--repeats`` times; the figure is the median. The default games are the
shipped ``quick`` (56 cells of tens of milliseconds: the broker's per-unit cost shows) and ``heavy`` (16 cells of
about a second on 5,000 rows: where spreading pays). Each configuration plays once untimed first, so what every
process caches for itself (the honest populations, the attacks' design tables) is warm: the figures are about
playing cells, not about a process's first cell.

    .venv/bin/python -m benchmarks.games_celery [--game quick heavy] [--repeats 3] [--workers 1 2] [--chunk 4]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from games import load_game, parse_game, run_game
from games.cli import resolve_gamefile
from games.distributed import run_units
from games.executors import make_executor
from games.gamefile import GameSpec
from games.population import load_population
from games.report import write_report
from games.runner import GameResult
from stack.processes import (
    REDIS_URL,
    celery_worker_argv,
    process_environment,
    redis_available,
    spawned,
    unique_queue,
)


def without_wall_times(result: GameResult, out: Path) -> dict[str, Any]:
    document = json.loads(write_report(result, out)["json"].read_text())
    document.pop("seconds")
    for row in [*document["cells"], *document["summary"]]:
        row.pop("seconds")
    return document  # type: ignore[no-any-return]


def timed(play: Callable[[], GameResult], repeats: int) -> tuple[float, GameResult]:
    """The median wall time of ``repeats`` plays after one untimed play, and the last result.

    The untimed play warms what each process caches for itself (the populations, the attacks' design tables:
    ~6 s for ``capacity``'s on its first cell), so every backend is timed warm."""
    play()
    seconds = []
    result = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = play()
        seconds.append(time.perf_counter() - started)
    assert result is not None
    return statistics.median(seconds), result


@contextlib.contextmanager
def celery_workers(count: int, logs: Path) -> Any:
    """``count`` real solo-pool Celery workers on a queue of their own; yields the queue once all are ready."""
    queue = unique_queue("leaderboard-games-bench")
    env = process_environment(f"sqlite:///{logs / 'bench.sqlite3'}", queue)
    with contextlib.ExitStack() as stack:
        paths = [logs / f"worker-{index}.log" for index in range(count)]
        for index, path in enumerate(paths):
            stack.enter_context(spawned(celery_worker_argv(env, name=f"games-bench{index}"), env, path))
        deadline = time.monotonic() + 120
        while not all(path.exists() and " ready." in path.read_text() for path in paths):
            if time.monotonic() > deadline:
                raise SystemExit(f"the workers did not start; see {logs}")
            time.sleep(0.2)
        yield queue


#: Cells of about a second (5,000 rows): where spreading pays, the broker's per-unit cost being milliseconds.
HEAVY = """
[game]
name = "heavy"
description = "Heavier cells: 5,000 balanced rows, two defenses, two attacks, four seeds."
seeds = [0, 1, 2, 3]

[[datasets]]
name = "balanced-5000"
source = "balanced"
n_rows = 5000

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "rounding-5"
chain = [{name = "rounding", decimals = 5}]

[[attacks]]
name = "capacity"

[[attacks]]
name = "boosting-300"
attack = "boosting"
params = {budget = 300}
"""


def measure(spec: GameSpec, repeats: int, workers: list[int], chunk: int, tmp: Path) -> bool:
    """Print one game's table; whether every backend's report was identical to the baseline's."""
    load_before = os.getloadavg()[0]
    for dataset in spec.datasets:
        load_population(dataset)
    rows: list[tuple[str, float]] = []
    baseline_seconds, baseline = timed(lambda: run_game(spec), repeats)
    reference = without_wall_times(baseline, tmp / "local-1")
    rows.append(("local, --jobs 1 (baseline)", baseline_seconds))
    seconds, result = timed(lambda: run_game(spec, jobs=2), repeats)
    rows.append(("local, --jobs 2", seconds))
    identical = {"local, --jobs 2": without_wall_times(result, tmp / "local-2") == reference}
    runs = [(count, 1) for count in workers] + ([(max(workers), chunk)] if chunk > 1 else [])
    for count, size in runs:
        with celery_workers(count, tmp / f"celery-{count}-{size}") as queue:
            executor = make_executor("celery", broker=REDIS_URL, queue=queue, chunk=size, stall_timeout=600)
            try:
                seconds, result = timed(functools.partial(run_units, spec, executor), repeats)
            finally:
                executor.close()
        label = f"celery, {count} worker{'s' if count > 1 else ''}" + (f", --chunk {size}" if size > 1 else "")
        rows.append((label, seconds))
        identical[label] = without_wall_times(result, tmp / f"celery-{count}-{size}") == reference
    print(f"\ngame {spec.name!r}: {spec.n_cells} cells, median of {repeats} run(s), after a warm-up run; "
          f"{os.cpu_count()} cores, load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after\n")
    print("| backend | seconds | cells/s | vs local --jobs 1 | report identical to local --jobs 1 |")
    print("|---|---:|---:|---:|---|")
    for name, seconds in rows:
        same = "(the reference)" if name.startswith("local, --jobs 1") else ("yes" if identical[name] else "NO")
        print(f"| {name} | {seconds:.2f} | {spec.n_cells / seconds:.1f} | {baseline_seconds / seconds:.2f}× | {same} |")
    return all(identical.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", nargs="+", default=["quick", "heavy"],
                        help="game files or shipped names, or 'heavy' (5,000 rows, in this script); default both")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="celery runs with this many workers each (default: 1, then 2)")
    parser.add_argument("--chunk", type=int, default=4,
                        help="one more celery run, with the most workers and this many cells a task (1: none)")
    args = parser.parse_args(argv)
    if not redis_available():
        raise SystemExit(f"this benchmark needs Redis at {REDIS_URL}")
    same = True
    for name in args.game:
        spec = parse_game(HEAVY, source="heavy") if name == "heavy" else load_game(resolve_gamefile(name))
        with tempfile.TemporaryDirectory() as scratch:
            same = measure(spec, args.repeats, args.workers, args.chunk, Path(scratch)) and same
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
