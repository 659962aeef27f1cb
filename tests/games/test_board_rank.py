"""The games rank the attacker with the site's board policy (``scoring.board``)."""

from __future__ import annotations

import numpy as np

from games.utility import board_rank
from scoring.board import BoardEntry, board_standings


def test_the_attackers_rank_is_its_row_on_the_sites_board() -> None:
    rng = np.random.default_rng(44)
    for _ in range(200):
        honest = [None if rng.random() < 0.2 else float(rng.integers(0, 6)) for _ in range(int(rng.integers(0, 8)))]
        attacker = float(rng.integers(0, 6))
        higher = bool(rng.random() < 0.5)
        # The attacker submits after every honest participant, each of whom submitted once.
        entries = [BoardEntry(i, f"honest-{i}", float(i), score) for i, score in enumerate(honest)]
        entries.append(BoardEntry(len(honest), "attacker", float(len(honest)), attacker))
        site = board_standings(entries, "public", higher_is_better=higher)
        expected = next(s.rank for s in site if s.participant == "attacker")
        assert board_rank(honest, attacker, higher_is_better=higher) == expected


def test_ties_go_to_the_honest_participant_who_submitted_first() -> None:
    assert board_rank([0.2, 0.2], 0.2, higher_is_better=False) == 3
    assert board_rank([0.2, 0.1], 0.15, higher_is_better=True) == 2
    assert board_rank([None, None], None, higher_is_better=True) == 3
