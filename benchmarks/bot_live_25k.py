"""Figure: the full bot attack on N = 25,000 through the live stack (5 decimals, no defense).

Starts gunicorn and one solo-pool Celery worker against the real Redis (127.0.0.1:6379) and a fresh database
(a SQLite file, or ``--database-url`` e.g. PostgreSQL), creates the competition from seeded balanced labels,
runs ``python -m bot`` against it and prints the wall time, the submissions made, the recovered
labels and where the time went (HTTP posts, polling, encoding, the attack's own computation).

    .venv/bin/python -m benchmarks.bot_live_25k [--rows 25000] [--decimals 5] [--database-url URL]

Aim (issue 5): at most 60 s on the reference machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.e2e.bot_support import REPO, fresh_postgres, live_stack, redis_available

SEED = 25_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=25_000)
    parser.add_argument("--decimals", type=int, default=5)
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite file")
    parser.add_argument("--postgres", action="store_true",
                        help="a fresh PostgreSQL database on LEADERBOARD_TEST_POSTGRES_URL (dropped afterwards)")
    parser.add_argument("--upload", choices=("json", "csv"), default="csv")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, summary)")
    args = parser.parse_args(argv)
    if not redis_available():
        print("this benchmark needs Redis at 127.0.0.1:6379", file=sys.stderr)
        return 1
    directory = Path(tempfile.mkdtemp(prefix="bot-live-"))
    labels = np.random.default_rng(SEED).permutation(np.arange(args.rows) % 2)
    with contextlib.ExitStack() as resources:
        if args.postgres:
            args.database_url = resources.enter_context(fresh_postgres())
        return _bench(args, directory, labels)


def _bench(args: argparse.Namespace, directory: Path, labels: np.ndarray) -> int:
    with live_stack(directory, database_url=args.database_url) as stack:
        slug = f"bench-{args.rows}"
        stack.competition(slug, labels, decimals=args.decimals, public_fraction=1.0, daily_limit=None)
        token = stack.participant("bench-bot")
        summary_path = directory / "summary.json"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "bot", "--url", stack.url, "--competition", slug, "--token", token,
             "--json", str(summary_path), "--upload", args.upload, "--no-progress"],
            cwd=REPO, env=stack.env, capture_output=True, text=True,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            print(done.stdout, done.stderr, stack.logs(), sep="\n", file=sys.stderr)
            return 1
        server_count = stack.submissions_count(slug)
    summary = json.loads(summary_path.read_text())
    width = len(str(args.rows))
    recovered = np.array([summary["labels"].get(f"r{i:0{width}d}", -1) for i in range(args.rows)])
    http = summary.get("http", {})
    queries = summary["queries"]
    print(f"bot live attack, N = {args.rows:,}, {args.decimals} decimals, no defense, 1 worker, "
          f"{'SQLite' if args.database_url is None else args.database_url.split(':')[0]}, upload {args.upload}")
    print(f"  attack                 {summary['attack']} ({summary['reason']})")
    print(f"  wall time              {wall:.1f} s (bot process, start to exit; aim <= 60 s)")
    print(f"  submissions            {queries} = {summary['fingerprint']['probes']} fingerprint + "
          f"{summary['attack_queries']} attack + 1 final (server counted {server_count})")
    print(f"  labels per query       {args.rows / max(summary['attack_queries'], 1):.2f}")
    print(f"  recovered              {(recovered == labels).mean():.2%} correct, {int((recovered >= 0).sum())} claimed")
    print(f"  final public score     {summary.get('final_public_score_text')}")
    per = {key: 1000 * float(http.get(key, 0)) / max(queries, 1) for key in ("post_seconds", "poll_seconds",
                                                                            "encode_seconds")}
    print(f"  per submission         {1000 * wall / max(queries, 1):.1f} ms: POST {per['post_seconds']:.1f} ms, "
          f"polling {per['poll_seconds']:.1f} ms ({http.get('polls', 0) / max(queries, 1):.2f} polls), "
          f"encode {per['encode_seconds']:.1f} ms, the rest is the attack's own work and process start")
    if args.keep:
        print(f"  files                  {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
