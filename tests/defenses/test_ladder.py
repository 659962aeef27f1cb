"""The Ladder against transcriptions of Blum & Hardt's Algorithm 1 and of Ladder.jl's parameter-free rule."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from defenses import DefenseChain, DefenseConfigError
from tests.defenses.support import Participant, metric_view, scripted_metric, view


def blum_hardt_fixed(scores: list[float], eta: float) -> list[float]:
    """Algorithm 1 of Blum & Hardt (2015), literally: R_0 = ∞; if l_t < R_{t-1} − η then R_t = [l_t]_η."""
    best, out = math.inf, []
    step = Fraction(repr(eta))
    for loss in scores:
        if Fraction(loss) < (Fraction(best) if best != math.inf else math.inf) - step:
            best = float(round(Fraction(loss) / step) * step)
        out.append(best)
    return out


def ladder_jl_free(loss_rows: list[np.ndarray]) -> list[float]:
    """``score!(::FreeLadder, …)`` from Ladder.jl, transcribed (Julia's ``std`` is the n−1 sample std)."""
    current, leader, out = math.inf, None, []
    for losses in loss_rows:
        loss = float(np.mean(losses))
        s = np.std(losses, ddof=1) if leader is None else np.std(losses - leader, ddof=1)
        if loss < current - s / math.sqrt(len(losses)):
            current, leader = loss, losses
        out.append(current)
    return out


def _run(chain: list[dict], vectors: list[np.ndarray], higher_is_better: bool = False) -> list[float]:
    participant = Participant(chain, persist=True)
    metric = scripted_metric(higher_is_better)
    return [participant.submit(view(v, np.zeros(len(v)), metric)).released for v in vectors]


def test_fixed_step_on_a_scripted_sequence() -> None:
    scores = [0.50, 0.45, 0.38, 0.39, 0.27, 0.26, 0.10]
    released = _run([{"name": "ladder", "eta": 0.1}], [np.full(10, s) for s in scores])
    assert released == [0.5, 0.5, 0.4, 0.4, 0.3, 0.3, 0.1]
    assert released == blum_hardt_fixed(scores, 0.1)


def test_fixed_step_matches_the_pseudo_code_on_a_random_walk() -> None:
    rng = np.random.default_rng(3)
    scores = list(0.7 - np.cumsum(rng.normal(0.003, 0.02, 60)))
    released = _run([{"name": "ladder", "eta": 0.013}], [np.full(4, s) for s in scores])
    assert released == blum_hardt_fixed([float(np.mean(np.full(4, s))) for s in scores], 0.013)


def test_fixed_step_mirrors_for_higher_is_better_metrics() -> None:
    scores = [0.50, 0.55, 0.62, 0.61, 0.73]
    released = _run([{"name": "ladder", "eta": 0.1}], [np.full(10, s) for s in scores], higher_is_better=True)
    assert released == [0.5, 0.5, 0.6, 0.6, 0.7]
    assert released == [-r for r in blum_hardt_fixed([-s for s in scores], 0.1)]


def test_default_step_is_n_to_the_minus_one_third() -> None:
    n = 1000  # eta = 0.1
    released = _run([{"name": "ladder"}], [np.full(n, s) for s in (0.5, 0.41, 0.39)])
    assert released == pytest.approx([0.5, 0.5, 0.4])


def test_parameter_free_matches_ladder_jl() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 1, 300)
    rows = [np.clip(base + rng.normal(-0.01 * t, 0.05, 300), 0, None) for t in range(40)]
    released = _run([{"name": "ladder", "mode": "parameter_free"}], rows)
    expected = ladder_jl_free(rows)
    assert released == pytest.approx(expected, rel=0, abs=1e-12)
    assert len(set(expected)) > 3  # the sequence exercised both acceptance and rejection


def test_parameter_free_on_a_real_metric_accepts_only_significant_gains() -> None:
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 2, 400)
    good = np.clip(0.25 + 0.5 * labels + rng.normal(0, 0.1, 400), 0.01, 0.99)
    tiny = np.clip(good + rng.normal(0, 1e-4, 400), 0.01, 0.99)  # noise-level change: must be rejected
    participant = Participant([{"name": "ladder", "mode": "parameter_free"}])
    first = participant.submit(view(good, labels)).released
    second = participant.submit(view(tiny, labels)).released
    assert second == first


def test_parameter_free_rejects_auc_at_configuration_and_falls_back_at_release() -> None:
    chain = DefenseChain.from_json([{"name": "ladder", "mode": "parameter_free"}])
    with pytest.raises(DefenseConfigError, match="needs per-row values"):
        chain.check_metric(metric_view("auc"))
    labels = np.array([0, 1] * 50)
    outcome = chain.release(view(np.linspace(0, 1, 100), labels, metric_view("auc")), states=None, secret=1,
                            submission_key="a")
    assert outcome.released is not None and "fixed rule" in outcome.notes[0]


def test_it_rejects_bad_parameters() -> None:
    with pytest.raises(DefenseConfigError, match="'eta' must be a positive number"):
        DefenseChain.from_json([{"name": "ladder", "eta": 0}])
    with pytest.raises(DefenseConfigError, match=r"unknown parameter\(s\) eta"):
        DefenseChain.from_json([{"name": "ladder", "mode": "parameter_free", "eta": 0.1}])
    with pytest.raises(DefenseConfigError, match="'mode' must be one of"):
        DefenseChain.from_json([{"name": "ladder", "mode": "adaptive"}])
