"""How much one released score can tell about the hidden labels: upper bounds, in bits, per release mechanism.

Every function returns an *upper bound* on the mutual information between the hidden labels and one release
(for the Ladder and a privacy budget: a whole transcript), whatever the attacker submits, adaptively or not.
Dividing the entropy of the labels (``n_rows`` bits for unknown balanced binary labels, see
:func:`label_entropy_bits`) by a per-query bound gives a lower bound on the submissions any attack needs
(:func:`queries_lower_bound`); the benchmark prints it beside what our attacks spend.

The model (binary log loss, clipping ``eps``): a submission with logits ``z_i`` has released mean loss
``(1/N) Σ softplus(z_i) − (1/N) Σ z_i y_i``, an affine function of the labels ``y`` whose span over all labelings
is ``Σ|z_i|/N <= A = ln((1−eps)/eps)`` (34.54 at ``eps = 1e-15``). So the released value is a channel whose input
``X`` (the true score) lies in an interval of length ``A`` whatever ``N`` is, followed by the defense:

* rounding to ``d`` decimals: at most ``⌊A/δ⌋ + 2`` distinct outputs, ``δ = 10^-d`` (:func:`rounding_bits`);
* additive noise ``Z`` (Laplace scale b, Gaussian σ), then rounding: ``I(y; R) <= I(X; X+Z)`` (the rounding is a
  function of ``X+Z``: data processing) ``<= h_max(X+Z) − h(Z)``, and with ``Var X <= A²/4`` (any variable on an
  interval of length A) the Gaussian maximises the entropy for the variance:
  ``½ log2(2πe (A²/4 + Var Z)) − h(Z)`` — for Gaussian noise ``½ log2(1 + A²/(4σ²))``. The bound is the smaller
  of that and the rounding count (:func:`additive_noise_bits`). :func:`blahut_arimoto` computes the capacity of
  the discretised channel exactly, for the tests (it must stay below the analytic bound);
* multiplicative noise ``R = S·(1+U)``, ``U ~ U[−α, α]``: additive in the log domain
  (:func:`multiplicative_noise_bits`);
* fresh randomized response ``p``: the labels pass through a binary symmetric channel before scoring; its strong
  data-processing coefficient is ``(1−2p)²`` and tensorizes over rows, so ``I(y; R) <= (1−2p)² · C_release``
  (the attenuation; :func:`randomized_response_bits`);
* subsetting with fraction ``f``: each row reaches the score with probability ``f`` (an erasure channel, SDPI
  coefficient ``f``): ``I <= f · C_release`` (exact for independent draws; a fixed-count subset is the
  hypergeometric version of the same; :func:`subsetting_bits`);
* the fixed-step Ladder: the transcript of ``Q`` releases is a non-increasing sequence over at most
  ``⌊A/η⌋ + 1`` levels plus "nothing yet": ``log2 C(Q + L, L)`` bits in total (:func:`ladder_bits`);
* a privacy budget: releases stop after ``k`` answers: ``k × C_release`` (:func:`privacy_budget_bits`).

The "bits per query" our attacks achieve are ``labels recovered × H(balance) / submissions``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

TWO_PI_E = 2 * math.pi * math.e


def loss_range(eps: float = 1e-15) -> float:
    """``A = ln((1−eps)/eps)``: the most one row can move the summed binary log loss (34.54 at 1e-15)."""
    return math.log((1 - eps) / eps)


def binary_entropy(p: float) -> float:
    """``h(p)`` in bits."""
    if p <= 0 or p >= 1:
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def label_entropy_bits(n_rows: int, balance: float = 0.5) -> float:
    """Bits needed to name ``n_rows`` binary labels drawn with P(y=1) = ``balance`` (``n_rows`` when balanced)."""
    return n_rows * binary_entropy(balance)


def release_count(decimals: int | None, amplitude: float) -> int:
    """Distinct released values a true score in an interval of length ``amplitude`` can take."""
    if decimals is None:
        # Every float64 in [0, amplitude]: consecutive bit patterns of non-negative doubles are consecutive values.
        return int(np.float64(amplitude).view(np.int64)) + 2
    return math.floor(amplitude * 10**decimals) + 2


def rounding_bits(n_rows: int, decimals: int | None, eps: float = 1e-15) -> float:
    """Upper bound on one query's bits under rounding only: ``min(N, log2(⌊A/δ⌋ + 2))``."""
    return min(float(n_rows), math.log2(release_count(decimals, loss_range(eps))))


