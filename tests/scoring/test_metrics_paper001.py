"""Paper 001's losses (kl, itakura_saito, brier, norm_like, softmax_ce, sigmoid_ce) agree with scipy,
scikit-learn or the paper's formulas written out by hand, stay finite on every input they accept, and bound
how far one row moves when its label changes (the label sensitivity the noise defense calibrates on)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special
from sklearn import metrics as skm

from scoring import Arithmetic, NonFiniteScoreError, get_metric
from scoring.errors import ConfigurationError
from scoring.metrics import MAX_ROW_VALUE, check_clipping, check_metric_for, is_metric_name

EPS = 1e-15
PAPER_001 = ("kl", "itakura_saito", "brier", "norm_like", "norm_like:2", "norm_like:4.5", "softmax_ce", "sigmoid_ce")
FLOAT64 = Arithmetic.parse("float64")


def _probabilities(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Random probabilities (one column for binary) with the clipped ends exercised, and random labels."""
    labels = rng.integers(0, k, n)
    if k == 2:
        p = rng.random(n)
        p[:4] = [0.0, 1.0, 1e-20, 1 - 1e-17]
        return p, labels
    p = rng.dirichlet(np.ones(k), n)
    p[0] = np.eye(k)[0]
    return p, labels


def _logits(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, k, n)
    z = rng.normal(0, 4, n if k == 2 else (n, k))
    return z, labels


def _unclipped(metric: str, p: np.ndarray) -> np.ndarray:
    """Drop the rows whose probabilities the metric would clip (so an unclipped reference can be compared)."""
    return np.all((p > EPS) & (p < 1 - EPS), axis=-1) if p.ndim == 2 else (p > EPS) & (p < 1 - EPS)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_kl_is_scipys_generalised_kl_divergence_from_the_one_hot_label(rng: np.random.Generator, k: int) -> None:
    p, y = _probabilities(rng, 300, k)
    q = np.clip(np.column_stack([1 - p, p]) if k == 2 else p, EPS, 1 - EPS)
    q = q / q.sum(axis=1, keepdims=True)
    # scipy.special.kl_div(x, y) = x ln(x/y) − x + y elementwise: the generalised KL of paper 001 App. C.1.
    theirs = special.kl_div(np.eye(k)[y], q).sum(axis=1)
    assert_allclose(get_metric("kl").row_values(p, y, EPS), theirs, rtol=1e-12, atol=1e-15)  # type: ignore[misc]
    assert_allclose(get_metric("kl").score(p, y, EPS), skm.log_loss(y, q, labels=list(range(k))), rtol=1e-12)


def test_kl_is_the_log_loss_the_site_already_has(rng: np.random.Generator) -> None:
    p, y = _probabilities(rng, 200, 2)
    assert get_metric("kl").score(p, y, EPS) == get_metric("binary_logloss").score(p, y, EPS)
    p, y = _probabilities(rng, 200, 4)
    assert get_metric("kl").score(p, y, EPS) == get_metric("multiclass_logloss").score(p, y, EPS)


def test_itakura_saito_is_equation_8_written_out(rng: np.random.Generator) -> None:
    p, y = _probabilities(rng, 200, 2)
    by_hand = []
    for theta, label in zip(np.clip(p, EPS, 1 - EPS), y, strict=True):
        # Eq. (8): label 1 → 1/θ + ln θ − 1; label 0 → 1/(1 − θ) + ln(1 − θ) − 1.
        x = float(theta) if label == 1 else 1 - float(theta)
        by_hand.append(1 / x + math.log(x) - 1)
    assert_allclose(get_metric("itakura_saito").row_values(p, y, EPS), by_hand, rtol=1e-9)  # type: ignore[misc]


