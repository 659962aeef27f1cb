"""The golden grid (:mod:`tests.attacks.golden.grid`): on every small board ``auto`` must do as well as it did
when ``auto_outcomes.json`` was recorded (its header names the commit) or better — at least as many labels
right, and as many for no more queries — and never vouch for a wrong label (confidence 1.0) where it vouched
for none. A cell that does better is fine; re-record (``python -m tests.attacks.golden.record``) to raise the
bar."""

from __future__ import annotations

from typing import Any

import pytest

from tests.attacks.golden.grid import CELLS, Cell, play
from tests.attacks.golden.record import load

RECORDED: dict[str, Any] = load()
OUTCOMES: dict[str, dict[str, Any]] = RECORDED["cells"]
AT = RECORDED["header"]["short"]


#: Cells where a deliberate change trades labels for a true word, each with the labels right it must still reach
#: and why. Every entry is a cost the note of its change states; the grid holds every other cell to the record.
TRADED: dict[str, tuple[int, str]] = {
    "binary_logloss-k2-laplace_5e-3-all-a1-bal-n120-q100-s1": (
        106, "a design cut short under noise keeps one query to confirm its labels (unconfirmed, they are never "
        "called exact: the probes cannot see a fresh randomized response): one label fewer decoded, 92 vouched"),
    "binary_logloss-k2-accept_reject-pub0.3-a1-bal-n60-q500-s1": (
        30, "a hard-label board scoring a public split it does not reveal gets the public majority class, never a "
        "label-only attack's guesses on private rows (which no release informed, below the majority there on an "
        "unbalanced board): 30 of 60 in 2 queries, where brep's 500 queries had 37 (public rows read, private ones "
        "a coin)"),
    "binary_logloss-k2-rank-pub0.3-a1-skew-n40-q300-s1": (
        28, "as above, on an own-rank board: the majority class, 28 of 40 in 2 queries, where brep had 29 (its "
        "private rows, 70/30, guessed by a coin)"),
    "binary_logloss-k2-rr_fresh-all-a1-skew-n60-q500-s1": (
        60, "edge probes that break a plain board's sums for no reason the other probes saw (Thresholdout's holdout "
        "answers: a 30 % board read as 49 %, auto 24 of 60 below the majority's 42) re-read the class balance with a "
        "0.7 constant; fresh flips break the sums too, where the ½ and row probes miss them: 60 of 60 in 46 queries, "
        "was 42"),
    "sigmoid_ce-k2-subset-pub0.3-a1-bal-n40-q500-s1": (
        26, "the split design takes the public count the page states (no calibration query, every public label with "
        "30 accounts on the 306-row Ladder board); here a fresh subset of the public rows is scored, which the "
        "fingerprint cannot see on sigmoid_ce, and the design spends 7 queries before the releases contradict it: "
        "boosting's 490 random vectors then read 26 of 40, where 495 had read 28"),
    "softmax_ce-k3-probe-pub0.3-a1-bal-n40-q500-s1": (
        13, "the probe detector's rejections are charged (a free rejection read the hidden split), and the stated "
        "public count is tried before the count is measured: the same 13 of 40 (the public rows' majority) in 14 "
        "queries, where 6 had done"),
}


def _played(outcome: dict[str, Any]) -> str:
    fallback = outcome.get("fallback")
    return f"{outcome['attack']}" + ("" if fallback is None else f" (fallback {fallback})")


def _describe(cell: Cell, then: dict[str, Any], now: dict[str, Any]) -> str:
    keys = ("right", "exact", "wrong_exact", "queries")
    return (f"{cell.id}: recorded at {AT} {', '.join(f'{k}={then[k]}' for k in keys)} of {then['n']} rows; now "
            f"{', '.join(f'{k}={now[k]}' for k in keys)}; played then {_played(then)}, now {_played(now)} "
            f"(plan then {then['plan']}, now {now['plan']})")


def test_every_cell_has_a_recorded_outcome() -> None:
    missing = [cell.id for cell in CELLS if cell.id not in OUTCOMES]
    assert not missing, f"cells without a recording (run python -m tests.attacks.golden.record): {missing}"
    assert len({cell.id for cell in CELLS}) == len(CELLS), "two cells share an id"


@pytest.mark.parametrize("cell", CELLS, ids=[cell.id for cell in CELLS])
def test_auto_matches_or_beats_its_recorded_outcome(cell: Cell) -> None:
    then = OUTCOMES.get(cell.id)
    if then is None:
        pytest.fail(f"{cell.id} has no recorded outcome (run python -m tests.attacks.golden.record)")
    now = play(cell)
    message = _describe(cell, then, now)
    if then["wrong_exact"] == 0:
        assert now["wrong_exact"] == 0, f"a wrong label vouched for (confidence 1.0): {message}"
    if cell.id in TRADED:
        floor, why = TRADED[cell.id]
        assert now["right"] >= floor and now["wrong_exact"] == 0, f"{message} (traded: {why})"
        return
    assert now["right"] >= then["right"], f"fewer labels right: {message}"
    if now["right"] == then["right"]:
        assert now["queries"] <= then["queries"], f"as many labels right for more queries: {message}"