def noise_entropy_bits(kind: str, scale: float) -> tuple[float, float]:
    """(differential entropy in bits, variance) of the noise: Laplace scale ``b`` or Gaussian std ``σ``."""
    if kind == "laplace":
        return math.log2(2 * math.e * scale), 2 * scale**2
    if kind == "gaussian":
        return 0.5 * math.log2(TWO_PI_E * scale**2), scale**2
    raise ValueError(f"unknown noise kind {kind!r}; use 'laplace' or 'gaussian'")


def additive_noise_bits(
    kind: str, scale: float, n_rows: int, decimals: int | None, eps: float = 1e-15, *, amplitude: float | None = None
) -> float:
    """Upper bound on one query's bits under additive noise of ``scale`` then rounding to ``decimals``.

    ``min(rounding bound, ½ log2(2πe (A²/4 + Var Z)) − h(Z))``; ``amplitude`` overrides ``A`` (e.g. the span a
    design actually uses).

    >>> round(additive_noise_bits("gaussian", 1.0, 10**6, None, amplitude=2.0), 12)
    0.5
    """
    a = loss_range(eps) if amplitude is None else amplitude
    h_noise, var_noise = noise_entropy_bits(kind, scale)
    gaussian_max = 0.5 * math.log2(TWO_PI_E * (a * a / 4 + var_noise)) - h_noise
    return max(0.0, min(rounding_bits(n_rows, decimals, eps), gaussian_max))


def uniform_prior_bits(kind: str, scale: float, n_rows: int, eps: float = 1e-15) -> float:
    """The same bound for a query whose labels are still independent and uniform (the first query, or any
    query on rows nothing is known about): then ``Var X = Σ z_i²/(4N²) <= A²/(4N)``. Not a bound for queries
    on rows whose posterior is correlated; reported beside the sound bound as the tighter, typical figure."""
    a = loss_range(eps)
    h_noise, var_noise = noise_entropy_bits(kind, scale)
    return max(0.0, 0.5 * math.log2(TWO_PI_E * (a * a / (4 * n_rows) + var_noise)) - h_noise)


def multiplicative_noise_bits(alpha: float, n_rows: int, decimals: int | None, eps: float = 1e-15) -> float:
    """Upper bound for ``R = S·(1+U)``, ``U ~ U[−α, α]``: in logs ``ln R = ln S + V``, ``V = ln(1+U)``.

    ``ln S`` lives in ``[ln(δ/2), ln A]`` (a smaller score releases 0, one output), so its variance is at most a
    quarter of that span squared; ``h(V) = log2(2α) + E[log2 (1/(1+U))]``. Also capped by the rounding count.
    """
    a = loss_range(eps)
    floor = 10.0 ** -(decimals if decimals is not None else 17) / 2
    span = math.log(a / floor)
    # E[ln(1+U)] for U uniform on [-α, α], in closed form.
    e_ln = ((1 + alpha) * math.log(1 + alpha) - (1 - alpha) * math.log(1 - alpha)) / (2 * alpha) - 1
    h_v = math.log2(2 * alpha) - e_ln / math.log(2)
    var_v = (math.log(1 + alpha) - math.log(1 - alpha)) ** 2 / 12  # <= variance of a uniform on V's range
    gaussian_max = 0.5 * math.log2(TWO_PI_E * (span * span / 4 + var_v)) - h_v
    return max(0.0, min(rounding_bits(n_rows, decimals, eps), gaussian_max))


