"""``attacks.run`` owns the bookkeeping: every attack's queries and wall time come from the oracle and the
clock, whatever the attack itself returns; and every registered attack takes the one budget keyword
(``budget``: its submissions, every account's together), never submitting past it — its own queries, its
checks and ``run``'s confirmation included."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, AttackResult, LocalOracle, Oracle
from attacks.oracle import QueryLimit, limited, submit_many
from attacks.registry import ATTACKS


def three_queries(oracle: Oracle) -> AttackResult:
    for _ in range(3):
        oracle.submit(np.full(oracle.n_rows, 0.5))
    time.sleep(0.01)
    return AttackResult("three_queries", np.full(oracle.n_rows, -1, dtype=np.int64), details={"note": "kept"})


def test_run_counts_the_queries_and_times_an_attack_that_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ATTACKS, "test_three", three_queries)
    oracle = LocalOracle(np.random.default_rng(0).integers(0, 2, 12), decimals=5)
    oracle.submit(np.full(12, 0.5))  # an earlier query is not the attack's
    result = attacks.run("test_three", oracle)
    assert result.attack == "test_three" and result.queries == 3 and result.seconds >= 0.01
    assert result.details == {"note": "kept"}


def test_attacks_leave_the_counts_to_run() -> None:
    labels = np.random.default_rng(1).integers(0, 2, 40)
    for name, params in (("prime_batched", {}), ("boosting", {"budget": 7})):
        oracle = LocalOracle(labels, decimals=5)
        result = attacks.run(name, oracle, confirm=False, **params)
        assert result.queries == oracle.queries > 0 and result.seconds > 0.0, name


# --- the one budget keyword -----------------------------------------------------------------------------------


def _binary(n: int, seed: int, share: float = 0.5) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


def _classes(n: int, k: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, k, n)


def _model_board() -> Oracle:
    """A model competition (every query an ONNX model run on hidden features): breast cancer's last 60 rows."""
    from attacks.mutnet import LocalModelBoard
    from tests.sandbox import hostile

    features, labels = hostile.breast_cancer()
    return LocalModelBoard(features[-60:], labels[-60:], decimals=5)  # type: ignore[return-value]


@dataclass
class Case:
    """How attack ``name`` is played: the board it fits (a fresh one per run), its other parameters, and a budget
    it finishes within (``None``: it is run with the small budgets only, for the reason given)."""

    board: Callable[[], Oracle]
    params: dict[str, Any] = field(default_factory=dict)
    generous: int | None = None
    why_not_generous: str = ""


LADDER_FIXED = [{"name": "ladder", "mode": "fixed"}]
LADDER_FREE = [{"name": "ladder", "mode": "parameter_free"}]
LAPLACE = [{"name": "noise", "kind": "laplace", "scale": 1e-4}]

