"""``capacity`` on paper 001's Bregman losses (issue 11): the K-ary lattice runs on each metric's own row losses
(:class:`attacks.capacity.row_loss.RowLoss`), recovers every label (random and adversarial labelings, binary
and K-class), its one-query decoder agrees with brute force through the scoring core, the design reaches the
offsets it asks for, and a metric or a board it cannot model is refused with an ``AttackFailed``."""

from __future__ import annotations

from collections import deque
from itertools import product

import numpy as np
import pytest

from attacks import AttackFailed, LocalOracle
from attacks.capacity import capacity_attack, counting_bound
from attacks.capacity.kary import build_model, kary_predictions, metric_window, plan_query_k, to_submission
from attacks.capacity.row_loss import RowLoss
from attacks.exact import local_precision, mpfr
from scoring.metrics import get_metric
from scoring.pipeline import release_text

CASES = [("brier", 2), ("brier", 3), ("norm_like:2.5", 3), ("itakura_saito", 2), ("itakura_saito", 3), ("kl", 3),
         ("brier", 6)]


def labelings(n: int, k: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    skewed = np.where(rng.random(n) < 0.9, k - 1, rng.integers(0, k, n))
    return [rng.integers(0, k, n), np.zeros(n, dtype=np.int64), skewed]


@pytest.mark.parametrize(("metric", "k"), CASES)
def test_recovers_random_and_adversarial_labelings(metric: str, k: int) -> None:
    for i, labels in enumerate(labelings(45, k, seed=k)):
        oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5)
        result = capacity_attack(oracle, check=i == 0)  # the claim check on this metric, once per case
        assert result.labels.tolist() == labels.tolist(), (metric, k, i)
        assert result.details["metric"] == metric


@pytest.mark.parametrize(("metric", "k"), [("brier", 3), ("norm_like", 3), ("itakura_saito", 3), ("brier", 2)])
def test_decoder_keeps_every_labeling_brute_force_finds_consistent(metric: str, k: int) -> None:
    """One query on 5 rows of a 30-row board: the scoring core, run on every labeling of the batch rows,
    releases the observed score only for labelings the decoder keeps (sound), and the decoder keeps few more."""
    n, decimals, eps = 30, 5, 1e-15
    loss = RowLoss.for_metric(metric, k, eps)
    model = build_model(n, k, eps, decimals, loss=loss)
    scorer = get_metric(metric)
    rng = np.random.default_rng(k)
    for _ in range(3):
        query = plan_query_k(deque(range(5)), deque(), model, k, max_rows=5)
        rows, ks = query.row_weights()
        sent, _ = to_submission(kary_predictions(n, k, rows, ks, model.unit, loss))
        truth = rng.integers(0, k, n)
        released, _ = release_text(scorer.score(sent, truth, eps), decimals)
        masks = query.decode(metric_window(float(released), model, sent[rows], ks, n - len(rows), loss))
        kept: set[tuple[int, ...]] = set()
        for choice in product(*[np.flatnonzero(m) for m in masks]):
            chosen: dict[int, int] = {}
            for digit, index in zip(query.digits, choice, strict=True):
                chosen.update(zip(digit.group.rows.tolist(), digit.group.patterns[index].tolist(), strict=True))
            kept.add(tuple(chosen[r] for r in range(5)))
        consistent: set[tuple[int, ...]] = set()
        labels = truth.copy()
        for candidate in product(range(k), repeat=5):
            labels[:5] = candidate
            if release_text(scorer.score(sent, labels, eps), decimals)[0] == released:
                consistent.add(candidate)
        assert tuple(truth[:5].tolist()) in consistent
        assert consistent <= kept
        assert len(kept) <= 3 * len(consistent)


@pytest.mark.parametrize(("metric", "k"), [("brier", 3), ("brier", 10), ("norm_like", 3), ("itakura_saito", 4),
                                           ("itakura_saito", 2), ("brier", 2)])
