"""Posteriors are calibrated: on seeded noisy boards, pooled, the labels in each confidence decile are right at that
decile's mean confidence ± 0.02 — and a likelihood decoder never calls a label exact."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import LocalOracle

#: The calibration the posteriors promise: each decile's accuracy within this of its mean confidence.
TOLERANCE = 0.02


def deciles(confidence: np.ndarray, right: np.ndarray) -> list[tuple[int, float, float]]:
    """(labels, mean confidence, accuracy) of each tenth of the labels ordered by confidence (ties kept together,
    so a decile may be empty or larger than a tenth)."""
    edges = np.quantile(confidence, np.linspace(0, 1, 11))
    rows: list[tuple[int, float, float]] = []
    for i in range(10):
        upper = confidence <= edges[i + 1] if i == 9 else confidence < edges[i + 1]
        mask = (confidence >= edges[i]) & upper if i else upper
        if mask.any():
            rows.append((int(mask.sum()), float(confidence[mask].mean()), float(right[mask].mean())))
    return rows


def enough(count: int, mean: float) -> bool:
    """Whether a decile holds enough labels for the tolerance to be a fair test: ± 0.02 at least two binomial
    standard errors of its accuracy (``count ≥ p(1 − p)/0.01²``: 2,500 at p = 0.5, 900 at 0.9, 100 at 0.99),
    so a calibrated decoder fails a tested decile by chance about once in twenty; a smaller decile is only
    reported."""
    return count >= mean * (1.0 - mean) / (TOLERANCE / 2) ** 2


def _assert_tested_deciles(confidences: list[np.ndarray], rights: list[np.ndarray], *, at_least: int) -> None:
    """At least ``at_least`` deciles of the pooled labels hold :func:`enough` of them, and each of those is right
    at its mean confidence within :data:`TOLERANCE`."""
    confidence, right = np.concatenate(confidences), np.concatenate(rights)
    table = deciles(confidence, right)
    tested = [(count, mean, accuracy) for count, mean, accuracy in table if enough(count, mean)]
    assert len(tested) >= at_least, f"too few deciles hold enough labels to test: {table}"
    off = [(count, round(mean, 4), round(accuracy, 4)) for count, mean, accuracy in tested
           if abs(accuracy - mean) > TOLERANCE]
    assert not off, f"deciles right at more than ± {TOLERANCE} from their mean confidence: {off} (all: {table})"


def _noisy_board(
    n: int, seed: int, budget: int, scale: float = 1e-2
) -> tuple[np.ndarray, np.ndarray, attacks.AttackResult]:
    truth = (np.random.default_rng(1000 + seed).random(n) < 0.5).astype(np.int64)
    oracle = LocalOracle(truth, decimals=5, seed=seed, defenses=[
        {"name": "noise", "kind": "laplace", "scale": scale}, {"name": "rounding", "decimals": 5}])
    result = attacks.run("noisy", oracle, budget=budget, seed=seed)
    return result.fill_confidence(), result.labels == truth, result


def test_noisy_posteriors_are_calibrated_per_decile_on_pooled_seeded_boards() -> None:
    """1,000-row boards under Laplace noise (scale 1e-2 on the mean, 5 decimals) cut short by budgets of a quarter
    to two fifths of a query a row, where the random-sign decode is still uncertain: 30,000 labels pooled."""
    confidences, rights = [], []
    for fraction in (0.25, 0.35, 0.42):
        for seed in range(10):
            confidence, right, result = _noisy_board(1000, seed + int(fraction * 1000), int(fraction * 1000) + 30)
            assert not result.exact, "a likelihood decoder vouched for a label"
            confidences.append(confidence)
            rights.append(right)
    _assert_tested_deciles(confidences, rights, at_least=8)


def test_group_design_posteriors_are_calibrated_per_decile() -> None:
    """A smaller noise (Laplace 1e-3) gives the binary-weighted group design: exact posteriors per group, and the
    rows no group reached at the balance the settled ones leave. Budgets of 0.1 to 0.3 queries a row; the labels
    of the boards that kept the group design pooled (a board whose residuals outgrew the probes' noise moves to
    random signs, whose posteriors the test above holds)."""
    confidences, rights = [], []
    for fraction in (0.1, 0.2, 0.3):
        for seed in range(14):
            confidence, right, result = _noisy_board(1000, seed + int(fraction * 1000), int(fraction * 1000) + 30,
                                                     scale=1e-3)
            assert not result.exact
            if result.details["design"] == "groups":
                confidences.append(confidence)
                rights.append(right)
    assert len(confidences) >= 25, "too few boards kept the group design to test it"
    _assert_tested_deciles(confidences, rights, at_least=7)


def test_the_deciles_helper_groups_labels_by_confidence() -> None:
    confidence = np.linspace(0.5, 1.0, 100)
    table = deciles(confidence, np.ones(100, dtype=bool))
    assert [count for count, _, _ in table] == [10] * 10
    assert table[0][1] == pytest.approx(np.mean(confidence[:10]))
    assert enough(2500, 0.5) and not enough(2499, 0.5) and enough(100, 0.99)
