"""The bot's checkpointed oracle carries a board's other released metrics (``also_report``): ``auto`` plays
paper 004's AUC + log-loss attack through it, and a resumed run replays those queries without re-submitting."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attacks import LocalOracle, run
from bot.checkpoint import BudgetExhausted, Checkpoint, CheckpointMismatch, ReplayOracle

LABELS = (np.random.default_rng(12).random(300) < 0.4).astype(np.int64)
HEADER = {"competition": "auc-board", "n_rows": 300}


def _board() -> LocalOracle:
    return LocalOracle(LABELS, decimals=5, also_report=("auc",), seed=12)


def test_auto_plays_auc_logloss_ranks_through_the_checkpoint_and_a_resumed_run_replays_it(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(), Checkpoint.open(path, HEADER))
    result = run("auto", first, reserve=1)
    assert result.details["attack"] == "auc_logloss_ranks", result.details["reasoning"]
    assert np.array_equal(result.labels, LABELS)
    server = _board()
    again = ReplayOracle(server, Checkpoint.open(path, HEADER))
    replayed = run("auto", again, reserve=1)
    assert server.queries == 0 and again.replayed == first.queries
    assert np.array_equal(replayed.labels, LABELS)


def test_submit_all_replays_every_metric_and_checks_the_digest(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    probe = [0.5] * 299 + [0.9]
    asked = ReplayOracle(_board(), Checkpoint.open(path, HEADER)).submit_all(probe)
    assert set(asked) == {"binary_logloss", "auc"}
    server = _board()
    assert ReplayOracle(server, Checkpoint.open(path, HEADER)).submit_all(probe) == asked and server.queries == 0
    with pytest.raises(CheckpointMismatch):
        ReplayOracle(_board(), Checkpoint.open(path, HEADER)).submit_all([0.5] * 300)
    with pytest.raises(BudgetExhausted):
        ReplayOracle(_board(), Checkpoint.open(path, HEADER), budget=0).submit_all(probe)
