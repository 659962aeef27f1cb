"""Resident memory a worker holds for a competition's hidden ids, step by step, here and in another checkout.

    .venv/bin/python -m benchmarks.ids_held [--rows 1000000 10000000] [--before TREE]

The ids (``r0``..) are stored as the site stores them (a JSON list); a fresh process reads them as the worker
does (``competition_scoring_spec``: a tuple of ``str`` before, an Arrow-backed ``IdArray`` now), then builds
what uploads make it build: the CSV fast path's ids, the hash table for rows in another order, and the index
the exact path and JSON uploads look ids up in. Each figure is the resident set above the process's before the
stored text was read (the text itself freed by then; RSS, so what the worker keeps, not a transient peak).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def child(path: str, n_rows: int) -> None:
    import numpy as np

    import scoring
    from scoring import HiddenTestSet, ScoringSpec

    gc.collect()
    base = rss_mb()
    text = Path(path).read_bytes()
    steps = []
    # Decided by the files of the checkout on PYTHONPATH (the editable install would find this one's module).
    if (Path(scoring.__file__).parent / "ids.py").exists():
        from scoring.ids import ids_from_json

        ids: object = ids_from_json(text)
    else:
        ids = tuple(json.loads(text))
    del text
    gc.collect()
    hidden = HiddenTestSet(ids, np.zeros(n_rows, dtype=np.int64), 2, np.zeros(n_rows, dtype=bool))  # type: ignore[arg-type]
    fmt = ScoringSpec(hidden).submission_format
    steps.append((f"ids read ({type(ids).__name__})", rss_mb() - base))
    assert fmt.fast_ids is not None
    steps.append(("+ the CSV fast path's ids", rss_mb() - base))
    fmt.fast_ids.table  # noqa: B018
    steps.append(("+ the table for rows in another order", rss_mb() - base))
    hidden.id_index.get("r5")
    steps.append(("+ the exact path's / JSON's index", rss_mb() - base))
    print(json.dumps(steps), flush=True)
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--before", help="also measure this checkout (e.g. main before a change)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
    trees = [("now", Path.cwd())] + ([("before", Path(args.before).resolve())] if args.before else [])
    print("Resident memory held for the hidden ids (MB above the process before reading them)")
    for n_rows in args.rows:
        with tempfile.TemporaryDirectory(prefix="lbl-ids-") as tmp:
            path = Path(tmp) / "ids.json"
            path.write_text(json.dumps([f"r{i}" for i in range(n_rows)]))
            results = {}
            for name, tree in trees:
                done = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--child", str(path), str(n_rows)],
                    capture_output=True, text=True, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True,
                )
                results[name] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"\nN = {n_rows:,}")
            print(f"  {'step':<42} " + " ".join(f"{name:>16}" for name, _ in trees))
            for k in range(len(results["now"])):
                cells = " ".join(f"{results[name][k][1]:>10.0f} MB   " for name, _ in trees)
                print(f"  {results['now'][k][0].split(' (')[0]:<42} {cells}")


if __name__ == "__main__":
    main()
