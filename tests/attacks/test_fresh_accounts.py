"""``fresh_accounts``: every account's first submission is released unconditionally by a per-account Ladder, so an
attacker with enough accounts reads the board one account a query; with too few, the one-account plans play."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import attacks
from attacks.accounts import FreshAccounts, release_step, step_decimals
from attacks.oracle import LocalOracle
from attacks.result import AttackFailed
from scoring import public_split_mask

FREE = [{"name": "ladder", "mode": "parameter_free"}]
FIXED = [{"name": "ladder", "mode": "fixed", "eta": 0.01}]


def _labels(n: int, seed: int, share: float = 0.68) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


@pytest.mark.parametrize("seed", [5, 6])
def test_enough_accounts_read_every_public_label_behind_the_parameter_free_ladder(seed: int) -> None:
    labels = _labels(306, seed)
    board = LocalOracle(labels, decimals=5, defenses=FREE, public_fraction=0.3, seed=3, accounts=40)
    result = attacks.run("auto", board, budget=2000)
    public = public_split_mask(306, 0.3, 3)
    assert result.course is not None and result.course.attack == "fresh_accounts", result.course
    exact = result.fill_confidence() >= 1.0
    assert exact[public].all() and np.array_equal(result.labels[public], labels[public])
    # Exact only where vouched for: the private rows are guesses, never called exact.
    assert not exact[~public].any()
    # One submission per account after the fingerprint's first account.
    assert max(board.queries_by_account[1:]) == 1 and board.queries_by_account[0] >= 1


def test_the_fixed_ladder_step_is_read_off_the_releases_and_every_label_follows() -> None:
    labels = _labels(200, 11)
    board = LocalOracle(labels, decimals=5, defenses=FIXED, seed=2, accounts=200)
    result = attacks.run("auto", board, budget=2000)
    assert result.course is not None and result.course.attack == "fresh_accounts"
    assert result.course.plan_params["decimals"] == 2  # the step 0.01, not the page's 5 decimals
    assert np.array_equal(result.labels, labels) and result.exact == 200


def test_too_few_accounts_leave_the_board_to_the_one_account_plans() -> None:
    labels = _labels(306, 5)
    few = LocalOracle(labels, decimals=5, defenses=FREE, public_fraction=0.3, seed=3, accounts=2)
    result = attacks.run("auto", few, budget=300)
    assert result.course is not None and result.course.attack != "fresh_accounts"
    assert "fresh_accounts: 1 fresh account(s)" in result.course.plan_reason  # the plan says what more would do


@pytest.mark.parametrize("chain", [FREE, FIXED])
@pytest.mark.parametrize("fraction", [None, 0.3])
def test_more_accounts_never_read_fewer_labels(chain: list[dict[str, object]], fraction: float | None) -> None:
    labels = _labels(200, 21, share=0.6)
    scored = np.ones(200, bool) if fraction is None else public_split_mask(200, fraction, 4)
    right = []
    for accounts in (1, 2, 12, 150):
        board = LocalOracle(labels, decimals=5, defenses=chain, seed=4, accounts=accounts, public_fraction=fraction)
        result = attacks.run("auto", board, budget=2000)
        right.append(int((result.labels == labels)[scored].sum()))
        assert not ((result.fill_confidence() >= 1.0) & (result.labels != labels)).any()  # never a false exact
    assert right == sorted(right), right
    assert right[-1] == int(scored.sum())


def test_fresh_accounts_submits_once_per_account_and_stops_at_the_last() -> None:
    board = LocalOracle([0, 1, 1, 0], decimals=5, defenses=FREE, accounts=3)
    carrier = FreshAccounts(board, first=1, decimals=5)
    assert carrier.submit([0.5] * 4) == carrier.submit([0.5] * 4)  # two first releases, two accounts
    assert board.queries_by_account == [0, 1, 1]
    with pytest.raises(AttackFailed, match="spent"):
        carrier.submit([0.5] * 4)


def test_the_step_found_is_one_every_release_fits_and_never_finer_than_the_board() -> None:
    rng = np.random.default_rng(0)
    for step in (Fraction(1, 100), Fraction(1, 1000)):
        values = [round(float(round(v / float(step)) * step), 5) for v in rng.uniform(0.1, 3.0, 3)]
        found = release_step(values, 5, 500)
        assert found is not None and found >= step
        assert all(abs(v / float(found) - round(v / float(found))) * float(found) <= 0.5e-5 + 1e-12 for v in values)
    # Releases at the board's own precision: no coarser step fits three of them.
    assert release_step([round(v, 5) for v in rng.uniform(0.1, 3.0, 3)], 5, 500) is None
    assert step_decimals(Fraction(1, 100), 5) == 2 and step_decimals(None, 5) == 5
    assert step_decimals(Fraction(2214, 10000), 5) == 0  # a coarse default step: no decimal survives it


def test_a_design_the_budget_cut_is_reported_cut_and_one_the_accounts_cut_is_not() -> None:
    """The caller (the bot) stops resumably on ``cut_by_budget``: true when the submissions budget ended the inner
    design, false when the fresh accounts did (a larger budget would not finish it; the course says why)."""
    labels = (np.random.default_rng(3).random(306) < 0.68).astype(np.int64)
    free = [{"name": "ladder", "mode": "parameter_free"}]

    def board(accounts: int) -> LocalOracle:
        return LocalOracle(labels, decimals=5, defenses=free, public_fraction=0.3, seed=3, accounts=accounts)

    by_budget = attacks.run("auto", board(30), budget=12)
    by_accounts = attacks.run("auto", board(20), budget=2000)
    assert by_budget.course is not None and by_accounts.course is not None
    assert by_budget.course.attack == by_accounts.course.attack == "fresh_accounts"
    assert by_budget.course.cut_by_budget and by_budget.queries == 12
    assert not by_accounts.course.cut_by_budget and by_accounts.queries <= 22
    assert any("fresh accounts ran out" in line for line in by_accounts.course.reasoning)
