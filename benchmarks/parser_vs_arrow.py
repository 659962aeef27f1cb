"""The scoring core's CSV parser against pyarrow's CSV reader on the same bytes, in the same run: valid files
(1,000,000 rows in the sample submission's order and shuffled, ~5 MB, ~50 MB = the upload limit) and hostile
bodies (a valid 25,000-row file followed by junk up to 5 MB or 50 MB).

    .venv/bin/python -m benchmarks.parser_vs_arrow [--repeats 7] [--quick]

Time: the median of ``--repeats`` runs of each (up to 5x as many for bodies under 25 MB), ours and Arrow's
interleaved so machine noise hits both alike.
Ours (``scoring.parsing.parse_submission_csv``) checks every rule of the format and aligns the rows to the
hidden ids, naming the first bad line of a rejected file. Arrow's reader is ``pyarrow.csv.read_csv`` with the
column types given (id: string, values: float64) and its default threads, the ratio's reference: it reads, it
validates nothing. "1-thr" is the same on one thread, as our fast path reads; "exact" is our pure-Python path
alone (the parser before the Arrow fast path; median of the first 3 runs).
Memory, measured once per case in a fresh process: peak bytes traced by ``tracemalloc`` (Python and numpy)
plus the peak of Arrow's memory pool, above what the process held before the parse. A competition's hidden
ids are prepared for the fast path once per process (reported once, not in the parse times).

Hostile bodies (issue 9): mixed line widths (which once made the parser split every line before naming the
first bad one), a body of newlines between two rows, the valid rows repeated. Each must be rejected naming
the first line past the valid rows (line 25,002).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from scoring import SubmissionError, SubmissionFormat
from scoring.parsing import _parse_csv_exact, parse_submission_csv

LIMIT = 50 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    name: str
    n_ids: int  # the competition's size: ids "0" .. str(n_ids - 1)
    body: bytes


def competition(n_ids: int) -> SubmissionFormat:
    ids = tuple(map(str, range(n_ids)))
    return SubmissionFormat(ids, {k: i for i, k in enumerate(ids)}, 2, max_bytes=LIMIT)


def valid_body(n_rows: int, *, shuffled: bool, seed: int = 0) -> bytes:
    """``id,target`` and ``n_rows`` rows with full-precision values (``repr``, as pandas writes them)."""
    rng = np.random.default_rng(seed)
    values = rng.random(n_rows).tolist()
    order = rng.permutation(n_rows).tolist() if shuffled else range(n_rows)
    return ("id,target\n" + "".join(f"{i},{values[i]!r}\n" for i in order)).encode()


def sized_body(megabytes: float) -> tuple[int, bytes]:
    """The longest :func:`valid_body` (sample order) of at most ``megabytes`` MB and at most the limit."""
    target = min(int(megabytes * 1e6), LIMIT)
    n_rows = int(target / 26)
    while True:
        body = valid_body(n_rows, shuffled=False)
        if len(body) <= target:
            return n_rows, body
        n_rows = int(n_rows * target / len(body) * 0.999)


def cases(quick: bool) -> list[Case]:
    scale = 0.1 if quick else 1.0
    million = int(1_000_000 * scale)
    (five, five_body), (fifty, fifty_body) = sized_body(5 * scale), sized_body(50 * scale)
    found = [
        Case(f"valid, {million:,} rows, sample order", million, valid_body(million, shuffled=False)),
        Case(f"valid, {million:,} rows, shuffled", million, valid_body(million, shuffled=True)),
        Case(f"valid, {five:,} rows (~{5 * scale:g} MB)", five, five_body),
        Case(f"valid, {fifty:,} rows (~{50 * scale:g} MB)", fifty, fifty_body),
    ]
    valid = valid_body(25_000, shuffled=False).decode()
    first = "0,0.5\n"
    for target in (5,) if quick else (5, 50):
        size = target * 1_000_000 - len(valid) - 16
        found += [
            Case(f"hostile: mixed widths, {target} MB", 25_000, (valid + "x\n" + "x,y,z\n" * (size // 6)).encode()),
            Case(f"hostile: newlines, {target} MB", 25_000, (valid + first + "\n" * size + first).encode()),
            Case(f"hostile: repeated rows, {target} MB", 25_000, (valid + first * (size // len(first))).encode()),
        ]
    return found


def runs(repeats: int, size: int) -> int:
    """``repeats``, more for bodies under 25 MB (up to 5x), so a short case's median is not one load spike."""
    return max(repeats, min(5 * repeats, int(repeats * 25e6 / size)))