def test_itakura_saito_on_k_classes_is_the_divergence_restricted_to_the_label(rng: np.random.Generator) -> None:
    p, y = _probabilities(rng, 200, 5)
    q = np.clip(p, EPS, 1 - EPS)
    one_hot = np.eye(5)[y]
    # D_IS(p, q) = Σ_k p_k/q_k − ln(p_k/q_k) − 1 over the classes where p_k > 0 (the label's class).
    terms = np.where(one_hot == 1, one_hot / q - np.log(np.where(one_hot == 1, one_hot / q, 1)) - 1, 0.0)
    assert_allclose(get_metric("itakura_saito").row_values(p, y, EPS), terms.sum(axis=1), rtol=1e-12)  # type: ignore[misc]


@pytest.mark.parametrize("k", [2, 3, 10])
def test_brier_is_sklearns_brier_score(rng: np.random.Generator, k: int) -> None:
    """Binary: mean (θ − y)², paper 001's SELoss (eq. 10, the factor 2 dropped as the paper does); K classes:
    the squared Euclidean distance between the probabilities and the one-hot label."""
    p, y = _probabilities(rng, 300, k)
    theirs = skm.brier_score_loss(y, p) if k == 2 else skm.brier_score_loss(y, p, labels=list(range(k)))
    assert_allclose(get_metric("brier").score(p, y, EPS), theirs, rtol=1e-12)
    if k == 2:
        by_hand = np.mean([(1 - t) ** 2 if label == 1 else t**2 for t, label in zip(p, y, strict=True)])
        assert_allclose(get_metric("brier").score(p, y, EPS), by_hand, rtol=1e-12)


@pytest.mark.parametrize("alpha", [2.0, 3.0, 4.5])
def test_norm_like_is_equation_11_and_the_divergence_it_comes_from(rng: np.random.Generator, alpha: float) -> None:
    name = "norm_like" if alpha == 3.0 else f"norm_like:{alpha:g}"
    metric = get_metric(name)
    assert metric.alpha == alpha
    p, y = _probabilities(rng, 200, 2)
    rows = metric.row_values(p, y, EPS)  # type: ignore[misc]
    eq11 = [
        1 + (alpha - 1) * t**alpha - alpha * t ** (alpha - 1) + (alpha - 1) * (1 - t) ** alpha
        if label == 1
        else 1 + (alpha - 1) * (1 - t) ** alpha - alpha * (1 - t) ** (alpha - 1) + (alpha - 1) * t**alpha
        for t, label in zip(p.tolist(), y, strict=True)
    ]
    assert_allclose(rows, eq11, rtol=1e-12, atol=1e-15)
    p, y = _probabilities(rng, 200, 4)
    one_hot = np.eye(4)[y]
    divergence = (one_hot**alpha + (alpha - 1) * p**alpha - alpha * one_hot * p ** (alpha - 1)).sum(axis=1)
    assert_allclose(metric.row_values(p, y, EPS), divergence, rtol=1e-12, atol=1e-15)  # type: ignore[misc]


def test_norm_like_at_alpha_2_is_the_squared_euclidean_distance(rng: np.random.Generator) -> None:
    p, y = _probabilities(rng, 200, 2)
    assert_allclose(get_metric("norm_like:2").score(p, y, EPS), 2 * get_metric("brier").score(p, y, EPS))
    p, y = _probabilities(rng, 200, 6)
    assert_allclose(get_metric("norm_like:2").score(p, y, EPS), get_metric("brier").score(p, y, EPS))


@pytest.mark.parametrize("k", [2, 3, 10])
def test_softmax_ce_is_scipys_log_softmax_and_sklearns_log_loss(rng: np.random.Generator, k: int) -> None:
    z, y = _logits(rng, 300, k)
    full = np.column_stack([np.zeros_like(z), z]) if k == 2 else z
    theirs = -special.log_softmax(full, axis=1)[np.arange(len(y)), y]
    assert_allclose(get_metric("softmax_ce").row_values(z, y, EPS), theirs, rtol=1e-12, atol=1e-15)  # type: ignore[misc]
    assert_allclose(
        get_metric("softmax_ce").score(z, y, EPS), skm.log_loss(y, special.softmax(full, axis=1)), rtol=1e-9
    )


