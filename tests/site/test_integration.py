"""Integration: a real Celery worker process, the real Redis on 127.0.0.1:6379 and a real database, on both
SQLite (a file, so the worker process sees it) and PostgreSQL (127.0.0.1:5432, trust auth, user postgres).

Each test run uses its own Celery queue and its own fresh database, so parallel runs never take each other's
tasks or rows. The scenario itself runs in a separate process (``tests/site/integration_scenario.py``) with
the same environment as the worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from stack.processes import (
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    REPO,
    celery_worker,
    fresh_postgres,
    process_environment,
    redis_available,
    unique_queue,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def queue_name() -> str:
    if not redis_available():
        pytest.fail(f"integration tests need Redis at {REDIS_URL}")
    return unique_queue()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'integration.sqlite3'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    try:
        with fresh_postgres("lbl_it") as url:
            yield url
    except psycopg.OperationalError as exc:
        pytest.fail(f"integration tests need PostgreSQL at {POSTGRES_ADMIN_URL}: {exc}")


def _run_with_worker(database_url: str, queue: str, tmp_path: Path) -> dict[str, object]:
    env = process_environment(database_url, queue)
    with celery_worker(env, tmp_path / "worker.log"):
        scenario = subprocess.run(
            [sys.executable, "-m", "tests.site.integration_scenario"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        )
    worker_log = (tmp_path / "worker.log").read_text()
    lines = [line for line in scenario.stdout.splitlines() if line.startswith("SCENARIO-RESULT ")]
    assert scenario.returncode == 0 and lines, f"scenario failed:\n{scenario.stderr[-4000:]}\n{worker_log[-4000:]}"
    result: dict[str, object] = json.loads(lines[-1].removeprefix("SCENARIO-RESULT "))
    result["worker_log"] = worker_log
    return result


def _check(result: dict[str, object], vendor: str) -> None:
    log = str(result["worker_log"])[-3000:]
    assert result["vendor"] == vendor
    assert result["race"] == ["created"] * 5 + ["quota"] * 15, result["race"]
    assert result["created"] == 5
    assert result["statuses"] == ["scored"] * 5, log
    assert result["score_mismatches"] == []
    assert result["redelivery_changed"] is False
    assert result["swept"] is True
    assert result["stranded_status"] == "scored", log


def test_a_real_worker_scores_through_redis_on_sqlite(sqlite_url: str, queue_name: str, tmp_path: Path) -> None:
    _check(_run_with_worker(sqlite_url, queue_name, tmp_path), "sqlite")


def test_a_real_worker_scores_through_redis_on_postgresql(postgres_url: str, queue_name: str, tmp_path: Path) -> None:
    _check(_run_with_worker(postgres_url, queue_name, tmp_path), "postgresql")


def _phase(env: dict[str, str], phase: str, log: Path) -> dict[str, Any]:
    with celery_worker(env, log):
        done = subprocess.run(
            [sys.executable, "-m", "tests.site.restart_scenario", phase],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("SCENARIO-RESULT ")]
    assert done.returncode == 0 and lines, f"{phase} failed:\n{done.stderr[-3000:]}\n{log.read_text()[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("SCENARIO-RESULT "))
    return result


def test_a_defense_state_survives_a_worker_restart(sqlite_url: str, queue_name: str, tmp_path: Path) -> None:
    # The fixed Ladder keeps releasing the leader's score to a participant whose new submission is worse. A worker
    # that lost the state would release the worse submission's own (rounded) score instead.
    env = process_environment(sqlite_url, queue_name)
    first = _phase(env, "first", tmp_path / "worker-1.log")
    second = _phase(env, "second", tmp_path / "worker-2.log")  # a new worker process
    assert first["status"] == second["status"] == "scored"
    assert second["raw_public"] > first["raw_public"] + 0.1  # clearly worse
    assert second["public_score_text"] == first["public_score_text"]
    assert first["states"]["public"] and second["states"]["public"] == first["states"]["public"]
