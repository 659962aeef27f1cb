"""Subsetting: subset size, freshness per submission, reproducibility, disclosure."""

from __future__ import annotations

import numpy as np
import pytest

from defenses import DefenseChain, DefenseConfigError
from defenses.subsetting import Subsetting
from tests.defenses.support import context, scripted_metric, view


def _rows(defense: Subsetting, key: str, n: int = 100) -> np.ndarray:
    v = view(np.arange(n, dtype=float), np.zeros(n), scripted_metric())
    return defense.before_metric(v, context(key)).rows_in_split


@pytest.mark.parametrize(("params", "message"), [
    ({"fraction": 0.5, "count": 3}, "either 'fraction' or 'count'"),
    ({"fraction": 0.0}, "'fraction' must be in (0, 1]"),
    ({"count": 0}, "'count' must be a positive integer"),
    ({"count": 2.5}, "'count' must be a positive integer"),
    ({"disclosed": "yes"}, "'disclosed' must be true or false"),
    ({"size": 3}, "unknown parameter(s) size"),
])
def test_it_rejects_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(DefenseConfigError) as info:
        DefenseChain.from_json([{"name": "subsetting", **params}])
    assert message in str(info.value)


def test_it_scores_the_requested_number_of_distinct_rows() -> None:
    assert len(set(_rows(Subsetting(fraction=0.3), "a"))) == 30
    assert len(set(_rows(Subsetting(count=7), "a"))) == 7
    assert len(_rows(Subsetting(), "a")) == 50  # default fraction 0.5


def test_a_count_above_the_split_scores_every_row_and_tells_the_host() -> None:
    ctx = context("a")
    out = Subsetting(count=500).before_metric(view(np.zeros(10), np.zeros(10), scripted_metric()), ctx)
    assert len(out.labels) == 10
    assert "exceeds" in ctx.notes[0]


def test_the_subset_is_fresh_per_submission_and_fixed_per_key() -> None:
    defense = Subsetting(fraction=0.5)
    assert np.array_equal(_rows(defense, "submission:1"), _rows(defense, "submission:1"))
    assert not np.array_equal(_rows(defense, "submission:1"), _rows(defense, "submission:2"))


def test_each_row_is_scored_about_fraction_of_the_time() -> None:
    defense, n, draws = Subsetting(fraction=0.2), 50, 2000
    counts = np.zeros(n)
    for i in range(draws):
        counts[_rows(defense, f"s{i}", n)] += 1
    # Each row is in a subset with probability 0.2; 5-sigma binomial bound per row.
    assert np.all(np.abs(counts - 0.2 * draws) <= 5 * np.sqrt(draws * 0.2 * 0.8))


def test_it_discloses_itself_only_when_the_host_says_so() -> None:
    chain = DefenseChain.from_json([{"name": "subsetting", "count": 10, "disclosed": True}, {"name": "rounding"}])
    assert chain.disclosure() == [{"name": "subsetting", "count": 10, "disclosed": True}]
    assert DefenseChain.from_json([{"name": "subsetting"}]).disclosure() == []
