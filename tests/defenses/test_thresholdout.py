"""Thresholdout: fixed reference side, reference answers when sides agree, noisy holdout and budget when not."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from defenses import DefenseChain, DefenseConfigError
from defenses.thresholdout import Thresholdout
from tests.defenses.support import Participant, context, metric_view, view

N = 2000
LABELS = np.random.default_rng(31).integers(0, 2, N)


def _mask(key: str) -> np.ndarray:
    defense = Thresholdout(reference_fraction=0.3)
    return defense.reference_mask(view(np.zeros(N), LABELS), context(key, name="thresholdout"))


def test_the_reference_side_is_fixed_per_competition_and_sized_by_the_fraction() -> None:
    first = _mask("submission:1")
    assert np.array_equal(first, _mask("submission:2"))
    assert abs(int(first.sum()) - 0.3 * N) <= 5 * math.sqrt(N * 0.3 * 0.7)  # 5-sigma binomial bound


def test_when_the_sides_agree_it_releases_the_reference_score_exactly() -> None:
    rng = np.random.default_rng(1)
    honest = np.clip(0.3 + 0.4 * LABELS + rng.normal(0, 0.1, N), 0.01, 0.99)
    v = view(honest, LABELS, metric_view("accuracy"))
    reference = _mask("s")
    outcome = DefenseChain([Thresholdout(reference_fraction=0.3)]).release(
        v, states=None, secret=20261121, submission_key="s"
    )
    assert outcome.released == v.with_rows(np.flatnonzero(reference)).score()
    assert outcome.states[0]["budget_left"] == 100


def test_an_overfit_submission_spends_budget_gets_noise_then_nothing() -> None:
    reference = _mask("any")
    overfit = np.where(reference, 1 - LABELS, LABELS).astype(float)  # perfect on the holdout, wrong elsewhere
    participant = Participant([{"name": "thresholdout", "reference_fraction": 0.3, "budget": 2, "sigma": 0.01}],
                              persist=True)
    v = view(overfit, LABELS, metric_view("accuracy"))
    first, second, third = (participant.submit(v) for _ in range(3))
    assert abs(float(first.released) - 1.0) < 0.2 and first.released != 1.0  # noisy holdout value
    assert second.released is not None and second.released != first.released
    assert third.released is None and "budget" in (third.message or "")
    assert participant.states is not None and participant.states[0]["budget_left"] == 0


def test_the_holdout_noise_is_laplace_sigma() -> None:
    reference = _mask("any")
    overfit = np.where(reference, 1 - LABELS, LABELS).astype(float)
    chain = DefenseChain([Thresholdout(reference_fraction=0.3, sigma=0.05)])
    # The holdout accuracy is 1.0, the top of accuracy's range, where releases are clamped (see the next
    # test); an unbounded view of the same metric shows the noise itself.
    v = view(overfit, LABELS, replace(metric_view("accuracy"), lower=-math.inf, upper=math.inf))
    n = 1000
    errors = np.array([
        float(chain.release(v, states=None, secret=20261121, submission_key=f"s{i}").released) - 1.0  # type: ignore[arg-type]
        for i in range(n)
    ])
    # Rarely (P ≈ e^-4.5 / 2) the Lap(4σ) draw hides the gap and the reference score 0.0 is released.
    holdout_answers = errors[np.abs(errors) < 0.9]
    assert len(holdout_answers) >= 0.97 * n
    b, m = 0.05, len(holdout_answers)  # Laplace(b): variance 2b², sample-variance sd b²·sqrt(20/m)
    assert abs(holdout_answers.var() - 2 * b * b) <= 5 * b * b * math.sqrt(20 / m)


def test_a_noisy_holdout_answer_stays_in_the_metrics_range() -> None:
    # Today's code released accuracies above 1 (1.0 + Laplace noise) about half the time.
    reference = _mask("any")
    overfit = np.where(reference, 1 - LABELS, LABELS).astype(float)
    chain = DefenseChain([Thresholdout(reference_fraction=0.3, sigma=0.05)])
    v = view(overfit, LABELS, metric_view("accuracy"))
    released = [float(chain.release(v, states=None, secret=20261121, submission_key=f"s{i}").released)  # type: ignore[arg-type]
                for i in range(200)]
    assert min(released) >= 0.0 and max(released) <= 1.0
    assert sum(r == 1.0 for r in released) > 50 and sum(0.5 < r < 1.0 for r in released) > 50


@pytest.mark.parametrize(("params", "message"), [
    ({"reference_fraction": 1.0}, "'reference_fraction' must be in (0, 1)"),
    ({"budget": 0}, "'budget' must be a positive integer"),
    ({"threshold": -1}, "'threshold' must be a positive number"),
    ({"sigma": 1e308}, "'sigma' must be at most 1e+09"),  # accepted before, then every release overflowed
])
def test_it_rejects_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(DefenseConfigError) as info:
        DefenseChain.from_json([{"name": "thresholdout", **params}])
    assert message in str(info.value)


def test_it_must_come_before_other_score_defenses() -> None:
    with pytest.raises(DefenseConfigError, match="must come before other score defenses"):
        DefenseChain.from_json([{"name": "noise", "kind": "laplace", "scale": 1.0}, {"name": "thresholdout"}])
