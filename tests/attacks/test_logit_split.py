"""``logits_split``: a softmax or sigmoid cross-entropy board with a public split, read by ``capacity_split`` through
the logits of its log-loss design; ``auto`` plays it there instead of guessing."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.logit_split import LogitBoard


def _public_truth(oracle: LocalOracle, labels: np.ndarray) -> np.ndarray:
    expected = np.full(len(labels), -1)
    public = oracle.spec.split_rows["public"]
    expected[public] = labels[public]
    return expected


@pytest.mark.parametrize(("metric", "k"), [("sigmoid_ce", 2), ("softmax_ce", 3), ("softmax_ce", 6)])
def test_it_reads_the_public_mask_and_labels_of_a_split_logit_board(metric: str, k: int) -> None:
    labels = np.random.default_rng(k).integers(0, k, 300)
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5, public_fraction=0.3)
    result = attacks.run("logits_split", oracle)  # confirmed on the logit board itself
    assert result.labels.tolist() == _public_truth(oracle, labels).tolist()
    assert result.details["through"] == "logits" and oracle.queries < 60


def test_the_logits_score_as_the_log_loss_of_the_same_probabilities() -> None:
    labels = np.random.default_rng(0).integers(0, 4, 50)
    logit_board = LocalOracle(labels, metric="softmax_ce", n_classes=4, decimals=None)
    log_loss = LocalOracle(labels, metric="multiclass_logloss", n_classes=4, decimals=None)
    q = np.random.default_rng(1).dirichlet(np.ones(4), 50).clip(1e-6)
    q /= q.sum(axis=1, keepdims=True)
    seen = LogitBoard(logit_board).submit(q)
    assert float(seen) == pytest.approx(float(log_loss.submit(q)), rel=1e-13)  # type: ignore[arg-type]


def test_auto_plays_it_on_a_split_logit_board() -> None:
    labels = np.random.default_rng(7).integers(0, 3, 240)
    oracle = LocalOracle(labels, metric="softmax_ce", n_classes=3, decimals=5, public_fraction=0.3)
    result = attacks.run("auto", oracle, budget=200)
    assert result.details["attack"] == "logits_split"
    public = oracle.spec.split_rows["public"]
    assert (result.labels[public] == labels[public]).all()


def test_it_refuses_a_board_that_is_not_on_logits() -> None:
    with pytest.raises(AttackFailed, match="softmax_ce and sigmoid_ce"):
        attacks.run("logits_split", LocalOracle(np.zeros(10, dtype=int), public_fraction=0.5))
