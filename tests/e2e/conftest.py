"""A live site for the end-to-end tests: a fresh SQLite file, ``migrate``, a real Celery worker on a queue of
its own against the real Redis on 127.0.0.1:6379, and gunicorn on a free port. The host (a superuser with a
password, for the HTML login) is made with ``createsuperuser``; the competition and the participant (with an
API token) are made through the host API with the client, with the host's token.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from bot.client import LeaderboardClient
from stack.processes import REDIS_URL, process_environment, redis_available, running_stack, unique_queue

N_ROWS = 200
LABEL_SEED = 20261121
SLUG = "e2e-cancer"
HOST = "e2e-host"
HOST_PASSWORD = "e2e-host-password"  # a throwaway account in a throwaway database
PARTICIPANT = "e2e-alice"


@dataclass(frozen=True)
class LiveSite:
    url: str
    database: Path  # the SQLite file the server and the worker share
    slug: str
    token: str  # the participant's API token
    host: str
    host_password: str
    ids: list[str]
    labels: np.ndarray
    worker: subprocess.Popen[bytes]
    logs: Path
    host_token: str = ""  # the host's API token (host API calls)

    def log_tail(self) -> str:
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-2500:]}" for log in sorted(self.logs.glob("*.log"))
        )


@pytest.fixture(scope="module")
def live_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    if not redis_available():
        pytest.fail(f"the end-to-end test needs Redis at {REDIS_URL}")
    root = tmp_path_factory.mktemp("e2e")
    database = root / "site.sqlite3"
    env = process_environment(
        f"sqlite:///{database}",
        unique_queue("leaderboard-e2e"),
        LEADERBOARD_VAR_DIR=str(root / "var"),
        DJANGO_SUPERUSER_PASSWORD=HOST_PASSWORD,
        DJANGO_SUPERUSER_EMAIL="host@example.org",
    )
    ids = [f"p{i:04d}" for i in range(N_ROWS)]
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    with running_stack(logs_dir=root, env=env, web_threads=4, access_log=True) as stack:
        stack.manage("createsuperuser", "--noinput", "--username", HOST)
        host_token = stack.host_token(HOST)
        host = LeaderboardClient(stack.url, host_token)
        token = host.create_participant(PARTICIPANT).token
        host.create_competition(
            SLUG, zip(ids, labels.tolist(), strict=True), title="E2E cancer", daily_limit=10,
            disclosed_defenses="Scores are rounded to 5 decimals.",
        )
        yield LiveSite(stack.url, database, SLUG, token, HOST, HOST_PASSWORD, ids, labels, stack.worker, root,
                       host_token)
