"""A web worker's memory while it takes uploads of the size limit: valid, and hostile ones that take the parser's
exact path, through the live stack (gunicorn with one worker process, HTTP multipart, PostgreSQL).

    .venv/bin/python -m benchmarks.upload_memory [--limit-mb 50] [--tree PATH]

``--tree PATH`` runs the site from another checkout (e.g. the commit before a change, exported with
``git archive``); repeated (``--tree /tmp/before --tree .``), each in turn on the same uploads.

The competition has as many rows as fit a valid upload of about the limit (ids ``r0``.., full-precision
values). For each upload, the gunicorn worker's peak resident set (``VmHWM`` from ``/proc``, reset through
``clear_refs`` before the upload) is printed above its resident set just before it, and divided by the upload's
size; the answer's status and time beside. Django spools a multipart file over ``FILE_UPLOAD_MAX_MEMORY_SIZE``
(10 MB) to a temporary file; the service then reads it whole and parses it.

Hostile uploads (each rejected with 400 naming a line): every row valid but the last one's value out of range
(the Arrow path declines, the exact path reads every line); rows in a shuffled order with the last id unknown;
the valid rows of a tenth of the file followed by one long line of junk; and a body of only newlines.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import requests

from stack import processes
from stack.processes import fresh_postgres, running_stack


def rows_csv(ids: list[str], values: np.ndarray, order: np.ndarray | None = None) -> bytes:
    indices = range(len(ids)) if order is None else order.tolist()
    vals = values.tolist()
    return ("id,target\n" + "".join(f"{ids[i]},{vals[i]!r}\n" for i in indices)).encode()


def status_field(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def web_worker_pid(master: int) -> int:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == master:
                    return int(entry.name)
    raise RuntimeError("no gunicorn worker")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--limit-mb", type=float, default=50.0)
    parser.add_argument("--tree", action="append", default=[],
                        help="run the site from this checkout (default: this one); repeat for a before/after")
    args = parser.parse_args()
    limit = int(args.limit_mb * 1024 * 1024)
    n_rows = int(limit * 0.97 / 28)
    ids = [f"r{i}" for i in range(n_rows)]
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, n_rows)
    values = rng.random(n_rows)
    valid = rows_csv(ids, values)
    while len(valid) > limit:  # a few rows fewer until the file fits
        n_rows = int(n_rows * 0.99)
        ids, labels, values = ids[:n_rows], labels[:n_rows], values[:n_rows]
        valid = rows_csv(ids, values)
    bad_last = valid[: valid.rstrip(b"\n").rfind(b",") + 1] + b"1.5\n"
    shuffled = rows_csv(ids, values, rng.permutation(n_rows))
    shuffled = shuffled[: shuffled.rstrip(b"\n").rfind(b"\n") + 1] + b"nobody,0.5\n"
    head = valid[: len(valid) // 10]
    head = head[: head.rfind(b"\n") + 1]
    junk = head + b"x" * (len(valid) - len(head) - 1) + b"\n"
    newlines = b"id,target\n" + b"\n" * (len(valid) - 11)
    uploads = [("valid, hidden order", valid), ("valid, shuffled", rows_csv(ids, values, rng.permutation(n_rows))),
               ("hostile: last value out of range", bad_last), ("hostile: shuffled, last id unknown", shuffled),
               ("hostile: a tenth valid, then one junk line", junk), ("hostile: only newlines", newlines),
               ("over the limit: twice its size", valid + valid)]

    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    os.environ.update(DJANGO_DEBUG="0", LEADERBOARD_MAX_UPLOAD_BYTES=str(limit),
                      LEADERBOARD_CELERY_QUEUE=f"bench-{uuid.uuid4().hex[:8]}")
    os.environ.setdefault("DJANGO_SECRET_KEY", uuid.uuid4().hex * 2)
    for tree in [Path(t).resolve() for t in args.tree] or [processes.REPO]:
        processes.REPO = tree  # the launcher's processes run with cwd and PYTHONPATH there
        measure_site(limit, n_rows, ids, labels, uploads)


def measure_site(limit: int, n_rows: int, ids: list[str], labels: np.ndarray,
                 uploads: list[tuple[str, bytes]]) -> None:
    with contextlib.ExitStack() as stack_cm:
        tmp = Path(stack_cm.enter_context(tempfile.TemporaryDirectory(prefix="lbl-upmem-")))
        os.environ["DATABASE_URL"] = stack_cm.enter_context(fresh_postgres("lbl_upmem"))
        os.environ["LEADERBOARD_VAR_DIR"] = str(tmp)
        stack = stack_cm.enter_context(running_stack(pool="solo", web_workers=1, logs_dir=tmp / "logs"))
        from bot.client import LeaderboardClient

        host = LeaderboardClient(stack.url, stack.host_token(), timeout=600.0)
        host.create_competition("mem", zip(ids, labels.tolist(), strict=True), daily_limit=None)
        token = host.create_participant("mem-user").token
        worker = web_worker_pid(stack.processes["web"].pid)
        print(f"site from {processes.REPO}")
        print(f"web worker memory per upload, limit {limit / 1e6:.1f} MB, competition of {n_rows:,} rows "
              f"(gunicorn, 1 worker process; peak RSS above the RSS before the upload):")
        print(f"  {'upload':<44} {'MB':>6} {'status':>6} {'s':>6} {'peak MB':>8} {'x file':>6}  answer")
        session = requests.Session()
        session.headers["Authorization"] = f"Token {token}"
        for warm in (True, False):  # the first pass warms the worker (the competition's spec, imports)
            for name, body in uploads:
                Path(f"/proc/{worker}/clear_refs").write_text("5")
                before = status_field(worker, "VmRSS")
                started = time.perf_counter()
                try:
                    answer = session.post(f"{stack.url}/api/v1/competitions/mem/submissions/",
                                          files={"file": ("p.csv", body, "text/csv")}, timeout=600)
                    code, detail = str(answer.status_code), answer.json().get("detail", answer.json().get("status", ""))
                except requests.ConnectionError as exc:  # the site answered and closed before taking the whole body
                    code, detail = "reset", f"{type(exc).__name__}"
                    session = requests.Session()
                    session.headers["Authorization"] = f"Token {token}"
                seconds = time.perf_counter() - started
                peak = (status_field(worker, "VmHWM") - before) / 1e6
                if not warm:
                    print(f"  {name:<44} {len(body) / 1e6:>6.1f} {code:>6} {seconds:>6.2f} {peak:>8.0f}"
                          f" {peak / (len(body) / 1e6):>5.2f}x  {str(detail)[:60]}")


if __name__ == "__main__":
    main()
