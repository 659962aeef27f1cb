"""Scoring-core throughput on N = 25,000 binary rows from CSV bytes, against a bare numpy baseline.

Ours: parse and validate the upload (ids, columns, finiteness, range), then score the public and private
splits and round to 5 decimals — what the worker does per submission. Baseline, in the same run: numpy
parses the two columns and computes the clipped log loss of all rows, with no validation at all.
Prints the median submissions/s of each over repeated runs and their ratio (issue aim: ≤ 2×).

    .venv/bin/python -m benchmarks.scoring_core [--rows 25000] [--repeats 15]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

import numpy as np

from scoring import HiddenTestSet, ScoringSpec, evaluate, parse, public_split_mask


def make_case(n_rows: int, seed: int = 0) -> tuple[ScoringSpec, bytes]:
    rng = np.random.default_rng(seed)
    ids = tuple(f"{i:06d}" for i in range(n_rows))
    hidden = HiddenTestSet(ids, rng.integers(0, 2, n_rows), 2, public_split_mask(n_rows, 0.3, seed))
    values = rng.random(n_rows)
    upload = ("id,target\n" + "\n".join(f"{i},{v:.6f}" for i, v in zip(ids, values, strict=True)) + "\n").encode()
    return ScoringSpec(hidden), upload


def ours(spec: ScoringSpec, upload: bytes) -> float:
    result = evaluate(spec, parse(spec, upload), submission_id=1)
    return float(result.results["public"].raw)


def baseline(labels: np.ndarray, upload: bytes) -> float:
    table = np.loadtxt(io.BytesIO(upload), delimiter=",", skiprows=1, dtype=np.float64)
    p = np.clip(table[:, 1], 1e-15, 1 - 1e-15)
    return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def rate(fn: Callable[[], float], repeats: int) -> tuple[float, list[float]]:
    """Median submissions/s over ``repeats`` timed runs of a batch sized to take ~0.2 s."""
    fn()
    started = time.perf_counter()
    fn()
    batch = max(1, int(0.2 / max(time.perf_counter() - started, 1e-6)))
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        rates.append(batch / (time.perf_counter() - t0))
    return statistics.median(rates), rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=25_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    spec, upload = make_case(args.rows)
    labels = spec.hidden.labels
    # Interleave the two measurements so machine noise hits both alike.
    ours_rates: list[float] = []
    base_rates: list[float] = []
    for _ in range(3):
        ours_rates.append(rate(lambda: ours(spec, upload), max(1, args.repeats // 3))[0])
        base_rates.append(rate(lambda: baseline(labels, upload), max(1, args.repeats // 3))[0])
    ours_median, base_median = statistics.median(ours_rates), statistics.median(base_rates)
    print(f"scoring core, N = {args.rows:,} binary rows, {len(upload) / 1e6:.2f} MB CSV")
    print(f"  ours (parse + validate + public/private + release): {ours_median:8.1f} submissions/s")
    print(f"  baseline (np.loadtxt + clipped log loss):            {base_median:8.1f} submissions/s")
    print(f"  ratio baseline/ours: {base_median / ours_median:.2f}x  (aim: <= 2x)")


if __name__ == "__main__":
    main()
