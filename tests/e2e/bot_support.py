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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stack.processes import REDIS_URL, REPO, Stack, fresh_postgres, redis_available, running_stack, unique_queue

__all__ = ["REPO", "LiveStack", "fresh_postgres", "live_stack", "redis_available"]


class LiveStack(Stack):
    """A running site (web server + worker) with the helpers the bot's tests use to set it up."""

    @property
    def directory(self) -> Path:
        return self.logs_dir

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


@contextlib.contextmanager
def live_stack(
    directory: Path, *, database_url: str | None = None, extra_env: dict[str, Any] | None = None
) -> Iterator[LiveStack]:
    """A fresh database (SQLite under ``directory`` unless ``database_url``), one solo-pool Celery worker on a
    queue of its own against the test Redis, and gunicorn with one sync worker and no access log: the bot sends
    one request at a time, and a log line per request would only cost time in the benchmark."""
    directory.mkdir(parents=True, exist_ok=True)
    with running_stack(
        logs_dir=directory,
        database_url=database_url or f"sqlite:///{directory / 'site.sqlite3'}",
        redis_url=REDIS_URL,
        queue=unique_queue("leaderboard-bot"),
        extra_env={"LEADERBOARD_VAR_DIR": str(directory / "var"), **{k: str(v) for k, v in (extra_env or {}).items()}},
        stack_type=LiveStack,
    ) as stack:
        assert isinstance(stack, LiveStack)
        yield stack