#: Every registered attack on a small board it fits. A new attack must be added here: the registry walk fails
#: for an attack without a case.
CASES: dict[str, Case] = {
    "auc_logloss": Case(lambda: LocalOracle(_binary(40, 1), decimals=5, also_report=("auc",)), generous=40),
    "auc_logloss_ranks": Case(lambda: LocalOracle(_binary(40, 2), decimals=5, also_report=("auc",)), generous=40),
    "auto": Case(lambda: LocalOracle(_binary(40, 3), decimals=5), generous=120),
    "binary_representation": Case(lambda: LocalOracle(_binary(40, 4), decimals=5), generous=20),
    "blocks": Case(lambda: LocalOracle(_binary(40, 41), decimals=5, defenses=[
        {"name": "randomized_response", "p": 0.02, "mode": "fresh"}, *LAPLACE], seed=3), generous=60),
    "blocks_split": Case(lambda: LocalOracle(_binary(60, 43), decimals=5, public_fraction=0.3, defenses=[
        {"name": "randomized_response", "p": 0.02, "mode": "fresh"}, *LAPLACE], seed=3), generous=80),
    "boosting": Case(lambda: LocalOracle(_binary(40, 5, 0.7), metric="accuracy", decimals=5), generous=30),
    "bregman_powers": Case(lambda: LocalOracle(_classes(30, 3, 6), metric="brier", n_classes=3, decimals=5),
                           generous=60),
    "bregman_primes": Case(lambda: LocalOracle(_classes(30, 3, 7), metric="brier", n_classes=3, decimals=5),
                           generous=60),
    "brep": Case(lambda: LocalOracle(_binary(40, 8), metric="accuracy", defenses=[{"name": "threshold", "t": 0.5}],
                                     seed=1), generous=40),
    "budgeted": Case(lambda: LocalOracle(_binary(60, 9, 0.6), defenses=[
        {"name": "noise", "kind": "laplace", "scale": 1e-4},
        {"name": "privacy_budget", "epsilon": 1e5, "composition": "basic"}]), {"scale": 1e-4, "prior": 0.6},
        generous=60),
    "camouflage": Case(lambda: LocalOracle(_binary(40, 10), decimals=5), {"seed": 1}, generous=80),
    "capacity": Case(lambda: LocalOracle(_binary(40, 11), decimals=5), generous=40),
    "capacity_split": Case(lambda: LocalOracle(_binary(40, 12), decimals=5, public_fraction=0.5, seed=3),
                           generous=80),
    "ce_robust": Case(lambda: LocalOracle(_classes(30, 3, 13), metric="softmax_ce", n_classes=3, decimals=5),
                      generous=60),
    "fresh_accounts": Case(lambda: LocalOracle(_binary(40, 33), defenses=LADDER_FREE, accounts=30), generous=30),
    "ladder": Case(lambda: LocalOracle(_binary(40, 14), defenses=LADDER_FIXED), generous=100),
    "ladder_fixed": Case(lambda: LocalOracle(_binary(40, 15), defenses=LADDER_FIXED), generous=100),
    "ladder_free": Case(lambda: LocalOracle(_binary(40, 16), defenses=LADDER_FREE), generous=100),
    "logits_split": Case(lambda: LocalOracle(_classes(30, 3, 17), metric="softmax_ce", n_classes=3, decimals=5,
                                             public_fraction=0.5, seed=3), generous=120),
    "majority": Case(lambda: LocalOracle(_classes(30, 3, 18), metric="multiclass_logloss", decimals=5), generous=5),
    "mutnet": Case(_model_board, {"attack": "capacity"}, generous=40),
    "noisy": Case(lambda: LocalOracle(_binary(40, 19), decimals=5, defenses=LAPLACE, seed=2), generous=400),
    "noisy_split": Case(lambda: LocalOracle(_binary(40, 20), decimals=5, defenses=LAPLACE, public_fraction=0.5,
                                            seed=2), generous=800),
    "one_vs_rest": Case(lambda: LocalOracle(_classes(30, 3, 21), metric="multiclass_logloss", decimals=5,
                                            defenses=LAPLACE, seed=1), generous=600),
    "prime_batched": Case(lambda: LocalOracle(_binary(40, 22), decimals=5), generous=20),
    "prime_powers": Case(lambda: LocalOracle(_classes(12, 3, 23), metric="multiclass_logloss", n_classes=3,
                                             arithmetic="mpfr:200", decimals=None), generous=5),
    "prime_single": Case(lambda: LocalOracle(_binary(10, 24), arithmetic="mpfr:96", decimals=None), generous=2),
    "randomized_response": Case(lambda: LocalOracle(_binary(20, 25), decimals=5, seed=3, defenses=[
        {"name": "randomized_response", "p": 0.1, "mode": "fresh"}]), {"p": 0.1}, generous=600),
    "robust_batched": Case(lambda: LocalOracle(_binary(10, 26), decimals=5), {"tau": 0.001}, generous=5),
    "robust_single": Case(lambda: LocalOracle(_binary(5, 27), decimals=5), {"tau": 0.01}, generous=3),
    "sigmoid_ce": Case(lambda: LocalOracle(_binary(30, 28), metric="sigmoid_ce", decimals=5), generous=40),
    "softmax_ce": Case(lambda: LocalOracle(_classes(30, 3, 29), metric="softmax_ce", n_classes=3, decimals=5),
                       generous=40),
    "subsetting": Case(lambda: LocalOracle(_binary(30, 30), decimals=5, seed=3, defenses=[
        {"name": "subsetting", "fraction": 0.5}]), {"fraction": 0.5}, generous=800),
    "thresholdout": Case(lambda: LocalOracle(_binary(60, 31, 0.6), defenses=[{"name": "thresholdout"}], seed=5),
                         generous=120),
    "twin_primes": Case(lambda: LocalOracle(_binary(16, 32), arithmetic="mpfr:200", decimals=None), generous=3),
}
#: Budgets too small for most attacks: each must stop (or fail) within them.
SMALL = (0, 1, 5)


def test_every_registered_attack_has_a_case() -> None:
    assert sorted(CASES) == attacks.available()


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_every_attack_takes_the_budget_keyword_with_no_limit_by_default(name: str) -> None:
    parameter = inspect.signature(ATTACKS[name]).parameters.get("budget")
    assert parameter is not None, f"{name} takes no budget"
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None, name


