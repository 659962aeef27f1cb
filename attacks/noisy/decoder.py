"""Decoders for labels seen through a noisy linear channel: ``r_q = Σ_i W[q, i] y_i + n_q``, ``y ∈ {0,1}^N``.

This is what a binary log-loss leaderboard releases under additive noise: each submission is an affine function
of the labels (weights ``−z_i/N`` from the submitted logits, an offset the attacker knows) plus the defense's
noise. :class:`NoiseModel` holds the fitted noise (Laplace, Gaussian, or multiplicative, i.e. Gaussian-like with
a per-query scale); :func:`amp` is approximate message passing with the Bayes-optimal denoiser for the binary
prior (Donoho, Maleki & Montanari 2009; Bayati & Montanari 2011), which decodes dense random designs with fewer
queries than labels; :func:`refine` finishes by maximum likelihood under the noise model itself (Laplace
residuals, not squared ones), flipping one label at a time, and returns each label's posterior given the rest.
:func:`brute_force` is the exact maximum-likelihood/posterior decoder for small ``N`` the tests compare with.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from attacks.noisy.design import SignDesign


@dataclass(frozen=True)
class NoiseModel:
    """The released noise: ``kind`` is ``"laplace"`` (scale ``b``), ``"gaussian"`` (std) or ``"uniform"``
    (half-width; a multiplicative ``U[−α, α]`` at a known score level); ``scale`` per query (broadcastable)."""

    kind: str
    scale: np.ndarray | float

    def std(self) -> np.ndarray:
        s = np.asarray(self.scale, dtype=np.float64)
        return s * {"laplace": math.sqrt(2), "gaussian": 1.0, "uniform": 1 / math.sqrt(3)}[self.kind]

    def loglik(self, residual: np.ndarray) -> np.ndarray:
        """Log-density of ``residual`` (elementwise, up to a constant per query). The uniform model is scored
        as a Gaussian of the same std: its hard edges would make one bad estimate of α fatal."""
        s = np.asarray(self.scale, dtype=np.float64)
        if self.kind == "laplace":
            return -np.abs(residual) / s
        sd = self.std()
        return -0.5 * (residual / sd) ** 2


def _sigmoid(t: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * t))


def amp(
    weights: np.ndarray, r: np.ndarray, noise_std: np.ndarray | float, *, prior: float = 0.5, iterations: int = 60,
    damping: float = 0.3,
) -> np.ndarray:
    """Posterior means of ``y`` by AMP with the Bernoulli(``prior``) denoiser.

    ``weights`` (M×N) should be dense with entries of one magnitude and random signs (the design of
    :mod:`attacks.noisy.attack`); rows are whitened by ``noise_std`` first, so a per-query noise scale is fine.
    """
    w = np.asarray(weights, dtype=np.float64)
    m, n = w.shape
    std = np.broadcast_to(np.asarray(noise_std, dtype=np.float64), (m,))
    ref = float(np.median(std))
    w = w * (ref / std)[:, None]
    r = np.asarray(r, dtype=np.float64) * (ref / std)
    unit = float(np.sqrt((w**2).sum() / n))  # column norm
    f = w / unit
    y = r / unit
    logit_prior = math.log(prior / (1 - prior))
    x = np.full(n, prior)
    z = y - f @ x
    tau2 = float(z @ z) / m
    for _ in range(iterations):
        tau2 = max(float(z @ z) / m, 1e-30)
        rhat = x + f.T @ z
        x_new = _sigmoid((rhat - 0.5) / tau2 + logit_prior)
        v_new = x_new * (1 - x_new)
        x_new = damping * x + (1 - damping) * x_new
        z = y - f @ x_new + (n / m) * float(v_new.mean()) / tau2 * z
        if np.max(np.abs(x_new - x)) < 1e-9:
            x = x_new
            break
        x = x_new
    return np.asarray(x)


def refine(
    weights: np.ndarray, r: np.ndarray, noise: NoiseModel, start: np.ndarray, *, prior: float = 0.5,
    max_flips: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Coordinate ascent on the log-posterior from ``start`` (0/1): flip the label whose flip gains most, until
    none gains. Returns the labels and each label's posterior probability given all the others."""
    w = np.asarray(weights, dtype=np.float64)
    y = np.asarray(start, dtype=np.int64).copy()
    residual = np.asarray(r, dtype=np.float64) - w @ y
    scale = np.asarray(noise.scale, dtype=np.float64)
    logit_prior = math.log(prior / (1 - prior))
    limit = max_flips if max_flips is not None else 4 * len(y)
    gains = np.zeros(len(y))
    for _ in range(limit + 1):
        direction = 1 - 2 * y  # +1 turns a 0 into 1
        base = noise.loglik(residual).sum()
        shifted = residual[:, None] - w * direction[None, :]
        noise_cols = NoiseModel(noise.kind, scale[:, None] if scale.ndim else scale)
        gains = noise_cols.loglik(shifted).sum(axis=0) - base + direction * logit_prior
        best = int(np.argmax(gains))
        if gains[best] <= 1e-12:
            break
        residual = residual - w[:, best] * direction[best]
        y[best] ^= 1
    confidence = _sigmoid(-np.clip(gains, -700, 700))  # P(current label | rest) = 1 / (1 + e^gain)
    return y, confidence


