"""The chain tells the precision it releases: each defense may narrow it (rounding does), the display last."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from defenses import DefenseChain
from tests.defenses.support import view


@pytest.mark.parametrize(
    ("chain", "displayed", "places"),
    [
        ([], None, None),
        ([], 4, 4),
        ([{"name": "rounding", "decimals": 3}], None, 3),
        ([{"name": "rounding", "decimals": 3}], 6, 3),
        ([{"name": "rounding", "decimals": 3}], 2, 2),
        ([{"name": "rounding", "decimals": 6}, {"name": "rounding", "decimals": 2}], None, 2),
        ([{"name": "rounding", "decimals": 2}, {"name": "rounding", "decimals": 6}], None, 2),
        ([{"name": "rounding", "significant": 3}], None, None),
        ([{"name": "noise", "kind": "laplace", "scale": 1e-4}], 5, 5),
        ([{"name": "subsetting", "fraction": 0.5}, {"name": "ladder", "eta": 0.01}], None, None),
    ],
)
def test_released_decimals_folds_the_chain_then_the_display(
    chain: list[dict[str, Any]], displayed: int | None, places: int | None
) -> None:
    assert DefenseChain.from_json(chain).released_decimals(displayed) == places


def test_the_released_scores_carry_no_more_places_than_the_chain_says() -> None:
    rng = np.random.default_rng(17)
    chain = DefenseChain.from_json(
        [{"name": "noise", "kind": "gaussian", "scale": 1e-3}, {"name": "rounding", "decimals": 4}]
    )
    places = chain.released_decimals(None)
    assert places == 4
    for key in range(20):
        labels = rng.integers(0, 2, 50)
        outcome = chain.release(view(rng.random(50), labels), states=None, secret=5, submission_key=f"s{key}")
        assert outcome.released is not None
        exact = Decimal(float(outcome.released))
        assert abs(exact - exact.quantize(Decimal(1).scaleb(-places))) < Decimal("1e-15")
