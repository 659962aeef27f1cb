"""``noisy``: label inference through additive (Laplace, Gaussian) or multiplicative noise on binary log loss.

Instead of assuming a bounded error (paper 001's τ), the attack models the noise:

1. **Probes whose true score is known.** Constant 0.5 scores ``ln 2`` whatever the labels; each probe moves one
   row by ``j·1e-12`` so no two files are equal (``same_file_same_score`` keys files by content, see
   :func:`scoring.pipeline.content_digest`) while the score moves by ~1e-12/N, far below any released digit.
   A second set at the clipping edge (every row but the jittered one at ``eps``) releases ``≈ π·A``: its mean
   gives the class balance ``π``, its spread the noise at a high score level. The residuals pick the noise
   model by likelihood (Laplace, Gaussian; multiplicative when the spread grows with the score) and its scale;
   rounding alone is modelled as noise of std ``δ/√12``.
2. **A design for the noisy channel.** Every query puts every row at the clipping edge with a fresh random sign
   (``p = eps`` or ``1 − eps``): the released mean is ``offset + Σ_i w_qi y_i + noise`` with ``|w_qi| = A/N``,
   the largest per-row signal the metric allows, and every file differs, so averaging is built into the design
   rather than bought with resubmissions.
3. **Decoding under the noise model.** Approximate message passing with the binary prior
   (:func:`attacks.noisy.decoder.amp`), then maximum likelihood under the fitted noise density, one label flip
   at a time (:func:`~attacks.noisy.decoder.refine`), which also gives each label's posterior given the rest.
   Queries are added in batches until the residuals fit the noise model (a labeling with even one wrong label
   leaves residuals of variance ``σ² + (A/N)²`` in every query) and every posterior clears ``1 − target/N``.

It only calls ``oracle.submit`` and reads ``n_rows``, ``n_classes``, ``metric``, ``eps`` and ``decimals``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attacks import information
from attacks.noisy.decoder import NoiseModel, amp, refine
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

JITTER = 1e-12


@dataclass
class FittedNoise:
    """The noise the probes show: ``kind`` (laplace, gaussian, multiplicative, rounding), its scale (Laplace
    b, Gaussian σ, or α), the class balance seen, and the probe residuals' standard deviation."""

    kind: str
    scale: float
    balance: float
    std: float
    probes: int = 24

    def model_for(self, releases: np.ndarray, floor: float) -> NoiseModel:
        """The per-query noise model for design queries with these releases (std at least ``floor``)."""
        if self.kind == "multiplicative":
            half = np.maximum(self.scale * np.abs(releases), floor * math.sqrt(3))
            return NoiseModel("uniform", half)
        if self.kind == "laplace":
            return NoiseModel("laplace", max(self.scale, floor / math.sqrt(2)))
        return NoiseModel("gaussian", max(self.scale, floor))


def _submit(oracle: Oracle, predictions: np.ndarray) -> float | None:
    out = oracle.submit(predictions)
    return None if out is None else float(out)


