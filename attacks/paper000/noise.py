"""Random noise reduced to a bound τ (paper 000, App. B.4, Theorems 9–10): a noise distribution and a failure
probability δ give a τ that every query's noise stays under with probability at least 1 − δ overall.

The per-query tail is ``δ / queries`` (a union bound), so the whole attack succeeds with probability 1 − δ.
``tail="quantile"`` uses the distribution's exact quantile (the construction in the proof of Theorem 9);
``tail="subexponential"`` uses Theorem 10's bound ``τ = 2(λ + ν)·sqrt(ln(2/δ))`` for subE(λ², ν) noise, with
Laplace(b) ∈ subE((2b)², 2b) and N(0, σ²) ∈ subE(σ², 0).
"""

from __future__ import annotations

import math

from scipy.special import erfcinv

NOISE_KINDS = ("bounded", "laplace", "gaussian")


def tau_for_noise(kind: str, scale: float, *, delta: float = 0.05, queries: int = 1, tail: str = "quantile") -> float:
    """The bound τ on ``|noise|`` that holds for all ``queries`` with probability at least ``1 − delta``.

    >>> round(tau_for_noise("laplace", 0.01, delta=0.05), 5)  # b·ln(1/δ)
    0.02996
    >>> tau_for_noise("bounded", 0.1)
    0.1
    >>> round(tau_for_noise("gaussian", 1.0, delta=0.05), 3)  # the two-sided 95 % quantile
    1.96
    """
    if scale < 0 or not math.isfinite(scale):
        raise ValueError(f"the noise scale must be a finite number ≥ 0, got {scale!r}")
    if kind == "bounded":
        return float(scale)
    if kind not in NOISE_KINDS:
        raise ValueError(f"unknown noise kind {kind!r}; use one of {', '.join(NOISE_KINDS)} or 'multiplicative'")
    if not 0 < delta < 1:
        raise ValueError(f"the failure probability delta must be in (0, 1), got {delta!r}")
    per_query = delta / max(queries, 1)
    if tail == "quantile":
        if kind == "laplace":
            return float(scale * math.log(1 / per_query))
        return float(scale * math.sqrt(2) * erfcinv(per_query))
    if tail == "subexponential":
        lam, nu = (2 * scale, 2 * scale) if kind == "laplace" else (scale, 0.0)
        return float(2 * (lam + nu) * math.sqrt(math.log(2 / per_query)))
    raise ValueError(f"unknown tail bound {tail!r}; use 'quantile' or 'subexponential'")
