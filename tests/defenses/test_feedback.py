"""Hard-label feedback stages: a threshold badge or medal, rank only, and the Ladder's accept/reject without its
value. Each releases a label through the one release model, with 0 decimals and its own board direction."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from attacks import LocalOracle
from defenses import DefenseChain, DefenseConfigError
from scoring.release import release_submission


def _oracle(labels: np.ndarray, chain: list[dict[str, object]], metric: str = "binary_logloss") -> LocalOracle:
    return LocalOracle(labels, metric=metric, decimals=5, defenses=chain)


HIDDEN = np.random.default_rng(1).integers(0, 2, 200)
SUBMISSIONS = [np.random.default_rng(10 + i).uniform(0.05, 0.95, 200) for i in range(12)]


def _true_scores(metric: str) -> list[float]:
    plain = _oracle(HIDDEN, [], metric)
    return [float(plain.submit(p)) for p in SUBMISSIONS]  # type: ignore[arg-type]


@pytest.mark.parametrize("metric", ["binary_logloss", "auc"])
def test_a_badge_is_one_exactly_when_the_score_beats_t(metric: str) -> None:
    scores = _true_scores(metric)
    t = float(np.median(scores))
    board = _oracle(HIDDEN, [{"name": "threshold", "t": t}], metric)
    released = [board.submit(p) for p in SUBMISSIONS]
    higher = metric == "auc"
    assert released == [1.0 if (s > t if higher else s < t) else 0.0 for s in scores]
    assert board.decimals == 0 and board.spec.released_higher_is_better is True


def test_a_medal_board_counts_the_cut_offs_beaten() -> None:
    scores = _true_scores("binary_logloss")
    cutoffs = sorted(np.quantile(scores, [0.25, 0.5, 0.75]).tolist())
    board = _oracle(HIDDEN, [{"name": "threshold", "t": cutoffs}])
    assert [board.submit(p) for p in SUBMISSIONS] == [float(sum(s < c for c in cutoffs)) for s in scores]
    assert board.feedback == {"kind": "threshold", "t": cutoffs, "released": "how many cut-offs the score beats"}


def test_rank_only_releases_each_submissions_place_among_the_participants_own() -> None:
    scores = _true_scores("binary_logloss")
    board = _oracle(HIDDEN, [{"name": "rank"}])
    released = [board.submit(p) for p in SUBMISSIONS]
    # Brute force: 1 + the earlier submissions that scored at least as well (earlier wins ties).
    assert released == [float(1 + sum(s <= scores[i] for s in scores[:i])) for i in range(len(scores))]
    assert board.spec.released_higher_is_better is False and board.decimals == 0


def test_a_board_rank_is_the_place_among_the_other_accounts_best_scores() -> None:
    scores = _true_scores("binary_logloss")
    board = LocalOracle(HIDDEN, metric="binary_logloss", decimals=5, defenses=[{"name": "rank", "among": "board"}],
                        accounts=3)
    released, bests = [], [float("inf")] * 3
    for i, p in enumerate(SUBMISSIONS):
        board.account = i % 3
        released.append(board.submit(p))
        # Brute force: 1 + the other accounts whose best so far is at least as good (they scored first).
        others = [b for a, b in enumerate(bests) if a != board.account]
        assert released[-1] == float(1 + sum(b <= scores[i] for b in others)), i
        bests[board.account] = min(bests[board.account], scores[i])
    assert released[0] == 1.0 and max(float(r or 0) for r in released) > 1.0
    assert board.feedback["among"] == "board" and board.spec.released_higher_is_better is False
    alone = LocalOracle(HIDDEN, metric="binary_logloss", decimals=5, defenses=[{"name": "rank", "among": "board"}])
    assert {alone.submit(p) for p in SUBMISSIONS} == {1.0}  # no rival: the label says nothing


def test_a_board_rank_reads_only_rivals_of_its_own_chain() -> None:
    from defenses.base import DefenseContext
    from tests.defenses.support import view as scoring_view

    chain = DefenseChain.from_json([{"name": "rounding", "decimals": 3}, {"name": "rank", "among": "board"}])
    assert chain.needs_peers and not DefenseChain.from_json([{"name": "rank"}]).needs_peers
    assert DefenseChain.from_json(chain.to_json()).to_json() == chain.to_json()
    view = scoring_view([0.9, 0.1], [1, 0])
    rival, stranger = [{}, {"best": 0.01}], [{"best": 0.0}]  # a state of another chain's shape is skipped
    outcome = chain.release(view, states=None, secret=1, submission_key="k",
                            peers=[rival, stranger])
    assert outcome.released == 2 and outcome.states[1] == {"best": 0.105}
    assert isinstance(DefenseContext(np.random.default_rng(0), {}, "k").peers, tuple)


@pytest.mark.parametrize("mode", ["parameter_free", "fixed"])
def test_accept_reject_is_the_ladders_decision_without_its_value(mode: str) -> None:
    ladder: dict[str, object] = {"name": "ladder", "mode": mode}
    if mode == "fixed":
        ladder["eta"] = 0.005
    with_value = _oracle(HIDDEN, [ladder])
    decision = _oracle(HIDDEN, [ladder, {"name": "accept_reject"}])
    values = [with_value.submit(p) for p in SUBMISSIONS]
    labels = [decision.submit(p) for p in SUBMISSIONS]
    # The Ladder accepted exactly where its released value changed (and always the first submission).
    changed = [1.0] + [1.0 if b != a else 0.0 for a, b in pairwise(values)]
    assert labels == changed and 0.0 in labels


def test_a_hard_label_release_carries_no_digit_of_the_score() -> None:
    from scoring import HiddenTestSet, ScoringSpec
    from scoring.parsing import ParsedPredictions

    spec = ScoringSpec(HiddenTestSet(tuple(str(i) for i in range(200)), HIDDEN, 2, np.arange(200) % 3 == 0),
                       chain=DefenseChain.from_json([{"name": "threshold", "t": 0.8}]), secret=5)
    release = release_submission(spec, ParsedPredictions(SUBMISSIONS[0]), submission_id=1)
    texts = {split: result.released_text for split, result in release.primary.items()}
    assert set(texts.values()) <= {"0", "1"}, texts


@pytest.mark.parametrize(("chain", "message"), [
    ([{"name": "threshold"}], "give the cut-off"),
    ([{"name": "threshold", "t": []}], "at least one"),
    ([{"name": "threshold", "t": [0.3, 0.3]}], "distinct"),
    ([{"name": "threshold", "t": "0.5"}], "finite number"),
    ([{"name": "threshold", "t": float("nan")}], "finite number"),
    ([{"name": "accept_reject"}], "needs a 'ladder'"),
    ([{"name": "threshold", "t": 0.5}, {"name": "rank"}], "already releases a hard label"),
    ([{"name": "threshold", "t": 0.5}, {"name": "ladder"}], "cannot follow a hard-label"),
    ([{"name": "rank", "k": 2}], "unknown parameter"),
    ([{"name": "rank", "among": "everyone"}], "'own' or 'board'"),
])
def test_bad_chains_are_refused_with_the_reason(chain: list[dict[str, object]], message: str) -> None:
    with pytest.raises(DefenseConfigError, match=message):
        DefenseChain.from_json(chain)


def test_the_chain_tells_the_feedback_and_a_plain_chain_says_score() -> None:
    assert DefenseChain.from_json([{"name": "rounding", "decimals": 3}]).feedback() == {"kind": "score"}
    chain = DefenseChain.from_json([{"name": "threshold", "t": 0.5}, {"name": "rounding", "decimals": 3}])
    assert chain.feedback()["kind"] == "threshold" and chain.released_decimals(5) == 0
    assert DefenseChain.from_json(chain.to_json()).to_json() == chain.to_json()
