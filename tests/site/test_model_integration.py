"""Integration: a real Celery worker (Redis broker, SQLite file) runs participants' ONNX models in its sandboxed
child processes: an honest model is scored, an endless one fails at the time limit instead of staying stuck."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stack.processes import REDIS_URL, REPO, celery_worker, process_environment, redis_available, unique_queue

pytestmark = pytest.mark.integration


def test_a_real_worker_scores_an_honest_model_and_stops_an_endless_one(tmp_path: Path) -> None:
    if not redis_available():
        pytest.fail(f"integration tests need Redis at {REDIS_URL}")
    env = process_environment(f"sqlite:///{tmp_path / 'models.sqlite3'}", unique_queue())
    env.update(LEADERBOARD_MODEL_CPU_SECONDS="2", LEADERBOARD_MODEL_WALL_SECONDS="5")
    with celery_worker(env, tmp_path / "worker.log"):
        scenario = subprocess.run(
            [sys.executable, "-m", "tests.site.model_scenario"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=180,
        )
    log = (tmp_path / "worker.log").read_text()[-3000:]
    lines = [line for line in scenario.stdout.splitlines() if line.startswith("SCENARIO-RESULT ")]
    assert scenario.returncode == 0 and lines, f"scenario failed:\n{scenario.stderr[-3000:]}\n{log}"
    result = json.loads(lines[-1].removeprefix("SCENARIO-RESULT "))
    assert result["honest"]["status"] == "scored", log
    assert result["honest"]["public_score_text"]
    assert result["endless"]["status"] == "failed", log
    error = result["endless"]["error"]
    assert "CPU-time limit of 2 s" in error or "wall-time limit of 5 s" in error
