"""Recovery with real processes (issue 9, items 5 and 8): a worker killed with ``kill -9`` in the middle of a
scoring, a prefork child killed the same way, a broker that is down when a participant uploads, and a φ-bit
score whose text is longer than the old ``varchar(400)`` on PostgreSQL. No beat runs and the sweep is never
called: each submission must be scored exactly once, within seconds, by the mechanisms of
``leaderboard/submissions/services.py`` alone. Scenario phases: ``tests/site/recovery_scenario.py``."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from stack.processes import (
    POSTGRES_ADMIN_URL,
    REDIS_URL,
    REPO,
    celery_worker_argv,
    free_port,
    fresh_postgres,
    process_environment,
    redis_available,
    redis_server_binary,
    spawned,
    unique_queue,
    wait_for_port,
)

pytestmark = pytest.mark.integration

# Seconds a recovered submission may take once the process that recovers it runs (a rescore takes a few).
PROMPT = 45.0


@pytest.fixture
def queue_name() -> Iterator[str]:
    if not redis_available():
        pytest.fail(f"integration tests need Redis at {REDIS_URL}")
    queue = unique_queue()
    yield queue
    _forget_unacknowledged(queue)


def _forget_unacknowledged(queue: str) -> None:
    """Drop what a killed worker left unacknowledged for ``queue`` in the shared Redis (kombu would restore it
    into that queue, which nothing consumes, after the visibility timeout)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    for tag, payload in client.hgetall("unacked").items():
        with contextlib.suppress(ValueError, IndexError, TypeError):
            if json.loads(payload)[2] == queue:
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)
    client.delete(queue)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    try:
        with fresh_postgres("lbl_rec") as url:
            yield url
    except psycopg.OperationalError as exc:
        pytest.fail(f"integration tests need PostgreSQL at {POSTGRES_ADMIN_URL}: {exc}")


def _phase(env: dict[str, str], *args: str, timeout: float = 180) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "tests.site.recovery_scenario", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("SCENARIO-RESULT ")]
    assert done.returncode == 0 and lines, f"{args} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("SCENARIO-RESULT "))
    return result