def test_sigmoid_ce_is_scipys_log_expit_and_sklearns_log_loss(rng: np.random.Generator) -> None:
    z, y = _logits(rng, 300, 2)
    theirs = -np.where(y == 1, special.log_expit(z), special.log_expit(-z))
    assert_allclose(get_metric("sigmoid_ce").row_values(z, y, EPS), theirs, rtol=1e-12, atol=1e-15)  # type: ignore[misc]
    assert_allclose(get_metric("sigmoid_ce").score(z, y, EPS), skm.log_loss(y, special.expit(z)), rtol=1e-9)
    # One logit per row under softmax_ce is the log-odds of class 1: the same loss.
    assert get_metric("softmax_ce").score(z, y, EPS) == get_metric("sigmoid_ce").score(z, y, EPS)


@pytest.mark.parametrize("name", ["softmax_ce", "sigmoid_ce"])
def test_any_finite_logit_scores_a_finite_loss_clipped_like_the_log_loss(name: str) -> None:
    """A logit of ±1e308 has a probability below eps: the row costs −ln eps, as a clipped log loss would, so no
    finite upload can fail on some labels and not on others."""
    big = np.finfo(np.float64).max
    z = np.array([-big, big, -1e300, 0.0, 36.0])
    for labels in ([1, 0, 1, 0, 0], [0, 1, 0, 1, 1]):
        rows = get_metric(name).row_values(z, np.array(labels), EPS)  # type: ignore[misc]
        assert np.all(np.isfinite(rows)) and rows.max() <= -math.log(EPS)
    rows = get_metric(name).row_values(z, np.array([1, 0, 1, 0, 0]), EPS)  # type: ignore[misc]
    assert_allclose(rows[:3], -math.log(EPS))
    multiclass = np.array([[big, -big, 0.0], [-big, big, -big]])
    assert_allclose(get_metric("softmax_ce").score(multiclass, np.array([1, 0]), EPS), -math.log(EPS))


@pytest.mark.parametrize("name", PAPER_001)
@pytest.mark.parametrize("k", [2, 4])
def test_score_is_the_mean_of_row_values_within_the_declared_range(
    rng: np.random.Generator, name: str, k: int
) -> None:
    metric = get_metric(name)
    if k not in (2,) and "multiclass" not in metric.tasks:
        pytest.skip(f"{name} is binary only")
    p, y = _logits(rng, 300, k) if metric.logits else _probabilities(rng, 300, k)
    rows = metric.row_values(p, y, EPS)  # type: ignore[misc]
    assert_allclose(metric.score(p, y, EPS), rows.mean(), rtol=1e-12)
    lower, upper = metric.value_range(k)
    assert np.all(rows >= lower) and np.all(rows <= upper)


@pytest.mark.parametrize("name", PAPER_001)
@pytest.mark.parametrize("k", [2, 3])
def test_a_label_change_moves_a_row_by_at_most_the_declared_spread(
    rng: np.random.Generator, name: str, k: int
) -> None:
    """Brute force over every pair of labels, on random rows and on the extreme rows (vertices of the simplex,
    huge logits): the bound the noise defense calibrates on is never exceeded, and is nearly reached."""
    metric = get_metric(name)
    if "multiclass" not in metric.tasks and k > 2:
        pytest.skip(f"{name} is binary only")
    assert metric.label_spread is not None
    spread = metric.label_spread(EPS, k)
    n = 200
    if metric.logits:
        p, _ = _logits(rng, n, k)
        extreme = np.array([1e308, -1e308]) if k == 2 else np.array([[1e308, -1e308, 0.0], [0.0, 0.0, 0.0]])
    else:
        p, _ = _probabilities(rng, n, k)
        extreme = np.array([0.0, 1.0]) if k == 2 else np.eye(k)[:2]
    p = np.concatenate([p, extreme])
    by_label = np.stack([metric.row_values(p, np.full(len(p), c), EPS) for c in range(k)])  # type: ignore[misc]
    largest = float((by_label.max(axis=0) - by_label.min(axis=0)).max())
    assert largest <= spread
    assert largest >= spread * (1 - 1e-6)