def fit_noise(oracle: Oracle, probes: int) -> FittedNoise:
    """Spend ``probes`` queries (half at 0.5, half at the clipping edge) and fit the noise."""
    n, eps = oracle.n_rows, oracle.eps
    half = max(2, probes // 2)
    known = []
    for j in range(half):
        p = np.full(n, 0.5)
        p[0] += (j + 1) * JITTER
        value = _submit(oracle, p)
        if value is not None:
            known.append(value - math.log(2))
    edge = []
    for j in range(half):
        p = np.full(n, eps)
        p[0] = 0.5 + (j + 1) * JITTER
        value = _submit(oracle, p)
        if value is not None:
            edge.append(value)
    if len(known) < 2 or len(edge) < 2:
        raise AttackFailed("noisy: the leaderboard released too few probe scores to fit its noise")
    r_known = np.array(known)
    r_edge = np.array(edge)
    level = float(r_edge.mean())
    # The edge file's true score: (ln 2 + Σ_{i>0} [y_i·(−ln eps) + (1−y_i)·(−log1p(−eps))]) / N.
    lo, hi = -math.log1p(-eps), -math.log(eps)
    balance = float(np.clip((level * n - math.log(2) - (n - 1) * lo) / ((n - 1) * (hi - lo)), 0.01, 0.99))
    s_known = float(np.sqrt(np.mean(r_known**2)))
    dev_edge = r_edge - level
    s_edge = float(np.sqrt(np.sum(dev_edge**2) / (len(dev_edge) - 1)))
    if s_edge > 3 * s_known and level > 4 * math.log(2) and s_edge > 0:
        alpha = math.sqrt(3) * s_edge / level
        return FittedNoise("multiplicative", alpha, balance, s_edge, len(r_edge))
    pooled = np.concatenate([r_known, dev_edge])
    std = float(np.sqrt(np.mean(pooled**2)))
    if std == 0:
        return FittedNoise("rounding", 0.0, balance, 0.0, len(pooled))
    b = float(np.mean(np.abs(pooled)))
    ll_laplace = -len(pooled) * math.log(2 * b) - float(np.sum(np.abs(pooled))) / b
    ll_gauss = -0.5 * len(pooled) * math.log(2 * math.pi * std**2) - 0.5 * len(pooled)
    if ll_laplace > ll_gauss:
        return FittedNoise("laplace", b, balance, std, len(pooled))
    return FittedNoise("gaussian", std, balance, std, len(pooled))


def edge_rows(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """For predictions ``[eps, 1 − eps]``: the per-row loss when the label is 0 and when it is 1."""
    p = np.clip(np.array([eps, 1.0 - eps]), eps, 1.0 - eps)
    return -np.log1p(-p), -np.log(p)


#: The highest confidence a posterior reports (1.0 is kept for exact, confirmed labels).
GUESS_CEILING = 1.0 - 1e-9


@register("noisy", exact=False)
def noisy(
    oracle: Oracle,
    *,
    budget: int | None = None,
    probes: int = 24,
    target: float = 1e-3,
    start_ratio: float = 0.45,
    step_ratio: float = 0.05,
    max_ratio: int = 6,
    seed: int = 0,
) -> AttackResult:
    """Recover binary labels through noise (see the module docstring).

    ``budget`` caps the submissions (probes included); ``target`` is the tolerated expected number of wrong
    labels (each posterior must reach ``1 − target/N``); ``start_ratio``/``step_ratio`` size the first and each
    further batch of design queries as a fraction of ``N``; without a ``budget`` it stops at ``max_ratio·N`` design
    queries. Returns every row's best label, its posterior
    (``details["confidence"]``) and ``details["complete"]`` (the stopping rule was met within the budget).
    """
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed(f"noisy: needs binary log loss, not {oracle.metric} with {oracle.n_classes} classes")
    n, eps = oracle.n_rows, oracle.eps
    start_queries = oracle.queries
    limit = budget if budget is not None else max_ratio * n + probes
    fitted = fit_noise(oracle, min(probes, max(4, limit // 4)))
    delta = 10.0 ** -oracle.decimals if oracle.decimals is not None else 1e-15
    floor = delta / math.sqrt(12)
    loss0, loss1 = edge_rows(eps)
    rng = np.random.default_rng(seed)
    weights: list[np.ndarray] = []
    observed: list[float] = []
    releases: list[float] = []
    labels = np.zeros(n, dtype=np.int64)
    confidence = np.full(n, 0.5)
    complete = False
    fits = False
    fit_stat = math.inf
    want = math.ceil(start_ratio * n)
    while True:
        while len(weights) < want and oracle.queries - start_queries < limit:
            side = rng.integers(0, 2, n)
            released = _submit(oracle, np.where(side == 1, 1.0 - eps, eps))
            if released is None:
                continue
            offset = float(loss0[side].sum()) / n
            weights.append((loss1[side] - loss0[side]) / n)
            observed.append(released - offset)
            releases.append(released)
        if not weights:
            break
        w = np.array(weights)
        r = np.array(observed)
        noise = fitted.model_for(np.array(releases), floor)
        std = np.broadcast_to(noise.std(), r.shape)
        x = amp(w, r, std, prior=fitted.balance)
        labels, confidence = refine(w, r, noise, (x > 0.5).astype(np.int64), prior=fitted.balance,
                                    max_flips=n // 10 + 10)
        residual = (r - w @ labels) / std
        kurt = 6.0 if noise.kind == "laplace" else 3.0
        fit_stat = float(np.mean(residual**2))
        # The scale came from ``fitted.probes`` residuals: allow its sampling error as well as the residuals'.
        # A wrong label adds (A/N)² to every query's residual variance, so the test never needs to be finer
        # than half of that.
        unit2 = float(np.mean(w**2)) / float(np.mean(std**2))
        slack = 4 * math.sqrt((kurt - 1) / len(r)) + 2 * math.sqrt((kurt - 1) / fitted.probes)
        fits = fit_stat <= max(1 + slack, 1 + 0.5 * unit2) + 0.5 * (fitted.kind == "rounding")
        # Posteriors with the scale the design residuals themselves show (many more than the probes; inflated,
        # hence conservative, if a label is still wrong).
        rescale = math.sqrt(max(fit_stat, 1.0))
        noise = NoiseModel(noise.kind, np.asarray(noise.scale) * rescale)
        labels, confidence = refine(w, r, noise, labels, prior=fitted.balance, max_flips=n // 10 + 10)
        if fits and confidence.min() >= 1 - target / n:
            complete = True
            break
        if oracle.queries - start_queries >= limit:
            break
        want = len(weights) + max(1, math.ceil(step_ratio * n))
    confidence = calibrate(confidence, fit_stat, fits)
    used = oracle.queries - start_queries
    bits = _bound(oracle, fitted)
    return AttackResult(
        "noisy",
        labels,
        # Posteriors, never 1.0: 1.0 marks a label an exact attack vouches for (and a query confirmed).
        confidence=np.minimum(confidence, GUESS_CEILING),
        details={
            "confidence": confidence,
            "complete": complete,
            "noise": {"kind": fitted.kind, "scale": fitted.scale, "std": fitted.std, "balance": fitted.balance},
            "design_queries": len(weights),
            "fit": fit_stat,
            "bound_bits_per_query": bits,
            "bound_queries": information.queries_lower_bound(n, bits, fitted.balance),
            "bits_per_query": information.label_entropy_bits(n, fitted.balance) / max(used, 1),
        },
    )


def calibrate(confidence: np.ndarray, fit_stat: float, fits: bool) -> np.ndarray:
    """Posteriors the fit vouches for: unchanged when the residuals fit the noise model; else their log-odds
    divided by the fit statistic once more (the decoder already widened the noise by its square root). A
    misfit means the noise model is wrong (a Thresholdout or subsetting board taken for noise), and a wrong
    model's posteriors claimed 0.99 on rows right 65 % of the time; ``auto``'s floor checks them with queries.

    >>> calibrate(np.array([0.99]), 1.0, True).tolist(), calibrate(np.array([0.99]), 4.0, False).round(3).tolist()
    ([0.99], [0.759])
    """
    if fits or not math.isfinite(fit_stat) or fit_stat <= 1.0:
        return confidence
    c = np.clip(confidence, 1e-12, 1 - 1e-12)
    return np.asarray(1.0 / (1.0 + np.exp(-np.log(c / (1 - c)) / fit_stat)))


def _bound(oracle: Oracle, fitted: FittedNoise) -> float:
    """The information bound (bits per query) for the noise the probes showed."""
    n, decimals, eps = oracle.n_rows, oracle.decimals, oracle.eps
    if fitted.kind in ("laplace", "gaussian"):
        return information.additive_noise_bits(fitted.kind, fitted.scale, n, decimals, eps)
    if fitted.kind == "multiplicative":
        return information.multiplicative_noise_bits(min(fitted.scale, 0.5), n, decimals, eps)
    return information.rounding_bits(n, decimals, eps)


def describe(result: AttackResult) -> dict[str, Any]:
    """A short summary for benchmarks and logs."""
    d = result.details
    return {"noise": d["noise"]["kind"], "queries": result.queries, "complete": d["complete"],
            "bound_queries": round(d["bound_queries"], 1)}