def _children(pid: int, timeout: float = 60) -> list[int]:
    """The child processes of ``pid`` (a prefork worker's pool), once there are some."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            found = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
            if found:
                return found
        time.sleep(0.2)
    raise AssertionError(f"process {pid} started no pool")


def _log(path: Path) -> str:
    return path.read_text(errors="replace")[-4000:] if path.exists() else ""


def _check_scored_once(result: dict[str, Any], logs: str) -> None:
    assert result["status"] == "scored", f"{result}\n{logs}"
    assert result["attempts"] == 2, result  # the killed attempt and the one that finished
    assert result["public_score_text"]
    # The stateful chain saw exactly one release per split: the killed attempt's transaction left nothing.
    assert result["releases"] == {"public": 1, "private": 1}, result


def test_a_worker_killed_mid_score_is_recovered_by_the_next_worker_start(
    postgres_url: str, queue_name: str, tmp_path: Path
) -> None:
    # A solo worker killed with its whole process: its message stays unacknowledged in Redis for the visibility
    # timeout (an hour) and today's row stayed in 'scoring' until the sweep. The restarted worker takes it back.
    env = process_environment(postgres_url, queue_name)
    submission = _phase(env, "prepare")["id"]
    argv = celery_worker_argv(env)
    with spawned(argv, env, tmp_path / "worker-1.log") as first:
        killed = _phase(env, "kill-when-scoring", str(submission), str(first.pid))
        first.wait(timeout=10)
    assert killed["status_at_kill"] == "scoring" and killed["attempts"] == 1
    with spawned(argv, env, tmp_path / "worker-2.log"):
        result = _phase(env, "wait", str(submission), str(PROMPT + 30))
    logs = _log(tmp_path / "worker-2.log")
    _check_scored_once(result, logs)
    assert "recovered at worker start" in logs


def test_a_killed_prefork_child_is_taken_over_by_the_redelivered_message(
    postgres_url: str, queue_name: str, tmp_path: Path
) -> None:
    # Celery redelivers a killed child's message at once (reject_on_worker_lost); today's claim skipped it
    # because the row was 'scoring', and the row waited for the sweep. Now the claim of a dead process is taken.
    env = process_environment(postgres_url, queue_name)
    submission = _phase(env, "prepare")["id"]
    log = tmp_path / "worker.log"
    with spawned(celery_worker_argv(env, pool="prefork", concurrency=1), env, log) as worker:
        (child,) = _children(worker.pid)
        killed = _phase(env, "kill-when-scoring", str(submission), str(child))
        result = _phase(env, "wait", str(submission), str(PROMPT))
        assert worker.poll() is None  # the same worker, a new child
    _check_scored_once(result, _log(log))
    assert result["seconds"] < PROMPT
    assert killed["claimed_by"].endswith(f" {child}")  # the claim named the process that was killed


def test_an_upload_made_while_redis_is_down_is_scored_when_redis_is_back(queue_name: str, tmp_path: Path) -> None:
    # Today the failed publish was only logged: the row waited for the sweep (five minutes, and only with beat).
    port = free_port()
    redis_argv = [redis_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                  "no", "--dir", str(tmp_path)]
    env = process_environment(f"sqlite:///{tmp_path / 'site.sqlite3'}", queue_name,
                              SCENARIO_ROWS="200", SCENARIO_BITS="200")
    env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    _phase(env, "prepare", "--no-upload")
    uploader = subprocess.Popen([sys.executable, "-m", "tests.site.recovery_scenario", "upload-and-wait", "90"],
                                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert uploader.stdout is not None
        first = uploader.stdout.readline()  # printed once the upload is stored (its publish has failed)
        assert first.startswith("UPLOADED "), first + (uploader.stderr.read() if uploader.stderr else "")
        back = time.monotonic()
        with spawned(redis_argv, env, tmp_path / "redis.log") as redis:
            wait_for_port(port, proc=redis)
            with spawned(celery_worker_argv(env), env, tmp_path / "worker.log"):
                out, err = uploader.communicate(timeout=120)
        lines = [line for line in out.splitlines() if line.startswith("SCENARIO-RESULT ")]
        assert lines, err[-4000:]
        result = json.loads(lines[-1].removeprefix("SCENARIO-RESULT "))
    finally:
        if uploader.poll() is None:
            uploader.kill()
    assert result["status"] == "scored", f"{result}\n{err[-3000:]}\n{_log(tmp_path / 'worker.log')}"
    assert result["attempts"] == 1
    assert time.monotonic() - back < PROMPT + 30
    assert "could not enqueue" in err


def test_a_score_text_longer_than_400_characters_is_stored_on_postgresql(postgres_url: str, queue_name: str) -> None:
    # mpfr:4000 has ~1,200 digits; the old varchar(400) columns failed every such submission on PostgreSQL.
    result = _phase(process_environment(postgres_url, queue_name), "mpfr-text")
    assert result["vendor"] == "postgresql"
    assert (result["action"], result["status"], result["error"]) == ("scored", "scored", ""), result
    assert result["raw_chars"] > 1000 and result["released_chars"] > 1000


def test_a_silent_claim_whose_worker_holds_the_row_lock_is_not_taken_over(postgres_url: str, queue_name: str) -> None:
    # A worker writes its result under a lock on its row, and its heartbeat waits for that lock meanwhile: a
    # silent claim may be alive. Neither a redelivery nor the sweep may take it while it is locked.
    env = process_environment(postgres_url, queue_name, SCENARIO_ROWS="50", SCENARIO_BITS="200")
    result = _phase(env, "locked-claim")
    assert result == {"while_locked": "busy", "swept_while_locked": [], "after": "scored", "attempts": 2}
