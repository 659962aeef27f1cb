"""The privacy budget: reads the ε the noisy defenses record, composes it two ways, stops when exhausted."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attacks import LocalOracle
from defenses import DefenseChain, DefenseConfigError
from defenses.privacy_budget import EXHAUSTED_MESSAGE, advanced_composition
from tests.defenses.support import Participant, metric_view, view

RNG = np.random.default_rng(41)
LABELS = RNG.integers(0, 2, 400)
PREDICTIONS = np.clip(0.3 + 0.4 * LABELS + RNG.normal(0, 0.1, 400), 0.01, 0.99)
V = view(PREDICTIONS, LABELS, metric_view("accuracy"))


def _released_count(chain: list[dict], submissions: int) -> tuple[int, list]:
    participant = Participant(chain, persist=True)
    outcomes = [participant.submit(V) for _ in range(submissions)]
    return sum(o.released is not None for o in outcomes), outcomes


def test_it_needs_a_noisy_defense_before_it() -> None:
    with pytest.raises(DefenseConfigError, match="needs a noisy defense before it"):
        DefenseChain.from_json([{"name": "privacy_budget", "epsilon": 1.0}])
    with pytest.raises(DefenseConfigError, match="needs a noisy defense before it"):
        DefenseChain.from_json([{"name": "noise", "kind": "multiplicative", "alpha": 0.1},
                                {"name": "privacy_budget", "epsilon": 1.0}])


@pytest.mark.parametrize(("params", "message"), [
    ({}, "give 'epsilon'"),
    ({"epsilon": 0}, "'epsilon' must be a positive number"),
    ({"epsilon": 1, "delta": 1.5}, "'delta' must be in [0, 1)"),
    ({"epsilon": 1, "composition": "rdp"}, "'composition' must be one of basic, advanced, best"),
    ({"epsilon": 1, "on_exhausted": "warn"}, "'on_exhausted' must be one of withhold, reject"),
])
def test_it_rejects_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(DefenseConfigError) as info:
        DefenseChain.from_json(
            [{"name": "noise", "kind": "laplace", "scale": 1.0}, {"name": "privacy_budget", **params}]
        )
    assert message in str(info.value)


def test_basic_composition_stops_after_budget_over_epsilon_releases() -> None:
    chain = [{"name": "noise", "kind": "laplace", "epsilon": 0.5},
             {"name": "privacy_budget", "epsilon": 2.0, "composition": "basic"}]
    released, outcomes = _released_count(chain, 6)
    assert released == 4
    assert [o.released is None for o in outcomes] == [False] * 4 + [True] * 2
    assert outcomes[-1].message == EXHAUSTED_MESSAGE
    assert "exhausted" in outcomes[-1].notes[-1]
    assert outcomes[-1].states[1]["releases"] == 4  # nothing is spent on a withheld release


def test_advanced_composition_allows_more_small_releases_than_basic() -> None:
    eps, budget, delta = 0.01, 0.5, 1e-6
    noise = {"name": "noise", "kind": "laplace", "epsilon": eps}
    basic, _ = _released_count([noise, {"name": "privacy_budget", "epsilon": budget, "composition": "basic"}], 120)
    best, _ = _released_count([noise, {"name": "privacy_budget", "epsilon": budget, "delta": delta}], 120)
    # The largest k with sqrt(2 ln(1/δ) k ε²) + k ε (e^ε − 1) <= budget (OpenDP spends at most ε each).
    expected = max(
        k for k in range(1, 200) if advanced_composition(k * eps**2, k * eps * math.expm1(eps), delta) <= budget
    )
    assert basic in (49, 50)  # 50 × 0.01 is 0.5 up to float rounding of OpenDP's calibrated ε
    assert best == expected > basic


def test_fixed_randomized_response_is_paid_for_once() -> None:
    chain = [{"name": "randomized_response", "epsilon": 1.0},
             {"name": "noise", "kind": "laplace", "epsilon": 0.25},
             {"name": "privacy_budget", "epsilon": 100.0, "composition": "basic"}]
    _, outcomes = _released_count(chain, 3)
    assert outcomes[-1].states[2]["sum_epsilon"] == pytest.approx(1.0 + 3 * 0.25, rel=1e-9)


def test_fresh_randomized_response_is_paid_for_every_time() -> None:
    chain = [{"name": "randomized_response", "epsilon": 1.0, "mode": "fresh"},
             {"name": "privacy_budget", "epsilon": 2.5, "composition": "basic"}]
    released, _ = _released_count(chain, 4)
    assert released == 2


def test_reject_mode_fails_the_submission_with_the_reason() -> None:
    chain = [{"name": "noise", "kind": "laplace", "epsilon": 1.0},
             {"name": "privacy_budget", "epsilon": 1.0, "on_exhausted": "reject", "composition": "basic"}]
    _, outcomes = _released_count(chain, 2)
    assert outcomes[0].reject is None and outcomes[1].reject == EXHAUSTED_MESSAGE


def test_local_oracle_releases_nothing_once_the_budget_is_spent() -> None:
    oracle = LocalOracle(LABELS, metric="accuracy", seed=3, defenses=[
        {"name": "noise", "kind": "laplace", "epsilon": 1.0},
        {"name": "privacy_budget", "epsilon": 2.0, "composition": "basic"},
    ])
    answers = [oracle.submit(PREDICTIONS) for _ in range(4)]
    assert [a is None for a in answers] == [False, False, True, True]


def test_a_release_costing_thousands_of_epsilon_is_withheld_not_an_overflow() -> None:
    # Fixed-scale noise 1e-4 on a 100-row log loss costs ε ≈ 3,450 per release: e^ε overflows a float.
    import json
    import math

    from attacks import LocalOracle

    labels = np.random.default_rng(5).integers(0, 2, 100)
    for composition in ("basic", "advanced", "best"):
        oracle = LocalOracle(labels, decimals=5, seed=1, defenses=[
            {"name": "noise", "kind": "laplace", "scale": 1e-4},
            {"name": "privacy_budget", "epsilon": 1e6, "composition": composition},
        ])
        released = oracle.submit(np.full(100, 0.5))
        # Basic composition affords it once under a budget of 1e6; advanced composition's bound at such ε is
        # beyond any budget (its e^ε term saturates), so that release is withheld; "best" takes the smaller.
        assert (released is None) == (composition == "advanced")
        for state in oracle._states[oracle.metric].values():
            json.loads(json.dumps(state, allow_nan=False))  # finite: storable as PostgreSQL JSON
            assert all(math.isfinite(v) for entry in state for v in entry.values() if isinstance(v, float))
