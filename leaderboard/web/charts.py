"""Server-side charts for the host pages: plain numbers laid out for an inline SVG template (no script, no CDN).

:func:`released_vs_raw` places each scored submission at (raw score, released score) on one split, on equal
axes, so the diagonal is "released = raw" and the distance from it is what the defense chain changed.

>>> chart = released_vs_raw([Point(1, "alice", 0.5, 0.5), Point(2, "bob", 0.7, 0.75)], split="public")
>>> [tick.label for tick in chart.ticks]
['0.4', '0.5', '0.6', '0.7', '0.8']
>>> chart.points[0].x == chart.x(0.5) and chart.points[1].y < chart.points[0].y  # higher scores sit higher
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

# Distinguishable on white and for the common colour-vision deficiencies (Okabe–Ito).
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442")


@dataclass(frozen=True)
class Point:
    """One scored submission: its id, who made it, and its raw and released scores on one split."""

    submission_id: int
    participant: str
    raw: float
    released: float


@dataclass(frozen=True)
class PlacedPoint:
    point: Point
    x: float
    y: float
    color: str


@dataclass(frozen=True)
class Tick:
    value: float
    label: str
    x: float  # where the value sits on the horizontal axis, in pixels
    y: float  # and on the vertical one


@dataclass(frozen=True)
class Legend:
    participant: str
    color: str


@dataclass
class ScatterChart:
    """Released (vertical) against raw (horizontal) on equal axes, in SVG pixel coordinates."""

    split: str
    lo: float
    hi: float
    width: int = 560
    height: int = 400
    left: int = 70
    right: int = 36
    top: int = 16
    bottom: int = 46
    points: list[PlacedPoint] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    legend: list[Legend] = field(default_factory=list)

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> int:
        return self.height - self.top - self.bottom

    @property
    def plot_right(self) -> int:
        return self.width - self.right

    @property
    def plot_bottom(self) -> int:
        return self.height - self.bottom

    def x(self, value: float) -> float:
        return round(self.left + (value - self.lo) / (self.hi - self.lo) * self.plot_width, 1)

    def y(self, value: float) -> float:
        return round(self.plot_bottom - (value - self.lo) / (self.hi - self.lo) * self.plot_height, 1)

    @property
    def diagonal(self) -> tuple[float, float, float, float]:
        """The line released = raw, corner to corner."""
        return self.x(self.lo), self.y(self.lo), self.x(self.hi), self.y(self.hi)


def nice_ticks(lo: float, hi: float, target: int = 6) -> tuple[float, float, list[tuple[float, str]]]:
    """Round tick values (steps of 1, 2 or 5 × 10^k) covering ``[lo, hi]``: the widened range and the ticks.

    >>> nice_ticks(0.61, 0.74)
    (0.6, 0.75, [(0.6, '0.6'), (0.65, '0.65'), (0.7, '0.7'), (0.75, '0.75')])
    """
    if not hi > lo:
        pad = abs(lo) * 0.01 or 0.01
        lo, hi = lo - pad, hi + pad
    raw_step = (hi - lo) / max(target - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw_step))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw_step)
    decimals = max(0, -math.floor(math.log10(step)))
    start, stop = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    values = [round(k * step, decimals + 1) for k in range(start, stop + 1)]
    labels = [f"{value:.{decimals}f}" for value in values]
    labels = [label.rstrip("0").rstrip(".") if "." in label else label for label in labels]
    ticks = [(value, "0" if label == "-0" else label) for value, label in zip(values, labels, strict=True)]
    return values[0], values[-1], ticks


def released_vs_raw(points: Sequence[Point], *, split: str) -> ScatterChart | None:
    """The chart of one split's scored submissions, or ``None`` when none has both a raw and a released score."""
    finite = [p for p in points if math.isfinite(p.raw) and math.isfinite(p.released)]
    if not finite:
        return None
    values = [p.raw for p in finite] + [p.released for p in finite]
    margin = (max(values) - min(values)) * 0.04  # no dot on the frame
    lo, hi, ticks = nice_ticks(min(values) - margin, max(values) + margin)
    chart = ScatterChart(split=split, lo=lo, hi=hi)
    participants = sorted({p.participant for p in finite})
    colors = {name: PALETTE[index % len(PALETTE)] for index, name in enumerate(participants)}
    chart.legend = [Legend(name, colors[name]) for name in participants]
    chart.ticks = [Tick(value, label, chart.x(value), chart.y(value)) for value, label in ticks]
    chart.points = [PlacedPoint(p, chart.x(p.raw), chart.y(p.released), colors[p.participant]) for p in finite]
    return chart