def test_designed_rows_reach_their_offsets_within_a_fraction_of_the_step(metric: str, k: int) -> None:
    """Any reachable weight vector within the cap (one class at 0; the spread rows the lattice draws among
    them) gets a row whose labels' exact losses differ by the weights times the step, to within a hundredth
    of the step: the decoder's deviation budget stays small."""
    loss = RowLoss.for_metric(metric, k, 1e-15)
    model = build_model(300, k, 1e-15, 5, loss=loss)
    rng = np.random.default_rng(k)
    ks = rng.integers(0, model.cap + 1, size=(400, k))
    ks[np.arange(400), rng.integers(0, k, 400)] = 0
    if k == 2:
        ks[:, 0] = 0  # two classes: class 0 at weight 0 (the upload is P(class 1))
    spread = np.r_[0, model.cap, [-(-3 * model.cap // 4)] * (k - 2)][None, :]  # a top row: the others in [¾V, V]
    ks = np.vstack([spread.astype(np.int64), ks])
    ks = ks[loss.feasible(ks * model.unit)][:40]
    assert len(ks) >= 3 and loss.feasible(spread * model.unit).all()
    rows = loss.design(ks, model.unit)
    assert np.allclose(rows.sum(axis=1), 1.0, atol=1e-12) and (rows >= 0).all()
    with local_precision(128):
        for row, k_row in zip(rows, ks, strict=True):
            losses = loss.exact_losses(row[1] if k == 2 else row)
            shifted = [float(x - w * mpfr(model.unit)) for x, w in zip(losses, k_row.tolist(), strict=True)]
            assert max(shifted) - min(shifted) <= 0.01 * model.unit


def test_brier_reachability_is_the_simplex_condition() -> None:
    """Offsets ``d`` (least 0) are reachable by a K-class Brier row iff ``K·max d − Σ d <= 2``; the spread cap
    (a top row: one 0, one at the cap, the others at ¾ of it) is ``2/(K/4 + 1/2)``, the whole spread (1) on a
    binary board."""
    rng = np.random.default_rng(5)
    for k in (3, 6, 10):
        loss = RowLoss.for_metric("brier", k, 1e-15)
        d = rng.uniform(0, 2, size=(500, k))
        d[:, 0] = 0
        closed = k * d.max(axis=1) - d.sum(axis=1) <= 2
        margin = np.abs(k * d.max(axis=1) - d.sum(axis=1) - 2) > 1e-6
        assert (loss.feasible(d)[margin] == closed[margin]).all()
        assert loss.max_real == pytest.approx(2 / (k / 4 + 0.5), rel=1e-6)
    assert RowLoss.for_metric("brier", 2, 1e-15).max_real == pytest.approx(1.0, rel=1e-6)


def test_losses_match_the_scoring_core() -> None:
    """The exact row losses agree with the server's float64 formula on the same floats."""
    rng = np.random.default_rng(3)
    for metric in ("brier", "norm_like", "norm_like:2.5", "itakura_saito", "kl"):
        for k in (2, 4):
            loss = RowLoss.for_metric(metric, k, 1e-15)
            row = rng.dirichlet(np.ones(k))
            sent = row[1] if k == 2 else row
            exact = [float(x) for x in loss.exact_losses(sent)]
            scorer = get_metric(metric)
            cells = np.array([sent] * k)
            served = scorer.row_values(cells, np.arange(k), 1e-15)  # type: ignore[misc]
            assert np.allclose(exact, served, rtol=1e-12, atol=1e-14), (metric, k)


def test_the_bound_uses_the_metric_spread() -> None:
    assert counting_bound(2201, 5, classes=2, spread=1.0) == 8  # binary Brier (README: 8)
    assert counting_bound(2201, 5, classes=6, spread=2.0) == 3
    assert RowLoss.for_metric("norm_like:2.5", 3, 1e-15).spread == 2.5


def test_refusals_are_attack_failed_with_a_reason() -> None:
    labels = np.random.default_rng(1).integers(0, 10, 800)
    oracle = LocalOracle(labels, metric="norm_like", n_classes=10, decimals=4)
    with pytest.raises(AttackFailed, match="no room"):  # α = 3, K = 10: a top row moves at most ≈ 0.1
        capacity_attack(oracle)
    assert oracle.queries == 0
    with pytest.raises(AttackFailed, match="log-loss board or one of paper 001"):
        capacity_attack(LocalOracle(labels[:50] % 2, metric="accuracy", decimals=5))
    with pytest.raises(AttackFailed, match="capacity_split"):
        capacity_attack(LocalOracle(labels[:50] % 3, metric="brier", n_classes=3, decimals=5, public_fraction=0.5))
