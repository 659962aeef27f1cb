"""The Brier / norm-like top digit drawn under the simplex budget (:mod:`attacks.capacity.reach_top`): every row
it returns is a probability row's offsets (checked through the design and the scoring core); at a large cap
some row reaches beyond the banded top's cap and the sum is more entropic; its entropy is the brute-force
entropy of the sum; and the attack it feeds recovers every label, random and adversarial (constant, cyclic)."""

from __future__ import annotations

from collections import Counter
from itertools import product

import numpy as np
import pytest

from attacks import LocalOracle
from attacks.capacity import capacity_attack
from attacks.capacity.kary import top_weights_k
from attacks.capacity.reach_top import reach_top_weights, sum_entropy
from attacks.capacity.row_loss import RowLoss
from scoring.metrics import get_metric


def brute_entropy(weights: np.ndarray) -> float:
    counts = Counter(sum(int(weights[i, c]) for i, c in enumerate(labeling))
                     for labeling in product(range(weights.shape[1]), repeat=len(weights)))
    total = sum(counts.values())
    return -sum(n / total * np.log2(n / total) for n in counts.values())


@pytest.mark.parametrize("seed", range(5))
def test_sum_entropy_is_the_enumerated_entropy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, 12, size=(3, 4))
    assert sum_entropy(weights) == pytest.approx(brute_entropy(weights), abs=1e-12)


@pytest.mark.parametrize(("metric", "classes"), [("brier", 6), ("brier", 10), ("norm_like", 6), ("norm_like", 10)])
@pytest.mark.parametrize("v_cap", [3, 40, 300])
def test_drawn_rows_are_reached_and_go_beyond_the_cap(metric: str, classes: int, v_cap: int) -> None:
    loss = RowLoss.for_metric(metric, classes, 1e-15)
    scale = loss.max_real / v_cap  # the weight v_cap is the banded top's largest offset
    weights = reach_top_weights(loss, v_cap, 3, scale)
    assert weights is not None and weights.shape == (3, classes)
    again = reach_top_weights(loss, v_cap, 3, scale)
    assert again is not None and again.tolist() == weights.tolist()  # seeded: the same every time
    assert (weights.min(axis=1) == 0).all()
    assert loss.feasible((weights - weights.min(axis=1, keepdims=True)) * scale).all()
    # The rows are designed: each label's loss sits the asked offset above the lightest label's.
    rows = loss.design(weights, scale)
    score = get_metric(metric)
    for q, w in zip(rows, weights, strict=True):
        losses = score.row_values(np.array([q] * classes), np.arange(classes), 1e-15)  # type: ignore[misc]
        assert np.allclose(losses - losses.min(), w * scale, atol=1e-9)


@pytest.mark.parametrize(("metric", "classes", "m"), [("brier", 6, 5), ("brier", 10, 4)])
def test_drawn_top_beats_the_banded_top_at_a_large_cap(metric: str, classes: int, m: int) -> None:
    loss = RowLoss.for_metric(metric, classes, 1e-15)
    v_cap = 300
    drawn = reach_top_weights(loss, v_cap, m, loss.max_real / v_cap)
    banded = np.array(top_weights_k(v_cap, m, classes, top_low=loss.top_low)).reshape(m, classes)
    assert drawn is not None
    assert drawn.max() > v_cap  # a row beyond the banded cap: the simplex's joint budget, not the least row's
    assert sum_entropy(drawn) > sum_entropy(banded) + 0.3


@pytest.mark.parametrize(("metric", "classes"), [("brier", 6), ("brier", 10), ("norm_like", 6)])
def test_attack_recovers_every_label(metric: str, classes: int) -> None:
    n = 120
    rng = np.random.default_rng(classes)
    for labels in (rng.integers(0, classes, n), np.zeros(n, dtype=np.int64), np.arange(n) % classes):
        result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=classes, decimals=5))
        assert (result.labels == labels).all()


def test_the_simplex_top_is_drawn_only_where_the_simplex_caps_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Itakura–Saito's box (≈ 1/eps) is what caps its rows, not the simplex: its tops are never drawn under the
    simplex budget (they cost 100× the attack for the same queries), Brier's are."""
    from attacks.capacity import kary

    calls: list[str] = []
    original = kary.reach_top

    def spy(weights: np.ndarray, rows: list[int], v_cap: int, scale: float, loss: RowLoss) -> np.ndarray:
        calls.append(loss.metric)
        return original(weights, rows, v_cap, scale, loss)

    monkeypatch.setattr(kary, "reach_top", spy)
    for metric in ("itakura_saito", "brier"):
        labels = np.random.default_rng(3).integers(0, 3, 60)
        result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=3, decimals=5))
        assert np.array_equal(result.labels, labels)
    assert calls and set(calls) == {"brier"}
