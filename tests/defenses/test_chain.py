"""Chains: validation messages, stage order, reproducibility, state across restarts, and LocalOracle."""

from __future__ import annotations

import numpy as np
import pytest

from attacks import LocalOracle
from defenses import DefenseChain, DefenseConfigError, available
from tests.defenses.support import Participant, view

RNG = np.random.default_rng(21)
LABELS = RNG.integers(0, 2, 300)
HONEST = np.clip(0.3 + 0.4 * LABELS + RNG.normal(0, 0.2, 300), 0.02, 0.98)

EVERY_DEFENSE = [
    {"name": "probe_detector"},
    {"name": "randomized_response", "p": 0.05, "mode": "fresh"},
    {"name": "subsetting", "fraction": 0.8},
    {"name": "thresholdout", "reference_fraction": 0.5, "budget": 3},
    {"name": "noise", "kind": "laplace", "scale": 1e-3},
    {"name": "privacy_budget", "epsilon": 1000.0},
    {"name": "ladder", "mode": "parameter_free"},
    {"name": "rounding", "decimals": 5},
]


def test_every_defense_of_the_issue_is_registered() -> None:
    assert set(available()) >= {
        "rounding", "noise", "subsetting", "randomized_response", "ladder", "thresholdout", "privacy_budget",
        "probe_detector",
    }


@pytest.mark.parametrize(("spec", "message"), [
    ([{"name": "blur"}], "unknown defense 'blur'; available:"),
    ([{"name": "rounding", "digits": 3}], "unknown parameter(s) digits"),
    ([{"name": "rounding", "decimals": -1}], "'decimals' must be an integer from 0 to 15"),
    ([{"name": "noise", "kind": "laplace", "scale": "big"}], "'scale' must be a positive number"),
    ([{"name": "rounding"}, {"name": "noise", "kind": "laplace", "scale": 1.0}], "cannot come after 'rounding'"),
    ([{"name": "noise", "kind": "laplace", "scale": 1.0}, {"name": "subsetting"}], "cannot come after 'noise'"),
    ([{"kind": "laplace"}], "must be an object with a string 'name'"),
    ({"name": "rounding"}, "must be a JSON list"),
    ("[{", "not valid JSON"),
])
def test_invalid_chains_are_rejected_with_a_clear_message(spec: object, message: str) -> None:
    with pytest.raises(DefenseConfigError) as info:
        DefenseChain.from_json(spec)
    assert message in str(info.value)


def test_the_position_of_the_faulty_defense_is_named() -> None:
    with pytest.raises(DefenseConfigError, match=r"^defense #2"):
        DefenseChain.from_json([{"name": "rounding"}, {"name": "ladder", "eta": -1}])


def test_a_full_chain_round_trips_through_json() -> None:
    chain = DefenseChain.from_json(EVERY_DEFENSE)
    assert DefenseChain.from_json(chain.to_json()).to_json() == chain.to_json()


def _releases(participant: Participant, n: int, rng: np.random.Generator) -> list[object]:
    out = []
    for _ in range(n):
        noisy = np.clip(HONEST + rng.normal(0, 0.05, len(HONEST)), 0.01, 0.99)
        out.append(participant.submit(view(noisy, LABELS)).released)
    return out


def test_the_state_survives_a_worker_restart() -> None:
    in_memory = _releases(Participant(EVERY_DEFENSE), 12, np.random.default_rng(4))
    restarted = _releases(Participant(EVERY_DEFENSE, persist=True), 12, np.random.default_rng(4))
    assert in_memory == restarted


def test_a_re_score_reproduces_the_release_and_other_keys_differ() -> None:
    chain = DefenseChain.from_json(EVERY_DEFENSE[:3] + EVERY_DEFENSE[4:5])
    v = view(HONEST, LABELS)
    first = chain.release(v, states=None, secret=5, submission_key="submission:1")
    again = chain.release(v, states=None, secret=5, submission_key="submission:1")
    other = chain.release(v, states=None, secret=5, submission_key="submission:2")
    assert first.released == again.released and first.states == again.states
    assert first.released != other.released


def test_local_oracle_releases_what_the_chain_releases() -> None:
    spec = [{"name": "noise", "kind": "laplace", "scale": 1e-3}, {"name": "rounding", "decimals": 5}]
    a = LocalOracle(LABELS, defenses=spec, seed=8, public_fraction=0.3)
    b = LocalOracle(LABELS, defenses=spec, seed=8, public_fraction=0.3)
    c = LocalOracle(LABELS, defenses=spec, seed=9, public_fraction=0.3)
    answers = [a.submit(HONEST) for _ in range(3)]
    assert answers == [b.submit(HONEST) for _ in range(3)]  # same seeds, same game
    assert len(set(answers)) == 3  # fresh noise per submission
    assert answers != [c.submit(HONEST) for _ in range(3)]
    raw = LocalOracle(LABELS, seed=8, public_fraction=0.3, decimals=None).submit(HONEST)
    assert all(abs(x - raw) < 0.02 for x in answers)  # type: ignore[operator]


def test_local_oracle_keeps_ladder_state_between_queries() -> None:
    oracle = LocalOracle(LABELS, defenses=[{"name": "ladder", "eta": 0.01}], seed=1)
    first = oracle.submit(HONEST)
    assert oracle.submit(np.full(len(LABELS), 0.5)) == first  # worse: the best stays
    assert oracle.queries == 2