def randomized_response_bits(p: float, base_bits: float) -> float:
    """Fresh randomized response with flip probability ``p`` on top of a release carrying ``base_bits``:
    ``(1−2p)² · base_bits`` (strong data processing for the binary symmetric channel, tensorized over rows)."""
    return (1 - 2 * p) ** 2 * base_bits


def subsetting_bits(fraction: float, base_bits: float) -> float:
    """Fresh subsetting with ``fraction`` on top of a release carrying ``base_bits``: ``f · base_bits``."""
    return fraction * base_bits


def ladder_bits(step: float, queries: int, eps: float = 1e-15, *, initial: float | None = None) -> float:
    """Bits in a whole transcript of ``queries`` submissions to a fixed-step Ladder of step ``η``.

    The Ladder releases multiples of ``η``, each a strict improvement on the last: the transcript is a
    non-increasing sequence over ``L = ⌊initial/η⌋ + 1`` levels (``initial``: the largest score it can release
    first, ``A`` by default) plus "none yet", i.e. one of ``C(Q + L, L)`` sequences.
    """
    levels = math.floor((loss_range(eps) if initial is None else initial) / step) + 1
    return (math.lgamma(queries + levels + 1) - math.lgamma(levels + 1) - math.lgamma(queries + 1)) / math.log(2)


def accounts_ladder_bits(accounts: int, queries: int, step: float | None, n_rows: int, decimals: int | None,
                         eps: float = 1e-15) -> float:
    """Bits ``queries`` submissions spread over ``accounts`` per-account Ladders can carry: each account holds its
    own transcript, whose first release is unconditional (at most one release's bits, :func:`rounding_bits`; at the
    fixed step ``η`` the release count of ``⌊A/η⌋ + 2`` levels) and whose further releases are the Ladder's (for a
    fixed step, :func:`ladder_bits` of the rest; for the parameter-free Ladder no tighter bound than a release
    each). Maximised over how the submissions are shared between the accounts, at most ``queries`` of them.

    >>> round(accounts_ladder_bits(30, 30, None, 306, 5), 1) == round(30 * rounding_bits(306, 5), 1)
    True
    >>> accounts_ladder_bits(1, 100, 0.01, 306, 5) == ladder_bits(0.01, 100)
    True
    """
    accounts = max(0, min(accounts, queries))
    if accounts == 0:
        return 0.0
    per_release = rounding_bits(n_rows, decimals, eps)
    if step is None:
        return queries * per_release
    # Every account's transcript is a fixed-step Ladder's: concave in its length, so an even share is the maximum.
    share, extra = divmod(queries, accounts)
    return (accounts - extra) * ladder_bits(step, share, eps) + extra * ladder_bits(step, share + 1, eps)


def accounts_needed(n_rows: int, balance: float, step: float | None, decimals: int | None,
                    eps: float = 1e-15) -> int:
    """The fewest accounts, one first release each, whose releases can carry ``n_rows`` labels of share
    ``balance``: the entropy of the labels over one first release's bits (at the Ladder's step ``η`` when fixed).

    >>> accounts_needed(92, 0.68, None, 5) <= 30
    True
    """
    levels_bits = rounding_bits(n_rows, decimals, eps) if step is None else math.log2(
        math.floor(loss_range(eps) / step) + 2)
    return math.ceil(label_entropy_bits(n_rows, balance) / min(levels_bits, float(n_rows)))


def privacy_budget_bits(released: int, per_query_bits: float) -> float:
    """A privacy budget that releases ``released`` scores and then withholds: at most ``released × C``."""
    return released * per_query_bits


def queries_lower_bound(n_rows: int, bits_per_query: float, balance: float = 0.5) -> float:
    """Submissions any attack needs to learn every label: ``N·h(balance) / C``."""
    return label_entropy_bits(n_rows, balance) / bits_per_query if bits_per_query > 0 else math.inf


def labelings_bits(n_rows: int, positives: int) -> float:
    """``log2 C(N, P)``: the bits needed to name one labeling among those with ``P`` positives."""
    return (math.lgamma(n_rows + 1) - math.lgamma(positives + 1) - math.lgamma(n_rows - positives + 1)) / math.log(2)


