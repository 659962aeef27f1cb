"""Peak memory and time of a hostile JSON upload, before and after the shape pre-check, beside the CSV path.

Each measurement runs in a fresh process (peak RSS from ``resource.getrusage``, minus the process's peak once the
body is built), for bodies of 1, 10 and 50 MB against a 100,000-row binary competition:

- ``json before``: what the site did — ``parse_submission_json`` (``json.loads`` of the whole body) on
  ``{"predictions": [[], [], ...]}``, which fails only after building every list;
- ``json after``: ``leaderboard.api.json_bounds.json_shape_refusal`` with the competition's bounds (refused);
- ``json valid``: a valid body of the same size class (check, then parse), to show the check's cost;
- ``csv hostile``: the CSV path on a CSV of the same size (a million short junk rows), refused by its parser.

    python -m benchmarks.json_bodies
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

N_ROWS = 100_000
SIZES_MB = (1, 10, 50)
LIMIT = 60 * 1024 * 1024


def _body(kind: str, size: int) -> bytes:
    if kind in {"json before", "json after"}:
        count = (size - 20) // 3
        return b'{"predictions": [' + b"[]," * (count - 1) + b"[]]}"  # no list of parts: no extra peak
    if kind == "json valid":
        return b'{"predictions": [' + b'"0.5",' * (N_ROWS - 1) + b'"0.5"]}'  # the bot's shape, 0.6 MB
    row = b"x,0.5\n"
    return b"id,target\n" + row * ((size - 10) // len(row))


def _measure(kind: str, size: int) -> dict[str, float | str]:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    django.setup()
    from leaderboard.api.json_bounds import json_shape_refusal, submission_bounds
    from scoring import SubmissionError, SubmissionFormat
    from scoring.parsing import parse_submission_csv, parse_submission_json

    ids = tuple(map(str, range(N_ROWS)))
    fmt = SubmissionFormat(ids, {k: i for i, k in enumerate(ids)}, 2, max_bytes=LIMIT)
    body = _body(kind, size)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    outcome = "accepted"
    try:
        if kind == "csv hostile":
            parse_submission_csv(body, fmt)
        else:
            if kind != "json before":
                refusal = json_shape_refusal(body, submission_bounds(n_rows=N_ROWS, n_values=1))
                if refusal is not None:
                    raise SubmissionError(refusal)
            parse_submission_json(body, fmt)
    except SubmissionError:
        outcome = "refused"
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline
    return {"body_mb": len(body) / 2**20, "extra_peak_mb": peak_kb / 1024, "seconds": seconds, "outcome": outcome}


def main() -> None:
    print(f"{'case':<12} {'body MB':>8} {'extra peak MB':>14} {'x body':>7} {'seconds':>8}  outcome")
    for size_mb in SIZES_MB:
        for kind in ("json before", "json after", "json valid", "csv hostile"):
            if kind == "json valid" and size_mb != SIZES_MB[0]:
                continue
            call = f"b._measure({kind!r}, {size_mb * 2**20})"
            code = f"import json, benchmarks.json_bodies as b; print(json.dumps({call}))"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            ratio = row["extra_peak_mb"] / row["body_mb"]
            print(f"{kind:<12} {row['body_mb']:>8.1f} {row['extra_peak_mb']:>14.1f} {ratio:>7.2f}"
                  f" {row['seconds']:>8.3f}  {row['outcome']}")


if __name__ == "__main__":
    main()
