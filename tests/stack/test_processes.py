"""The one process launcher: with no broker configured it starts a Redis server of its own (the one-machine
default the demo relies on), the site it starts scores an upload end to end, and every process it started is
gone when the block ends."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from bot.client import LeaderboardClient
from stack.processes import running_stack

pytestmark = pytest.mark.e2e


def test_a_stack_without_a_broker_brings_its_own_redis_and_stops_everything(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "LEADERBOARD_CELERY_QUEUE")}
    labels = np.random.default_rng(11).integers(0, 2, 30)
    with running_stack(
        logs_dir=tmp_path / "logs", env=env, database_url=f"sqlite:///{tmp_path / 'site.sqlite3'}",
        extra_env={"LEADERBOARD_VAR_DIR": str(tmp_path / "var")},
    ) as stack:
        assert "redis" in stack.processes and stack.env["REDIS_URL"].startswith("redis://127.0.0.1:")
        host = LeaderboardClient(stack.url, stack.host_token())
        host.create_competition("own-redis", [(f"r{i}", int(y)) for i, y in enumerate(labels)], daily_limit=None)
        participant = LeaderboardClient(stack.url, host.create_participant("someone").token)
        upload = participant.submit_json("own-redis", [0.5] * len(labels))
        scored = participant.wait(upload.id, timeout=60)
        assert scored.status == "scored" and scored.public_score_text == "0.69315", stack.logs()
        started = list(stack.processes.values())
    assert started and all(process.poll() is not None for process in started)


def test_a_busy_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    import socket

    from stack.processes import PortInUse

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(PortInUse, match=f"port {port} is already in use"), running_stack(
            port, logs_dir=tmp_path / "logs"
        ):
            pytest.fail("the stack started beside another listener")
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").iterdir())