def brute_force(
    weights: np.ndarray, r: np.ndarray, noise: NoiseModel, *, prior: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Exact MAP labeling and exact marginal posteriors P(y_i = 1 | r) over all ``2^N`` labelings (small N)."""
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[1]
    cands = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
    ones = cands.sum(axis=1)
    logpost = noise.loglik(np.asarray(r)[None, :] - cands @ w.T).sum(axis=1)
    logpost += ones * math.log(prior) + (n - ones) * math.log(1 - prior)
    post = np.exp(logpost - logpost.max())
    post /= post.sum()
    return cands[int(np.argmax(logpost))], post @ cands


def amp_signs(
    design: SignDesign, r: np.ndarray, noise_std: np.ndarray | float, *, prior: float = 0.5, iterations: int = 60,
    damping: float = 0.3, start: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`amp` for the weights ``c·S`` of a :class:`~attacks.noisy.design.SignDesign`, without ever forming
    the matrix: each iteration is one ``S x`` and one ``Sᵀ z`` over the stored blocks. ``start`` warm-starts the
    posterior means (the previous decoding's, when queries were added)."""
    return amp_signs_noise(design, r, noise_std, prior=prior, iterations=iterations, damping=damping,
                           start=start)[0]


def amp_signs_noise(
    design: SignDesign, r: np.ndarray, noise_std: np.ndarray | float, *, prior: float = 0.5, iterations: int = 60,
    damping: float = 0.3, start: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """:func:`amp_signs`'s posterior means and ``κ²``, the noise's variance over ``noise_std²`` that the decode
    implies: AMP's effective variance ``τ²`` is the whitened noise plus ``N/M`` times the labels' mean squared
    error, which the denoiser's own variances ``x(1 − x)`` estimate, so the noise is what is left. Hundreds of
    design queries weigh it, against the couple of dozen probes ``noise_std`` was fitted on."""
    m, n = len(design), design.n
    std = np.broadcast_to(np.asarray(noise_std, dtype=np.float64), (m,))
    ref = float(np.median(std))
    row = ref / std  # whitening, as in amp
    unit = design.unit * math.sqrt(float(np.sum(row**2)))  # column norm of the whitened weights
    a = design.unit * row / unit  # f = diag(a)·S
    y = np.asarray(r, dtype=np.float64) * row / unit
    logit_prior = math.log(prior / (1 - prior))
    x = np.full(n, prior) if start is None else np.clip(np.asarray(start, dtype=np.float64), 1e-6, 1 - 1e-6)
    z = y - design.matvec(x, a)
    for _ in range(iterations):
        tau2 = max(float(z @ z) / m, 1e-30)
        rhat = x + design.rmatvec(z, a)
        x_new = _sigmoid((rhat - 0.5) / tau2 + logit_prior)
        v_new = x_new * (1 - x_new)
        x_new = damping * x + (1 - damping) * x_new
        z = y - design.matvec(x_new, a) + (n / m) * float(v_new.mean()) / tau2 * z
        if np.max(np.abs(x_new - x)) < 1e-9:
            x = x_new
            break
        x = x_new
    tau2 = float(z @ z) / m if m else 0.0
    mse = float(np.mean(x * (1 - x))) if n else 0.0
    # y = r·(ref/std)/unit: a noise κ times ``noise_std`` has variance κ²·ref²/unit² there, which is τ² − (N/M)·mse.
    return np.asarray(x), max(tau2 - (n / max(m, 1)) * mse, 0.0) * unit**2 / ref**2


def sign_gains(
    design: SignDesign, residual: np.ndarray, noise: NoiseModel, labels: np.ndarray, prior: float
) -> np.ndarray:
    """Each label's log-posterior gain from flipping it, the others fixed, with one ``Sᵀ`` product.

    Flipping label ``i`` moves residual ``q`` by ``−c·s_qi·d_i`` (``d_i = 1 − 2y_i``), one of two values per
    query: with ``g±(q) = ℓ(res_q ∓ c) − ℓ(res_q)`` the gain is ``Σ_q (g⁺+g⁻)/2 + d_i·(Sᵀ (g⁺−g⁻)/2)_i`` plus the
    prior's term, whatever the log-density ``ℓ`` (Laplace's is not quadratic, so no closed form otherwise)."""
    c = design.unit
    base = noise.loglik(residual)
    g_plus = noise.loglik(residual - c) - base
    g_minus = noise.loglik(residual + c) - base
    d = 1 - 2 * np.asarray(labels, dtype=np.float64)
    logit_prior = math.log(prior / (1 - prior))
    return float(np.sum(g_plus + g_minus)) / 2 + d * design.rmatvec((g_plus - g_minus) / 2) + d * logit_prior


def refine_signs(
    design: SignDesign, r: np.ndarray, noise: NoiseModel, start: np.ndarray, *, prior: float = 0.5,
    rounds: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`refine` for a :class:`~attacks.noisy.design.SignDesign` at scale: each round computes every gain
    with :func:`sign_gains` and flips all labels that gain, keeping the flips only if the log-posterior rose
    (else it flips the best one alone, which always gains). Returns the labels and each one's posterior given
    the rest."""
    y = np.asarray(start, dtype=np.int64).copy()
    r = np.asarray(r, dtype=np.float64)
    residual = r - design.unit * design.matvec(y.astype(np.float64))
    logit_prior = math.log(prior / (1 - prior))

    def objective(res: np.ndarray, labels: np.ndarray) -> float:
        return float(noise.loglik(res).sum()) + float(labels.sum()) * logit_prior

    gains = sign_gains(design, residual, noise, y, prior)
    for _ in range(rounds):
        flip = np.flatnonzero(gains > 1e-12)
        if len(flip) == 0:
            break
        current = objective(residual, y)
        if len(flip) > 1:
            trial = y.copy()
            trial[flip] ^= 1
            res_trial = r - design.unit * design.matvec(trial.astype(np.float64))
            if objective(res_trial, trial) > current:
                y, residual = trial, res_trial
                gains = sign_gains(design, residual, noise, y, prior)
                continue
        best = int(np.argmax(gains))
        residual = residual - design.unit * design.column(best) * (1 - 2 * y[best])
        y[best] ^= 1
        gains = sign_gains(design, residual, noise, y, prior)
    confidence = _sigmoid(-np.clip(gains, -700, 700))
    return y, confidence
