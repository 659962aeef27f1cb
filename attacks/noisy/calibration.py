"""Calibrated posteriors for a random-sign decode cut short: AMP's marginals, mapped through what the same decoder
does on boards simulated from the fitted noise.

AMP's marginals are the right quantity (refine's are each label's posterior given all the others, which with the
others still uncertain claimed 1.0 on rows right 69–80 % of the time), but at a few thousand rows its asymptotic
law is off by a little: its 0.975 band was right 96 % of the time, its 0.525 band 54 %. So the posteriors are
recalibrated by a parametric bootstrap on the attack's own design: labels drawn from the prior, releases
simulated through the very sign matrix the board saw with the fitted noise (its kind; its scale as AMP's
effective noise implies it, drawn around that estimate by its own sampling error; the released rounding),
decoded by the same AMP; a monotone map from a label's signed AMP log-odds to ``P(y = 1)`` is read from the
simulated decodes (:func:`monotone_map`) and applied to the real ones. No query is spent.

The map is non-parametric because the curve is not a logistic one: below its threshold AMP's accuracy flattens
(0.970 right at log-odds 4.4, 0.984 at 6 and beyond), and a logistic in ``|log-odds|`` fitted to the simulated
decodes claimed 0.991 on the surest tenth of ``one_vs_rest``'s binary answers (6-class Brier, Laplace 10^-3,
1.5 queries a row), right 0.971 — while the simulated and the real decodes agreed within 0.01 in every tenth of
``|log-odds|``: the decodes were simulated well, the map's shape was wrong (the same with the true noise in the
simulation: the noise's misread kind was not the cause). And it is signed because a question's prior off ½
makes its minority answers right less often than its majority ones at the same ``|log-odds|`` (3-class log loss,
questions at 1/3: "yes" 0.960 claimed, 0.929 right; "no" 0.987, 0.982).

Not covered: where AMP settles on a wrong fixed point that the simulated decodes avoid (weak rows near its
threshold, e.g. ``one_vs_rest``'s questions on 10-class Brier under Laplace 1e-3 with 0.6 queries a row), the
posteriors stay somewhat overconfident; the residual check below catches only what the residuals can show.
"""

from __future__ import annotations

import math

import numpy as np

from attacks.noisy.decoder import NoiseModel, amp_signs, amp_signs_noise
from attacks.noisy.design import SignDesign

#: Simulated decodes the map is read from at the least (each as many labels as the board has rows).
REPLICATES = 3
#: Simulated labels the map is read from at the least (a small board takes more replicates).
SIMULATED_LABELS = 3000
#: Equal-count bins of the simulated log-odds the map is read from (before pooling).
BINS = 16
#: AMP iterations for the real and the simulated decodes (it stops earlier once it has converged).
ITERATIONS = 300


