"""Probe groups whose every outcome decodes exactly from one rounded release (see :mod:`attacks.subset`).

A released mean over ``m`` scored rows pins ``T`` (the probe group's summed ``loss − ln 2``) to a window of
width ``W ≈ m·10^-decimals``. A row at ``p > 1/2`` contributes ``0`` (not scored), ``c0 = −ln(2(1−p)) > 0``
(label 0) or ``c1 = −ln(2p) ∈ (−ln 2, 0)`` (label 1): three states, one of them never further than ``ln 2`` from
"not scored". Two kinds of digits, lowest first:

* **ternary** rows (:func:`subset_design`): ``|c1| = ln(2p)`` just above the span ``L`` of everything below
  plus ``W`` (so are the gaps to ``c0 > |c1|``): each row triples the span; they stop while the whole ternary
  part stays below one count unit (next item). Each reveals its label whenever it is scored.
* **heavy** rows: ``c_big`` above all below (``p`` near 1 or near 0, alternating which label is heavy), so
  "scored with the heavy label" is read off exactly; their light states (``≈ −ln 2`` each) add up to a *count*
  of light rows, read off too (the ternary part fits inside one count unit). Heavy label: exact; light label:
  exact when the count says every non-heavy row of the group was scored (probability ``f^{J}`` or so).

Randomized response without subsetting has two states per row (:func:`binary_design`): logit gaps on a
Conway–Guy set, about ``log2(A/W) + 1`` rows per query, each row's (flipped) label read off exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attacks.capacity.design import conway_guy_set

LN2 = math.log(2.0)


@dataclass(frozen=True)
class SubsetDesign:
    """``ternary`` predictions (lowest digit first), then ``heavy`` magnitudes ``a`` (a heavy row is submitted at
    ``1 − e^-a/2`` or ``e^-a/2``), for a window ``width``."""

    width: float
    ternary: tuple[float, ...]
    heavy: tuple[float, ...]

    @property
    def rows(self) -> int:
        return len(self.ternary) + len(self.heavy)

    def expected_labels(self, fraction: float) -> float:
        """Labels one query is expected to reveal when each row is scored with probability ``fraction``."""
        j = len(self.heavy)
        # A heavy row: its heavy label (half the time) whenever scored; its light label when every row of the
        # group's heavy part was scored (then the count leaves no doubt).
        return fraction * len(self.ternary) + j * fraction * (0.5 + 0.5 * fraction ** max(j - 1, 0))

    def max_abs_sum(self) -> float:
        """The most ``|T|`` this design can produce (sizes the window's subset-size term)."""
        pos = sum(-math.log(2 * (1 - p)) for p in self.ternary) + sum(self.heavy)
        neg = sum(math.log(2 * p) for p in self.ternary) + LN2 * len(self.heavy)
        return max(pos, neg)


def _light(a: float) -> float:
    """``|light state|`` of a heavy row of magnitude ``a``: ``ln(2 − e^-a)`` (just under ln 2)."""
    return math.log(2.0 - math.exp(-a))


def subset_design(width: float, eps: float, *, margin: float = 0.1, fraction: float = 0.5,
                  heavy_floors: tuple[float, ...] = (3.0, 4.0, 5.0, 6.0, 8.0)) -> SubsetDesign:
    """The design with the most expected labels per query for window ``width`` (over the heavy rows' least
    magnitude: a smaller one fits more heavy rows, a larger one keeps their light states closer to ``ln 2``,
    which leaves more room to the ternary rows)."""
    best: SubsetDesign | None = None
    for floor in heavy_floors:
        design = _design(width, eps, margin, floor, fraction)
        if best is None or design.expected_labels(fraction) > best.expected_labels(fraction):
            best = design
    assert best is not None
    return best


def _design(width: float, eps: float, margin: float, floor: float, fraction: float = 0.5) -> SubsetDesign:
    """The best design whose heavy rows weigh at least ``floor``, over the number of heavy rows ``J``."""
    best = SubsetDesign(width, (), ())
    for j in range(0, 9):
        design = _design_with(width, eps, margin, floor, j)
        if design is not None and design.expected_labels(fraction) > best.expected_labels(fraction):
            best = design
    return best


def _design_with(width: float, eps: float, margin: float, floor: float, j: int) -> SubsetDesign | None:
    top = -math.log(2 * eps) * (1 - 1e-9)  # the largest heavy contribution (p = 1 − eps)
    # Every heavy row weighs at least ``floor``, so its light state is within ``spread`` of −ln 2: the light
    # rows' sum is a count in units of at least ``unit``, known to within the heavy rows' total spread.
    unit = _light(floor)
    spread = j * (LN2 - unit)
    room = unit * (1 - margin) - spread - width if j else math.inf
    ternary: list[float] = []
    low = 0.0  # span of the ternary digits placed so far
    while len(ternary) < 40:
        gap = (1 + margin) * (low + width + spread)
        if gap >= LN2:
            break
        p = math.exp(gap) / 2
        new = low + gap - math.log(2 * (1 - p))
        if new > room:
            break
        ternary.append(p)
        low = new
    # Heavy row k must stand above everything else any outcome can add: the ternary span, the heavy rows below
    # it at full weight, and the light states of *every* other heavy row (up to ln 2 each), plus the window.
    heavy: list[float] = []
    below = 0.0
    for _ in range(j):
        a = max(floor, (1 + margin) * (low + width + below + (j - 1) * LN2 + spread))
        if a > top:
            return None
        heavy.append(a)
        below += a
    return SubsetDesign(width, tuple(ternary), tuple(heavy))


def heavy_prediction(a: float, heavy_label: int) -> float:
    """The prediction whose ``heavy_label`` contributes ``+a`` (the other label ``≈ −ln 2``)."""
    tail = math.exp(-a) / 2
    return 1.0 - tail if heavy_label == 0 else tail


#: Conway–Guy groups at most this large (their elements are all of one size, so the decoder's work grows as 2^K).
CONWAY_GUY_MAX = 17


def binary_design(width: float, eps: float, *, margin: float = 0.1) -> tuple[float, ...]:
    """Predictions ``p_k > 1/2`` whose logit gaps ``|c0 − c1| = ln(p/(1−p))`` are a Conway–Guy set scaled by
    ``(1 + margin)·width`` (:func:`attacks.capacity.design.conway_guy_set`: distinct subset sums, one or two
    rows more than powers of two): every pair of (flipped) labelings of these rows releases scores more than
    a window apart, so one release gives every label."""
    top = math.log((1 - eps) / eps)
    unit = (1 + margin) * width
    size = 0
    while size < CONWAY_GUY_MAX and max(conway_guy_set(size + 1), default=0) * unit <= top:
        size += 1
    if size < CONWAY_GUY_MAX:
        return tuple(1.0 / (1.0 + math.exp(-unit * g)) for g in sorted(conway_guy_set(size)))
    # A fine release: superincreasing gaps (the exhaustive decoder prunes them at once, while Conway–Guy
    # elements are all of one size and would make it enumerate).
    out: list[float] = []
    span = 0.0
    while len(out) < 60:
        gap = (1 + margin) * (span + width)
        if gap > top:
            break
        out.append(1.0 / (1.0 + math.exp(-gap)))
        span += gap
    return tuple(out)