def test_metric_names_with_a_parameter() -> None:
    assert get_metric("norm_like:2.5").alpha == 2.5
    assert get_metric("norm_like:2.5") is get_metric("norm_like:2.5")
    assert is_metric_name("norm_like:7") and is_metric_name("softmax_ce")
    for bad in ("norm_like:1.5", "norm_like:abc", "norm_like:", "kl:3", "norm_like:1e999", "rmse"):
        assert not is_metric_name(bad)
        with pytest.raises(ConfigurationError):
            get_metric(bad)
    with pytest.raises(ConfigurationError, match="α ≥ 2"):
        get_metric("norm_like:1.5")


def test_sigmoid_ce_is_binary_only_and_names_softmax_ce() -> None:
    with pytest.raises(ConfigurationError, match="softmax_ce"):
        check_metric_for(get_metric("sigmoid_ce"), 3, FLOAT64)
    check_metric_for(get_metric("softmax_ce"), 3, FLOAT64)


def test_clipping_too_small_for_a_finite_row_is_refused() -> None:
    # Itakura–Saito's 1/eps: infinite at the smallest subnormal, too large to sum beyond 1e300; binary rows also
    # read 1 − p, which is 0 once 1 − eps rounds to 1.
    for eps, k in ((5e-324, 4), (1e-305, 4), (1e-300, 2), (2.0**-54, 2)):
        with pytest.raises(ConfigurationError, match="itakura_saito"):
            check_clipping(get_metric("itakura_saito"), k, eps, FLOAT64)
    check_clipping(get_metric("itakura_saito"), 4, 1.0 / MAX_ROW_VALUE, FLOAT64)
    check_clipping(get_metric("itakura_saito"), 2, 1e-15, FLOAT64)
    # KL is the log loss: 1 − eps must not round to 1 (binary, where there is no renormalisation).
    with pytest.raises(ConfigurationError, match="too small for float64"):
        check_clipping(get_metric("kl"), 2, 2.0**-54, FLOAT64)
    # Clipped in log space, the cross-entropies on logits are finite at every eps > 0.
    for name, k in (("softmax_ce", 2), ("softmax_ce", 5), ("sigmoid_ce", 2)):
        check_clipping(get_metric(name), k, 5e-324, FLOAT64)


def test_a_logit_file_and_a_probability_metric_score_what_they_read() -> None:
    """The canonical form of a logit metric is what its rows read: two uploads with the same form score the same
    for every labeling (here, logits past the clipping on the same side)."""
    metric = get_metric("sigmoid_ce")
    a, b = np.array([-1e308, 50.0, 0.3]), np.array([-1e300, 60.0, 0.3])
    assert np.array_equal(metric.canonical_form(a, EPS), metric.canonical_form(b, EPS))
    for labels in ([0, 0, 0], [1, 1, 1], [1, 0, 1]):
        assert metric.score(a, np.array(labels), EPS) == metric.score(b, np.array(labels), EPS)


def test_no_rows_is_a_failure_not_a_number() -> None:
    for name in PAPER_001:
        with pytest.raises(NonFiniteScoreError):
            get_metric(name).score(np.array([]), np.array([], dtype=np.int64), EPS)


# --- φ-bit MPFR arithmetic ----------------------------------------------------------------------------------


def _texts(values: np.ndarray) -> tuple[tuple[str, ...], ...]:
    return tuple((repr(float(v)),) if np.ndim(v) == 0 else tuple(repr(float(x)) for x in v) for v in values)


