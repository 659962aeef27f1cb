"""``scope`` on the stateful defenses: ``"account"`` (default, each participant's own state) or ``"competition"``
(one state for the whole board) or ``"team"`` (one per team; tests/defenses/test_team_scope.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle
from defenses import DefenseChain, DefenseConfigError
from defenses.ladder import NOT_BEATEN_MESSAGE
from defenses.privacy_budget import BOARD_EXHAUSTED_MESSAGE
from scoring import HiddenTestSet, ScoringSpec
from scoring.parsing import ParsedPredictions
from scoring.release import States, release_submission

STATEFUL: list[dict[str, Any]] = [
    {"name": "ladder", "mode": "parameter_free"},
    {"name": "ladder", "mode": "fixed", "eta": 0.01},
    {"name": "privacy_budget", "epsilon": 1.0},
    {"name": "probe_detector"},
    {"name": "thresholdout"},
]
NOISE = {"name": "noise", "kind": "laplace", "epsilon": 0.5}


def _chain(defense: dict[str, Any]) -> list[dict[str, Any]]:
    return [NOISE, defense] if defense["name"] == "privacy_budget" else [defense]


@pytest.mark.parametrize("defense", STATEFUL, ids=lambda d: d["name"])
def test_a_bad_scope_is_refused_naming_the_allowed_values(defense: dict[str, Any]) -> None:
    with pytest.raises(DefenseConfigError, match="'scope' must be one of account, team, competition, got 'board'"):
        DefenseChain.from_json(_chain({**defense, "scope": "board"}))


@pytest.mark.parametrize("defense", STATEFUL, ids=lambda d: d["name"])
def test_team_scope_round_trips_and_is_not_the_competitions(defense: dict[str, Any]) -> None:
    chain = DefenseChain.from_json(_chain({**defense, "scope": "team"}))
    assert chain.to_json()[-1]["scope"] == "team"
    assert chain.has_team_state and not chain.has_shared_state


@pytest.mark.parametrize("defense", STATEFUL, ids=lambda d: d["name"])
def test_the_default_scope_keeps_the_chain_json_and_competition_round_trips(defense: dict[str, Any]) -> None:
    plain = DefenseChain.from_json(_chain(defense)).to_json()
    assert all("scope" not in item for item in plain)
    assert DefenseChain.from_json(_chain({**defense, "scope": "account"})).to_json() == plain
    shared = DefenseChain.from_json(_chain({**defense, "scope": "competition"}))
    assert shared.to_json()[-1]["scope"] == "competition"
    assert DefenseChain.from_json(shared.to_json()).to_json() == shared.to_json()
    assert shared.has_shared_state and not DefenseChain.from_json(plain).has_shared_state


def test_stateless_defenses_take_no_scope() -> None:
    with pytest.raises(DefenseConfigError, match="unknown parameter"):
        DefenseChain.from_json([{"name": "rounding", "scope": "competition"}])


# --- The default scope releases what it released before -----------------------------------------------------

RNG = np.random.default_rng(20261128)
LABELS = RNG.integers(0, 2, 240)
# Pinned from the release before ``scope`` existed (every account's own Ladder; three accounts, four files each).
BEFORE = {
    "parameter_free": [0.69315, 0.51083, 0.51083, 0.35888] * 3,
    "fixed": [0.69, 0.51, 0.51, 0.36] * 3,
}


def _files() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    truth = LABELS.astype(np.float64)
    return [np.full(240, 0.5), 0.5 + 0.1 * (truth - 0.5) * 2, 0.5 + 0.1 * (truth - 0.5) * 2 + rng.normal(0, 1e-4, 240),
            np.clip(0.5 + 0.2 * (truth - 0.5) * 2 + rng.normal(0, 0.05, 240), 0.01, 0.99)]


def _played(chain: list[dict[str, Any]]) -> list[float | None]:
    board = LocalOracle(LABELS, decimals=5, defenses=chain, public_fraction=0.5, seed=11, accounts=3)
    out: list[float | None] = []
    for account in range(3):
        board.account = account
        out.extend(board.submit(f) for f in _files())  # type: ignore[misc]
    return out


@pytest.mark.parametrize("mode", ["parameter_free", "fixed"])
def test_the_account_scope_releases_what_the_ladder_released_before(mode: str) -> None:
    ladder: dict[str, Any] = {"name": "ladder", "mode": mode}
    if mode == "fixed":
        ladder["eta"] = 0.01
    assert _played([ladder]) == BEFORE[mode]
    assert _played([{**ladder, "scope": "account"}]) == BEFORE[mode]


@pytest.mark.parametrize("mode", ["parameter_free", "fixed"])
def test_a_competition_ladder_releases_only_what_beats_the_boards_best(mode: str) -> None:
    ladder: dict[str, Any] = {"name": "ladder", "mode": mode, "scope": "competition"}
    if mode == "fixed":
        ladder["eta"] = 0.01
    released = _played([ladder])
    # Account 0 climbs as before; accounts 1 and 2 bring nothing better than the board's best: nothing released.
    assert released[:4] == [BEFORE[mode][0], BEFORE[mode][1], None, BEFORE[mode][3]]
    assert released[4:] == [None] * 8


# --- Shared state through the one release function ----------------------------------------------------------


def _spec(chain: list[dict[str, Any]], labels: np.ndarray) -> ScoringSpec:
    n = len(labels)
    hidden = HiddenTestSet(tuple(str(i) for i in range(n)), labels, 2, np.ones(n, bool))
    return ScoringSpec(hidden, decimals=5, chain=DefenseChain.from_json(chain), secret=3)


class Board:
    """Participants of one competition, their own states and the competition's shared one, as a site keeps them."""

    def __init__(self, chain: list[dict[str, Any]], labels: np.ndarray) -> None:
        self.spec = _spec(chain, labels)
        self.own: dict[str, dict[str, States]] = {}
        self.shared: dict[str, States] = {}
        self.count = 0

    def submit(self, who: str, predictions: np.ndarray) -> tuple[float | None, str | None, str | None]:
        self.count += 1
        release = release_submission(
            self.spec, ParsedPredictions(predictions), submission_id=self.count, states=self.own.get(who),
            splits=("public",), shared=self.shared,
        )
        if release.reject is None:
            self.own[who] = release.states
            self.shared = release.shared or self.shared
        result = release.primary.get("public")
        return (None if result is None else result.released,
                None if result is None else result.message, release.reject)