def auc_release_count(positives: int, negatives: int, decimals: int | None) -> int:
    """Distinct released AUC values once ``P`` is fixed: the AUC is ``U / (P·(N−P))`` with ``U`` a whole or half
    (ties count one half) number of pairs, so at most ``2·P·(N−P) + 1`` values, and at most ``10^d + 1`` when
    rounded to ``d`` decimals."""
    exact = 2 * positives * negatives + 1
    return exact if decimals is None else min(exact, 10**decimals + 1)


def logloss_release_count(n_rows: int, decimals: int | None, eps: float = 1e-15) -> int:
    """Distinct released mean log losses one submission can produce over all labelings.

    Rounded to ``d`` decimals: ``release_count``. At float64 every row's two losses add up to at least
    ``2 ln 2`` (``−ln x − ln(1−x) ≥ 2 ln 2``), so each row has a costlier label costing at least ``ln 2``: one
    labeling (every row's cheaper label) can score below ``ln 2 / N``, every other scores in
    ``[ln 2 / N, A]`` — the float64 values there (a margin of 1e-6 covers the server's rounding), plus one.

    >>> 2**55 < logloss_release_count(306, None) < 2**56
    True
    """
    a = loss_range(eps)
    if decimals is not None:
        return release_count(decimals, a)
    low = np.float64(math.log(2) / n_rows * (1 - 1e-6)).view(np.int64)
    high = np.float64(a * (1 + 1e-6)).view(np.int64)
    return int(high) - int(low) + 2


def auc_logloss_bits(n_rows: int, positives: int, decimals: int | None, eps: float = 1e-15) -> float:
    """Paper 004 §3's pigeonhole done on the real codomains: one query's (log loss, AUC) pair takes at most
    ``logloss_release_count × (2·P·(N−P) + 1)`` values whatever the attacker submits (``P`` fixed). The paper
    counts ``10^φ (10^φ + 1)`` (φ = 15: 99.7 bits) because it gives the AUC 10^15 values as well."""
    return math.log2(logloss_release_count(n_rows, decimals, eps)) + math.log2(
        auc_release_count(positives, n_rows - positives, decimals)
    )


def paper004_tuple_bits(digits: int = 15) -> float:
    """Paper 004 §3's count: ``log2(10^φ (10^φ + 1))`` bits per (AUC, log loss) tuple at φ significant digits."""
    return math.log2(10.0**digits * (10.0**digits + 1))


def blahut_arimoto(channel: np.ndarray, *, tol: float = 1e-9, max_iter: int = 10_000) -> float:
    """Capacity in bits of a discrete memoryless channel ``channel[x, y] = P(y | x)`` (Blahut–Arimoto)."""
    w = np.asarray(channel, dtype=np.float64)
    q = np.full(w.shape[0], 1.0 / w.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        logw = np.where(w > 0, np.log(w), 0.0)
    for _ in range(max_iter):
        out = q @ w
        with np.errstate(divide="ignore", invalid="ignore"):
            logout = np.where(out > 0, np.log(out), 0.0)
        d = (w * (logw - logout)).sum(axis=1)  # KL(W(.|x) || output), nats
        lower, upper = float(q @ d), float(d.max())
        if upper - lower < tol:
            break
        q = q * np.exp(d)
        q /= q.sum()
    return lower / math.log(2)


def discretized_noise_channel(
    kind: str, scale: float, amplitude: float, step: float, n_inputs: int, *, tail: float = 12.0
) -> np.ndarray:
    """``P(release | true score)`` for true scores on ``n_inputs`` grid points of ``[0, amplitude]``, noise of
    ``kind``/``scale`` and releases rounded to multiples of ``step`` (outputs cover ``tail`` scales each side)."""
    from statistics import NormalDist

    xs = np.linspace(0.0, amplitude, n_inputs)
    spread = tail * scale
    ks = np.arange(math.floor(-spread / step) - 1, math.ceil((amplitude + spread) / step) + 2)
    edges = (ks[:, None] + np.array([-0.5, 0.5])[None, :]) * step  # output cell k: [(k-½)δ, (k+½)δ)

    def cdf(t: np.ndarray) -> np.ndarray:
        if kind == "laplace":
            return np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0) / scale), 1 - 0.5 * np.exp(-np.maximum(t, 0) / scale))
        normal = NormalDist(0.0, scale)
        return np.vectorize(normal.cdf)(t)

    rows = [cdf(edges[:, 1] - x) - cdf(edges[:, 0] - x) for x in xs]
    w = np.clip(np.array(rows), 0.0, None)
    return w / w.sum(axis=1, keepdims=True)


