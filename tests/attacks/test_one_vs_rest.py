"""``one_vs_rest``: a K-class log-loss board asked "is it class c?" as an exact binary log-loss board, so the
binary likelihood decoder (``noisy``) reads multiclass labels through noise no exact design carries."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.one_vs_rest import OneVsRestOracle


def _labels(n: int, k: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, k, n)


@pytest.mark.parametrize("k", [3, 6, 10])
def test_the_adapter_releases_exactly_the_binary_board_of_one_class(k: int) -> None:
    y = _labels(60, k, k)
    multi = LocalOracle(y, metric="multiclass_logloss", decimals=None)
    rng = np.random.default_rng(0)
    for c in (0, k - 1):
        asked = OneVsRestOracle(multi, c)
        binary = LocalOracle((y == c).astype(int), metric="binary_logloss", decimals=None)
        for p in (np.full(60, 0.5), rng.uniform(0, 1, 60), np.where(rng.random(60) < 0.5, 0.0, 1.0)):
            clipped = np.clip(p, asked.eps, 1 - asked.eps)  # what the binary attack itself sends
            assert asked.submit(p) == pytest.approx(float(binary.submit(clipped)), abs=1e-12)  # type: ignore[arg-type]
            matrix, _ = asked.rows(p)
            # Every probability inside the server's clipping interval, every row summing to one: no clipping
            # and no renormalisation changes what the adapter computed.
            assert matrix.min() >= multi.eps and np.allclose(matrix.sum(axis=1), 1.0, atol=1e-15)


def test_it_reads_every_label_through_laplace_noise() -> None:
    y = _labels(120, 3, 1)
    oracle = LocalOracle(y, metric="multiclass_logloss", decimals=5, seed=1,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}])
    result = attacks.run("one_vs_rest", oracle, budget=1500)
    assert result.accuracy(y) == 1.0 and len(result.details["runs"]) == 2
    assert oracle.queries == result.queries <= 1500


def test_auto_reads_a_noisy_multiclass_board_that_no_exact_design_carries() -> None:
    # Laplace 5e-3 on 200 rows: the summed loss moves by ~1 where one row spans 33; capacity, paper 001's powers
    # and Theorem 3 all refuse or fail to decode, and auto used to end at the majority class (0.375).
    y = _labels(200, 3, 1)
    oracle = LocalOracle(y, metric="multiclass_logloss", decimals=5, seed=1,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 5e-3}])
    result = attacks.run("auto", oracle, budget=3000)
    assert result.details["fallback"] == "one_vs_rest"
    assert result.accuracy(y) >= 0.99 and oracle.queries <= 3000


def test_it_refuses_a_board_it_cannot_reduce() -> None:
    with pytest.raises(AttackFailed, match="multiclass log loss"):
        attacks.run("one_vs_rest", LocalOracle(_labels(20, 2, 0), metric="binary_logloss"))
    with pytest.raises(AttackFailed, match="cannot hold"):
        attacks.run("one_vs_rest", LocalOracle(_labels(20, 3, 0), metric="multiclass_logloss"), budget=5)
