"""Many accounts against competition-scoped defenses: one Ladder and one privacy budget for the whole board, so
fresh accounts buy nothing (``auto`` reads the majority class, or what one account reads), while the same chain
scoped per account lets them read far more."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

import attacks
from attacks.oracle import LocalOracle
from scoring import public_split_mask

LABELS = load_breast_cancer().target.astype(np.int64)
PUBLIC = public_split_mask(len(LABELS), 0.3, 3)
MAJORITY = max(float(LABELS[PUBLIC].mean()), 1 - float(LABELS[PUBLIC].mean()))
TOLERANCE = 0.02


def _ladder(mode: str, scope: str) -> list[dict[str, Any]]:
    ladder: dict[str, Any] = {"name": "ladder", "mode": mode, "scope": scope}
    if mode == "fixed":
        ladder["eta"] = 0.01
    return [ladder]


def _public_read(result: attacks.AttackResult) -> tuple[float, int]:
    """(share of the public labels right, wrong labels among those the attack called exact)."""
    exact = result.fill_confidence() >= 1.0
    return float(np.mean(result.labels[PUBLIC] == LABELS[PUBLIC])), int((result.labels[exact] != LABELS[exact]).sum())


def test_fresh_accounts_read_no_more_than_the_majority_behind_a_competition_ladder() -> None:
    shared = LocalOracle(LABELS, decimals=5, defenses=_ladder("parameter_free", "competition"),
                         public_fraction=0.3, seed=3, accounts=60)
    right, wrong = _public_read(attacks.run("auto", shared, budget=200))
    assert right <= MAJORITY + TOLERANCE and wrong == 0
    per_account = LocalOracle(LABELS, decimals=5, defenses=_ladder("parameter_free", "account"),
                              public_fraction=0.3, seed=3, accounts=60)
    result = attacks.run("auto", per_account, budget=200)
    assert result.course is not None and result.course.attack == "fresh_accounts"
    right_per_account, wrong = _public_read(result)
    assert right_per_account >= MAJORITY + 0.25 and wrong == 0


@pytest.mark.parametrize("mode", ["parameter_free", "fixed"])
def test_the_fresh_accounts_plan_claims_no_label_on_a_competition_ladder(mode: str) -> None:
    board = LocalOracle(LABELS, decimals=5, defenses=_ladder(mode, "competition"), public_fraction=0.3, seed=3,
                        accounts=100)
    result = attacks.run("fresh_accounts", board, budget=300)
    right, wrong = _public_read(result)
    assert result.exact == 0 and wrong == 0
    assert right <= MAJORITY + TOLERANCE
    # Its inner fingerprint saw the board withhold releases and played a plan that needs none released exactly.
    assert result.course is not None
    assert any("released nothing" in line for line in result.course.reasoning)


def _budget_chain(eps: float, scope: str) -> list[dict[str, Any]]:
    return [{"name": "noise", "kind": "laplace", "epsilon": eps},
            {"name": "privacy_budget", "epsilon": 20 * eps, "composition": "basic", "scope": scope},
            {"name": "rounding", "decimals": 5}]


def _budget_read(scope: str, accounts: int) -> tuple[float, int]:
    chain = _budget_chain(100.0, scope)
    board = LocalOracle(LABELS, defenses=chain, seed=7, accounts=accounts, disclosed={"defenses": chain[:2]})
    result = attacks.run("auto", board, budget=2000)
    return result.accuracy(LABELS), board.queries


def test_a_competition_privacy_budget_is_one_budget_not_one_per_account() -> None:
    one_account, _ = _budget_read("account", 1)
    shared, _ = _budget_read("competition", 30)
    per_account, _ = _budget_read("account", 30)
    # Thirty accounts on one board budget read what one account reads; thirty budgets read far more.
    assert shared == pytest.approx(one_account, abs=0.01)
    assert per_account >= shared + 0.15


def test_a_disclosed_scope_is_read_and_a_disclosed_board_ladder_is_not_played_as_fresh_first_releases() -> None:
    from attacks.disclosure import Disclosure

    told = Disclosure.parse({"defenses": [*_ladder("parameter_free", "competition"),
                                          *_budget_chain(10.0, "competition")[:2]]})
    assert told.ladder_scope == "competition" and told.budget_scope == "competition"
    assert "Ladder scope competition" in told.read
    assert Disclosure.parse({"ladder": "fixed", "ladder_scope": "account"}).ladder_scope == "account"
    chain = _ladder("parameter_free", "competition")
    board = LocalOracle(LABELS, decimals=5, defenses=chain, public_fraction=0.3, seed=3, accounts=60,
                        disclosed={"defenses": chain})
    result = attacks.run("auto", board, budget=200)
    assert result.course is not None and result.course.attack != "fresh_accounts"
    right, wrong = _public_read(result)
    assert right <= MAJORITY + TOLERANCE and wrong == 0 and result.exact == 0