#: Defenses whose release depends on a state the transcript does not show (the parameter-free Ladder's leader
#: and its per-row losses, Thresholdout's noisy threshold and holdout budget, the probe detector's history):
#: each release may carry, besides the score channel's bits, the one bit of whether it was let through.
HIDDEN_STATE = frozenset({"thresholdout", "probe_detector"})
#: Defenses that release a hard label (a yes/no or a medal count, or "withheld"): at most ``log2`` of
#: :func:`hard_outcomes` bits a release.
HARD_FEEDBACK = frozenset({"threshold", "accept_reject"})


def label_attenuation(chain: Sequence[Mapping[str, Any]], n_rows: int, n_classes: int = 2) -> float:
    """The strong data-processing coefficient of the label-stage defenses of ``chain``: the fraction of a release's
    bits about the true labels that survives them (1 when there are none). Fresh or fixed randomized response
    ``p``: ``(1−2p)²`` for two classes (the binary symmetric channel), ``|1 − pK/(K−1)|`` (Dobrushin's coefficient,
    which bounds the KL one) for ``K``; subsetting a ``fraction`` ``f`` (or ``count`` rows of ``n_rows``): ``f``.
    Coefficients of channels in series multiply.

    >>> label_attenuation([{"name": "randomized_response", "p": 0.05}], 100)
    0.81
    >>> label_attenuation([{"name": "subsetting", "fraction": 0.5}, {"name": "rounding", "decimals": 3}], 100)
    0.5
    """
    factor = 1.0
    for step in chain:
        name = step.get("name")
        if name == "randomized_response":
            p = step.get("p")
            if p is None and step.get("epsilon") is not None:
                odds = (n_classes - 1) * math.exp(-float(step["epsilon"]))
                p = odds / (1 + odds)
            p = 0.05 if p is None else float(p)
            factor *= (1 - 2 * p) ** 2 if n_classes == 2 else abs(1 - p * n_classes / (n_classes - 1))
        elif name == "subsetting":
            fraction = step.get("fraction")
            if fraction is None and step.get("count") is not None:
                fraction = min(1.0, float(step["count"]) / max(n_rows, 1))
            factor *= 0.5 if fraction is None else float(fraction)
    return factor


def _score_amplitude(metric: str, eps: float, n_classes: int) -> float | None:
    """How far the released score of one submission can move over all labelings: the metric's largest change of
    one row's value when its label changes (the mean of the rows moves by no more), else the width of its range;
    ``None`` when neither is finite."""
    from scoring.metrics import get_metric  # the scoring core, below attacks

    found = get_metric(metric)
    if found.label_spread is not None:
        spread = float(found.label_spread(eps, n_classes))
        if math.isfinite(spread):
            return spread
    low, high = found.value_range(n_classes)
    return high - low if math.isfinite(high - low) else None


