"""The camouflage attack's cover: an honest-looking base vector, its per-row losses, and the honest-looking moves
of the rows that carry no code (issue 10, item 1; paper 001 §5 calls such vectors "benign looking").

Without labels the attacker cannot fit a real model, but it can submit what a model on uninformative features
would output: a logistic regression on random features, ``b_i = σ(z_i)`` with ``z = X·w`` rescaled to a
spread of ``scale`` and squashed into ``±LOGIT_CAP``. Every value is distinct, nothing sits at 1/2, and no value
has prime odds or a geometric log-odds structure: none of ``probe_detector``'s per-submission signals fire.

The squash keeps ``d(b) = ln((1−b)/b)`` within ``±LOGIT_CAP``, so every code row can still move its ``d`` by
``A − LOGIT_CAP`` (``A = ln((1−eps)/eps)``) towards the clipping edge: the lattice loses
``log2(A / (A − LOGIT_CAP))`` ≈ 0.18 bits per query against the capacity attack's rows at 1/2.
"""

from __future__ import annotations

import math

import numpy as np

LOGIT_CAP = 4.0
#: numpy's float64 logarithms are within 4 ulp (attacks.server_model.LOG_ULPS); one ulp of x is <= 2^-52·|x|.
LOG_RELATIVE_ERROR = 4 * 2.0**-52


def honest_base(n_rows: int, rng: np.random.Generator, *, features: int = 8, scale: float = 1.5) -> np.ndarray:
    """``σ(X·w)`` for ``n_rows`` random feature rows (standard normal ``X``, ``features`` columns, random ``w``),
    the logits rescaled to standard deviation ``scale`` and squashed into ``±LOGIT_CAP`` (``tanh``: no ties).

    >>> b = honest_base(1000, np.random.default_rng(0))
    >>> len(np.unique(b)) == 1000, bool((b > 0.017).all() and (b < 0.983).all())
    (True, True)
    """
    x = rng.standard_normal((n_rows, features))
    z = x @ rng.standard_normal(features)
    z = (z - z.mean()) / max(float(z.std()), 1e-12) * scale
    z = LOGIT_CAP * np.tanh(z / LOGIT_CAP)  # within ±LOGIT_CAP without the ties a clip would make
    return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)


def row_losses(p: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-row log loss if the label is 0 and if it is 1, as the server computes them (clipped at ``eps``)."""
    q = np.clip(p, eps, 1.0 - eps)
    return -np.log1p(-q), -np.log(q)


def fsum_with_error(terms: np.ndarray, magnitude: np.ndarray) -> tuple[float, float]:
    """``math.fsum`` of ``terms`` and a bound on its distance from the exact sum of what the terms stand for:
    each term is a difference of float64 logarithms whose absolute values add up to ``magnitude`` (each log
    within 4 ulp), and ``fsum`` rounds once."""
    total = math.fsum(terms.tolist())
    error = LOG_RELATIVE_ERROR * float(np.sum(magnitude)) * (1 + 1e-9) + 2.0**-52 * abs(total) + 1e-300
    return total, error


def logit(p: np.ndarray) -> np.ndarray:
    return np.asarray(np.log(p) - np.log1p(-p), dtype=np.float64)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)
