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
from pathlib import Path

import numpy as np

from bot.client import ClientError, LeaderboardClient
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
    os.environ["LEADERBOARD_CELERY_QUEUE"] = f"bench-{uuid.uuid4().hex[:8]}"
    os.environ["LEADERBOARD_KEEP_UPLOADS"] = "1" if args.keep_uploads else "0"
    os.environ["LEADERBOARD_MAX_UPLOAD_BYTES"] = str(max(50 * 1024 * 1024, 2 * len(bodies[0])))
    floor_rate = floor(bodies, labels, args.rows)
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

        print(f"stack up at {url}; uploading {args.uploads} files of {args.rows:,} rows "
              f"({len(bodies[0]) / 1e6:.2f} MB) from {args.clients} clients ...")
        t0 = time.time()
        threads = [threading.Thread(target=client, args=(c,)) for c in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        upload_seconds = time.time() - t0
        finished: dict[int, float] = {}
        deadline = time.time() + 600
        readers = [LeaderboardClient(url, token) for token in tokens]
        while len(finished) < len(sent) and time.time() < deadline:
            for sid in [s for s in sent if s not in finished]:
                submission = readers[owner[sid]].submission(sid)
                if submission.finished:
                    if submission.status == "failed":
                        failures.append(f"submission {sid} failed: {submission.error}")
                    assert submission.finished_at is not None
                    finished[sid] = submission.finished_at.timestamp()
            time.sleep(0.2)
    latencies = [finished[s] - sent[s] for s in finished]
    span = max(finished.values()) - min(sent.values())
    backend = "SQLite" if args.sqlite else "PostgreSQL"
    pacing = f"paced at {args.rate:g} uploads/s" if args.rate > 0 else "as fast as the clients can"
    print(f"end to end, HTTP + Celery + Redis + {backend}, N = {args.rows:,}, one worker process, {pacing}:")
    print(f"  uploads accepted: {len(sent)} in {upload_seconds:.1f} s ({len(sent) / upload_seconds:.1f} uploads/s)")
    print(f"  scored: {len(finished)}; failures: {len(failures)} {failures[:3]}")
    stored = "every upload's bytes kept (before)" if args.keep_uploads else "the validated array kept"
    print(f"  sustained: {len(finished) / span:.1f} scored submissions/s (aim >= 50); {stored}")
    print(f"  floor, same files, this process: {floor_rate:.1f} submissions/s (pyarrow read_csv + numpy log loss, "
          "one core, no validation, storage or HTTP)")
    print(f"  upload-to-scored latency: p50 {statistics.median(latencies):.3f} s, "
          f"p99 {percentile(latencies, 99):.3f} s, max {max(latencies):.3f} s (aim p99 < 1 s)")


if __name__ == "__main__":
    main()
