"""The board policy: which of a participant's scored submissions counts on a leaderboard, and the order.

One implementation, used by the site's leaderboards (``leaderboard.submissions.selectors.leaderboard_rows``)
and by the games' ranks (``games.utility.board_rank``). Only released scores take part (``None`` = nothing
was released for that submission on that board).

* **Public board**: each participant's best released public score.
* **Private board**: each participant's best released private score among its *final* submissions — the
  ones it selected, or, if it selected none, its two best released public ones (Kaggle's rule).
* **Order**: better score first (lower or higher, as the metric says); a tie goes to the earlier submission,
  then to the smaller submission id. Ranks are positions 1, 2, 3, …: tied participants do not share a rank.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

BOARDS = ("public", "private")
FALLBACK_FINALS = 2
"""Finals a participant who selected none gets: its best released public submissions."""


@dataclass(frozen=True)
class BoardEntry:
    """One scored submission as a board sees it: who, when, and its released scores (``None``: none)."""

    submission_id: int
    participant: Hashable
    submitted_at: datetime | float
    public: float | None
    private: float | None = None
    selected_for_final: bool = False

    def score(self, board: str) -> float | None:
        """The released score this submission shows on ``board``."""
        return self.public if board == "public" else self.private


@dataclass(frozen=True)
class Standing:
    """A participant's row: its 1-based ``rank``, the submission that counts and its score, and how many
    scored submissions (``entries``) the participant has in total."""

    rank: int
    participant: Hashable
    entry: BoardEntry
    score: float
    entries: int


def order_key(entry: BoardEntry, board: str, *, higher_is_better: bool) -> tuple[float, datetime | float, int]:
    """Sort key putting the better released score first, ties to the earlier submission, then the smaller id.
    The entry must have a released score on ``board``."""
    score = entry.score(board)
    if score is None:
        raise ValueError(f"submission {entry.submission_id} has no released {board} score to rank")
    return (-score if higher_is_better else score, entry.submitted_at, entry.submission_id)


def final_entries(entries: Sequence[BoardEntry], *, higher_is_better: bool) -> list[BoardEntry]:
    """One participant's finals: the submissions it selected, else its :data:`FALLBACK_FINALS` best released
    public ones."""
    selected = [entry for entry in entries if entry.selected_for_final]
    if selected:
        return selected
    released = [entry for entry in entries if entry.public is not None]
    released.sort(key=lambda entry: order_key(entry, "public", higher_is_better=higher_is_better))
    return released[:FALLBACK_FINALS]


def best_entry(entries: Sequence[BoardEntry], board: str, *, higher_is_better: bool) -> BoardEntry | None:
    """The submission of one participant that counts on ``board`` (``None``: nothing released there)."""
    if board not in BOARDS:
        raise ValueError(f"unknown board {board!r}; use 'public' or 'private'")
    pool = entries if board == "public" else final_entries(entries, higher_is_better=higher_is_better)
    released = [entry for entry in pool if entry.score(board) is not None]
    if not released:
        return None
    return min(released, key=lambda entry: order_key(entry, board, higher_is_better=higher_is_better))


def board_standings(entries: Iterable[BoardEntry], board: str, *, higher_is_better: bool) -> list[Standing]:
    """The ``board`` ("public" or "private") over every participant's scored submissions, best first.

    A participant with no released score on the board has no row.

    >>> entries = [BoardEntry(1, "ann", 1.0, 0.30), BoardEntry(2, "bob", 2.0, 0.20), BoardEntry(3, "ann", 3.0, 0.20)]
    >>> [(s.rank, s.participant, s.entry.submission_id) for s in board_standings(entries, "public",
    ...                                                                            higher_is_better=False)]
    [(1, 'bob', 2), (2, 'ann', 3)]
    """
    if board not in BOARDS:
        raise ValueError(f"unknown board {board!r}; use 'public' or 'private'")
    by_participant: dict[Hashable, list[BoardEntry]] = {}
    for entry in entries:
        by_participant.setdefault(entry.participant, []).append(entry)
    best: list[tuple[BoardEntry, int]] = []
    for own in by_participant.values():
        counted = best_entry(own, board, higher_is_better=higher_is_better)
        if counted is not None:
            best.append((counted, len(own)))
    best.sort(key=lambda item: order_key(item[0], board, higher_is_better=higher_is_better))
    standings: list[Standing] = []
    for position, (entry, count) in enumerate(best, start=1):
        score = entry.score(board)
        assert score is not None
        standings.append(Standing(position, entry.participant, entry, score, count))
    return standings