def _played(name: str, budget: int) -> tuple[Oracle, AttackResult | None]:
    case = CASES[name]
    oracle = case.board()
    try:
        result = attacks.run(name, oracle, budget=budget, **case.params)
    except AttackFailed:
        return oracle, None  # a budget too small for the attack's plan: a failure, never a query past it
    return oracle, result


@pytest.mark.parametrize("budget", SMALL)
@pytest.mark.parametrize("name", sorted(CASES))
def test_no_attack_submits_past_a_small_budget(name: str, budget: int) -> None:
    oracle, result = _played(name, budget)
    assert oracle.queries <= budget, f"{name} submitted {oracle.queries} with a budget of {budget}"
    if result is not None:
        assert result.queries <= budget


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_attack_finishes_within_a_generous_budget(name: str) -> None:
    case = CASES[name]
    assert case.generous is not None, case.why_not_generous
    oracle, result = _played(name, case.generous)
    assert result is not None, f"{name} failed within a budget of {case.generous}"
    assert oracle.queries <= case.generous and result.queries == oracle.queries
    assert (result.labels >= 0).any()


def test_the_confirmation_counts_within_the_budget() -> None:
    labels = _binary(40, 40)
    needed = attacks.run("capacity", LocalOracle(labels, decimals=5), confirm=False).queries
    exact = LocalOracle(labels, decimals=5)
    result = attacks.run("capacity", exact, budget=needed)
    assert exact.queries == needed and result.details["confirmed"].startswith("not checked")
    assert (result.labels == labels).all()  # every label decoded, vouched for by the design alone
    roomy = LocalOracle(labels, decimals=5)
    assert attacks.run("capacity", roomy, budget=needed + 1).details["confirmed"] == "passed"
    assert roomy.queries == needed + 1


def test_an_attack_that_stops_early_keeps_what_it_decoded() -> None:
    labels = _binary(40, 41)
    oracle = LocalOracle(labels, decimals=5)
    result = attacks.run("prime_batched", oracle, budget=3)
    decoded = result.labels >= 0
    assert oracle.queries == 3 and 0 < decoded.sum() < 40
    assert (result.labels[decoded] == labels[decoded]).all()


def test_an_attack_that_knows_its_plan_refuses_before_submitting() -> None:
    oracle = LocalOracle(_binary(5, 42), decimals=5)
    with pytest.raises(AttackFailed, match="robust_single plans 2 submissions, more than the budget of 1"):
        attacks.run("robust_single", oracle, tau=0.01, budget=1)
    assert oracle.queries == 0


def test_boosting_spends_its_budget_one_vector_a_query() -> None:
    oracle = LocalOracle(_binary(40, 43), metric="accuracy", decimals=5)
    assert attacks.run("boosting", oracle, budget=12, prior=0.5).queries == oracle.queries == 12


# --- the limiter --------------------------------------------------------------------------------------------------


def test_the_limiter_refuses_the_submission_past_its_budget() -> None:
    inner = LocalOracle([0, 1, 1, 0], decimals=5, also_report=("auc",), accounts=2)
    inner.submit([0.5] * 4)  # before the limiter: not counted against it
    board = QueryLimit(inner, 3)
    assert board.submit([0.4] * 4) is not None and board.left == 2 and board.queries == 2
    assert set(board.submit_all([0.2, 0.4, 0.6, 0.8])) == {"binary_logloss", "auc"}  # one submission
    board.account = 1  # set on the board itself
    assert inner.account == 1 and board.account == 1 and board.also_report == ("auc",)
    assert board.submit([0.3] * 4) is not None and board.left == 0
    with pytest.raises(AttackFailed, match="budget of 3 submissions is spent"):
        board.submit([0.3] * 4)
    with pytest.raises(AttackFailed):
        board.submit_all([0.3] * 4)
    assert inner.queries == 4 and inner.queries_by_account == [3, 1]


def test_the_limiter_sends_the_batch_that_fits_then_refuses() -> None:
    sent: list[int] = []

    class Batching(LocalOracle):
        def submit_many(self, predictions: Any) -> list[Any]:
            sent.append(len(predictions))
            return super().submit_many(predictions)

    inner = Batching([0, 1, 1], decimals=5)
    board = limited(inner, 2)
    with pytest.raises(AttackFailed):
        submit_many(board, [[0.5] * 3] * 5)
    assert sent == [2] and inner.queries == 2  # the inner oracle's own batching, within the budget
    assert limited(inner, None) is inner