def sample_noise(noise: NoiseModel, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of ``noise`` (its scale per query or one for all)."""
    scale = np.broadcast_to(np.asarray(noise.scale, dtype=np.float64), (size,))
    if noise.kind == "laplace":
        return rng.laplace(0.0, 1.0, size) * scale
    if noise.kind == "uniform":
        return rng.uniform(-1.0, 1.0, size) * scale
    return rng.normal(0.0, 1.0, size) * scale


def noise_posterior(residuals: np.ndarray, rng: np.random.Generator) -> NoiseModel:
    """One draw of the noise from its posterior given label-free ``residuals`` (the probes'): the kind, Laplace or
    Gaussian, by the two models' marginal likelihoods (scale-invariant priors on ``b`` and ``σ²``), then the scale
    from that kind's posterior (``b = Σ|e| / Gamma(m)``, ``σ² = Σe²/2 / Gamma(m/2)``). Two dozen probes read
    Laplace noise as Gaussian on 3 runs of 4 and misjudged its scale by up to 40 %: drawn, that uncertainty reaches
    the simulated decodes instead of one point estimate's error.

    >>> e = np.random.default_rng(0).laplace(0.0, 0.1, 4000)
    >>> draw = noise_posterior(e, np.random.default_rng(1))
    >>> draw.kind, round(float(draw.scale), 2)
    ('laplace', 0.1)
    """
    e = np.asarray(residuals, dtype=np.float64)
    m = len(e)
    total, squares = float(np.sum(np.abs(e))), float(np.sum(e**2))
    if m < 2 or total <= 0.0:
        return NoiseModel("gaussian", math.sqrt(squares / max(m, 1)))
    # log ∫ likelihood · prior for each kind (Laplace: 1/b; Gaussian: 1/σ², whose 2/σ in σ gives the ln 2).
    log_laplace = -m * math.log(2.0) + math.lgamma(m) - m * math.log(total)
    log_gauss = (-0.5 * m * math.log(2 * math.pi) + math.lgamma(m / 2) - 0.5 * m * math.log(squares / 2)
                 + math.log(2.0))
    if rng.random() < 1.0 / (1.0 + math.exp(min(log_gauss - log_laplace, 700.0))):
        return NoiseModel("laplace", total / rng.gamma(m))
    return NoiseModel("gaussian", math.sqrt(squares / 2 / rng.gamma(m / 2)))


def log_odds(x: np.ndarray) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=np.float64), 1e-300, 1.0)
    y = np.clip(1.0 - np.asarray(x, dtype=np.float64), 1e-300, 1.0)
    return np.asarray(np.log(x) - np.log(y))


def monotone_map(feature: np.ndarray, outcome: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """A non-decreasing map from ``feature`` to ``P(outcome)`` read from simulated pairs: ``bins`` equal-count bins
    of the feature, pooled where their rates would decrease (pool-adjacent-violators), each block at its mean
    feature and its rate by Laplace's rule of succession (never 0 or 1 from a finite sample). Returns the blocks'
    centres and their rates' log-odds, for :func:`apply_map`.

    >>> centres, values = monotone_map(np.arange(8.0), np.array([0, 1, 0, 0, 1, 1, 1, 1]), 4)
    >>> centres.tolist(), (1 / (1 + np.exp(-values))).round(3).tolist()
    ([1.5, 5.5], [0.333, 0.833])
    """
    order = np.argsort(np.asarray(feature, dtype=np.float64), kind="stable")
    f = np.asarray(feature, dtype=np.float64)[order]
    y = np.asarray(outcome, dtype=np.float64)[order]
    sums: list[float] = []
    ones: list[float] = []
    counts: list[float] = []
    for part in np.array_split(np.arange(len(f)), max(1, min(bins, len(f)))):
        sums.append(float(f[part].sum()))
        ones.append(float(y[part].sum()))
        counts.append(float(len(part)))
        while len(counts) > 1 and ones[-2] / counts[-2] >= ones[-1] / counts[-1]:
            s, o, c = sums.pop(), ones.pop(), counts.pop()
            sums[-1] += s
            ones[-1] += o
            counts[-1] += c
    n = np.array(counts)
    return np.array(sums) / n, log_odds((np.array(ones) + 1.0) / (n + 2.0))


def apply_map(centres: np.ndarray, values: np.ndarray, feature: np.ndarray) -> np.ndarray:
    """The probability :func:`monotone_map`'s map gives ``feature``: its log-odds interpolated linearly between the
    blocks' centres, flat beyond the outer ones (no extrapolation past what was simulated)."""
    return np.asarray(1.0 / (1.0 + np.exp(-np.interp(np.asarray(feature, dtype=np.float64), centres, values))))


def replicates(n: int) -> int:
    """Simulated decodes for a board of ``n`` rows: :data:`REPLICATES`, more on a small board so that the map is
    read from :data:`SIMULATED_LABELS` labels at the least (a bin's rate then has a standard error near 0.015)."""
    return max(REPLICATES, math.ceil(SIMULATED_LABELS / max(n, 1)))


def calibrated_marginals(
    design: SignDesign, r: np.ndarray, std: np.ndarray, noise: NoiseModel, *, prior: float, delta: float | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """``P(y_i = 1)`` for every row from the design's observations ``r`` (module docstring). ``noise`` is the
    fitted noise without the rounding floor (the simulation rounds to ``delta``, the released unit, itself), its
    scale corrected by what the decode implies; ``std`` the per-query std AMP whitens by."""
    x, ratio2 = amp_signs_noise(design, r, std, prior=prior, iterations=ITERATIONS)
    offsets = np.asarray(design.offsets)
    # The noise the decode itself implies (AMP's effective variance less the labels' share): hundreds of queries
    # against the probes' couple of dozen, which misjudged a Laplace scale by 40 % (b = 0.006 fitted for 0.01).
    ratio = math.sqrt(ratio2) if ratio2 > 0 else 1.0
    features: list[np.ndarray] = []
    truths: list[np.ndarray] = []
    # The implied scale's relative sampling error from M queries (Laplace's kurtosis, the wider of the kinds).
    spread = math.sqrt(5.0 / 4.0 / max(len(r), 1))
    for _ in range(replicates(design.n)):
        # Truth drawn from the prior, not from AMP's marginals: a truth drawn from those sits where the real
        # releases put it, and its decode came out far better than the real one (0.89 right against 0.75).
        truth = rng.random(design.n) < prior
        drawn = NoiseModel(noise.kind, np.asarray(noise.scale) * ratio * math.exp(rng.normal(0.0, spread)))
        released = offsets + design.unit * design.matvec(truth.astype(np.float64)) + sample_noise(
            drawn, len(offsets), rng)
        if delta:
            released = np.round(released / delta) * delta
        simulated = amp_signs(design, released - offsets, std, prior=prior, iterations=ITERATIONS)
        features.append(log_odds(simulated))
        truths.append(truth)
    # P(y = 1) from AMP's signed log-odds (the module docstring: why neither a logistic nor |log-odds|).
    p = apply_map(*monotone_map(np.concatenate(features), np.concatenate(truths), BINS), log_odds(x))
    sure = np.maximum(p, 1.0 - p)
    # AMP can settle on a wrong fixed point the simulated decodes avoid (seen: 0.974 claimed, 0.855 right). Its
    # hard labels' residuals count the wrong ones: each adds c² to every query's residual variance beyond the
    # noise's (the probes' fit, independent of the decode, plus the rounding). Where they count more wrong labels
    # than the posteriors expect, the log-odds are tempered until the two agree.
    labels = (p > 0.5).astype(np.float64)
    residual = r - design.unit * design.matvec(labels)
    noise_var = float(np.mean(np.asarray(noise.std(), dtype=np.float64) ** 2)) + (delta or 0.0) ** 2 / 12
    wrong = max(float(np.mean(residual**2)) - noise_var, 0.0) / design.unit**2
    sure = temper(sure, wrong)
    return np.asarray(np.where(p > 0.5, sure, 1.0 - sure))


def temper(sure: np.ndarray, wrong: float) -> np.ndarray:
    """``sure`` (each in ``[0.5, 1]``) with its log-odds multiplied by the largest ``t ≤ 1`` that leaves at least
    ``wrong`` labels expected wrong (``Σ (1 − sure)``); unchanged when they expect that many already.

    >>> temper(np.array([0.99, 0.99]), 0.5).round(3).tolist(), temper(np.array([0.9, 0.6]), 0.1).tolist()
    ([0.75, 0.75], [0.9, 0.6])
    """
    sure = np.asarray(sure, dtype=np.float64)
    if float(np.sum(1.0 - sure)) >= wrong:
        return sure
    logit = log_odds(sure)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        t = 0.5 * (lo + hi)
        expected = float(np.sum(1.0 - 1.0 / (1.0 + np.exp(-t * logit))))
        lo, hi = (t, hi) if expected > wrong else (lo, t)
    return np.asarray(1.0 / (1.0 + np.exp(-lo * logit)))
