"""A live Leaderboard Lab stack for the bot's end-to-end tests and the live benchmark.

``live_stack(tmp)`` starts, in subprocesses, a real web server (gunicorn) on a free port and a real Celery
worker (``--pool=solo``) on a unique queue against the real Redis at ``127.0.0.1:6379`` (or
``LEADERBOARD_TEST_REDIS_URL``) and a fresh database (a new SQLite file under ``tmp`` unless a
``database_url`` is given), all with the same environment — the same recipe as
``tests/site/test_integration.py``. Competitions and participants are made through the host API with the
client, so the stack is driven exactly as a host would drive any site.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bot.client import HostCompetition, LeaderboardClient
from stack.processes import REDIS_URL, REPO, Stack, fresh_postgres, redis_available, running_stack, unique_queue

__all__ = ["REPO", "LiveStack", "fresh_postgres", "live_stack", "redis_available"]


class LiveStack(Stack):
    """A running site (web server + worker) with the helpers the bot's tests use to set it up: competitions
    and participants are made over HTTP through the host API (:class:`~bot.client.LeaderboardClient` with a
    staff token made once), as any host of any site would."""

    @property
    def directory(self) -> Path:
        return self.logs_dir

    @property
    def host(self) -> LeaderboardClient:
        """The host's client (a staff account's token)."""
        client = getattr(self, "_host_client", None)
        if client is None:
            client = LeaderboardClient(self.url, self.host_token())
            self._host_client = client
        return client

    def client(self, token: str | None = None, **options: Any) -> LeaderboardClient:
        """A client of this site with ``token`` (anonymous without one)."""
        return LeaderboardClient(self.url, token, **options)

    def participant(self, username: str) -> str:
        """Create a participant; its API token."""
        return self.host.create_participant(username).token

    def competition(
        self,
        slug: str,
        labels: Sequence[int] | np.ndarray,
        *,
        decimals: int | None = 5,
        public_fraction: float = 1.0,
        daily_limit: int | None = None,
        total_limit: int | None = None,
        defenses: str | list[dict[str, Any]] = "[]",
        **options: Any,
    ) -> HostCompetition:
        """Create a competition over ``labels`` (ids ``r0000…``) through the host API; ``options`` are any
        further :meth:`~bot.client.LeaderboardClient.create_competition` options (``also_report``, ...)."""
        width = len(str(len(labels)))
        pairs = [(f"r{i:0{width}d}", int(y)) for i, y in enumerate(labels)]
        chain = json.loads(defenses) if isinstance(defenses, str) else defenses
        return self.host.create_competition(
            slug, pairs, score_decimals=decimals, public_fraction=public_fraction, daily_limit=daily_limit,
            total_limit=total_limit, defenses=chain, **options,
        )

    def submissions_count(self, slug: str) -> int:
        """Server-side count of every submission of a competition (any participant, any status)."""
        return len(self.host.host_submissions(slug))


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
