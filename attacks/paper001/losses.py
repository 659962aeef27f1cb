"""The losses paper 001 attacks, as the attacker models them: each row's loss under every label, exactly (MPFR)
from the probabilities the server reads, and the inverse problem — the prediction row whose labels' losses
differ by chosen offsets.

Paper 001 (Aggarwal et al., *Reconstructing Test Labels from Noisy Loss Functions*, AISTATS 2022) §3 and
App. C: a binary loss is *g-linearly-decomposable* (Eq. 3) when a row scores ``g(θ)`` if its label is 1 and
``g(1 − θ)`` if it is 0. Every loss here has the K-class form ``loss_k(q) = H(q) + φ(q_k)`` — a part ``H``
that does not depend on the label and a *label term* ``φ`` of the true class's probability — and the binary
loss is that form on ``q = (1 − θ, θ)`` times ``binary_scale``:

================  ===========================  ============================  ==============  ==========
family            metric names                 φ(q)                          H(q)            binary ×
================  ===========================  ============================  ==============  ==========
cross-entropy     kl, binary/multiclass_logl.  −ln q                         ln Σ q          1
Itakura–Saito     itakura_saito                1/q + ln q − 1 (Eq. 8)        0               1
squared Euclid.   brier                        −2q (Eq. 10)                  1 + Σ q²        1/2
norm-like (α≥2)   norm_like                    −α·q^(α−1) (Eq. 11)           1 + (α−1)Σ q^α  1
================  ===========================  ============================  ==============  ==========

(KL of a one-hot label is the cross-entropy, App. C.1; the binary squared Euclidean loss is ``(θ − σ)²``,
half the K-class ``Σ_j (q_j − [j = σ])²``; the K-class Itakura–Saito loss keeps only the true class's term,
the others being ``0·ln 0 = 0`` as in the binary Eq. 8.) Since every φ is decreasing, a row whose class-0
probability is largest has offsets ``loss_k − loss_0 = scale·(φ(q_k) − φ(q_0)) ≥ 0``; Theorem 1's
``g(θ) − g(1 − θ)`` is the binary offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy.optimize import brentq

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.result import AttackFailed
from attacks.server_model import ServerModel

Big = Any  # an MPFR value

#: The metric names each family scores (``scoring.metrics`` names, DESIGN.md).
FAMILY_OF_METRIC = {
    "binary_logloss": "cross_entropy",
    "multiclass_logloss": "cross_entropy",
    "kl": "cross_entropy",
    "itakura_saito": "itakura_saito",
    "brier": "squared_euclidean",
    "norm_like": "norm_like",
}


@dataclass(frozen=True)
class LossFamily:
    """One loss of the table above. ``clipped``: the server clips probabilities to ``[eps, 1 − eps]`` (the
    losses that are infinite at 0); ``alpha`` is the norm-like loss's exponent."""

    name: str
    clipped: bool
    binary_scale: float = 1.0
    alpha: float = 2.0

    # --- the label term, in float64 (design) and MPFR (the exact offsets) ----------------------------------

    def phi(self, q: float) -> float:
        """φ(q) in float64, for designing rows."""
        if self.name == "cross_entropy":
            return -math.log(q)
        if self.name == "itakura_saito":
            return 1.0 / q + math.log(q) - 1.0
        if self.name == "squared_euclidean":
            return -2.0 * q
        return -self.alpha * q ** (self.alpha - 1.0)

    def phi_exact(self, q: Big) -> Big:
        """φ(q) in MPFR at the caller's precision."""
        if self.name == "cross_entropy":
            return -gmpy2.log(q)
        if self.name == "itakura_saito":
            return 1 / q + gmpy2.log(q) - 1
        if self.name == "squared_euclidean":
            return -2 * q
        return -mpfr(self.alpha) * q ** (mpfr(self.alpha) - 1)

    def h_exact(self, q: list[Big]) -> Big:
        """H(q), the label-independent part, in MPFR."""
        if self.name == "cross_entropy":
            return gmpy2.log(sum(q, mpfr(0)))
        if self.name == "itakura_saito":
            return mpfr(0)
        if self.name == "squared_euclidean":
            return 1 + sum((x * x for x in q), mpfr(0))
        a = mpfr(self.alpha)
        return 1 + (a - 1) * sum((x**a for x in q), mpfr(0))

    def magnitude(self, q: Big) -> Big:
        """The sum of the absolute values of φ(q)'s parts (what the server's roundings scale with)."""
        if self.name == "itakura_saito":
            return 1 / q + abs(gmpy2.log(q)) + 1
        return abs(self.phi_exact(q))

    # --- a row's losses ------------------------------------------------------------------------------------

    def row_losses(self, read: list[Big], *, binary: bool) -> tuple[Big, ...]:
        """``loss_k`` for every label k of a row whose probabilities the server reads as ``read`` (binary:
        ``[1 − θ, θ]``), exactly, at the caller's MPFR precision."""
        # The K-class forms read the renormalised row (the parser's and the log loss's rule); a binary row is
        # (1 − θ, θ), which sums to 1 exactly.
        total = sum(read, mpfr(0))
        q = read if binary else [x / total for x in read]
        h = self.h_exact(q) if self.name != "cross_entropy" else mpfr(0)
        scale = mpfr(self.binary_scale) if binary else mpfr(1)
        return tuple(scale * (h + self.phi_exact(x)) for x in q)

    def row_error(self, server: ServerModel, read: list[Big], *, binary: bool) -> Big:
        """Bound on the server's error in this row's loss under any label
        (:meth:`attacks.server_model.ServerModel.formula_row_error` of the loss's terms)."""
        total = sum(read, mpfr(0))
        q = read if binary else [x / total for x in read]
        h = abs(self.h_exact(q)) if self.name != "cross_entropy" else mpfr(0)
        terms = h + max(self.magnitude(x) for x in q) + len(q) + 2
        return server.formula_row_error(terms, None if binary else len(q))

    # --- designing a row -----------------------------------------------------------------------------------

    def lowest(self, eps: float) -> float:
        """The smallest probability a designed row uses: ``eps`` where the server clips, else 0."""
        return eps if self.clipped else 0.0

    def binary_offset(self, theta: float) -> float:
        """Theorem 1's ``g(θ) − g(1 − θ)`` in float64: the loss of label 1 minus that of label 0."""
        return self.binary_scale * (self.phi(theta) - self.phi(1.0 - theta))

    def design_binary(self, offset: float, eps: float) -> float | None:
        """Theorem 1, step (1): the θ ≤ 1/2 (a float64) with ``g(θ) − g(1 − θ) = offset > 0``, or ``None``
        when no prediction the server reads unclipped reaches it."""
        low = max(self.lowest(eps), 1e-300)
        if offset <= 0:
            return 0.5 if offset == 0 else None
        if self.binary_offset(low) < offset:
            return None
        # θ spans many decades for the unbounded losses: solve on ln θ
        theta = math.exp(brentq(lambda t: self.binary_offset(math.exp(t)) - offset, math.log(low), math.log(0.5),
                                xtol=1e-300, rtol=4 * 2.0**-52, maxiter=400))
        return max(theta, self.lowest(eps)) if self.clipped else theta

    def phi_inverse(self, y: float, low: float) -> float | None:
        """The q in ``[low, 1]`` with ``φ(q) = y`` (φ is decreasing), or ``None``."""
        if y > self.phi(max(low, 1e-300)) or y < self.phi(1.0):
            return None
        if self.name == "cross_entropy":
            return math.exp(-y)
        if self.name == "squared_euclidean":
            return -y / 2.0
        if self.name == "norm_like":
            return (-y / self.alpha) ** (1.0 / (self.alpha - 1.0))
        return max(_itakura_saito_inverse(y), low)

    def design_row(self, offsets: list[float], eps: float) -> list[float] | None:
        """A K-class row (floats summing to 1 up to rounding) whose label k scores ``offsets[k − 1]`` more than
        label 0 (offsets ≥ 0), or ``None`` when the loss cannot separate the labels that far: φ is solved for
        every class given ``q_0``, and ``q_0`` so that the row sums to 1."""
        k = len(offsets) + 1
        low = self.lowest(eps)

        def row(q0: float) -> list[float] | None:
            base = self.phi(q0)
            out = [q0]
            for d in offsets:
                q = self.phi_inverse(base + d, low)
                if q is None:
                    return None
                out.append(q)
            return out

        def excess(q0: float) -> float:
            # continuous and increasing in q0: a class whose offset φ cannot reach counts at the lowest q
            base = self.phi(q0)
            total = q0
            for d in offsets:
                q = self.phi_inverse(base + d, low)
                total += low if q is None else q
            return total - 1.0

        top = 1.0 - (k - 1) * low
        if excess(top) < 0:
            return None
        bottom = 1.0 / k
        q0 = bottom if excess(bottom) >= 0 else brentq(excess, bottom, top, xtol=1e-18, rtol=4 * 2.0**-52, maxiter=400)
        values = row(q0)
        return values if values is not None and abs(sum(values) - 1.0) < 1e-9 else None