def release_bits(chain: Sequence[Mapping[str, Any]], *, metric: str, n_rows: int, decimals: int | None,
                 eps: float = 1e-15, n_classes: int = 2) -> float | None:
    """Upper bound on the bits one release of ``chain`` carries about the ``n_rows`` scored labels, given what was
    released before (so summing it over submissions bounds a whole transcript, adaptive or not); ``None`` when a
    step of the chain has no bound here (an unknown defense, ``rank``, a metric of unbounded range).

    The score channel: at most ``log2(count + 1)`` (the values ``decimals`` leaves in the score's span, and
    "withheld"), or under additive noise of a fixed scale the Gaussian maximum-entropy bound of
    :func:`additive_noise_bits`, under Laplace noise calibrated to ``epsilon`` the pure-DP bound
    ``n_rows·ε·log2 e``, under multiplicative noise :func:`multiplicative_noise_bits` (log losses). Label-stage
    defenses attenuate it (:func:`label_attenuation`). A defense that lets a release through on a state the
    transcript does not show (the parameter-free Ladder, Thresholdout, the probe detector) adds one bit and
    forfeits the attenuation (its decision saw the rows); a hard label caps the release at ``log2`` of its outcomes
    (:func:`hard_outcomes`).

    >>> release_bits([], metric="binary_logloss", n_rows=306, decimals=5) > rounding_bits(306, 5)
    True
    >>> release_bits([{"name": "threshold", "t": 0.5}], metric="binary_logloss", n_rows=306, decimals=5)
    1.584962500721156
    """
    amplitude = _score_amplitude(metric, eps, n_classes)
    if amplitude is None:
        return None
    entropy_cap = n_rows * math.log2(max(n_classes, 2))
    count = math.log2(release_count(decimals, amplitude + (0.0 if decimals is None else 10.0**-decimals)) + 1)
    score = count
    hidden = False
    for step in chain:
        name = step.get("name")
        if name == "noise":
            kind = step.get("kind", "laplace")
            if kind in ("laplace", "gaussian") and step.get("scale") is not None:
                h_noise, var_noise = noise_entropy_bits(kind, float(step["scale"]))
                span = amplitude + (0.0 if decimals is None else 10.0**-decimals)
                score = min(score, max(0.0, 0.5 * math.log2(TWO_PI_E * (span * span / 4 + var_noise)) - h_noise))
            elif kind == "laplace" and step.get("epsilon") is not None:
                score = min(score, n_rows * float(step["epsilon"]) * math.log2(math.e))
            elif kind == "multiplicative" and step.get("alpha") is not None and metric.endswith("logloss"):
                score = min(score, multiplicative_noise_bits(float(step["alpha"]), n_rows, decimals, eps))
        elif name == "ladder":
            hidden = hidden or step.get("mode", "fixed") == "parameter_free"
        elif name in HIDDEN_STATE:
            hidden = True
        elif name not in HARD_FEEDBACK and name not in ("rounding", "randomized_response", "subsetting",
                                                        "privacy_budget"):
            return None
    bits = 1.0 + score if hidden else label_attenuation(chain, n_rows, n_classes) * score
    for step in chain:
        if step.get("name") in HARD_FEEDBACK:
            bits = min(bits, math.log2(hard_outcomes(step)))
    return min(bits, entropy_cap)


def hard_outcomes(step: Mapping[str, Any]) -> int:
    """The releases a hard-label step can make, "withheld" included: ``accept_reject`` 3; ``threshold`` with ``m``
    cut-offs ``m + 2`` (how many it beats, 0 to m, or nothing).

    >>> hard_outcomes({"name": "accept_reject"}), hard_outcomes({"name": "threshold", "t": [0.3, 0.5, 0.6]})
    (3, 5)
    """
    cutoffs = step.get("t")
    return len(cutoffs) + 2 if step.get("name") == "threshold" and isinstance(cutoffs, list) else 3


