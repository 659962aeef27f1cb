"""The noise defense: validation, calibration to the label sensitivity, spread, reproducibility, ledger."""

from __future__ import annotations

import math

import numpy as np
import pytest

from defenses import DefenseChain, DefenseConfigError
from defenses.noise import Noise, laplace_epsilon
from defenses.sensitivity import sensitivity
from tests.defenses.support import SECRET, Participant, metric_view, view

RNG = np.random.default_rng(11)
LABELS = RNG.integers(0, 2, 200)
PREDICTIONS = np.clip(0.2 + 0.6 * LABELS + RNG.normal(0, 0.15, 200), 0.01, 0.99)


def _release(chain: list[dict], key: str = "submission:1", metric: str = "binary_logloss") -> float:
    outcome = DefenseChain.from_json(chain).release(
        view(PREDICTIONS, LABELS, metric_view(metric)), states=None, secret=SECRET, submission_key=key
    )
    assert outcome.released is not None
    return float(outcome.released)


@pytest.mark.parametrize(("params", "message"), [
    ({"kind": "laplace"}, "exactly one of 'scale'"),
    ({"kind": "laplace", "scale": 1.0, "epsilon": 1.0}, "exactly one of 'scale'"),
    ({"kind": "laplace", "scale": -1.0}, "'scale' must be a positive number"),
    ({"kind": "laplace", "scale": 1.0, "delta": 1e-6}, "unknown parameter(s) delta"),
    ({"kind": "gaussian", "epsilon": 1.0, "delta": 2.0}, "'delta' must be below 1"),
    ({"kind": "cauchy", "scale": 1.0}, "unknown kind 'cauchy'"),
    ({"kind": "laplace", "scale": 1.0, "sampler": "numpy"}, "unknown sampler 'numpy'"),
    ({"kind": "laplace", "scale": 1.0, "k": 3}, "'k' (grid 2^k)"),
    ({"kind": "multiplicative"}, "give 'alpha'"),
    ({"kind": "multiplicative", "alpha": 1.5}, "'alpha' must be a number in [0, 1)"),
    ({"kind": "multiplicative", "alpha": 0.1, "scale": 1.0}, "unknown parameter(s) scale"),
    # Accepted by today's code, then every submission failed (float overflow, OpenDP's calibration).
    ({"kind": "laplace", "scale": 1e308}, "'scale' must be at most 1e+09"),
    ({"kind": "gaussian", "scale": 1e308}, "'scale' must be at most 1e+09"),
    ({"kind": "laplace", "epsilon": 1e-300}, "'epsilon' must be at least 1e-06"),
    ({"kind": "gaussian", "epsilon": 1e-300}, "'epsilon' must be at least 1e-06"),
    ({"kind": "gaussian", "epsilon": 1e5}, "'epsilon' must be at most 10000"),
])
def test_it_rejects_bad_parameters_with_a_clear_message(params: dict, message: str) -> None:
    with pytest.raises(DefenseConfigError, match=None) as info:
        DefenseChain.from_json([{"name": "noise", **params}])
    assert message in str(info.value)


def test_its_json_round_trips() -> None:
    spec = [{"name": "noise", "kind": "gaussian", "epsilon": 0.5, "delta": 1e-7, "sampler": "opendp", "k": -30}]
    assert DefenseChain.from_json(spec).to_json() == spec


@pytest.mark.parametrize(("metric", "expected"), [
    ("binary_logloss", math.log((1 - 1e-15) / 1e-15) / 200),
    ("multiclass_logloss", math.log((1 - 1e-15) / 1e-15) / 200),
    ("brier", 1 / 200),
    ("accuracy", 1 / 200),
    ("auc", 1 / min(int(LABELS.sum()), 200 - int(LABELS.sum()))),
])
def test_sensitivity_follows_the_documented_derivation(metric: str, expected: float) -> None:
    got = sensitivity(view(PREDICTIONS, LABELS, metric_view(metric)))
    assert expected <= got <= expected * (1 + 1e-4)  # 1 - eps rounds: see _log_ratio_spread


