"""The fingerprint's row probes on K-class and paper-001 boards: each moves a few rows at once, so the hidden-split
test fits the default budget even at K = 10, and ``auto`` then plays the split-aware attack."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.fingerprint import (
    DEFAULT_BUDGET,
    all_scored_moves,
    class_row_probe,
    fingerprint,
    row_moves,
    row_probe_design,
)
from scoring.metrics import get_metric


def _hidden_split(labels: np.ndarray, metric: str, k: int, seed: int) -> tuple[LocalOracle, np.ndarray]:
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5, public_fraction=0.3, seed=seed)
    public = oracle.spec.hidden.public_mask.copy()
    oracle.public_fraction = None  # undisclosed: the attacker's view of the board says nothing of a split
    return oracle, public


def test_a_hidden_split_on_a_ten_class_board_goes_to_capacity_split() -> None:
    labels = np.random.default_rng(41).integers(0, 10, 300)
    oracle, public = _hidden_split(labels, "multiclass_logloss", 10, 41)
    result = attacks.run("auto", oracle)
    assert result.details["fingerprint_queries"] <= DEFAULT_BUDGET
    assert result.details["fingerprint"]["only_public_moves"] is True
    assert result.details["attack"] == "capacity_split", result.details["reasoning"]
    assert (result.labels[public] == labels[public]).all() and (result.fill_confidence()[public] == 1.0).all()


@pytest.mark.parametrize(("metric", "k"), [("multiclass_logloss", 10), ("kl", 10), ("brier", 10), ("brier", 2),
                                           ("multiclass_logloss", 3), ("norm_like:2.5", 3), ("itakura_saito", 10)])
def test_row_probes_see_a_hidden_split_and_never_one_on_a_plain_board(metric: str, k: int) -> None:
    for seed in range(6):
        labels = np.random.default_rng(seed).integers(0, k, 400)
        plain = fingerprint(LocalOracle(labels, metric=metric, n_classes=k, decimals=5, seed=seed), seed=seed)
        assert plain.only_public_moves is False and plain.probes <= DEFAULT_BUDGET
        split = fingerprint(_hidden_split(labels, metric, k, seed)[0], seed=seed)
        assert split.only_public_moves is True


@pytest.mark.parametrize(("metric", "k"), [("multiclass_logloss", 10), ("brier", 3), ("itakura_saito", 2)])
def test_the_all_scored_moves_are_every_labelings_move_by_brute_force(metric: str, k: int) -> None:
    """Every labeling of three probed rows (``K^3`` of them) scores one of the 2^3 all-scored sums, and each sum
    is some labeling's."""
    strengths = row_probe_design(metric, k, 1e-15, 3, 1e-9)
    assert len(strengths) == 3
    rows_fn = get_metric(metric).row_values
    assert rows_fn is not None
    probe = class_row_probe(3, k, dict(enumerate(strengths)))
    free = class_row_probe(3, k, {})
    moves = all_scored_moves([row_moves(metric, k, 1e-15, q) for q in strengths])
    brute = []
    for labeling in itertools.product(range(k), repeat=3):
        y = np.array(labeling)
        brute.append(float(rows_fn(probe, y, 1e-15).sum() - rows_fn(free, y, 1e-15).sum()))
    close = np.abs(moves[:, None] - np.array(brute)[None, :]) <= 1e-9 * np.maximum(1.0, np.abs(moves))[:, None]
    assert close.any(axis=0).all() and close.any(axis=1).all()


def test_a_binary_paper001_board_spends_no_more_probes_than_before() -> None:
    """Baseline, repeat, at most three row probes and one balance probe: six, as with one row a probe."""
    labels = np.random.default_rng(42).integers(0, 2, 300)
    report = fingerprint(LocalOracle(labels, metric="brier", decimals=5, seed=42), seed=42)
    assert report.probes <= 6 and report.only_public_moves is False and report.balance is not None