def transcript_bits(chain: Sequence[Mapping[str, Any]], *, metric: str, n_rows: int, decimals: int | None,
                    accounts: int, queries: int, eps: float = 1e-15, n_classes: int = 2,
                    also_report: Sequence[str] = ()) -> float | None:
    """Upper bound on the bits ``queries`` submissions made from ``accounts`` accounts can carry about the
    ``n_rows`` scored labels, whatever the attacker submits: the most labels its releases could tell.
    ``None`` when :func:`release_bits` has no bound for the chain.

    Every release carries at most :func:`release_bits` (each reported metric its own: ``also_report``). Per-account
    state tightens it: behind a fixed-step Ladder with no noise before it, each account's transcript is one of the
    Ladder's (:func:`accounts_ladder_bits` at the step's grid, the submissions shared the best way between the
    accounts); behind a privacy budget with basic composition on a chain that is pure DP (:func:`pure_dp`) each
    account's whole transcript is ``ε``-DP in every label, so at most ``n_rows·ε·log2 e`` bits an account.
    Never more than the labels' entropy at ``K`` classes, ``n_rows·log2 K``.

    >>> transcript_bits([{"name": "ladder", "mode": "fixed", "eta": 0.01}], metric="binary_logloss", n_rows=92,
    ...                 decimals=5, accounts=1, queries=200) < 200 * rounding_bits(92, 5)
    True
    """
    if queries <= 0 or accounts <= 0:
        return 0.0
    per_release = 0.0
    for name in (metric, *also_report):
        bits = release_bits(chain, metric=name, n_rows=n_rows, decimals=decimals, eps=eps, n_classes=n_classes)
        if bits is None:
            return None
        per_release += bits
    total = queries * per_release
    names = [step.get("name") for step in chain]
    noisy = "noise" in names
    for step in chain:
        if step.get("name") == "ladder" and step.get("mode", "fixed") == "fixed" and not noisy and not also_report \
                and metric == "binary_logloss":
            eta = float(step["eta"]) if step.get("eta") is not None else max(n_rows, 1) ** (-1 / 3)
            top = -math.log(eps) + eta  # the highest score, rounded to the step
            share, extra = divmod(queries, min(accounts, queries))
            used = min(accounts, queries)
            ladder = (used - extra) * ladder_bits(eta, share, eps, initial=top) + extra * ladder_bits(
                eta, share + 1, eps, initial=top)
            total = min(total, ladder)
        if step.get("name") == "privacy_budget" and step.get("composition") == "basic" and not also_report \
                and pure_dp(chain) and step.get("epsilon") is not None:
            total = min(total, min(accounts, queries) * n_rows * float(step["epsilon"]) * math.log2(math.e))
    return min(total, n_rows * math.log2(max(n_classes, 2)))


def pure_dp(chain: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every way the labels reach a release of ``chain`` goes through ε it accounts as pure DP: Laplace noise,
    randomized response, then only post-processing (rounding, a fixed-step Ladder on the noisy score, a hard label,
    the privacy budget). A step that reads the rows beside the noisy score (the parameter-free Ladder's paired
    test, Thresholdout, the probe detector) or is not ε-DP (Gaussian noise: (ε, δ)) breaks it.

    >>> pure_dp([{"name": "noise", "kind": "laplace", "epsilon": 1.0}, {"name": "privacy_budget", "epsilon": 5}])
    True
    >>> pure_dp([{"name": "noise", "kind": "laplace", "scale": 1e-4}, {"name": "ladder", "mode": "parameter_free"}])
    False
    """
    for step in chain:
        name = step.get("name")
        if name == "noise" and step.get("kind", "laplace") != "laplace":
            return False
        if name == "ladder" and step.get("mode", "fixed") != "fixed":
            return False
        if name not in ("noise", "randomized_response", "rounding", "privacy_budget", "ladder", *HARD_FEEDBACK):
            return False
    return True


def labels_worth(bits: float, class_counts: Sequence[int]) -> float:
    """How many labels ``bits`` can name, at the entropy per label of the class shares ``class_counts``
    (``bits / H``), at most all of them.

    >>> labels_worth(46.0, [46, 46]), labels_worth(1e9, [60, 32])
    (46.0, 92.0)
    """
    total = sum(class_counts)
    if total == 0:
        return 0.0
    shares = [c / total for c in class_counts if c > 0]
    per_label = -sum(s * math.log2(s) for s in shares)
    if per_label <= 0:
        return float(total)  # one class only: the balance alone names every label
    return min(float(total), bits / per_label)