def ours(body: bytes, fmt: SubmissionFormat, *, exact: bool = False) -> str:
    try:
        _parse_csv_exact(body, fmt, keep_text=False) if exact else parse_submission_csv(body, fmt)
    except SubmissionError as exc:
        return f"line {exc.line}: {str(exc).split(': ', 1)[-1][:28]}"
    return "accepted"


def arrow(body: bytes, *, threads: bool = True) -> str:
    options = pa_csv.ConvertOptions(column_types={"id": pa.string(), "target": pa.float64()})
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(body), read_options=pa_csv.ReadOptions(use_threads=threads), convert_options=options
        )
    except pa.ArrowInvalid:
        return "error"
    return f"{table.num_rows:,} rows"


def memory(which: str, path: Path, n_ids: int) -> float:
    """Peak MB above the starting point of one parse in a fresh process (see the module docstring)."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.parser_vs_arrow", "--child", which, str(path), str(n_ids)],
        capture_output=True, text=True, check=True,
    )
    return float(json.loads(done.stdout)["peak_mb"])


def child(which: str, path: Path, n_ids: int) -> None:
    fmt = competition(n_ids)
    if which == "ours" and fmt.fast_ids is not None:
        fmt.fast_ids.table  # noqa: B018 - prepared once per competition, as in a warm worker
    body = path.read_bytes()
    pool = pa.default_memory_pool()
    held = pool.bytes_allocated()
    tracemalloc.start()
    with contextlib.suppress(SubmissionError):
        ours(body, fmt) if which == "ours" else arrow(body)
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"peak_mb": (traced + max(0, pool.max_memory() - held)) / 1e6}), flush=True)
    if which == "arrow":  # Arrow's thread pool may abort the interpreter's exit (apache/arrow#34314)
        os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="valid files a tenth the size, 5 MB hostile bodies only")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), int(args.child[2]))
        return
    print(f"CSV parse: ours vs pyarrow.csv.read_csv {pa.__version__} on the same bytes "
          f"(median of >= {args.repeats} interleaved runs; peak memory above the start, one run in a fresh process)")
    print(
        f"  {'body':<40} {'MB':>6} {'ours s':>7} {'arrow s':>7} {'ratio':>6} {'1-thr s':>7} {'ratio':>6} {'exact s':>7}"
        f" {'ours MB':>8} {'arrow MB':>8}  outcome"
    )
    formats: dict[int, SubmissionFormat] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(args.quick):
            if case.n_ids not in formats:
                formats[case.n_ids] = fmt = competition(case.n_ids)
                started = time.perf_counter()
                if fmt.fast_ids is not None:
                    fmt.fast_ids.table  # noqa: B018
                prepared = time.perf_counter() - started
                print(f"  (a {case.n_ids:,}-id competition prepared for the fast path once: {prepared:.2f} s)")
            fmt = formats[case.n_ids]
            ours_times: list[float] = []
            arrow_times: list[float] = []
            single_times: list[float] = []
            exact_times: list[float] = []
            outcome = ours(case.body, fmt)  # warm-up
            arrow(case.body)
            for _ in range(runs(args.repeats, len(case.body))):
                started = time.perf_counter()
                ours(case.body, fmt)
                ours_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                arrow(case.body)
                arrow_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                arrow(case.body, threads=False)
                single_times.append(time.perf_counter() - started)
                if len(exact_times) < 3:
                    started = time.perf_counter()
                    ours(case.body, fmt, exact=True)
                    exact_times.append(time.perf_counter() - started)
            path = Path(tmp) / "body.csv"
            path.write_bytes(case.body)
            ours_mb, arrow_mb = memory("ours", path, case.n_ids), memory("arrow", path, case.n_ids)
            mine, theirs = statistics.median(ours_times), statistics.median(arrow_times)
            single, exact = statistics.median(single_times), statistics.median(exact_times)
            print(
                f"  {case.name:<40} {len(case.body) / 1e6:>6.1f} {mine:>7.3f} {theirs:>7.3f} {mine / theirs:>5.2f}x"
                f" {single:>7.3f} {mine / single:>5.2f}x {exact:>7.3f} {ours_mb:>8.1f} {arrow_mb:>8.1f}  {outcome}"
            )
    sys.stdout.flush()
    os._exit(0)  # the reference reader's thread pool may abort the interpreter's exit (apache/arrow#34314)


if __name__ == "__main__":
    main()
