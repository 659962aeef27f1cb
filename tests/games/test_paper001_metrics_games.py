"""A game file can select paper 001's metrics: honest models and the attacker's final submission go in as the
metric reads them (logits for softmax_ce and sigmoid_ce), the boards rank them, and an attack that reads the
metric's direction recovers the labels through it."""

from __future__ import annotations

import numpy as np
import pytest

from attacks import AttackFailed, Oracle
from attacks.registry import ATTACKS
from games import GameFileError, parse_game, run_game
from scoring import get_metric

GAME = """
[game]
name = "paper001"
seeds = [0]
metric = "{metric}"

[[datasets]]
name = "balanced-30"
source = "balanced"
n_rows = 30

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "rounding-5"
chain = [{{name = "rounding", decimals = 5}}]

[[attacks]]
name = "direction"
"""


def read_the_direction(oracle: Oracle) -> np.ndarray:
    """Move one row towards class 1 per query, in the metric's own input (probability or logit), and read
    whether the loss fell."""
    metric = get_metric(oracle.metric)  # type: ignore[attr-defined]
    base = metric.from_probabilities(np.full(oracle.n_rows, 0.5))
    towards_one = float(metric.from_probabilities(np.array([0.9]))[0])
    baseline = oracle.submit(base)
    labels = np.zeros(oracle.n_rows, dtype=np.int64)
    for row in range(oracle.n_rows):
        probe = base.copy()
        probe[row] = towards_one
        released = oracle.submit(probe)
        if released is None or baseline is None:
            raise AttackFailed("nothing was released")
        labels[row] = 1 if float(released) < float(baseline) else 0
    return labels


@pytest.fixture(autouse=True)
def direction_attack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ATTACKS, "direction", read_the_direction)


@pytest.mark.parametrize("metric", ["kl", "itakura_saito", "brier", "norm_like", "norm_like:2.5", "softmax_ce",
                                    "sigmoid_ce"])
def test_a_game_plays_on_each_metric(metric: str) -> None:
    result = run_game(parse_game(GAME.format(metric=metric)))
    assert result.game.metric == metric
    for board in result.boards:
        released = [p.released_public for p in board.participants]
        assert all(value is not None and np.isfinite(value) for value in released)
        # Honest models are informative: better than the uniform guess's loss on average.
        uniform = get_metric(metric).score(
            get_metric(metric).from_probabilities(np.full(30, 0.5)), np.array([0, 1] * 15), 1e-15
        )
        assert np.median([float(v) for v in released if v is not None]) < uniform
    for cell in result.cells:
        assert cell.status == "ok", cell.error
        assert cell.outcome.exact_recovery and cell.outcome.public_rank == 1


def test_a_parametrised_metric_is_checked_when_the_game_is_read() -> None:
    with pytest.raises(GameFileError, match=r"unknown metric 'norm_like:1\.5'"):
        parse_game(GAME.format(metric="norm_like:1.5"))
