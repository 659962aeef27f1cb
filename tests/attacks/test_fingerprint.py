"""The fingerprint (``attacks.fingerprint``) and the class balance it measures (``attacks.balance``), against
in-process boards; the bot's own view of the same fingerprint is in ``tests/bot/test_bot.py``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.balance import measure_balance
from attacks.fingerprint import DEFAULT_BUDGET, fingerprint
from attacks.result import SubmissionRefused

ROUND5 = {"name": "rounding", "decimals": 5}


def _labels(share: float, n: int = 300, seed: int = 3) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


@pytest.mark.parametrize("share", [0.2, 0.5, 0.68])
def test_the_first_probe_gives_the_class_balance_on_a_plain_board(share: float) -> None:
    labels = _labels(share)
    report = fingerprint(LocalOracle(labels, decimals=5))
    assert report.balance is not None
    assert report.balance[1] == pytest.approx(labels.mean(), abs=1e-4)  # 5 decimals pin the count exactly
    assert report.majority_class == int(labels.mean() > 0.5)


@pytest.mark.parametrize("share", [0.3, 0.7])
@pytest.mark.parametrize(
    "chain",
    [[{"name": "ladder", "mode": "fixed", "eta": 0.01}], [{"name": "ladder", "mode": "parameter_free"}, ROUND5]],
    ids=["fixed", "parameter-free"],
)
def test_a_ladder_is_seen_whichever_class_is_the_majority(share: float, chain: list[dict[str, Any]]) -> None:
    labels = _labels(share)
    report = fingerprint(LocalOracle(labels, decimals=5, defenses=chain, seed=1))
    assert report.ladder is True, report.describe()
    # A Ladder always releases a participant's first score: the balance comes from it (η-rounded at worst).
    assert report.balance is not None and report.balance[1] == pytest.approx(labels.mean(), abs=0.02)
    assert report.probes < DEFAULT_BUDGET  # no row probes are wasted on a sticky board


@pytest.mark.parametrize("share", [0.3, 0.7])
@pytest.mark.parametrize(
    "chain",
    [[{"name": "ladder", "mode": "fixed"}], [{"name": "ladder", "mode": "parameter_free"}, ROUND5]],
    ids=["fixed", "parameter-free"],
)
def test_on_a_ladder_it_stops_at_the_edge_probes_and_leaves_a_high_leader(
    share: float, chain: list[dict[str, Any]]
) -> None:
    labels = _labels(share)
    a = -np.log(1e-15)
    report = fingerprint(LocalOracle(labels, decimals=5, defenses=chain, seed=1))
    start = report.ladder_start
    assert report.ladder is True and start is not None
    # The lower edge score is the leader: min(π, 1 − π)·A, rounded to the step at worst (not ln 2).
    low_edge = 0 if labels.mean() < 0.5 else 1
    assert start["edge"] == low_edge
    assert start["leader"] == pytest.approx(min(labels.mean(), 1 - labels.mean()) * a, abs=0.2)
    assert report.probes == (2 if low_edge == 0 else 3)


@pytest.mark.parametrize(
    "chain",
    [[], [ROUND5], [{"name": "noise", "kind": "laplace", "scale": 1e-3}, ROUND5],
     [{"name": "subsetting", "fraction": 0.5}, ROUND5]],
    ids=["none", "rounding", "laplace", "subsetting"],
)
def test_no_ladder_is_seen_where_there_is_none(chain: list[dict[str, Any]]) -> None:
    for seed in range(3):
        report = fingerprint(LocalOracle(_labels(0.3, seed=seed), decimals=5, defenses=chain, seed=seed))
        assert report.ladder is False, report.describe()


def test_noise_is_not_mistaken_for_subsetting() -> None:
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-3}, ROUND5]
    for seed in range(5):
        report = fingerprint(LocalOracle(_labels(0.3, n=160, seed=seed), decimals=5, defenses=chain, seed=seed))
        assert report.noise is True and not report.subsetting


@pytest.mark.parametrize("budget", range(0, 11))
def test_it_never_exceeds_its_budget(budget: int) -> None:
    for chain in ([], [{"name": "ladder", "mode": "parameter_free"}], [{"name": "probe_detector", "reject": True}]):
        board = LocalOracle(_labels(0.3), decimals=5, defenses=chain, seed=2)
        report = fingerprint(board, budget=budget)
        assert report.probes == board.queries <= budget


def test_it_describes_what_it_saw() -> None:
    lines = fingerprint(LocalOracle(_labels(0.3), decimals=5)).describe()
    assert lines[0].startswith("fingerprint: 8 probe(s); released precision 5 decimals")
    assert any("no noise" in line for line in lines) and any("class balance" in line for line in lines)
    assert fingerprint(LocalOracle(_labels(0.3)), budget=0).describe()[0].startswith("no fingerprint probes")


def test_refused_and_withheld_probes_are_counted() -> None:
    report = fingerprint(LocalOracle(_labels(0.3), decimals=5, defenses=[{"name": "probe_detector", "reject": True}]))
    assert report.released_nothing is True
    assert report.balance is not None  # constant predictions are not probes a detector can flag

    class Refusing:
        n_rows, n_classes, metric, eps, decimals, queries = 10, 2, "binary_logloss", 1e-15, 5, 0

        def submit(self, predictions: Any) -> float:
            self.queries += 1
            raise SubmissionRefused("rejected: a crafted probe")

    refused = fingerprint(Refusing())
    assert refused.rejected == refused.probes > 0 and refused.balance is None
    assert any("rejected: a crafted probe" in note for note in refused.notes)


@pytest.mark.parametrize(
    ("metric", "n_classes", "queries"),
    [("binary_logloss", 2, 1), ("accuracy", 2, 1), ("brier", 2, 1), ("auc", 2, 1),
     ("multiclass_logloss", 3, 2), ("accuracy", 4, 3), ("brier", 3, 2)],
)
def test_constant_predictions_measure_the_class_shares(metric: str, n_classes: int, queries: int) -> None:
    rng = np.random.default_rng(11)
    weights = np.array([0.5, 0.3, 0.15, 0.05])[:n_classes]
    labels = rng.choice(n_classes, size=400, p=weights / weights.sum())
    oracle = LocalOracle(labels, metric=metric, decimals=5, n_classes=n_classes)
    measured = measure_balance(oracle)
    assert measured.queries == oracle.queries == queries
    truth = np.bincount(labels, minlength=n_classes) / len(labels)
    assert measured.rates is not None
    assert measured.rates == pytest.approx(truth, abs=2e-3 if metric == "auc" else 1e-4)
    if metric == "auc":
        assert measured.exact == {0: int(labels[0])}  # the AUC probe learns row 0's label too


def test_the_balance_of_a_public_split_is_the_public_rows() -> None:
    labels = _labels(0.35, n=400)
    oracle = LocalOracle(labels, decimals=5, public_fraction=0.3, seed=4)
    public = oracle.spec.hidden.public_mask
    measured = measure_balance(oracle)
    assert measured.rates is not None and measured.rates[1] == pytest.approx(labels[public].mean(), abs=1e-4)


def test_the_majority_attack_is_the_floor() -> None:
    labels = _labels(0.3)
    result = attacks.run("majority", LocalOracle(labels, decimals=5))
    assert result.queries == 1 and (result.labels == 0).all()
    assert result.accuracy(labels) == pytest.approx(1 - labels.mean())
    assert result.confidence == pytest.approx(np.full(len(labels), 1 - labels.mean()), abs=1e-4)
    assert "majority" in attacks.available()
