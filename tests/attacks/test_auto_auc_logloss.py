"""``auto`` on a board that releases AUC beside the binary log loss (paper 004 §3): the attack that plans the
fewest queries (``auc_logloss_ranks`` or ``capacity`` on the log loss alone), every label exact, and
``capacity`` when the paper-004 decoder refuses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.oracle import Released
from attacks.paper004.queries import planned_queries


def _labels(n: int, seed: int, share: float = 0.4) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


def test_auto_plays_auc_logloss_ranks_where_it_beats_capacity_and_recovers_every_label() -> None:
    """N = 2,201 at float64: the ranks code plans 44 queries against capacity's ~52 on the log loss alone."""
    labels = _labels(2201, 31)
    both = LocalOracle(labels, decimals=None, also_report=("auc",), seed=31)
    result = attacks.run("auto", both)
    assert result.details["attack"] == "auc_logloss_ranks", result.details["reasoning"]
    assert "paper 004" in result.details["plan"]["reason"]
    assert result.details["exact"] == 2201 and np.array_equal(result.labels, labels)
    alone = LocalOracle(labels, decimals=None, seed=31)
    plain = attacks.run("auto", alone)
    assert plain.details["attack"] == "capacity" and np.array_equal(plain.labels, labels)
    assert both.queries < alone.queries


@pytest.mark.parametrize(("n", "decimals"), [(306, 5), (306, None), (600, 3)])
def test_planned_queries_are_the_queries_the_attacks_send(n: int, decimals: int | None) -> None:
    labels = _labels(n, n + (decimals or 0))
    for name in ("auc_logloss_ranks", "auc_logloss"):
        oracle = LocalOracle(labels, decimals=decimals, also_report=("auc",))
        planned = planned_queries(oracle, name, int(labels.sum()))
        result = attacks.run(name, oracle, confirm=False)
        assert np.array_equal(result.labels, labels)
        assert planned == oracle.queries


def test_capacity_plays_where_it_plans_fewer_queries_and_says_why() -> None:
    """At 3 decimals the AUC's resolution adds few rank rows: capacity on the log loss alone is ahead."""
    labels = _labels(600, 5)
    oracle = LocalOracle(labels, decimals=3, also_report=("auc",), seed=5)
    result = attacks.run("auto", oracle)
    assert result.details["attack"] == "capacity"
    assert "AUC is released too" in result.details["plan"]["reason"]
    assert np.array_equal(result.labels, labels)


def test_a_budget_short_of_the_paper004_attack_keeps_capacity_which_stops_early() -> None:
    labels = _labels(2201, 32)
    oracle = LocalOracle(labels, decimals=None, also_report=("auc",), seed=32)
    result = attacks.run("auto", oracle, budget=30)
    assert result.details["attack"] == "capacity" and "short of them" in result.details["plan"]["reason"]
    assert oracle.queries <= 30
    exact = result.fill_confidence() >= 1.0
    assert exact.sum() > 0 and np.array_equal(result.labels[exact], labels[exact])


class _ShiftedAuc(LocalOracle):
    """Releases an AUC off the true one by 0.01 after the first query: no labeling fits both scores."""

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        released = super().submit_all(predictions)
        if self.queries > 1 and released.get("auc") is not None:
            released["auc"] = float(released["auc"]) + 0.01  # type: ignore[arg-type]
        return released


def test_when_the_paper004_decoder_refuses_auto_falls_back_to_capacity_on_the_log_loss() -> None:
    labels = _labels(2201, 33)
    oracle = _ShiftedAuc(labels, decimals=None, also_report=("auc",), seed=33)
    result = attacks.run("auto", oracle)
    assert result.details["plan"]["attack"] == "auc_logloss_ranks"
    assert result.details["attack"] == "capacity", result.details["reasoning"]
    assert any("auc_logloss_ranks failed" in line for line in result.details["reasoning"])
    assert result.details["exact"] == 2201 and np.array_equal(result.labels, labels)


def test_noise_keeps_capacity_with_its_noise_bound() -> None:
    labels = _labels(306, 34)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-4}, {"name": "rounding", "decimals": 5}]
    oracle = LocalOracle(labels, decimals=5, also_report=("auc",), defenses=chain, seed=34)
    result = attacks.run("auto", oracle, budget=400)
    assert result.details["plan"]["attack"] == "capacity"
    assert result.details["plan"]["params"]["noise_bound"] > 0


def test_an_oracle_reading_one_score_per_submission_plays_capacity_and_says_so() -> None:
    """The bot's checkpointed oracle hides ``submit_all`` (a checkpoint entry records one value)."""

    class OneScore:
        def __init__(self, inner: LocalOracle) -> None:
            self.inner = inner
            self.n_rows, self.n_classes, self.metric = inner.n_rows, inner.n_classes, inner.metric
            self.eps, self.decimals, self.also_report = inner.eps, inner.decimals, inner.also_report

        @property
        def queries(self) -> int:
            return self.inner.queries

        @queries.setter
        def queries(self, value: int) -> None:
            self.inner.queries = value

        def submit(self, predictions: Any) -> Released:
            return self.inner.submit(predictions)

    labels = _labels(2201, 35)
    result = attacks.run("auto", OneScore(LocalOracle(labels, decimals=None, also_report=("auc",), seed=35)))
    assert result.details["attack"] == "capacity"
    assert "one score per submission" in result.details["plan"]["reason"]
    assert np.array_equal(result.labels, labels)
