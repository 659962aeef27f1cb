"""One row's loss as a function of its label, for every metric the K-ary capacity construction runs on.

The lattice of :mod:`attacks.capacity.kary` needs three things of a metric: a prediction row whose labels'
losses differ by chosen offsets ``k_c·u`` (:meth:`RowLoss.design`), each label's loss of the floats actually
sent, exactly (:meth:`RowLoss.exact_losses`, 128 bits, read as the server reads them), and a bound on the
server's float64 error in that loss (:meth:`RowLoss.row_error`). Every loss here has paper 001's form
``loss_c(q) = scale·(H(q) + φ(q_c))`` (:mod:`attacks.paper001.losses`): log loss and ``kl`` (``φ = −ln q``),
``itakura_saito``, ``brier`` (``φ = −2q``), ``norm_like`` (``φ = −α·q^(α−1)``).

A row sums to 1, so not every offset vector is reachable: a row is found for offsets ``d ≥ 0`` with ``min d =
0`` by solving ``Σ_c φ⁻¹(t + d_c) = 1`` for the label term ``t`` of the lightest class (φ decreasing;
bisection, every row of a query at once). :attr:`RowLoss.max_real` is the largest ``A`` such that *every*
vector the lattice draws is reachable:

* log loss, ``kl``: ``−ln(K·eps)`` (no probability below ``eps``), the whole spread, any vector of the box;
* ``itakura_saito``: ``φ(e) − φ(1/(K−1))`` for the smallest probability ``e`` a row may use, any vector of the
  box; its float64 rounding (the loss is ``≈ 1/q``) sizes the lattice step instead of the released decimals;
* ``brier``, ``norm_like``: a row sums to 1, so its K label losses cannot all sit anywhere in the spread
  (Brier: offsets ``d`` are reachable iff ``K·max d − Σ d <= 2``). The cap is where a *top row* (one 0, the
  others in ``[¾A, A]``; ``[0.9·A, A]`` for the norm-like loss from K = 4 on) is still reached:
  ``A = 2/(K/4 + 1/2)`` for Brier (``1`` binary, the whole spread) — :meth:`RowLoss.with_spread_cap` finds it
  for either loss. Every other row is checked
  (:meth:`RowLoss.feasible`): a carried row's unused classes are lifted to its largest weight, a fill ladder
  ``0, P, …, (K−1)·P`` out of reach leaves its room to the top, a final row shares fewer values.

So the cap is the whole label spread for K = 2 and for the log losses, but shrinks with ``K`` for Brier
(``2/(K/4 + 1/2)`` of 2) and faster for the norm-like loss (only part of that is forced by the simplex:
:mod:`attacks.capacity.reachable_bound`): the capacity designs there lose ``log2`` of that ratio per
query against the K-ary bound, which assumes every row may spread its K losses over the whole ``A``
(``benchmarks/capacity_multiclass.py`` measures what is left).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.paper001.losses import LossFamily, family_for
from attacks.result import AttackFailed
from attacks.server_model import ServerModel

PRECISION_BITS = 128
LOG_LOSSES = ("binary_logloss", "multiclass_logloss", "kl")
#: The smallest probability an Itakura–Saito design row uses, beside the clipping: ``1/q`` must stay a
#: number whose float64 rounding the lattice step can absorb (see :func:`RowLoss.for_metric`).
IS_SMALLEST = 0.0
BISECTION_STEPS = 200
#: Brier and norm-like top rows (K >= 3) keep their non-zero weights in ``[0.75·V, V]``: a row is reached up to
#: a larger ``V`` the closer its weights are (measured at N = 306: Brier K = 10 2.0 → 2.3 labels a query,
#: norm-like K = 6 2.6 → 2.8, K = 10 1.3 → 1.6).
SPREAD_TOP_LOW = 0.75
#: The norm-like loss (α > 2) from K = 4 on keeps them in ``[0.9·V, V]``: its label term's inverse
#: ``(g/α)^(1/(α−1))`` is steep near 0, so a small gap below the top costs much probability and a narrower
#: band buys a larger ``V`` (``A`` 0.33 → 0.58 at K = 6, 0.12 → 0.24 at K = 10, α = 3); measured against
#: 0.75 in one run: N = 306, K = 6 2.8 → 3.0 labels a query, K = 10 1.5 → 1.7 (Brier gains nothing from
#: it, K = 3 neither; ``benchmarks/capacity_multiclass.py``).
NORM_LIKE_TOP_LOW = 0.9

Big = Any


@dataclass(frozen=True)
class RowLoss:
    """A metric's row model for the capacity lattice (see the module). ``family`` is ``None`` for the log
    losses (their exponential design and exact logarithms); ``spread`` is the metric's whole label spread (the
    counting bound's ``A``), ``max_real`` the box every weight vector is drawn from."""

    metric: str
    classes: int
    eps: float
    family: LossFamily | None
    max_real: float
    spread: float
    lowest: float = 0.0
    #: A top row's non-zero weights lie in ``[top_low·V, V]`` (:func:`attacks.capacity.kary.top_weights_k`).
    top_low: float = 0.5
    _free: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_metric(cls, metric: str, classes: int, eps: float) -> RowLoss:
        """The row model of ``metric`` on a ``classes``-class board; :class:`AttackFailed` for a metric the
        capacity construction does not cover."""
        k = int(classes)
        if metric in LOG_LOSSES:
            spread = math.log1p(-eps) - math.log(eps)
            box = min(spread, -math.log(k * eps)) - 1e-6
            return cls(metric, k, eps, None, box, spread)
        try:
            family = family_for(metric)
        except AttackFailed as exc:
            raise AttackFailed(
                f"the capacity attacks need a log-loss board or one of paper 001's Bregman losses (kl, "
                f"itakura_saito, brier, norm_like), not {metric!r}"
            ) from exc
        if family.name == "squared_euclidean":
            spread = 1.0 if k == 2 else 2.0
            return cls(metric, k, eps, family, spread, spread).with_spread_cap()
        if family.name == "norm_like":
            return cls(metric, k, eps, family, family.alpha, family.alpha).with_spread_cap()
        if family.name == "itakura_saito":
            low = max(eps, IS_SMALLEST) * 1.000001  # never clipped
            spread = 1.0 / eps + math.log(eps) - 1.0
            top = family.phi(0.5 if k == 2 else 1.0 / (k - 1))
            return cls(metric, k, eps, family, family.phi(low) - top, spread, lowest=low)
        raise AttackFailed(f"the capacity attacks do not model {metric!r}")

    def with_spread_cap(self, top_low: float | None = None) -> RowLoss:
        """The same model with :attr:`max_real` the largest ``A`` at which a top row (one class at 0, one at
        ``A``, the others at ``¾A``: the least reachable of ``[¾A, A]``) is reachable. Other rows are checked
        by :meth:`feasible` as they are planned. ``top_low`` overrides the band (``[top_low·V, V]``)."""
        k = self.classes
        top_low = self._spread_top_low() if top_low is None else top_low
        lo, hi = 0.0, self.spread
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            top = np.concatenate([[0.0, mid], np.full(k - 2, mid * top_low)])
            if self.feasible(top[None, :]).all():
                lo = mid
            else:
                hi = mid
        return RowLoss(self.metric, k, self.eps, self.family, lo * (1 - 1e-9), self.spread, self.lowest,
                       top_low=top_low)

    def _spread_top_low(self) -> float:
        """A top row's band ``[top_low·V, V]`` on a Brier or norm-like board (see the constants)."""
        if self.classes == 2:
            return 0.5  # every offset up to the spread is reached, and the wider [V/2, V] top carries more
        family = self.family
        if family is not None and family.name == "norm_like" and family.alpha > 2 and self.classes >= 4:
            return NORM_LIKE_TOP_LOW
        return SPREAD_TOP_LOW

    def feasible(self, d: np.ndarray) -> np.ndarray:
        """Per row of offsets ``d`` (``rows × K``, each row's least 0): whether a probability row reaches them.
        Brier and the norm-like loss: ``Σ_c φ⁻¹(φ(0) − max d + d_c) <= 1`` (the lightest class as small as the
        heaviest allows); every row for the log losses and Itakura–Saito within their box."""
        d = np.atleast_2d(np.asarray(d, dtype=np.float64))
        if self.family is None or self.family.name == "itakura_saito":
            return np.asarray(d.max(axis=1) <= self.max_real * (1 + 1e-9))
        scale = self.family.binary_scale if self.classes == 2 else 1.0
        d = d / scale
        t = -d.max(axis=1, keepdims=True)  # φ(0) = 0 for both
        return np.asarray(self._inverse(t + d).sum(axis=1) <= 1.0 - 1e-12)

    @property
    def is_log(self) -> bool:
        return self.family is None

    @property
    def clipped(self) -> bool:
        """The server clips this metric's probabilities to ``[eps, 1 − eps]``."""
        return self.family is None or self.family.clipped

    def phi_values(self, q: np.ndarray) -> np.ndarray:
        """The label term φ elementwise (float64; not for the log losses, which design in closed form)."""
        return self._phi(np.asarray(q, dtype=np.float64))

    def inverse_values(self, y: np.ndarray) -> np.ndarray:
        """φ⁻¹ elementwise (float64; clipped where φ cannot reach ``y``)."""
        return self._inverse(np.asarray(y, dtype=np.float64))

    # --- design ---------------------------------------------------------------------------------------------

    def design(self, ks: np.ndarray, unit: float) -> np.ndarray:
        """Prediction rows (``rows × K``, summing to 1) whose label ``c`` scores ``ks[:, c]·unit`` more than the
        row's lightest label (each row of ``ks`` has a 0)."""
        d = (ks - ks.min(axis=1, keepdims=True)).astype(np.float64) * unit  # offsets count from the lightest
        if self.family is None:
            e = np.exp(-d)
            return e / e.sum(axis=1, keepdims=True)
        scale = self.family.binary_scale if self.classes == 2 else 1.0
        d = d / scale
        # Bisection on the lightest class's probability q0 in [1/K, 1]: Σ_c φ⁻¹(φ(q0) + d_c) increases with it.
        lo = np.full(len(d), 1.0 / self.classes)
        hi = np.ones(len(d))
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            total = self._inverse(self._phi(mid)[:, None] + d).sum(axis=1)
            over = total > 1.0
            lo = np.where(over, lo, mid)
            hi = np.where(over, mid, hi)
            if np.all((np.abs(total - 1.0) <= 1e-15) | (hi - lo <= 2.3e-16)):
                break
        hi = self._phi(hi)
        q = self._inverse(hi[:, None] + d)
        # What is left to 1 goes to the lightest classes (offset 0, the largest probabilities): the heavy
        # classes' probabilities, whose losses are steep, stay as solved.
        light = d == 0
        q += light * ((1.0 - q.sum(axis=1, keepdims=True)) / light.sum(axis=1, keepdims=True))
        unreachable = self.family.name != "itakura_saito" and bool(np.any(hi[:, None] + d > 1e-12))
        if unreachable or np.any(q < self.lowest * 0.999) or np.any(~np.isfinite(q)):
            raise AttackFailed(f"the capacity design asked {self.metric} for offsets no prediction row reaches")
        return q

    def _phi(self, q: np.ndarray) -> np.ndarray:
        """φ elementwise (float64, for the design only)."""
        family = self.family
        assert family is not None
        if family.name == "squared_euclidean":
            return -2.0 * q
        if family.name == "norm_like":
            return -family.alpha * q ** (family.alpha - 1.0)
        return 1.0 / q + np.log(q) - 1.0

    def _inverse(self, y: np.ndarray) -> np.ndarray:
        """φ⁻¹ elementwise (0 where φ cannot reach ``y``: the sum then undershoots, and the bisection moves)."""
        family = self.family
        assert family is not None
        if family.name == "squared_euclidean":
            return np.clip(-y / 2.0, 0.0, None)
        if family.name == "norm_like":
            return np.clip(-y / family.alpha, 0.0, None) ** (1.0 / (family.alpha - 1.0))
        # Itakura–Saito: Newton on u = ln q for e^-u + u − 1 = y (convex, decreasing; from the left it rises).
        y = np.maximum(y, 0.0)
        u = np.where(y < 0.125, np.log1p(-np.sqrt(2.0 * np.minimum(y, 0.125))),
                     -np.log(2.0 + y + 2.0 * np.log(2.0 + y)))
        for _ in range(80):
            value = np.exp(-u) + u - 1.0 - y
            slope = 1.0 - np.exp(-u)
            step = np.where((value > 0) & (slope < 0), -value / np.where(slope < 0, slope, -1.0), 0.0)
            u = u + step
            if np.all(np.abs(step) <= 4e-16 * np.maximum(1.0, np.abs(u))):
                break
        return np.minimum(np.exp(u), 1.0)

    # --- exact losses and the server's error ----------------------------------------------------------------

    def exact_losses(self, row: Any) -> list[Big]:
        """Every label's loss (128 bits) of one row as the server reads the floats sent (a 2-class row is the
        uploaded ``p``, read as ``(1 − p, p)``; clipped to ``[eps, 1 − eps]`` where the metric clips)."""
        with local_precision(PRECISION_BITS):
            if np.ndim(row) == 0:
                values = [mpfr(1) - mpfr(float(row)), mpfr(float(row))]
                binary = True
            else:
                values = [mpfr(float(v)) for v in row]
                binary = len(values) == 2 and self.classes == 2
            if self.family is None or self.family.clipped:
                lo, hi = mpfr(self.eps), 1 - mpfr(self.eps)
                values = [min(max(v, lo), hi) for v in values]
            if self.family is None:
                total = sum(values, mpfr(0))
                return [gmpy2.log(total) - gmpy2.log(v) for v in values]
            return list(self.family.row_losses(values, binary=binary or self.classes == 2))

    def row_error(self, server: ServerModel, row: Any, losses: list[Big]) -> Big:
        """Bound on the server's float64 error in this row's loss under any label."""
        classes = None if self.classes == 2 and (np.ndim(row) == 0 or self.family is not None) else self.classes
        if self.family is None:
            return server.row_error(float(max(losses)), classes)
        with local_precision(PRECISION_BITS):
            values = [mpfr(1) - mpfr(float(row)), mpfr(float(row))] if np.ndim(row) == 0 else [
                mpfr(float(v)) for v in row]
            return self.family.row_error(server, values, binary=self.classes == 2)

    def free_row(self) -> np.ndarray:
        return np.full(self.classes, 1.0 / self.classes)

    def free_loss(self) -> Big:
        """The exact loss (128 bits) of a row at ``1/K``, the same under every label."""
        return max(self.exact_losses(0.5 if self.classes == 2 else self.free_row()))

    def free(self, server: ServerModel) -> tuple[Big, Big]:
        """The loss of a row at ``1/K`` (the same under every label) and the server's error bound on it."""
        key = "free"
        if key not in self._free:
            row: Any = 0.5 if self.classes == 2 else self.free_row()
            losses = self.exact_losses(row)
            self._free[key] = (max(losses), self.row_error(server, row, losses))
        return self._free[key]  # type: ignore[no-any-return]