def test_one_label_moves_the_log_loss_by_at_most_the_sensitivity() -> None:
    # The extreme row: p = eps clipped, label flipped from 0 to 1.
    p = PREDICTIONS.copy()
    p[0] = 0.0
    flipped = LABELS.copy()
    flipped[0] = 1 - LABELS[0]
    m = metric_view()
    gap = abs(m.score(p, LABELS) - m.score(p, flipped))
    assert gap <= sensitivity(view(p, LABELS, m))


def test_calibrated_laplace_spends_exactly_its_epsilon_and_records_it() -> None:
    noise = Noise(kind="laplace", epsilon=1.0)
    v = view(PREDICTIONS, LABELS)
    scale, spent, d_in = noise.model.scale_for(v)  # type: ignore[attr-defined]
    assert d_in == sensitivity(v)
    assert spent is not None and 0.999 <= spent <= 1.0
    assert scale == pytest.approx(d_in / 1.0, rel=1e-9)
    outcome = DefenseChain([noise]).release(v, states=None, secret=SECRET, submission_key="s")
    assert outcome.ledger["privacy"] == [
        {"defense": "noise", "kind": "laplace", "epsilon": spent, "delta": 0.0, "sensitivity": d_in, "scale": scale}
    ]


def test_calibrated_gaussian_meets_epsilon_at_delta() -> None:
    noise = Noise(kind="gaussian", epsilon=1.0, delta=1e-6)
    _, spent, _ = noise.model.scale_for(view(PREDICTIONS, LABELS))  # type: ignore[attr-defined]
    assert spent is not None and 0.99 <= spent <= 1.0


def test_fixed_scale_reports_the_epsilon_opendp_maps_it_to() -> None:
    v = view(PREDICTIONS, LABELS, metric_view("accuracy"))
    _, spent, _ = Noise(kind="laplace", scale=0.05).model.scale_for(v)  # type: ignore[attr-defined]
    assert spent == laplace_epsilon(0.05, sensitivity(v), None)
    assert spent == pytest.approx((1 / 200) / 0.05)


def test_calibration_is_rejected_for_a_metric_without_a_sensitivity() -> None:
    from defenses import MetricView

    chain = DefenseChain.from_json([{"name": "noise", "kind": "laplace", "epsilon": 1.0}])
    other = MetricView("unnamed", False, lambda p, y: 0.0, None, 1e-15)
    with pytest.raises(DefenseConfigError, match="cannot calibrate 'epsilon' for metric 'unnamed'"):
        chain.check_metric(other)
    chain.check_metric(metric_view("auc"))


@pytest.mark.parametrize("sampler", ["exact", "opendp"])
def test_same_submission_same_score_different_submissions_different_noise(sampler: str) -> None:
    chain = [{"name": "noise", "kind": "laplace", "scale": 0.01, "sampler": sampler}]
    participant = Participant(chain)
    v = view(PREDICTIONS, LABELS)
    first = participant.submit(v, "submission:1").released
    again = participant.submit(v, "submission:1").released
    other = participant.submit(v, "submission:2").released
    assert first == again
    assert first != other


def test_the_opendp_sampler_remembers_its_release_across_a_restart() -> None:
    participant = Participant([{"name": "noise", "kind": "laplace", "scale": 0.01, "sampler": "opendp"}], persist=True)
    v = view(PREDICTIONS, LABELS)
    first = participant.submit(v, "submission:9").released
    assert participant.states is not None
    assert set(participant.states[0]["opendp_releases"]) == {"submission:9"}
    assert participant.submit(v, "submission:9").released == first


@pytest.mark.parametrize(("kind", "variance"), [("laplace", 2 * 0.02**2), ("gaussian", 0.02**2)])
def test_released_spread_matches_the_scale(kind: str, variance: float) -> None:
    n = 2000
    chain = DefenseChain.from_json([{"name": "noise", "kind": kind, "scale": 0.02}])
    v = view(PREDICTIONS, LABELS)
    true = v.score()
    errors = np.array([
        float(chain.release(v, states=None, secret=SECRET, submission_key=f"s{i}").released) - true  # type: ignore[arg-type]
        for i in range(n)
    ])
    kurtosis = 6.0 if kind == "laplace" else 3.0  # fourth moment / variance² (Laplace: 24b⁴ / 4b⁴)
    assert abs(errors.mean()) <= 5 * math.sqrt(variance / n)
    assert abs(errors.var() - variance) <= 5 * variance * math.sqrt((kurtosis - 1) / n)


