"""The board policy: best released score per participant, finals on the private board, ties, no-score rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from scoring.board import BoardEntry, board_standings, final_entries

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _rows(entries: list[BoardEntry], board: str, higher: bool = False) -> list[tuple[int, object, int]]:
    return [(s.rank, s.participant, s.entry.submission_id) for s in board_standings(entries, board,
                                                                                   higher_is_better=higher)]


def test_the_public_board_shows_each_participants_best_released_score() -> None:
    entries = [
        BoardEntry(1, "ann", at(1), 0.40),
        BoardEntry(2, "ann", at(2), 0.25),
        BoardEntry(3, "bob", at(3), 0.30),
        BoardEntry(4, "bob", at(4), None),  # nothing released: never counts
    ]
    assert _rows(entries, "public") == [(1, "ann", 2), (2, "bob", 3)]
    # With a higher-is-better metric the same scores rank the other way.
    assert _rows(entries, "public", higher=True) == [(1, "ann", 1), (2, "bob", 3)]


def test_entries_count_every_scored_submission_and_a_participant_without_a_release_has_no_row() -> None:
    entries = [BoardEntry(1, "ann", at(1), 0.4), BoardEntry(2, "ann", at(2), None), BoardEntry(3, "cat", at(3), None)]
    standings = board_standings(entries, "public", higher_is_better=False)
    assert [(s.participant, s.entries, s.score) for s in standings] == [("ann", 2, 0.4)]


def test_a_tie_goes_to_the_earlier_submission_then_to_the_smaller_id() -> None:
    entries = [BoardEntry(9, "late", at(5), 0.3), BoardEntry(7, "early", at(1), 0.3), BoardEntry(8, "same", at(1), 0.3)]
    assert _rows(entries, "public") == [(1, "early", 7), (2, "same", 8), (3, "late", 9)]
    # Within one participant the earlier of two equal scores is the one shown.
    own = [BoardEntry(5, "ann", at(9), 0.2), BoardEntry(6, "ann", at(3), 0.2)]
    assert _rows(own, "public") == [(1, "ann", 6)]


def test_the_private_board_uses_the_selected_finals_only() -> None:
    entries = [
        BoardEntry(1, "ann", at(1), 0.10, private=0.50, selected_for_final=True),
        BoardEntry(2, "ann", at(2), 0.30, private=0.05),  # better privately, but not selected
        BoardEntry(3, "bob", at(3), 0.20, private=0.40),
    ]
    standings = board_standings(entries, "private", higher_is_better=False)
    assert [(s.participant, s.entry.submission_id, s.score) for s in standings] == [("bob", 3, 0.40), ("ann", 1, 0.50)]


def test_without_a_selection_the_two_best_public_submissions_are_the_finals() -> None:
    entries = [
        BoardEntry(1, "ann", at(1), 0.30, private=0.01),  # third best publicly: not a final
        BoardEntry(2, "ann", at(2), 0.10, private=0.60),
        BoardEntry(3, "ann", at(3), 0.20, private=0.50),
        BoardEntry(4, "ann", at(4), None, private=0.00),  # no public release: not a final
    ]
    assert [e.submission_id for e in final_entries(entries, higher_is_better=False)] == [2, 3]
    standings = board_standings(entries, "private", higher_is_better=False)
    assert [(s.entry.submission_id, s.score, s.entries) for s in standings] == [(3, 0.50, 4)]


def test_finals_without_a_released_private_score_leave_no_private_row() -> None:
    entries = [
        BoardEntry(1, "ann", at(1), 0.1, private=None, selected_for_final=True),
        BoardEntry(2, "ann", at(2), 0.2, private=0.1),
    ]
    assert board_standings(entries, "private", higher_is_better=False) == []


def test_an_unknown_board_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown board"):
        board_standings([], "final", higher_is_better=False)


@pytest.mark.parametrize("higher", [False, True])
def test_the_board_agrees_with_a_brute_force_ranking(higher: bool) -> None:
    rng = np.random.default_rng(31 + higher)
    rows: list[tuple[int, int, float, float | None]] = [
        (int(i), int(rng.integers(0, 12)), float(rng.integers(0, 50)),
         None if rng.random() < 0.2 else float(rng.integers(0, 8)) / 8)
        for i in rng.permutation(120)
    ]
    sign = -1.0 if higher else 1.0
    best: dict[int, tuple[float, float, int]] = {}
    for submission_id, participant, when, score in rows:
        if score is not None:
            key = (sign * score, when, submission_id)
            best[participant] = min(best.get(participant, key), key)
    expected = sorted((key, participant) for participant, key in best.items())
    entries = [BoardEntry(i, p, when, score) for i, p, when, score in rows]
    standings = board_standings(entries, "public", higher_is_better=higher)
    assert [(s.participant, s.entry.submission_id) for s in standings] == [(p, k[2]) for k, p in expected]
    assert [s.rank for s in standings] == list(range(1, len(expected) + 1))
