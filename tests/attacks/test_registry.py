"""``attacks.run`` owns the bookkeeping: every attack's queries and wall time come from the oracle and the
clock, whatever the attack itself returns."""

from __future__ import annotations

import time

import numpy as np
import pytest

import attacks
from attacks import AttackResult, LocalOracle, Oracle
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
    for name, params in (("prime_batched", {}), ("boosting", {"k": 7})):
        oracle = LocalOracle(labels, decimals=5)
        result = attacks.run(name, oracle, confirm=False, **params)
        assert result.queries == oracle.queries > 0 and result.seconds > 0.0, name