def test_multiplicative_noise_stays_within_alpha_and_is_uniform() -> None:
    n = 2000
    chain = DefenseChain.from_json([{"name": "noise", "kind": "multiplicative", "alpha": 0.1}])
    v = view(PREDICTIONS, LABELS)
    true = v.score()
    ratios = np.array([
        float(chain.release(v, states=None, secret=SECRET, submission_key=f"s{i}").released) / true  # type: ignore[arg-type]
        for i in range(n)
    ]) - 1
    assert np.all(np.abs(ratios) <= 0.1 + 1e-15)
    # U[-α, α] has variance α²/3; the sample variance of a uniform has sd α²·sqrt(4/45/n).
    assert abs(ratios.var() - 0.01 / 3) <= 5 * 0.01 * math.sqrt(4 / 45 / n)


def test_a_tiny_fixed_gaussian_scale_reports_an_unbounded_epsilon_instead_of_failing() -> None:
    # σ = 1e-4 against Δ ≈ 0.17: OpenDP's zCDP → (ε, δ) conversion overflows; the release must still happen.
    chain = DefenseChain.from_json([{"name": "noise", "kind": "gaussian", "scale": 1e-4}])
    outcome = chain.release(view(PREDICTIONS, LABELS), states=None, secret=SECRET, submission_key="s")
    assert outcome.released is not None
    assert outcome.ledger["privacy"][0]["epsilon"] is None and "unbounded" in outcome.notes[0]


# --- released values stay in the metric's range (issue 9, item 8) ---------------------------------------------


@pytest.mark.parametrize(("metric", "predictions", "kind", "params"), [
    # A near-perfect model: its log loss is ~1e-6, and noise of scale 0.01 pushed half the releases below 0.
    ("binary_logloss", np.where(LABELS == 1, 1 - 1e-6, 1e-6), "laplace", {"scale": 0.01}),
    ("binary_logloss", np.where(LABELS == 1, 1 - 1e-6, 1e-6), "gaussian", {"scale": 0.01}),
    # A perfect ranking: AUC 1, released above 1 half the time; a worthless one: accuracy near 0.
    ("auc", LABELS.astype(float), "laplace", {"scale": 0.01}),
    ("auc", LABELS.astype(float), "multiplicative", {"alpha": 0.1}),
    ("accuracy", 1.0 - LABELS, "laplace", {"scale": 0.01}),
])
def test_a_noisy_release_stays_in_the_metrics_range(metric: str, predictions: np.ndarray, kind: str,
                                                    params: dict) -> None:
    chain = DefenseChain.from_json([{"name": "noise", "kind": kind, **params}])
    m = metric_view(metric)
    v = view(predictions, LABELS, m)
    released = [float(chain.release(v, states=None, secret=SECRET, submission_key=f"s{i}").released)  # type: ignore[arg-type]
                for i in range(300)]
    assert m.lower <= min(released) and max(released) <= m.upper
    at_bound = sum(r in (m.lower, m.upper) for r in released)
    assert 50 < at_bound < 250  # clamped where the noise crossed the bound, noisy elsewhere


def test_brier_is_clamped_to_its_range_for_the_task() -> None:
    from scoring.pipeline import metric_view as pipeline_metric_view

    assert (pipeline_metric_view("brier", 1e-15, 2).upper, pipeline_metric_view("brier", 1e-15, 3).upper) == (1.0, 2.0)
    assert pipeline_metric_view("binary_logloss", 1e-15).lower == 0.0


def test_calibration_works_where_opendps_search_overflows() -> None:
    # Δ = ln(1/eps) >= 200 (one scored row, a tiny MPFR eps): OpenDP's binary search for σ overflowed, so
    # every submission failed. The scale found at Δ = 1, times Δ and confirmed by OpenDP's map, serves.
    chain = DefenseChain.from_json([{"name": "noise", "kind": "gaussian", "epsilon": 1.0}])
    m = metric_view("binary_logloss", eps=1e-100)
    chain.check_metric(m)
    outcome = chain.release(view([0.3], [1], m), states=None, secret=SECRET, submission_key="s")
    (entry,) = outcome.ledger["privacy"]
    assert entry["sensitivity"] > 200 and 0.99 <= entry["epsilon"] <= 1.0
    assert outcome.released is not None and float(outcome.released) >= 0.0
