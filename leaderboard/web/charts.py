"""Server-side charts for the host pages: plain numbers laid out for an inline SVG template (no script, no CDN).

:func:`released_minus_raw` draws what the defense chain did to each scored submission on one split: released -
raw (vertical; zero means "released unchanged") against the submission's place in time (horizontal, oldest
first), on a scale set by the differences themselves, so noise of 1e-3 fills the plot instead of vanishing beside
scores of 0 to 25. Each participant is a series of its own colour (no colour shared among the shown series);
beyond :data:`PALETTE`'s colours the participants with the fewest points share one grey "others" series.

>>> chart = released_minus_raw([Point(1, "alice", 0.5, 0.5004), Point(2, "bob", 0.7, 0.6997)], split="public")
>>> [tick.label for tick in chart.y_ticks]
['-0.0004', '-0.0002', '0', '0.0002', '0.0004', '0.0006']
>>> chart.points[0].y < chart.zero_y < chart.points[1].y  # released above raw sits above the zero line
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Distinguishable on white and for the common colour-vision deficiencies (Okabe–Ito).
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442")
#: The series of the participants beyond the palette's colours (:func:`released_minus_raw`): a grey no series shares.
OTHERS_COLOR = "#9a9a9a"
OTHERS = "others"


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


class PlotFrame:
    """The plot area inside a chart's margins; the charts below are dataclasses carrying ``width``, ``height``,
    ``left``, ``right``, ``top`` and ``bottom``."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int

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


@dataclass
class DifferenceChart(PlotFrame):
    """Released - raw (vertical, ``lo`` to ``hi``, zero included) against the submission's place in time
    (horizontal, 1 to ``count``, oldest first), in SVG pixel coordinates."""

    split: str
    count: int
    lo: float
    hi: float
    width: int = 560
    height: int = 360
    left: int = 78
    right: int = 20
    top: int = 20
    bottom: int = 46
    points: list[PlacedPoint] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    legend: list[Legend] = field(default_factory=list)
    #: The largest |released - raw| drawn, and how many submissions were released unchanged.
    largest: float = 0.0
    unchanged: int = 0

    def x(self, position: float) -> float:
        offset = (position - 1) / (self.count - 1) if self.count > 1 else 0.5
        return round(self.left + offset * self.plot_width, 1)

    def y(self, value: float) -> float:
        return round(self.plot_bottom - (value - self.lo) / (self.hi - self.lo) * self.plot_height, 1)

    @property
    def zero_y(self) -> float:
        return self.y(0.0)


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


def integer_ticks(count: int, target: int = 6) -> list[int]:
    """Whole positions 1..``count`` at a round step (1, 2 or 5 × 10^k), starting at 1.

    >>> integer_ticks(3), integer_ticks(47)
    ([1, 2, 3], [1, 10, 20, 30, 40])
    """
    raw_step = max(count / target, 1.0)
    magnitude = 10 ** math.floor(math.log10(raw_step))
    step = next(int(m * magnitude) for m in (1, 2, 5, 10) if m * magnitude >= raw_step)
    return [1] + [k for k in range(step, count + 1, step) if k != 1]


def series_colors(participants: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each participant's series name and colour (``participants`` most points first): every participant its own
    colour while the palette lasts; beyond it the palette's last colour is given up and the tail shares one grey
    series, :data:`OTHERS`.

    >>> series = series_colors([f"p{k:02}" for k in range(15)])
    >>> len({color for name, color in series.values()}), series["p06"], series["p07"]
    (8, ('p06', '#000000'), ('others', '#9a9a9a'))
    """
    if len(participants) <= len(PALETTE):
        return {name: (name, PALETTE[index]) for index, name in enumerate(participants)}
    shown = len(PALETTE) - 1
    named = {name: (name, PALETTE[index]) for index, name in enumerate(participants[:shown])}
    return {**named, **{name: (OTHERS, OTHERS_COLOR) for name in participants[shown:]}}


def released_minus_raw(points: Sequence[Point], *, split: str) -> DifferenceChart | None:
    """The chart of one split's scored submissions, or ``None`` when none has both a raw and a released score."""
    finite = sorted((p for p in points if math.isfinite(p.raw) and math.isfinite(p.released)),
                    key=lambda p: p.submission_id)
    if not finite:
        return None
    differences = [p.released - p.raw for p in finite]
    largest = max(abs(d) for d in differences)
    if largest == 0.0:  # nothing changed: every dot on the zero line
        lo, hi, ticks = -1.0, 1.0, [(-1.0, "-1"), (0.0, "0"), (1.0, "1")]
    else:
        margin = largest * 0.06  # no dot on the frame
        lo, hi, ticks = nice_ticks(min(0.0, min(differences)) - margin, max(0.0, max(differences)) + margin)
    chart = DifferenceChart(split=split, count=len(finite), lo=lo, hi=hi, largest=largest,
                            unchanged=sum(d == 0.0 for d in differences))
    counts: dict[str, int] = {}
    for p in finite:
        counts[p.participant] = counts.get(p.participant, 0) + 1
    series = series_colors(sorted(counts, key=lambda name: (-counts[name], name)))
    tail = sum(name == OTHERS and color == OTHERS_COLOR for name, color in series.values())
    chart.legend = [Legend(f"{OTHERS} ({tail} participants)" if color == OTHERS_COLOR else name, color)
                    for name, color in dict(series.values()).items()]
    chart.y_ticks = [Tick(value, label, chart.left, chart.y(value)) for value, label in ticks]
    chart.x_ticks = [Tick(k, f"{k:,}", chart.x(k), chart.plot_bottom) for k in integer_ticks(len(finite))]
    chart.points = [PlacedPoint(p, chart.x(k), chart.y(d), series[p.participant][1])
                    for k, (p, d) in enumerate(zip(finite, differences, strict=True), 1)]
    return chart


@dataclass(frozen=True)
class CurvePoint:
    """One run: measured ``accuracy`` at ``y``; ``best``, at ``best_y``, is the attack's best run within ``budget``
    (an attacker can stop early), which the line follows."""

    x: float
    y: float
    budget: int
    accuracy: float
    played: str
    best: float = 0.0
    best_y: float = 0.0
    best_budget: int = 0

    @property
    def below_best(self) -> bool:
        """This run read less than a run at a smaller budget."""
        return self.accuracy < self.best


@dataclass(frozen=True)
class Series:
    """One attack's curve: an SVG polyline through the best within each budget, and its measured points."""

    attack: str
    color: str
    points: list[CurvePoint]
    #: Earlier series are drawn wider, so curves that coincide (every attack at the majority rate) stay visible
    #: as nested bands of their colours.
    width: float = 2.0

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x},{p.best_y}" for p in self.points)

    @property
    def falls(self) -> bool:
        return any(p.below_best for p in self.points)


