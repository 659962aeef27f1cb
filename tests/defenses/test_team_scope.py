"""``scope: "team"`` in the pure core: the team's state is kept apart from the members' own
(``release_submission(team=...)``), a caller without teams keeps it per account, and two teams' states merge
into one that is never more lenient than either (no fresh budget, no free Ladder release)."""

from __future__ import annotations

from typing import Any

import numpy as np

from defenses import DefenseChain
from defenses.privacy_budget import TEAM_EXHAUSTED_MESSAGE
from scoring import HiddenTestSet, ScoringSpec
from scoring.parsing import ParsedPredictions
from scoring.release import States, release_submission

N = 200
LABELS = np.random.default_rng(5).integers(0, 2, N)
GOOD = np.where(LABELS == 1, 0.8, 0.2)
BUDGET = [{"name": "noise", "kind": "laplace", "epsilon": 1.0},
          {"name": "privacy_budget", "epsilon": 2.0, "composition": "basic", "scope": "team"}]


def _spec(chain: list[dict[str, Any]]) -> ScoringSpec:
    hidden = HiddenTestSet(tuple(str(i) for i in range(N)), LABELS, 2, np.ones(N, bool))
    return ScoringSpec(hidden, decimals=5, chain=DefenseChain.from_json(chain), secret=3)


class Teams:
    """Participants, their own states and their teams' states, as the site keeps them."""

    def __init__(self, chain: list[dict[str, Any]], team_of: dict[str, str]) -> None:
        self.spec, self.team_of = _spec(chain), team_of
        self.own: dict[str, dict[str, States]] = {}
        self.team: dict[str, dict[str, States]] = {}
        self.count = 0

    def submit(self, who: str, predictions: np.ndarray) -> tuple[float | None, str | None]:
        self.count += 1
        team = self.team_of[who]
        release = release_submission(
            self.spec, ParsedPredictions(predictions), submission_id=self.count, states=self.own.get(who),
            splits=("public",), team=self.team.get(team, {}),
        )
        assert release.reject is None
        self.own[who], self.team[team] = release.states, release.team
        result = release.primary["public"]
        return result.released, result.message


def test_a_teammates_first_submission_meets_the_teams_ladder() -> None:
    teams = Teams([{"name": "ladder", "mode": "fixed", "eta": 0.01, "scope": "team"}],
                  {"alice": "owls", "bob": "owls", "carol": "cats"})
    first, _ = teams.submit("alice", GOOD)
    assert first is not None
    # Bob's worse first submission is released the team's best, not its own score (no free release) …
    assert teams.submit("bob", np.full(N, 0.5))[0] == first
    # … while Carol, in another team, gets her own.
    carol, _ = teams.submit("carol", np.full(N, 0.5))
    assert carol is not None and carol != first
    # The team's row holds the Ladder; the members' own rows hold nothing of it.
    assert teams.own["bob"]["binary_logloss"]["public"] == [{}]
    assert teams.team["owls"]["binary_logloss"]["public"][0]["best"] == first


def test_a_budget_spent_by_one_member_is_spent_for_the_other() -> None:
    teams = Teams(BUDGET, {"alice": "owls", "bob": "owls"})
    assert teams.submit("alice", GOOD)[0] is not None
    assert teams.submit("alice", GOOD)[0] is not None
    released, message = teams.submit("bob", GOOD)
    assert released is None and message == TEAM_EXHAUSTED_MESSAGE


def test_without_teams_every_account_is_a_team_of_one() -> None:
    spec = _spec([{"name": "ladder", "mode": "fixed", "eta": 0.01, "scope": "team"}])
    release = release_submission(spec, ParsedPredictions(GOOD), submission_id=1, splits=("public",))
    assert release.team == {} and release.states["binary_logloss"]["public"][0]["best"] is not None


def test_merging_never_gives_a_fresh_budget_or_a_free_release() -> None:
    chain = DefenseChain.from_json([
        {"name": "probe_detector", "history": 3, "scope": "team"},
        {"name": "thresholdout", "budget": 10, "scope": "team"},
        {"name": "noise", "kind": "laplace", "epsilon": 1.0},
        {"name": "privacy_budget", "epsilon": 5.0, "scope": "team"},
        {"name": "ladder", "mode": "fixed", "eta": 0.01, "scope": "team"},
    ])
    spent = chain.defenses[3].initial_state()
    kept: list[dict[str, Any]] = [
        {"hard_labels": ["a"], "sketches": ["k1", "k2"]}, {"budget_left": 7, "threshold_noisy": 0.1}, {},
        {**spent, "releases": 2, "sum_epsilon": 2.0, "once": ["x"]}, {"best": 0.40}]
    other: list[dict[str, Any]] = [
        {"hard_labels": [], "sketches": ["o1", "o2"]}, {"budget_left": 8, "threshold_noisy": 0.2}, {},
        {**spent, "releases": 1, "sum_epsilon": 1.5, "once": ["x", "y"]}, {"best": 0.30}]
    merged = chain.merge_states(kept, other, higher_is_better=False)
    assert merged[0] == {"hard_labels": ["a"], "sketches": ["o2", "k1", "k2"]}
    assert merged[1] == {"budget_left": 5, "threshold_noisy": 0.1}  # 3 + 2 detections spent
    assert merged[2] == {}
    assert merged[3]["releases"] == 3 and merged[3]["sum_epsilon"] == 3.5 and merged[3]["once"] == ["x", "y"]
    assert merged[4] == {"best": 0.30}  # the better leader: both teams' bests must be beaten
    # A fresh team merged in changes nothing; a higher-is-better metric keeps the higher best.
    assert chain.merge_states(kept, None, higher_is_better=False)[1] == kept[1]
    assert chain.merge_states(kept, None, higher_is_better=False)[4] == kept[4]
    assert chain.merge_states(kept, other, higher_is_better=True)[4] == {"best": 0.40}
