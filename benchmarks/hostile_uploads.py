"""Hostile uploads against the scoring core's CSV parser: wall time (median of 5) and peak traced memory, next
to a valid file of the same competition measured in the same run.

    .venv/bin/python benchmarks/hostile_uploads.py [--rows 25000]

Each hostile body is the valid file followed by junk of the named size: mixed line widths (which once made
the parser split every line before naming the first bad one), a body of newlines between two rows, the
valid rows repeated. Every one must be rejected naming the first line past the valid rows.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
import tracemalloc

from scoring import SubmissionError, SubmissionFormat
from scoring.parsing import parse_submission_csv


def measure(body: bytes, fmt: SubmissionFormat) -> tuple[float, float, str]:
    """Median seconds over 5 parses, peak traced MB of one parse, and the outcome."""
    times = []
    outcome = "accepted"
    for _ in range(5):
        started = time.perf_counter()
        try:
            parse_submission_csv(body, fmt)
        except SubmissionError as exc:
            outcome = f"line {exc.line}: {str(exc)[:40]}"
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    with contextlib.suppress(SubmissionError):
        parse_submission_csv(body, fmt)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak / 1e6, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=25_000)
    args = parser.parse_args()
    ids = tuple(f"{i:06d}" for i in range(args.rows))
    fmt = SubmissionFormat(ids, {k: i for i, k in enumerate(ids)}, 2, max_bytes=50 * 1024 * 1024)
    valid = "id,target\n" + "".join(f"{i},{(k % 997) / 997:.6f}\n" for k, i in enumerate(ids))
    first = f"{ids[0]},0.5\n"
    cases = {"valid file": valid.encode()}
    for target in (5, 35):
        size = target * 1_000_000
        cases[f"mixed widths, {target} MB"] = (valid + "x\n" + "x,y,z\n" * (size // 8)).encode()
        cases[f"newlines, {target} MB"] = (valid + first + "\n" * size + first).encode()
        cases[f"repeated rows, {target} MB"] = (valid + first * (size // len(first))).encode()
    print(f"CSV parse of hostile uploads, {args.rows:,}-row competition (median of 5; peak traced memory)")
    print(f"  {'body':<26} {'MB':>6} {'seconds':>8} {'peak MB':>8} {'peak/size':>9}  outcome")
    for name, body in cases.items():
        seconds, peak, outcome = measure(body, fmt)
        megabytes = len(body) / 1e6
        print(f"  {name:<26} {megabytes:>6.1f} {seconds:>8.3f} {peak:>8.1f} {peak / megabytes:>9.2f}  {outcome}")


if __name__ == "__main__":
    main()