def test_a_new_participants_first_submission_meets_the_boards_best() -> None:
    labels = np.random.default_rng(1).integers(0, 2, 300)
    good = np.where(labels == 1, 0.7, 0.3)
    board = Board([{"name": "ladder", "mode": "parameter_free", "scope": "competition"}], labels)
    first, _, _ = board.submit("alice", good)
    assert first is not None
    worse, message, _ = board.submit("bob", np.full(300, 0.5))
    assert worse is None and message == NOT_BEATEN_MESSAGE
    better, _, _ = board.submit("bob", np.where(labels == 1, 0.9, 0.1))
    assert better is not None and better < first
    again, _, _ = board.submit("alice", good)  # alice's own best no longer beats the board's
    assert again is None
    # The participants' own rows hold nothing of the shared Ladder; the board's holds the leader.
    assert board.own["alice"]["binary_logloss"]["public"] == [{}]
    assert round(board.shared["binary_logloss"]["public"][0]["best"], 5) == better


def test_accept_reject_after_a_competition_ladder_releases_the_decision() -> None:
    labels = np.random.default_rng(2).integers(0, 2, 200)
    board = Board([{"name": "ladder", "mode": "parameter_free", "scope": "competition"}, {"name": "accept_reject"}],
                  labels)
    assert board.submit("alice", np.where(labels == 1, 0.7, 0.3))[0] == 1
    assert board.submit("bob", np.full(200, 0.5))[0] == 0


def test_a_competition_privacy_budget_is_one_budget_for_every_participant() -> None:
    labels = np.random.default_rng(3).integers(0, 2, 200)
    files = [np.clip(0.5 + 0.3 * (labels - 0.5) + 0.01 * i, 0.01, 0.99) for i in range(12)]

    def releases(scope: str) -> tuple[int, list[str | None]]:
        board = Board([{"name": "noise", "kind": "laplace", "epsilon": 1.0},
                       {"name": "privacy_budget", "epsilon": 3.0, "composition": "basic", "scope": scope}], labels)
        outcomes = [board.submit(f"p{i % 4}", f) for i, f in enumerate(files)]
        return sum(o[0] is not None for o in outcomes), [o[1] for o in outcomes if o[0] is None]

    per_account, _ = releases("account")
    assert per_account == 12  # four participants, three releases each
    shared, messages = releases("competition")
    assert shared == 3 and set(messages) == {BOARD_EXHAUSTED_MESSAGE}


def test_a_competition_thresholdout_spends_one_budget() -> None:
    labels = np.random.default_rng(4).integers(0, 2, 400)

    def spent(scope: str) -> int:
        board = Board([{"name": "thresholdout", "budget": 2, "threshold": 1e-6, "sigma": 1e-6, "scope": scope}],
                      labels)
        # Overfitted to the holdout side: every submission disagrees and spends one unit of its budget.
        rng = np.random.default_rng(5)
        released = [board.submit(f"p{i % 3}", np.clip(rng.random(400), 0.01, 0.99))[0] for i in range(6)]
        return sum(r is not None for r in released)

    assert spent("account") == 6
    assert spent("competition") == 2


def test_a_competition_probe_detector_sees_sparse_edits_spread_over_accounts() -> None:
    labels = np.random.default_rng(6).integers(0, 2, 300)
    base = np.random.default_rng(8).uniform(0.2, 0.8, 300)

    def rejected(scope: str) -> int:
        board = Board([{"name": "probe_detector", "reject": True, "scope": scope}], labels)
        count = 0
        for i in range(8):  # each fresh account moves 3 rows of the same base vector
            edit = base.copy()
            edit[3 * i: 3 * i + 3] = np.clip(edit[3 * i: 3 * i + 3] + 0.1, 0.01, 0.99)
            count += board.submit(f"fresh{i}", edit)[2] is not None
        return count

    assert rejected("account") == 0
    assert rejected("competition") >= 4
