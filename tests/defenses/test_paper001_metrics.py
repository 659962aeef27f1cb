"""Every defense works with paper 001's metrics (kl, itakura_saito, brier, norm_like, softmax_ce, sigmoid_ce):
a chain accepts the metric, releases finite values inside the metric's range, re-releases the same value for
the same submission, calibrates privacy noise on a derived sensitivity, and the probe detector reads logits as
the probabilities they stand for."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle
from defenses import DefenseChain
from scoring import get_metric
from scoring.pipeline import metric_view
from tests.defenses.support import view

METRICS = ["kl", "itakura_saito", "brier", "norm_like", "norm_like:2.5", "softmax_ce", "sigmoid_ce"]
CHAINS: dict[str, list[dict[str, Any]]] = {
    "rounding": [{"name": "rounding", "decimals": 3}],
    "noise-scale": [{"name": "noise", "kind": "laplace", "scale": 1e-3}],
    "noise-epsilon": [{"name": "noise", "kind": "gaussian", "epsilon": 1.0, "delta": 1e-6}],
    "privacy_budget": [
        {"name": "noise", "kind": "laplace", "epsilon": 5.0}, {"name": "privacy_budget", "epsilon": 12.0}
    ],
    "subsetting": [{"name": "subsetting", "fraction": 0.8}],
    "randomized_response": [{"name": "randomized_response", "p": 0.05, "mode": "fixed"}],
    "ladder-fixed": [{"name": "ladder", "mode": "fixed", "eta": 0.01}],
    "ladder-parameter-free": [{"name": "ladder", "mode": "parameter_free"}],
    "thresholdout": [{"name": "thresholdout", "reference_fraction": 0.5, "budget": 3}],
    "probe_detector": [{"name": "probe_detector", "reject": True}],
    "everything": [
        {"name": "probe_detector"},
        {"name": "randomized_response", "p": 0.05, "mode": "fresh"},
        {"name": "subsetting", "fraction": 0.8},
        {"name": "noise", "kind": "laplace", "scale": 1e-3},
        {"name": "privacy_budget", "epsilon": 1000.0},
        {"name": "ladder", "mode": "parameter_free"},
        {"name": "rounding", "decimals": 5},
    ],
}
N = 240


def _honest(rng: np.random.Generator, labels: np.ndarray, k: int, logits: bool) -> np.ndarray:
    """A noisy but informative model's output: probabilities, or the logits they come from."""
    scores = rng.normal(0, 1, (len(labels), k))
    scores[np.arange(len(labels)), labels] += 1.5
    if k == 2:
        z = scores[:, 1] - scores[:, 0]
        return z if logits else 1 / (1 + np.exp(-z))
    if logits:
        return scores
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("chain", sorted(CHAINS))
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [2, 3])
def test_every_chain_releases_the_metric_within_its_range(metric: str, chain: str, k: int) -> None:
    m = get_metric(metric)
    if "multiclass" not in m.tasks and k > 2:
        pytest.skip(f"{metric} is binary only")
    rng = np.random.default_rng(7)
    labels = rng.integers(0, k, N)
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=None, defenses=CHAINS[chain], seed=3)
    twin = LocalOracle(labels, metric=metric, n_classes=k, decimals=None, defenses=CHAINS[chain], seed=3)
    lower, upper = m.value_range(k)
    released = 0
    for _ in range(6):
        predictions = _honest(rng, labels, k, m.logits)
        value, again = oracle.submit(predictions), twin.submit(predictions)
        assert value == again  # same secret, same submission number, same state: the same release
        if value is None:  # a refusal (exhausted budget, thresholdout's budget): nothing, not a number
            continue
        released += 1
        assert math.isfinite(float(value)) and lower <= float(value) <= upper
    # Itakura–Saito's sensitivity at eps = 1e-15 is 1e15/n: fixed-scale noise spends far past any budget, so the
    # budget (rightly) refuses every release of the full chain.
    assert released >= 1 or (metric == "itakura_saito" and chain == "everything")


@pytest.mark.parametrize("metric", METRICS)
def test_noise_is_calibrated_on_the_metrics_derived_sensitivity(metric: str) -> None:
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, N)
    m = metric_view(metric, 1e-15, 2)
    assert m.row_spread is not None
    chain = DefenseChain.from_json([{"name": "noise", "kind": "laplace", "epsilon": 1.0}])
    chain.check_metric(m)
    predictions = _honest(rng, labels, 2, get_metric(metric).logits)
    outcome = chain.release(view(predictions, labels, m), states=None, secret=5, submission_key="submission:1")
    (record,) = outcome.ledger["privacy"]
    assert 0.999 <= record["epsilon"] <= 1.0
    assert record["sensitivity"] >= m.row_spread / N


def test_the_probe_detector_reads_logits_as_probabilities() -> None:
    """Paper 000's prime probe written as logits (ln(1/q), i.e. p = 1/(1+q)) beside 0 for every other row: the
    same spike and prime odds the detector flags in probabilities."""
    primes = [2, 3, 5, 7, 11, 13]
    z = np.zeros(200)
    z[: len(primes)] = -np.log(primes)
    labels = np.random.default_rng(2).integers(0, 2, 200)
    oracle = LocalOracle(labels, metric="sigmoid_ce", decimals=5, defenses=[{"name": "probe_detector", "reject": True}])
    assert oracle.submit(z) is None
    assert oracle.submit(np.random.default_rng(3).normal(0, 2, 200)) is not None
