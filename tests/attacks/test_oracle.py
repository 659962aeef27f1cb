"""``LocalOracle``: what a participant can see (the released precision) and the core's release of every metric."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle
from attacks.auto import BudgetedView, BudgetSpent
from attacks.oracle import submit_many
from defenses.base import REGISTRY, Defense, DefenseContext, Score, ScoringView, Stage
from scoring import ParsedPredictions, release_submission


@pytest.mark.parametrize(
    ("displayed", "chain", "seen"),
    [
        (5, [], 5),
        (None, [], None),
        (None, [{"name": "rounding", "decimals": 3}], 3),
        (2, [{"name": "rounding", "decimals": 3}], 2),
        (8, [{"name": "noise", "kind": "laplace", "scale": 1e-6}, {"name": "rounding"}], 5),
        (6, [{"name": "rounding", "significant": 4}], 6),
    ],
)
def test_decimals_is_the_precision_a_participant_sees(
    displayed: int | None, chain: list[dict[str, Any]], seen: int | None
) -> None:
    oracle = LocalOracle(np.array([0, 1, 1, 0, 1]), decimals=displayed, defenses=chain, seed=3)
    assert oracle.decimals == seen


def test_every_released_value_carries_at_most_the_reported_decimals() -> None:
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 2, 80)
    oracle = LocalOracle(labels, decimals=None, defenses=[{"name": "rounding", "decimals": 4}])
    assert oracle.decimals == 4
    for _ in range(5):
        released = oracle.submit(rng.random(80))
        assert released is not None
        assert Decimal(repr(released)) == Decimal(repr(released)).quantize(Decimal("1e-4"))


def test_an_mpfr_oracle_with_full_displayed_precision_still_releases_decimals() -> None:
    oracle = LocalOracle([0, 1, 1], arithmetic="mpfr:80", decimals=None, defenses=[{"name": "rounding", "decimals": 3}])
    released = oracle.submit(["0.25", "0.5", "0.75"])
    assert oracle.decimals == 3
    assert isinstance(released, Decimal) and released == released.quantize(Decimal("0.001"))


def test_submit_all_is_the_cores_release_keyed_by_the_query_number() -> None:
    rng = np.random.default_rng(12)
    labels = rng.integers(0, 2, 60)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    oracle = LocalOracle(labels, decimals=None, defenses=chain, seed=9, also_report=("brier",))
    for query in (1, 2, 3):
        predictions = rng.random(60)
        released = oracle.submit_all(predictions)
        expected = release_submission(
            oracle.spec, ParsedPredictions(predictions), submission_id=query, splits=("all",)
        )
        assert released == {name: expected.results[name]["all"].released for name in ("binary_logloss", "brier")}


class _RejectSecond(Defense):
    name = "test_oracle_reject_second"
    stage = Stage.RELEASE

    def initial_state(self) -> dict[str, Any]:
        return {"seen": 0}

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        ctx.state["seen"] += 1
        if ctx.state["seen"] == 2 and view.metric.name == "binary_logloss":  # only the primary metric's chain
            ctx.reject = "rejected"
        return score


def test_a_rejected_submission_releases_nothing_on_any_metric_and_keeps_the_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(REGISTRY, _RejectSecond.name, _RejectSecond)
    oracle = LocalOracle([0, 1, 1, 0], decimals=5, also_report=("brier",), defenses=[{"name": _RejectSecond.name}])
    predictions = [0.2, 0.8, 0.7, 0.1]
    assert None not in oracle.submit_all(predictions).values()
    assert oracle.submit_all(predictions) == {"binary_logloss": None, "brier": None}
    # The rejected query left every metric's state where it was, so the next one is rejected again.
    assert oracle.submit_all(predictions) == {"binary_logloss": None, "brier": None}


def test_each_account_has_its_own_ladder_state_while_noise_draws_stay_distinct() -> None:
    """Several accounts: a Ladder leader set by account 0 does not hold back account 1, and two accounts'
    first submissions (global submission ids 1 and 2) get different noise draws."""
    labels = np.random.default_rng(3).integers(0, 2, 200)
    ladder = LocalOracle(labels, decimals=5, accounts=2, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}])
    first = ladder.submit(np.full(200, 0.5))
    ladder.account = 1
    worse = ladder.submit(np.full(200, 0.9))
    assert worse != first  # account 1's first score is released, not account 0's leader
    ladder.account = 0
    assert ladder.submit(np.full(200, 0.9)) == first  # account 0 still holds its leader
    assert ladder.queries == 3 and ladder.queries_by_account == [2, 1]
    laplace = [{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    noisy = LocalOracle(labels, decimals=None, accounts=2, defenses=laplace)
    a = noisy.submit(np.full(200, 0.5))
    noisy.account = 1
    b = noisy.submit(np.full(200, 0.5))
    assert a != b
    noisy.account = 2
    with pytest.raises(ValueError, match="account 2 does not exist"):
        noisy.submit(np.full(200, 0.5))


def test_submit_many_answers_independent_queries_in_order_as_one_submit_after_another() -> None:
    labels = np.random.default_rng(3).integers(0, 2, 50)
    vectors = [np.where(np.arange(50) == i, 0.9, 0.5) for i in range(6)]
    one_by_one = LocalOracle(labels, decimals=5)
    expected = [one_by_one.submit(v) for v in vectors]
    together = LocalOracle(labels, decimals=5)
    assert submit_many(together, vectors) == expected and together.queries == 6

    class Forwarding:  # a wrapper that forwards unknown attributes: its own submit must not be bypassed
        def __init__(self, inner: LocalOracle) -> None:
            self.inner, self.seen = inner, 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def submit(self, predictions: Any) -> Any:
            self.seen += 1
            return self.inner.submit(predictions)

    wrapper = Forwarding(LocalOracle(labels, decimals=5))
    assert submit_many(wrapper, vectors) == expected and wrapper.seen == 6


def test_auto_s_budgeted_view_sends_only_the_queries_that_fit_then_stops() -> None:
    board = LocalOracle(np.random.default_rng(4).integers(0, 2, 30), decimals=5)
    view = BudgetedView(board, 4)
    view.submit(np.full(30, 0.5))
    with pytest.raises(BudgetSpent):
        submit_many(view, [np.full(30, 0.4 + i / 100) for i in range(5)])
    assert board.queries == 4  # three of the five fitted; the rest were never sent