@dataclass
class AccuracyChart(PlotFrame):
    """Label accuracy (vertical, 0 to 100 %) against submissions (horizontal, logarithmic: the budgets halve)
    on one split, one line per attack; the quota a vertical line, the majority-class rate a horizontal one."""

    split: str
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float = 1.0
    width: int = 560
    height: int = 360
    left: int = 56
    right: int = 20
    top: int = 16
    bottom: int = 46
    series: list[Series] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    quota: int | None = None
    quota_x: float | None = None
    majority: float | None = None
    majority_y: float | None = None

    def x(self, budget: float) -> float:
        span = math.log(self.x_hi) - math.log(self.x_lo)
        return round(self.left + (math.log(budget) - math.log(self.x_lo)) / span * self.plot_width, 1)

    def y(self, accuracy: float) -> float:
        return round(self.plot_bottom - (accuracy - self.y_lo) / (self.y_hi - self.y_lo) * self.plot_height, 1)


def accuracy_vs_submissions(
    curves: Sequence[dict[str, Any]], *, split: str, quota: int | None, majority: float | None
) -> AccuracyChart | None:
    """The chart of one split from an audit result's ``curves`` (points with ``budget``, ``status`` and the
    split's accuracy), or ``None`` when no point has an accuracy on that split. The line follows the attack's best
    run on the split within each budget (an attacker can stop early: every budget is a fresh run, and a larger one
    may play a plan that reads less); a run that read less is a point below the line.

    >>> curves = [{"attack": "auto", "points": [{"budget": 10, "status": "ok", "public": 0.5, "played": "x"},
    ...                                         {"budget": 40, "status": "ok", "public": 1.0, "played": "x"}]}]
    >>> chart = accuracy_vs_submissions(curves, split="public", quota=20, majority=0.5)
    >>> chart.series[0].points[0].x == chart.left and chart.series[0].points[1].x == chart.plot_right
    True
    >>> chart.x(10) < chart.quota_x < chart.x(40) and chart.majority_y == chart.y(0.5)
    True
    >>> curves[0]["points"][1]["public"] = 0.4  # the larger budget read less: the line holds at the best within it
    >>> [(p.accuracy, p.best, p.below_best) for p in accuracy_vs_submissions(curves, split="public", quota=None,
    ...                                                                      majority=None).series[0].points]
    [(0.5, 0.5, False), (0.4, 0.5, True)]
    """
    series: list[tuple[str, list[tuple[int, float, str]]]] = []
    for curve in curves:
        points = [(int(p["budget"]), float(p[split]), str(p.get("played", ""))) for p in curve["points"]
                  if p.get("status") == "ok" and p.get(split) is not None]
        if points:
            series.append((str(curve["attack"]), points))
    if not series:
        return None
    budgets = [b for _, points in series for b, _, _ in points]
    x_lo, x_hi = float(min(budgets)), float(max(budgets))
    if x_hi <= x_lo:
        x_lo, x_hi = max(1.0, x_lo / 2), x_hi * 2
    lowest = min([a for _, points in series for _, a, _ in points] + ([majority] if majority is not None else []))
    y_lo = max(0.0, math.floor((lowest - 0.05) * 10) / 10)
    chart = AccuracyChart(split=split, x_lo=float(x_lo), x_hi=float(x_hi), y_lo=y_lo)
    for index, (attack, points) in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        placed = []
        best: tuple[int, float] | None = None
        for b, a, played in points:
            if best is None or a > best[1]:
                best = (b, a)
            placed.append(CurvePoint(chart.x(b), chart.y(a), b, a, played, best[1], chart.y(best[1]), best[0]))
        chart.series.append(Series(attack, color, placed, width=max(1.5, 5.0 - 1.5 * index)))
    for budget in sorted(set(budgets)):  # a label too close to the previous one would overprint it
        if not chart.x_ticks or chart.x(budget) - chart.x_ticks[-1].x >= 34:
            chart.x_ticks.append(Tick(budget, f"{budget:,}", chart.x(budget), chart.plot_bottom))
    steps = round((1.0 - y_lo) / 0.1)
    chart.y_ticks = [Tick(v, f"{100 * v:.0f} %", chart.left, chart.y(v))
                     for v in (round(y_lo + 0.1 * k, 1) for k in range(steps + 1))]
    if quota is not None:
        chart.quota = quota
        if x_lo <= quota <= x_hi:
            chart.quota_x = chart.x(quota)
    if majority is not None:
        chart.majority = majority
        chart.majority_y = chart.y(majority)
    return chart
