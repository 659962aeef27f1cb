"""Record ``auto``'s outcome on every cell of the golden grid: ``python -m tests.attacks.golden.record``.

Rewrites ``tests/attacks/golden/auto_outcomes.json`` (sorted, one cell per line) with a header naming the commit
of the checkout the ``attacks`` package was imported from, and prints the total recording time. Run it from the
checkout to record (``cd <checkout> && PYTHONPATH=<checkout> python -m tests.attacks.golden.record``): it refuses
to record when ``attacks`` comes from another tree than this file's (an editable install of another checkout).
``--jobs N`` plays the cells in N processes (default 2); ``--only SUBSTRING`` plays the matching cells and prints
them without writing the file.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from tests.attacks.golden.grid import CELLS, Cell, play

OUTCOMES = Path(__file__).with_name("auto_outcomes.json")
ROOT = Path(__file__).resolve().parents[3]


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def header() -> dict[str, Any]:
    """The commit recorded at (and whether tracked files differed from it), and the versions that matter."""
    import numpy

    commit = _git("rev-parse", "HEAD")
    changed = [line[3:] for line in _git("status", "--porcelain", "--untracked-files=no").splitlines()]
    return {
        "commit": commit,
        "short": commit[:7],
        "tracked_changes": changed,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "how": "python -m tests.attacks.golden.record (auto, seed=0, on the cells of tests/attacks/golden/grid.py)",
    }


def _play(cell: Cell) -> tuple[str, dict[str, Any], float]:
    started = time.perf_counter()
    outcome = play(cell)
    return cell.id, outcome, time.perf_counter() - started


def render(head: dict[str, Any], outcomes: dict[str, dict[str, Any]]) -> str:
    """The file's text: the header, then one line per cell, sorted by id."""
    lines = ["{", f'  "header": {json.dumps(head, sort_keys=True)},', '  "cells": {']
    ids = sorted(outcomes)
    for i, cell_id in enumerate(ids):
        comma = "," if i < len(ids) - 1 else ""
        lines.append(f"    {json.dumps(cell_id)}: {json.dumps(outcomes[cell_id], sort_keys=True)}{comma}")
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def load() -> dict[str, Any]:
    """The recorded file: ``{"header": {...}, "cells": {id: outcome}}``."""
    return dict(json.loads(OUTCOMES.read_text()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default=None)
    options = parser.parse_args(argv)
    import attacks

    source = Path(attacks.__file__).resolve()
    if ROOT not in source.parents:
        print(f"attacks is imported from {source}, not from {ROOT}: set PYTHONPATH={ROOT}", file=sys.stderr)
        return 2
    cells = [cell for cell in CELLS if options.only is None or options.only in cell.id]
    print(f"attacks from {source}; {len(cells)} cell(s), {options.jobs} job(s)", flush=True)
    started = time.perf_counter()
    outcomes: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    with ProcessPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        for cell_id, outcome, spent in pool.map(_play, cells):
            outcomes[cell_id], seconds[cell_id] = outcome, spent
            print(f"{spent:6.2f} s  {cell_id}: {outcome['attack']}"
                  f"{'' if outcome['fallback'] is None else ' → ' + str(outcome['fallback'])}, "
                  f"{outcome['right']}/{outcome['n']} right, {outcome['exact']} exact "
                  f"({outcome['wrong_exact']} wrong), {outcome['queries']} queries", flush=True)
    total = time.perf_counter() - started
    slowest = max(seconds, key=lambda cell_id: seconds[cell_id]) if seconds else None
    print(f"recorded {len(outcomes)} cell(s) in {total:.1f} s (cells: {sum(seconds.values()):.1f} s; slowest "
          f"{slowest} {seconds.get(slowest or '', 0.0):.2f} s)")
    if options.only is None:
        head = header()
        OUTCOMES.write_text(render(head, outcomes))
        print(f"wrote {OUTCOMES} at {head['short']}" + (f" (tracked changes: {head['tracked_changes']})"
                                                        if head["tracked_changes"] else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
