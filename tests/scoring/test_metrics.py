"""The scoring core's metrics agree with scikit-learn and refuse to produce non-finite scores."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn import metrics as skm

from scoring import NonFiniteScoreError, get_metric
from scoring.errors import ConfigurationError

EPS = 1e-15


def _binary_case(rng: np.random.Generator, n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, 2, n)
    predictions = rng.random(n)
    predictions[:5] = [0.0, 1.0, 1e-20, 1 - 1e-17, 0.5]  # exercise clipping at both ends
    return predictions, labels


def _multiclass_case(rng: np.random.Generator, n: int = 400, k: int = 4) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, k, n)
    predictions = rng.dirichlet(np.ones(k), n)
    predictions[0] = [1.0] + [0.0] * (k - 1)
    return predictions, labels


def test_binary_logloss_matches_sklearn_on_clipped_predictions(rng: np.random.Generator) -> None:
    predictions, labels = _binary_case(rng)
    ours = get_metric("binary_logloss").score(predictions, labels, EPS)
    theirs = skm.log_loss(labels, np.clip(predictions, EPS, 1 - EPS), labels=[0, 1])
    assert_allclose(ours, theirs, rtol=1e-12)


def test_multiclass_logloss_clips_then_renormalises_like_sklearn(rng: np.random.Generator) -> None:
    predictions, labels = _multiclass_case(rng)
    ours = get_metric("multiclass_logloss").score(predictions, labels, EPS)
    clipped = np.clip(predictions, EPS, 1 - EPS)
    theirs = skm.log_loss(labels, clipped / clipped.sum(axis=1, keepdims=True), labels=list(range(4)))
    assert_allclose(ours, theirs, rtol=1e-12)


def test_auc_matches_sklearn_including_ties(rng: np.random.Generator) -> None:
    labels = rng.integers(0, 2, 300)
    predictions = np.round(rng.random(300), 1)  # many ties
    assert_allclose(get_metric("auc").score(predictions, labels, EPS), skm.roc_auc_score(labels, predictions))


def test_accuracy_matches_sklearn_for_binary_and_multiclass(rng: np.random.Generator) -> None:
    p, y = _binary_case(rng)
    assert_allclose(get_metric("accuracy").score(p, y, EPS), skm.accuracy_score(y, (p >= 0.5).astype(int)))
    p, y = _multiclass_case(rng)
    assert_allclose(get_metric("accuracy").score(p, y, EPS), skm.accuracy_score(y, p.argmax(axis=1)))


def test_brier_matches_sklearn_binary_and_squared_euclidean_multiclass(rng: np.random.Generator) -> None:
    p, y = _binary_case(rng)
    assert_allclose(get_metric("brier").score(p, y, EPS), skm.brier_score_loss(y, p))
    p, y = _multiclass_case(rng)
    onehot = np.eye(4)[y]
    assert_allclose(get_metric("brier").score(p, y, EPS), np.mean(((p - onehot) ** 2).sum(axis=1)))


def test_metric_is_the_mean_of_its_row_values(rng: np.random.Generator) -> None:
    p, y = _binary_case(rng)
    for name in ("binary_logloss", "multiclass_logloss", "accuracy", "brier"):
        metric = get_metric(name)
        assert metric.row_values is not None
        assert_allclose(metric.score(p, y, EPS), metric.row_values(p, y, EPS).mean(), rtol=1e-12)


def test_auc_on_a_single_class_is_a_failure_not_a_number() -> None:
    with pytest.raises(NonFiniteScoreError):
        get_metric("auc").score(np.array([0.2, 0.9]), np.array([1, 1]), EPS)


def test_logloss_without_clipping_is_a_failure_not_infinity() -> None:
    with pytest.raises(NonFiniteScoreError):
        get_metric("binary_logloss").score(np.array([0.0]), np.array([1]), 0.0)


def test_unknown_metric_names_the_choices() -> None:
    with pytest.raises(ConfigurationError, match="binary_logloss"):
        get_metric("rmse")


def test_clipping_is_refused_exactly_where_one_minus_eps_rounds_to_one(rng: np.random.Generator) -> None:
    from scoring import Arithmetic
    from scoring.metrics import check_clipping

    binary, multiclass = get_metric("binary_logloss"), get_metric("multiclass_logloss")
    float64 = Arithmetic.parse("float64")
    for eps in [*10.0 ** rng.uniform(-20, -15, 200), 2.0**-53, 2.0**-54, 1e-300]:
        rounds_to_one = (1.0 - float(eps)) == 1.0  # float64 itself is the reference
        if rounds_to_one:
            with pytest.raises(ConfigurationError, match="too small for float64"):
                check_clipping(binary, 2, float(eps), float64)
        else:
            check_clipping(binary, 2, float(eps), float64)
        check_clipping(multiclass, 3, float(eps), float64)  # renormalising after the clip keeps the loss finite
    # At φ bits, 1 - 2^-k is representable exactly when k ≤ φ.
    for bits in (20, 40, 60):
        check_clipping(binary, 2, 2.0 ** -(bits - 1), Arithmetic.parse(f"mpfr:{bits}"))
        with pytest.raises(ConfigurationError, match=f"mpfr:{bits}"):
            check_clipping(binary, 2, 2.0 ** -(bits + 2), Arithmetic.parse(f"mpfr:{bits}"))
    check_clipping(get_metric("auc"), 2, 1e-300, float64)  # no clipping, nothing to refuse
