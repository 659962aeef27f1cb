"""``capacity_split`` reads the public count off the page: a board that states its public fraction draws
``round(fraction·N)`` public rows (:func:`scoring.public_split_mask`), so no calibration query is spent on it; a
stated fraction the board does not keep contradicts the releases, and the count is then measured after all,
with every label still right."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from attacks.capacity.split import capacity_split_attack
from attacks.catalogue import BoardFacts
from attacks.oracle import LocalOracle
from scoring import public_split_mask


class MisstatedFraction:
    """A board whose page states another public fraction than the one it scores (everything else passed on)."""

    def __init__(self, board: LocalOracle, stated: float) -> None:
        self._board = board
        self.public_fraction = stated

    def __getattr__(self, name: str) -> Any:
        return getattr(self._board, name)


@pytest.mark.parametrize(("n", "decimals"), [(306, 5), (306, 2), (1000, 5)])
def test_the_stated_fraction_gives_the_count_and_costs_no_calibration(n: int, decimals: int) -> None:
    labels = (np.random.default_rng(n + decimals).random(n) < 0.68).astype(np.int64)
    board = LocalOracle(labels, decimals=decimals, public_fraction=0.3, seed=7)
    public = public_split_mask(n, 0.3, 7)
    assert BoardFacts.of(board).stated_public_count == int(public.sum())
    result = capacity_split_attack(board)
    assert result.details["calibration_queries"] == 0 and result.details["public_count"] == "stated"
    assert np.array_equal(result.details["public_mask"], public)
    assert np.array_equal(result.labels[public], labels[public]) and (result.labels[~public] == -1).all()
    assert result.queries == board.queries


def test_a_misstated_fraction_is_caught_and_the_count_measured() -> None:
    labels = (np.random.default_rng(3).random(306) < 0.6).astype(np.int64)
    board = LocalOracle(labels, decimals=5, public_fraction=0.3, seed=7)
    public = public_split_mask(306, 0.3, 7)
    result = capacity_split_attack(MisstatedFraction(board, 0.32))  # the page says 98 rows; 92 are scored
    assert result.details["calibration_queries"] > 0
    assert str(result.details["public_count"]).startswith("measured")
    assert np.array_equal(result.details["public_mask"], public)
    assert np.array_equal(result.labels[public], labels[public])
    assert result.queries == board.queries  # the queries the wrong count cost are counted