def _itakura_saito_inverse(y: float) -> float:
    """The q in (0, 1] with ``1/q + ln q − 1 = y ≥ 0``: Newton on ``u = ln q``, where ``F(u) = e^−u + u − 1 − y``
    is convex and decreasing, so from a start left of the root (where F ≥ 0) the iterates rise monotonically
    to it. Start: ``q = 1 − √(2y)`` for small y (``φ(1 − e) = e²/2 + 2e³/3 + … ≥ y``), else
    ``q = 1/(2 + y + 2·ln(2 + y))``."""
    if y <= 0:
        return 1.0
    u = math.log1p(-math.sqrt(2.0 * y)) if y < 0.125 else -math.log(2.0 + y + 2.0 * math.log(2.0 + y))
    for _ in range(100):
        value = math.exp(-u) + u - 1.0 - y
        slope = 1.0 - math.exp(-u)
        if value <= 0 or slope >= 0:
            break
        step = -value / slope
        u += step
        if step <= 4e-16 * max(1.0, abs(u)):
            break
    return min(math.exp(u), 1.0)


def family_for(metric: str, *, alpha: float | None = None) -> LossFamily:
    """The loss family of a leaderboard metric; :class:`AttackFailed` for a metric paper 001's Bregman
    constructions do not cover (AUC, accuracy; softmax/sigmoid CE score logits and have attacks of their own).

    >>> family_for("itakura_saito").name, family_for("brier").binary_scale, family_for("norm_like:2.5").alpha
    ('itakura_saito', 0.5, 2.5)
    """
    base, _, parameter = metric.partition(":")
    name = FAMILY_OF_METRIC.get(base)
    if name is None:
        raise AttackFailed(
            f"paper 001's Bregman constructions need a linearly-decomposable loss ({', '.join(FAMILY_OF_METRIC)}), "
            f"not {metric!r}"
        )
    if name == "norm_like":
        alpha = alpha if alpha is not None else _metric_alpha(metric, parameter)
        if alpha is None:
            raise AttackFailed("the norm-like loss needs its exponent α (the leaderboard's alpha) to be known")
        if not alpha >= 2:
            raise AttackFailed(f"the norm-like divergence is defined for α ≥ 2, got α = {alpha}")
        return LossFamily(name, clipped=False, alpha=float(alpha))
    return LossFamily(name, clipped=name in ("cross_entropy", "itakura_saito"),
                      binary_scale=0.5 if name == "squared_euclidean" else 1.0)


def _metric_alpha(metric: str, parameter: str) -> float | None:
    """α of a norm-like leaderboard metric: the scoring core's own (``norm_like`` or ``norm_like:α``), else the
    number after the colon."""
    try:
        from scoring.metrics import get_metric

        value = getattr(get_metric(metric), "alpha", None)
        if value is not None:
            return float(value)
    except Exception:  # a scoring core without the metric (or its α): fall back to the name
        pass
    try:
        return float(parameter) if parameter else None
    except ValueError:
        return None


def exact_read(values: list[float], work_bits: int) -> list[Big]:
    """The floats as MPFR numbers (a float64 prediction is read exactly)."""
    with local_precision(work_bits):
        return [mpfr(v) for v in values]