@pytest.mark.parametrize("name", PAPER_001)
@pytest.mark.parametrize("k", [2, 3])
def test_the_phi_bit_score_agrees_with_float64_at_high_precision(rng: np.random.Generator, name: str, k: int) -> None:
    from scoring.metrics import score_mpfr

    metric = get_metric(name)
    if "multiclass" not in metric.tasks and k > 2:
        pytest.skip(f"{name} is binary only")
    p, y = _logits(rng, 60, k) if metric.logits else _probabilities(rng, 60, k)
    p = p[4:] if k == 2 and not metric.logits else p[1:]  # rows inside the open interval: no clipping subtleties
    y = y[len(y) - len(p):]
    exact = score_mpfr(metric, _texts(p), y, EPS, 300, binary=k == 2)
    assert_allclose(float(exact), metric.score(p, y, EPS), rtol=1e-11)
    check_metric_for(metric, k, Arithmetic.parse("mpfr:300"))


def test_the_phi_bit_brier_and_norm_like_are_exact_rationals(rng: np.random.Generator) -> None:
    """At 400 bits the φ-bit value of a polynomial loss (Brier, norm-like with integer α) on decimal inputs is
    the exact rational value to 2^-390: brute force with fractions."""
    from decimal import Decimal
    from fractions import Fraction

    from scoring.metrics import score_mpfr

    p = np.round(rng.random(30), 6)
    y = rng.integers(0, 2, 30)
    texts = _texts(p)
    theta = [Fraction(Decimal(t[0])) for t in texts]
    brier = sum(((t - int(label)) ** 2 for t, label in zip(theta, y, strict=True)), Fraction(0)) / 30
    got = Fraction(score_mpfr(get_metric("brier"), texts, y, EPS, 400, binary=True))
    assert abs(got - brier) < Fraction(1, 2**390)

    def eq11(t: Fraction, label: int) -> Fraction:  # α = 3
        x = t if label == 1 else 1 - t
        return 1 + 2 * x**3 - 3 * x**2 + 2 * (1 - x) ** 3

    norm = sum((eq11(t, int(label)) for t, label in zip(theta, y, strict=True)), Fraction(0)) / 30
    got = Fraction(score_mpfr(get_metric("norm_like"), texts, y, EPS, 400, binary=True))
    assert abs(got - norm) < Fraction(1, 2**390)


def test_phi_bit_clipping_is_refused_where_a_row_overflows_or_one_minus_eps_rounds() -> None:
    for bits in (20, 60):
        mpfr = Arithmetic.parse(f"mpfr:{bits}")
        check_clipping(get_metric("itakura_saito"), 2, 2.0 ** -(bits - 1), mpfr)
        with pytest.raises(ConfigurationError, match=f"mpfr:{bits}"):
            check_clipping(get_metric("itakura_saito"), 2, 2.0 ** -(bits + 2), mpfr)
        for name in ("softmax_ce", "sigmoid_ce"):  # clipped in log space: any eps
            check_clipping(get_metric(name), 2, 1e-300, mpfr)
    with pytest.raises(ConfigurationError, match="past 1e"):
        check_clipping(get_metric("itakura_saito"), 3, 1e-305, Arithmetic.parse("mpfr:2000"))


def test_a_phi_bit_competition_scores_logits_through_the_oracle() -> None:
    from attacks import LocalOracle

    labels = [0, 1, 1, 0, 1]
    oracle = LocalOracle(labels, metric="sigmoid_ce", arithmetic="mpfr:200", decimals=None)
    released = oracle.submit(["-2.5", "3", "0.125", "-1e-40", "1e40"])
    expected = np.mean([math.log1p(math.exp(-2.5)), math.log1p(math.exp(-3)), math.log1p(math.exp(-0.125)),
                        math.log(2), 0.0])
    assert float(released) == pytest.approx(expected, rel=1e-12)  # type: ignore[arg-type]
    assert len(str(released)) > 40  # every digit of the φ-bit value
