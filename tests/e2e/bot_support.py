"""A live Leaderboard Lab stack for the bot's end-to-end tests and the live benchmark.

``live_stack(tmp)`` starts, in subprocesses, a real web server (gunicorn) on a free port and a real Celery
worker (``--pool=solo``) on a unique queue against the real Redis at ``127.0.0.1:6379`` (or
``LEADERBOARD_TEST_REDIS_URL``) and a fresh database (a new SQLite file under ``tmp`` unless a
``database_url`` is given), all with the same environment — the same recipe as
``tests/site/test_integration.py``. Competitions and participants are made with the documented management
commands, so the stack is driven exactly as a host would drive it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stack.processes import (
    BIN,
    REPO,
    celery_worker,
    free_port,
    manage,
    process_environment,
    redis_available,
    spawned,
    unique_queue,
    wait_for_http,
)

__all__ = ["REPO", "LiveStack", "fresh_postgres", "live_stack", "redis_available"]

POSTGRES_ADMIN_URL = os.environ.get("LEADERBOARD_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@contextlib.contextmanager
def fresh_postgres() -> Iterator[str]:
    """A new, empty PostgreSQL database (dropped on exit); its URL."""
    import psycopg

    name = f"lbl_bot_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=3) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class LiveStack:
    """A running web server + worker; ``url`` is the site's base URL, ``env`` the shared environment."""

    url: str
    env: dict[str, str]
    directory: Path
    worker: subprocess.Popen[bytes]

    def manage(self, *args: str, timeout: float = 120.0) -> str:
        """Run ``manage.py`` with the stack's environment; its stdout (raises with its output on failure)."""
        return manage(self.env, *args, timeout=timeout)

    def participant(self, username: str) -> str:
        """Create a participant; its API token."""
        return self.manage("create_participant", username).strip().splitlines()[-1].strip()

    def competition(
        self,
        slug: str,
        labels: Sequence[int] | np.ndarray,
        *,
        decimals: int | None = 5,
        public_fraction: float = 1.0,
        daily_limit: int | None = None,
        total_limit: int | None = None,
        defenses: str = "[]",
        extra: Sequence[str] = (),
    ) -> None:
        """Create a competition over ``labels`` (ids ``r0000…``) with the documented command."""
        path = self.directory / f"{slug}-labels.csv"
        width = len(str(len(labels)))
        path.write_text("id,label\n" + "".join(f"r{i:0{width}d},{int(y)}\n" for i, y in enumerate(labels)))
        self.manage(
            "create_competition", slug, "--labels", str(path),
            "--decimals", "none" if decimals is None else str(decimals),
            "--public-fraction", repr(public_fraction),
            "--daily-limit", "none" if daily_limit is None else str(daily_limit),
            *(["--total-limit", str(total_limit)] if total_limit is not None else []),
            "--defenses", defenses, *extra,
        )

    def submissions_count(self, slug: str) -> int:
        """Server-side count of every submission of a competition (any participant, any status)."""
        code = (
            "from leaderboard.submissions.models import Submission;"
            f"print(Submission.objects.filter(competition__slug={slug!r}).count())"
        )
        return int(self.manage("shell", "-c", code).strip().splitlines()[-1])

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name} ---\n{p.read_text()[-3000:]}" for p in sorted(self.directory.glob("*.log"))
        )


@contextlib.contextmanager
def live_stack(
    directory: Path, *, database_url: str | None = None, extra_env: dict[str, Any] | None = None
) -> Iterator[LiveStack]:
    """Migrate a fresh database, start one solo-pool Celery worker and gunicorn; stop both on exit.

    gunicorn runs one sync worker without an access log: the bot sends one request at a time, and a log line
    per request would only cost time in the benchmark.
    """
    directory.mkdir(parents=True, exist_ok=True)
    env = process_environment(
        database_url or f"sqlite:///{directory / 'site.sqlite3'}",
        unique_queue("leaderboard-bot"),
        LEADERBOARD_VAR_DIR=str(directory / "var"),
        **{k: str(v) for k, v in (extra_env or {}).items()},
    )
    manage(env, "migrate", "--noinput")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    web_argv = [
        str(BIN / "gunicorn"), "leaderboard.wsgi:application", "--bind", f"127.0.0.1:{port}",
        "--workers", "1", "--threads", "1", "--timeout", "120",
    ]
    with (
        celery_worker(env, directory / "worker.log") as worker,
        spawned(web_argv, env, directory / "web.log") as web,
    ):
        wait_for_http(f"{url}/api/v1/competitions/", web, directory / "web.log", timeout=60)
        yield LiveStack(url=url, env=env, directory=directory, worker=worker)
