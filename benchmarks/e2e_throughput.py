"""End-to-end throughput: HTTP upload → Redis → one Celery worker process → PostgreSQL → scored.

Starts the real stack (gunicorn, one worker process with concurrency 1, the real Redis on 127.0.0.1:6379
unless REDIS_URL says otherwise, and a fresh PostgreSQL database on 127.0.0.1:5432 that is dropped
afterwards), creates a competition of N = 25,000 binary rows, and uploads 500 CSV files from a few client
threads. Prints sustained scored submissions/s (scored count over first upload → last score) and the
p50/p99 upload-to-scored latency (client send time → the row's ``finished_at``; one clock, one machine).
Issue aims: ≥ 50 submissions/s, p99 < 1 s.

Beside them, from the same run: the **floor** — the same files read by ``pyarrow.csv.read_csv`` and scored in
numpy (clipped log loss of both splits) in this process, one after another on one core: the rate a scorer that
validates, stores and transports nothing would reach. ``--keep-uploads`` runs the site with
``LEADERBOARD_KEEP_UPLOADS=1`` (every upload's bytes stored too, as before issue 14) for a before/after.

    .venv/bin/python -m benchmarks.e2e_throughput [--rows 25000] [--uploads 500] [--clients 4] [--sqlite]
    .venv/bin/python -m benchmarks.e2e_throughput --rows 1000000 --uploads 40 --clients 2
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bot.client import ClientError, LeaderboardClient
from stack import processes
from stack.processes import fresh_postgres, running_stack


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def floor(bodies: list[bytes], labels: np.ndarray, n_rows: int, repeats: int = 7) -> float:
    """Submissions/s of the floor on ``bodies``: Arrow's reader plus numpy scoring (median of ``repeats`` passes)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    from scoring import public_split_mask

    mask = public_split_mask(n_rows, 0.3, 0)
    types = pa_csv.ConvertOptions(column_types={"id": pa.string(), "target": pa.float64()})
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for body in bodies:
            table = pa_csv.read_csv(pa.BufferReader(body), convert_options=types)
            p = np.clip(table.column("target").to_numpy(), 1e-15, 1 - 1e-15)
            losses = -np.where(labels == 1, np.log(p), np.log1p(-p))
            losses[mask].mean(), losses[~mask].mean()
        times.append((time.perf_counter() - started) / len(bodies))
    return 1.0 / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=25_000)
    parser.add_argument("--uploads", type=int, default=500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--sqlite", action="store_true", help="use a fresh SQLite file instead of PostgreSQL")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="pace uploads at this many per second in all (0: as fast as the clients can)")
    parser.add_argument("--tree", action="append", default=[],
                        help="run the site from this checkout (repeat to compare, e.g. the base commit exported with "
                        "git archive, and .); default: this one")
    parser.add_argument("--rounds", type=int, default=1, help="runs per tree, alternating trees")
    parser.add_argument("--keep-uploads", action="store_true",
                        help="store every upload's bytes too (LEADERBOARD_KEEP_UPLOADS=1): the storage before issue 14")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    ids = [f"{i:06d}" for i in range(args.rows)]
    labels = rng.integers(0, 2, args.rows)
    bodies = []
    for k in range(8 if args.rows <= 100_000 else 2):  # a few distinct files, reused round-robin
        values = np.random.default_rng(k).random(args.rows)
        bodies.append(("id,target\n" + "".join(f"{i},{v:.6f}\n" for i, v in zip(ids, values, strict=True))).encode())

    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    # Production settings: DEBUG would log every query through Django's debug cursor.
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("DJANGO_SECRET_KEY", uuid.uuid4().hex * 2)
    os.environ["LEADERBOARD_KEEP_UPLOADS"] = "1" if args.keep_uploads else "0"
    os.environ["LEADERBOARD_MAX_UPLOAD_BYTES"] = str(max(50 * 1024 * 1024, 2 * len(bodies[0])))
    floor_rate = floor(bodies, labels, args.rows)
    trees = [Path(tree).resolve() for tree in args.tree] or [processes.REPO]
    results: dict[Path, list[Run]] = {tree: [] for tree in trees}
    for round_ in range(args.rounds):
        for tree in trees:  # alternating, so a load spike on the shared machine hits both alike
            print(f"round {round_ + 1}: the site from {tree}: uploading {args.uploads} files of {args.rows:,} rows "
                  f"({len(bodies[0]) / 1e6:.2f} MB) from {args.clients} clients ...", flush=True)
            results[tree].append(one_run(args, tree, ids, labels, bodies))
    backend = "SQLite" if args.sqlite else "PostgreSQL"
    pacing = f"paced at {args.rate:g} uploads/s" if args.rate > 0 else "as fast as the clients can"
    stored = "every upload's bytes kept (as before issue 14)" if args.keep_uploads else "the validated array kept"
    print(f"end to end, HTTP + Celery + Redis + {backend}, N = {args.rows:,}, one worker process, {pacing}, "
          f"{stored}; median of {args.rounds} round(s):")
    for tree, runs in results.items():
        def mid(values: list[float]) -> float:
            return statistics.median(values)

        failures = [f for run in runs for f in run.failures]
        print(f"  site from {tree}:")
        print(f"    uploads accepted: {mid([r.upload_rate for r in runs]):.1f}/s; scored: "
              f"{sum(r.scored for r in runs)}/{sum(r.sent for r in runs)}; failures: {len(failures)} {failures[:3]}")
        print(f"    sustained: {mid([r.rate for r in runs]):.1f} scored submissions/s (aim >= 50)")
        p50, p99 = mid([r.p50 for r in runs]), mid([r.p99 for r in runs])
        print(f"    upload-to-scored latency: p50 {p50:.3f} s, p99 {p99:.3f} s (aim p99 < 1 s)")
        print(f"    CPU of the site's processes (gunicorn + Celery, not PostgreSQL/Redis): "
              f"{mid([r.cpu_ms for r in runs]):.1f} ms per scored submission")
    print(f"  floor, same files, this process: {floor_rate:.1f} submissions/s = {1000 / floor_rate:.1f} ms each "
          "(pyarrow read_csv + numpy log loss, one core, no validation, storage or HTTP)")


@dataclass
class Run:
    sent: int
    scored: int
    upload_rate: float
    rate: float
    p50: float
    p99: float
    cpu_ms: float
    failures: list[str]


def process_tree_cpu(roots: list[int]) -> float:
    """CPU seconds (user + system) used so far by ``roots`` and their live descendants (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        times[pid] = (int(fields[11]) + int(fields[12])) / tick
    total, pending = 0.0, list(roots)
    while pending:
        pid = pending.pop()
        total += times.get(pid, 0.0)
        pending += children.get(pid, [])
    return total


def finished_rows(database_url: str) -> list[tuple[int, str, float, str]]:
    """``(id, status, finished_at as a POSIX time, error)`` of every finished submission."""
    query = "SELECT id, status, finished_at, error FROM submissions_submission WHERE finished_at IS NOT NULL"
    if database_url.startswith("sqlite"):
        import sqlite3

        with contextlib.closing(sqlite3.connect(database_url.split("///", 1)[1])) as db:
            rows = db.execute(query).fetchall()
        return [(int(r[0]), r[1], datetime.fromisoformat(r[2]).replace(tzinfo=UTC).timestamp(), r[3]) for r in rows]
    import psycopg

    with psycopg.connect(database_url) as db:
        return [(int(r[0]), r[1], r[2].timestamp(), r[3]) for r in db.execute(query).fetchall()]


def one_run(args: argparse.Namespace, tree: Path, ids: list[str], labels: np.ndarray, bodies: list[bytes]) -> Run:
    """Start the site from ``tree`` (its own code: the launcher runs ``tree``'s ``manage.py``, worker and web),
    upload ``args.uploads`` files and wait until every one is scored."""
    processes.REPO = tree  # the launcher's processes run with cwd and PYTHONPATH at the tree
    os.environ["LEADERBOARD_CELERY_QUEUE"] = f"bench-{uuid.uuid4().hex[:8]}"
    with contextlib.ExitStack() as stack_cm:
        tmp = Path(stack_cm.enter_context(tempfile.TemporaryDirectory(prefix="lbl-bench-")))
        if args.sqlite:
            os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
        else:
            os.environ["DATABASE_URL"] = stack_cm.enter_context(fresh_postgres("lbl_bench"))
        os.environ["LEADERBOARD_VAR_DIR"] = str(tmp)
        stack = stack_cm.enter_context(running_stack(pool="prefork", web_workers=3, logs_dir=tmp / "logs"))
        host = LeaderboardClient(stack.url, stack.host_token())
        host.create_competition("bench", zip(ids, labels.tolist(), strict=True), daily_limit=None)
        tokens = [host.create_participant(f"bench{c}").token for c in range(args.clients)]
        url = stack.url
        roots = [proc.pid for proc in stack.processes.values()]

        sent: dict[int, float] = {}
        owner: dict[int, int] = {}
        lock = threading.Lock()
        failures: list[str] = []

        begin = time.time() + 0.5

        def client(index: int) -> None:
            uploader = LeaderboardClient(url, tokens[index], timeout=600.0)
            for n in range(index, args.uploads, args.clients):
                if args.rate > 0:  # open-loop pacing: upload n is due at begin + n / rate
                    time.sleep(max(0.0, begin + n / args.rate - time.time()))
                started = time.time()
                try:
                    upload = uploader.submit_csv("bench", bodies[n % len(bodies)], filename="p.csv")
                except ClientError as exc:
                    failures.append(str(exc)[:200])
                    continue
                with lock:
                    sent[upload.id] = started
                    owner[upload.id] = index

        cpu_before = process_tree_cpu(roots)
        t0 = time.time()
        threads = [threading.Thread(target=client, args=(c,)) for c in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        upload_seconds = time.time() - t0
        finished: dict[int, float] = {}
        deadline = time.time() + 600
        # Polled from the database itself, not over HTTP: polling is no part of the site's CPU per submission.
        while len(finished) < len(sent) and time.time() < deadline:
            for sid, status, finished_at, error in finished_rows(os.environ["DATABASE_URL"]):
                if sid in sent and sid not in finished:
                    if status == "failed":
                        failures.append(f"submission {sid} failed: {error}")
                    finished[sid] = finished_at
            time.sleep(0.5)
        cpu = process_tree_cpu(roots) - cpu_before
    latencies = [finished[s] - sent[s] for s in finished] or [float("nan")]
    span = max(finished.values()) - min(sent.values()) if finished else float("nan")
    return Run(
        sent=len(sent), scored=len(finished), upload_rate=len(sent) / upload_seconds, rate=len(finished) / span,
        p50=statistics.median(latencies), p99=percentile(latencies, 99), cpu_ms=1000 * cpu / max(1, len(finished)),
        failures=failures,
    )

if __name__ == "__main__":
    main()
