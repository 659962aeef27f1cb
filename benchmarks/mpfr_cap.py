"""The scoring time of one submission at the MPFR cap, before and after the work limit (median of 3).

Before the limit, ``mpfr:1000000`` (the largest precision ``Arithmetic.parse`` takes) scored a 400-row binary
log-loss submission for as long as it took (``score_mpfr`` over every row: the worker's time). After it,
``scoring.pipeline.evaluate`` refuses the same submission from its shape before any label is read
(``ScoringWorkExceeded``), and the most a competition of these rows may ask for (the largest φ the estimate lets
through, printed by the message) is timed too, to check the estimate against the clock. ``--table`` measures the
per-logarithm seconds that ``scoring.arithmetic.LOG_SECONDS`` holds (rounded up there).

    .venv/bin/python -m benchmarks.mpfr_cap [--rows 400] [--bits 1000000] [--repeats 3] [--table]

No timing is asserted in the tests; the limit's behaviour is (``tests/scoring/test_scoring_work.py``).
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable

import numpy as np

from scoring import HiddenTestSet, ScoringSpec, bignum, evaluate
from scoring.arithmetic import LOG_SECONDS, MAX_SCORING_SECONDS, Arithmetic, ScoringWorkExceeded, log_seconds
from scoring.metrics import get_metric, score_mpfr
from scoring.parsing import ParsedPredictions


def median_seconds(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        print(f"  run {len(times)}: {times[-1]:.4g} s", flush=True)
    return statistics.median(times)


def submission(rows: int) -> tuple[np.ndarray, ParsedPredictions]:
    rng = np.random.default_rng(0)
    values = rng.uniform(0.05, 0.95, rows)
    texts = tuple((repr(float(v)),) for v in values)
    return rng.integers(0, 2, rows), ParsedPredictions(values, texts)


def spec_for(labels: np.ndarray, bits: int) -> ScoringSpec:
    mask = np.zeros(len(labels), dtype=bool)
    mask[: len(labels) // 2] = True
    hidden = HiddenTestSet([str(i) for i in range(len(labels))], labels, 2, mask)
    return ScoringSpec(hidden=hidden, arithmetic=Arithmetic(bits), decimals=None)


def table() -> None:
    print("bits        measured s/log   LOG_SECONDS estimate")
    for bits, _ in LOG_SECONDS:
        with bignum.local_precision(bits):
            x = bignum.mpfr("0.3000001")
            start, n = time.perf_counter(), 0
            while time.perf_counter() - start < 1.0 or n < 2:
                bignum.gmpy2.log(x + n * 1e-9)
                n += 1
            print(f"{bits:>9,}   {(time.perf_counter() - start) / n:12.3g}   {log_seconds(bits):12.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--bits", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--table", action="store_true", help="measure the per-logarithm seconds instead")
    args = parser.parse_args()
    if args.table:
        table()
        return
    labels, parsed = submission(args.rows)
    metric = get_metric("binary_logloss")
    print(f"{args.rows} rows, binary log loss, mpfr:{args.bits}, median of {args.repeats}; "
          f"limit {MAX_SCORING_SECONDS:g} s (estimated)", flush=True)
    before = median_seconds(lambda: score_mpfr(metric, parsed.texts or (), labels, 1e-15, args.bits, binary=True),
                            args.repeats)
    print(f"before (scored whatever it cost):     {before:10.2f} s")
    spec = spec_for(labels, args.bits)
    message = ""

    def refused() -> None:
        nonlocal message
        try:
            evaluate(spec, parsed, submission_id=1)
        except ScoringWorkExceeded as exc:
            message = str(exc)

    after = median_seconds(refused, args.repeats)
    print(f"after (refused before any label):     {after:10.6f} s")
    print(f"  message: {message or '(scored: under the limit)'}")
    fits = re.search(r"at most mpfr:(\d+)", message)
    if fits:
        bits = int(fits.group(1))
        at_cap = spec_for(labels, bits)
        seconds = median_seconds(lambda: evaluate(at_cap, parsed, submission_id=1), args.repeats)
        estimate = Arithmetic(bits).scoring_seconds(args.rows)
        print(f"after, the most these rows may ask (mpfr:{bits}): {seconds:8.2f} s (estimate {estimate:.1f} s)")


if __name__ == "__main__":
    main()
