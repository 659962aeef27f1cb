"""The frontier chart as SVG drawn on the server (``games/templates/frontier.svg``; no script, no CDN): one panel
per data set, x = honest-utility cost, y = leakage, one column of points per chain (one point per budget,
darker for larger budgets, a few pixels apart so equal values stay visible), each budget's Pareto frontier as
a step line, frontier points filled, the recommended chain ringed, the utility tolerance dashed. Every point sits
at its chain's true cost; chains that share a spot share one label ("1, 2, 5").

This module only computes the geometry (pixels, colours, texts); the template draws it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from games.frontier import ChainPoint, Recommendation
from games.templating import templates

WIDTH = 1100
PANEL_HEIGHT = 430
LEFT, RIGHT_LEGEND, TOP, BOTTOM = 72, 250, 64, 56
NEAR = 10  # px: chains whose top points are closer than this share one label
LEVEL_SHIFT = 6  # px between one chain's budgets, so equal values stay visible
#: Light to dark: a larger budget is a stronger attacker.
PALETTE = ("#9ecae1", "#4292c6", "#08306b", "#6a51a3", "#cb181d")


@dataclass
class Marker:
    x: float
    y: float
    color: str
    on_frontier: bool
    tip: str


@dataclass
class Column:
    number: int
    defense: str
    x: float
    top: float
    bottom: float
    markers: list[Marker]
    recommended: bool


@dataclass
class Label:
    x: float
    y: float
    text: str


@dataclass
class Panel:
    dataset: str
    offset: float
    columns: list[Column]
    labels: list[Label]
    steps: list[dict[str, Any]]  # {"color", "points": "x,y x,y ..."}
    x_ticks: list[dict[str, Any]]
    y_ticks: list[dict[str, Any]]
    tolerance_x: float | None
    legend: list[dict[str, Any]]
    recommended: str
    plot: dict[str, float] = field(default_factory=dict)


def level_colors(levels: Sequence[int | None]) -> dict[int | None, str]:
    """One colour per budget level, light (small budget) to dark (large)."""
    if len(levels) == 1:
        return {levels[0]: PALETTE[2]}
    if len(levels) <= 3:
        return {level: PALETTE[3 - len(levels) + i] for i, level in enumerate(levels)}
    return {level: PALETTE[i % len(PALETTE)] for i, level in enumerate(levels)}


def nice_step(span: float, ticks: int = 5) -> float:
    """A 1-2-5 tick step that puts about ``ticks`` ticks on ``span``.

    >>> nice_step(1.0), nice_step(0.12), nice_step(0.7)
    (0.2, 0.05, 0.2)
    """
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def _budget_text(level: int | None) -> str:
    return "no cap" if level is None else f"{level:,} submissions"


def panels(
    points: Sequence[ChainPoint], recommended: dict[str, Recommendation], tolerance: float
) -> list[Panel]:
    """The geometry of every data set's panel."""
    out: list[Panel] = []
    for index, dataset in enumerate(dict.fromkeys(p.dataset for p in points)):
        out.append(_panel(dataset, [p for p in points if p.dataset == dataset], recommended.get(dataset),
                          tolerance, offset=index * PANEL_HEIGHT))
    return out


def _panel(
    dataset: str, points: list[ChainPoint], choice: Recommendation | None, tolerance: float, *, offset: float
) -> Panel:
    levels = list(dict.fromkeys(p.budget for p in points))
    colors = level_colors(levels)
    defenses = list(dict.fromkeys(p.defense for p in points))
    cost = {p.defense: p.cost for p in points}
    x0, x1 = LEFT, WIDTH - RIGHT_LEGEND
    y0, y1 = offset + TOP, offset + PANEL_HEIGHT - BOTTOM
    top_cost = max([*cost.values(), min(tolerance, 1.0), 0.05])
    step = nice_step(top_cost)
    x_max = step * math.ceil(top_cost * 1.04 / step)

    def sx(value: float) -> float:
        return x0 + 24 + (x1 - x0 - 48) * value / x_max

    def sy(value: float) -> float:
        return y1 - (y1 - y0) * value

    position = {d: sx(cost[d]) for d in defenses}
    chosen = None if choice is None or choice.point is None else choice.point.defense
    columns = []
    for number, defense in enumerate(defenses, start=1):
        mine = [p for p in points if p.defense == defense]
        shift = {level: (i - (len(levels) - 1) / 2) * LEVEL_SHIFT for i, level in enumerate(levels)}
        markers = [Marker(position[defense] + shift[p.budget], sy(p.leakage), colors[p.budget], p.on_frontier, _tip(p))
                   for p in mine]
        ys = [m.y for m in markers]
        columns.append(Column(number, defense, position[defense], min(ys), max(ys), markers, defense == chosen))
    labels: list[Label] = []
    for column in columns:  # chains whose top points (nearly) coincide share one label
        near = [label for label in labels if abs(label.x - column.x) < NEAR and abs(label.y - column.top) < NEAR]
        if near:
            near[0].text += f", {column.number}"
        else:
            labels.append(Label(column.x, column.top, str(column.number)))
    steps = []
    for level in levels:
        front = sorted((p for p in points if p.budget == level and p.on_frontier),
                       key=lambda p: (position[p.defense], p.leakage))
        coords: list[tuple[float, float]] = []
        offset_x = (levels.index(level) - (len(levels) - 1) / 2) * LEVEL_SHIFT
        for p in front:
            x, y = position[p.defense] + offset_x, sy(p.leakage)
            if coords:
                coords.append((x, coords[-1][1]))
            coords.append((x, y))
        steps.append({"color": colors[level], "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in coords),
                      "label": _budget_text(level)})
    x_ticks = [{"x": sx(i * step), "text": f"{i * step:.3g}"} for i in range(round(x_max / step) + 1)]
    y_ticks = [{"y": sy(v / 4), "text": f"{25 * v} %"} for v in range(5)]
    legend = [{"color": colors[level], "text": f"budget {_budget_text(level)}"} for level in levels]
    return Panel(
        dataset=dataset, offset=offset, columns=columns, labels=labels, steps=steps, x_ticks=x_ticks, y_ticks=y_ticks,
        tolerance_x=sx(tolerance) if tolerance <= x_max else None, legend=legend,
        recommended=chosen or "none within the tolerance",
        plot={"x0": x0, "x1": x1, "y0": y0, "y1": y1, "legend_x": x1 + 20},
    )


def _tip(point: ChainPoint) -> str:
    """A point's figures in words (its tooltip)."""
    accounts = "" if point.accounts == 1 else f" with {point.accounts:,} accounts"
    strongest = (f"{point.attack}{accounts}, {100 * point.label_accuracy:.1f} % right"
                 if point.attack and point.label_accuracy is not None
                 else f"every attack {point.failure or 'failed'}")
    tried = "one account" if point.accounts_tried == 1 else f"up to {point.accounts_tried:,} accounts"
    return (f"{point.defense} at {_budget_text(point.budget)}, {tried}: leakage {point.leakage:.3f} ({strongest}); "
            f"honest cost {point.cost:.3f}")


def frontier_svg(
    points: Sequence[ChainPoint], recommended: dict[str, Recommendation], tolerance: float, *, title: str
) -> str:
    """The chart as one standalone SVG document (also inlined in the HTML report)."""
    drawn = panels(points, recommended, tolerance)
    return templates().get_template("frontier.svg").render(
        title=title, panels=drawn, width=WIDTH, height=PANEL_HEIGHT * max(1, len(drawn)), tolerance=tolerance,
    )
