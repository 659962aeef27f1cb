"""Class shares read through noise: the posterior probability that a row is of each class, given the shares the
constant probes released (:mod:`attacks.balance`) and the release noise the fingerprint saw.

A share read from a constant probe is ``(released − v_off) / (v_on − v_off)``: under noise of standard deviation
``σ`` on the released mean it is off by ``σ / |v_on − v_off|`` (one standard error), and it is clipped to
``[0, 1]``. Taken at face value a share read under noise claims what the noise does not show — a softmax CE board
with 3 classes under noise 1.31 on the mean read ``[0, 0, 1]`` and every row was labelled class 2 at confidence
1.0, right on 13 of 40. A row of the board is of class ``c`` with probability ``E[π_c | readings]``: the shares
``π`` drawn from a flat Dirichlet prior, each reading a Gaussian draw around its share (a clipped reading: the
probability of a draw beyond the clip), the mean taken by importance sampling from the prior (seeded, so the
same readings give the same posterior). With no noise the readings are the shares; with much noise the posterior
is the prior's ``1/K``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from scoring import get_metric

#: Draws from the prior the posterior mean is taken over.
DRAWS = 40_000
#: Standard errors below this leave the readings as they are.
FINE = 1e-3
#: The constant probe's value on the class it favours (as :data:`attacks.balance.PROBE_VALUE`).
PROBE_VALUE = 0.7


def _probe(n_classes: int, favoured: int) -> np.ndarray:
    if n_classes == 2:
        return np.array([PROBE_VALUE, PROBE_VALUE] if favoured == 1 else [1 - PROBE_VALUE] * 2)
    row = np.full(n_classes, (1.0 - PROBE_VALUE) / (n_classes - 1))
    row[favoured] = PROBE_VALUE
    return np.tile(row, (2, 1))


def share_errors(metric: str, eps: float, n_classes: int, spread: float) -> np.ndarray | None:
    """The standard error of each share reading (binary: class 1's; K classes: classes ``0 … K−2``) under release
    noise ``spread`` on the mean; ``None`` when the metric is no mean of row values.

    >>> share_errors("accuracy", 1e-15, 2, 0.01).round(4).tolist()
    [0.01]
    """
    rows = get_metric(metric).row_values
    if rows is None:
        return None
    favoured = [1] if n_classes == 2 else list(range(n_classes - 1))
    errors = []
    for j in favoured:
        other = (j + 1) % n_classes
        with np.errstate(all="ignore"):
            on, off = (float(v) for v in rows(_probe(n_classes, j), np.array([j, other]), eps))
        gap = abs(on - off)
        errors.append(float(spread) / gap if np.isfinite(gap) and gap > 1e-12 else math.inf)
    return np.asarray(errors)


def share_posterior(
    rates: Sequence[float] | np.ndarray, errors: Sequence[float] | np.ndarray | None, *, seed: int = 0,
    uncertain_scale: bool = True,
) -> np.ndarray:
    """``P(a row is of class c)`` for every class, given the measured shares ``rates`` (summing to 1, as
    :func:`attacks.balance.rates_from_shares` gives them) read with standard errors ``errors`` (module docstring);
    ``rates`` themselves where the errors are ``None`` or all zero. ``uncertain_scale``: the errors come from a
    noise scale measured by a single spread (the fingerprint's), so they are mixed over that measurement's
    uncertainty; ``False``: the errors are known.

    >>> share_posterior([0.0, 0.0, 1.0], [13.0, 13.0]).round(1).tolist()
    [0.3, 0.3, 0.3]
    >>> share_posterior([0.3, 0.7], [0.0]).tolist()
    [0.3, 0.7]
    >>> bool(abs(share_posterior([0.3, 0.7], [0.01], uncertain_scale=False)[1] - 0.7) < 0.01)
    True
    """
    rates = np.asarray(rates, dtype=np.float64)
    k = len(rates)
    if errors is None:
        return rates
    se = np.asarray(errors, dtype=np.float64)
    if not np.any(se > 0) or float(np.max(se)) < FINE:
        return rates  # the readings are the shares (the draws could not resolve them finer anyway)
    read = [1] if k == 2 else list(range(k - 1))
    rng = np.random.default_rng(seed)
    draws = rng.dirichlet(np.ones(k), DRAWS)
    # The noise's scale is itself a measurement, from a probe or two: given one spread d (Jeffreys prior on the
    # scale), scale/d is distributed as 1/u with u ~ Exp(1), heavy on the side of more noise. Each prior draw
    # carries its own scale (a scale mixture), so a spread that came out small by chance is not trusted as certain.
    widen = 1.0 / np.maximum(rng.exponential(1.0, DRAWS), 1e-12) if uncertain_scale else np.ones(DRAWS)
    log_w = np.zeros(DRAWS)
    for j, s0 in zip(read, se, strict=False):
        if not s0 > 0 or not math.isfinite(s0):
            continue
        s = s0 * widen
        x, pi = float(rates[j]), draws[:, j]
        if x <= 1e-9:  # clipped at 0: the raw reading fell at or below 0
            log_w += _log_cdf(-pi / s)
        elif x >= 1 - 1e-9:  # clipped at 1
            log_w += _log_cdf((pi - 1.0) / s)
        else:
            log_w += -0.5 * ((x - pi) / s) ** 2 - np.log(s)
    w = np.exp(log_w - log_w.max())
    posterior = (w[:, None] * draws).sum(axis=0) / w.sum()
    return np.asarray(posterior / posterior.sum())


def _log_cdf(z: np.ndarray) -> np.ndarray:
    """``ln Φ(z)``, accurate far in the lower tail."""
    from scipy.special import log_ndtr

    return np.asarray(log_ndtr(z))
