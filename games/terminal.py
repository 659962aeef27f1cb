"""What a game prints on a terminal: a compact table (one row per data set and chain at the game's largest budget,
a few columns, at most 100 characters a line), the recommended chain, and the one line the demo ends with. The
full table, every column, goes to the report's ``summary.md`` (:func:`games.report.markdown_table`).

Every figure is the frontier's (:mod:`games.frontier`): the strongest attack within the largest budget with any of
the accounts tried, its labels right over the runs that finished, the leakage beyond the majority class and the
honest players' cost ``1 − τ``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from games.frontier import ChainPoint, Recommendation, attack_label, chain_points, recommend
from games.report import attack_lines
from games.runner import GameResult
from games.templating import percent

#: The widest line the terminal output prints (the compact table and the wrapped sentences).
WIDTH = 100
#: A chain that leaks at least this share of what the majority guess misses is the least bad, not a recommendation.
HALF_LEAKED = 0.5
_HEADERS = ("chain", "labels right", "majority", "leakage", "honest 1 − τ", "strongest attack")
_WIDTHS = (24, 12, 8, 7, 12)


def frontier_of(result: GameResult) -> tuple[list[ChainPoint], dict[str, Recommendation]]:
    """Every chain's point at the game's largest budget (game order) and the recommended chain per data set."""
    points = chain_points(result, attack_lines(result.cells))
    recommended = recommend(points, result.game.utility_tolerance)
    top = [p for p in points if p.budget == recommended[p.dataset].budget]
    return top, recommended


def _fit(value: str, width: int) -> str:
    return value if len(value) <= width else value[:width - 1] + "…"


def _budget(budget: int | None) -> str:
    return "with no cap on submissions" if budget is None else f"within {budget:,} submissions"


def _accounts(count: int) -> str:
    return "1 account" if count == 1 else f"up to {count:,} accounts"


def compact_table(points: Sequence[ChainPoint], recommended: dict[str, Recommendation]) -> str:
    """Per data set, a heading (its budget and accounts) and one row per chain: labels right, the majority class,
    leakage, honest cost and the strongest attack (or why every attack failed); the recommended chain marked ``*``.
    No line is wider than :data:`WIDTH`."""
    out: list[str] = []
    rest = WIDTH - sum(_WIDTHS) - 2 * len(_WIDTHS)
    for dataset, choice in recommended.items():
        mine = [p for p in points if p.dataset == dataset]
        tried = max((p.accounts_tried for p in mine), default=1)
        out.append(_fit(f"{dataset}, {_budget(choice.budget)}, {_accounts(tried)}:", WIDTH))
        cells = [*(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(_HEADERS, _WIDTHS,
                                                                                       strict=False))), _HEADERS[-1]]
        out.append("  ".join(cells).rstrip())
        for p in mine:
            chosen = choice.point is not None and choice.point.defense == p.defense
            name = _fit(("* " if chosen else "  ") + p.defense, _WIDTHS[0])
            if p.label_accuracy is None:
                right, attack = "failed", p.failure or "every attack failed"
            else:
                right, attack = percent(p.label_accuracy), attack_label(p.attack or "?", p.accounts)
            row = [name.ljust(_WIDTHS[0]), right.rjust(_WIDTHS[1]), percent(p.majority_rate).rjust(_WIDTHS[2]),
                   f"{p.leakage:.2f}".rjust(_WIDTHS[3]), f"{p.cost:.3f}".rjust(_WIDTHS[4]), _fit(attack, rest)]
            out.append("  ".join(row).rstrip())
    tolerance = next(iter(recommended.values())).tolerance if recommended else 0.05
    futile = any(c.point is not None and c.point.leakage >= 0.99 for c in recommended.values())
    out.extend(textwrap.wrap(
        f"* the frontier's pick: the least leaky chain within the honest-cost tolerance (1 − τ ≤ {tolerance}), the "
        "cheaper on a tie" + ("; where it leaks every label, no chain there protects them." if futile else "."),
        WIDTH, subsequent_indent="  "))
    return "\n".join(out) + "\n"


def recommendation_text(choice: Recommendation, tried: int) -> str:
    """One data set's recommended chain in a sentence, as what the library's attacks found (never "safe")."""
    where = f"{_budget(choice.budget)} and {_accounts(tried)}"
    p = choice.point
    if p is None:
        return (f"{choice.dataset}: no chain keeps the honest players' cost (1 − τ) within {choice.tolerance}; none "
                "is recommended.")
    read = (f"every attack failed ({p.failure})" if p.label_accuracy is None else
            f"{percent(p.label_accuracy)} of the labels right ({attack_label(p.attack or '?', p.accounts)}; the "
            f"majority class {percent(p.majority_rate)})")
    if p.leakage >= 0.99:
        return (f"{choice.dataset}: no chain within the honest-cost tolerance ({choice.tolerance}) protects the "
                f"labels {where}; the cheapest, `{p.defense}`, leaks {p.leakage:.2f}: {read}.")
    head = (f"recommended chain `{p.defense}`" if p.leakage < HALF_LEAKED else
            f"the least leaky chain within the honest-cost tolerance, `{p.defense}`, still leaks most labels")
    return (f"{choice.dataset}: {head} — leakage {p.leakage:.2f} {where}: {read}; honest cost 1 − τ = {p.cost:.3f}. "
            "What the library's attacks found: a lower bound on the leakage, not a limit on every attacker.")


def recommendation_lines(points: Sequence[ChainPoint], recommended: dict[str, Recommendation]) -> list[str]:
    """:func:`recommendation_text` per data set, wrapped at :data:`WIDTH`."""
    lines: list[str] = []
    for dataset, choice in recommended.items():
        tried = max((p.accounts_tried for p in points if p.dataset == dataset), default=1)
        lines.extend(textwrap.wrap(recommendation_text(choice, tried), WIDTH, subsequent_indent="  "))
    return lines


def _leaked(point: ChainPoint) -> str:
    if point.label_accuracy is None:
        return "every attack failed"
    if point.label_accuracy >= 1.0:
        return "every label"
    if point.leakage <= 0.0:
        return f"nothing beyond the majority class ({percent(point.majority_rate)})"
    return f"{percent(point.label_accuracy)} of the labels right (majority class {percent(point.majority_rate)})"


def leak_line(result: GameResult) -> str:
    """One line: what the game's strongest attacks read under which chain, per data set at its largest budget,
    chains that read alike grouped (e.g. "every label under none, rounding-5; nothing beyond the majority class
    (62.6 %) under ladder-fixed-0.01")."""
    points, recommended = frontier_of(result)
    parts = []
    for dataset, choice in recommended.items():
        groups: dict[str, list[str]] = {}
        mine = [p for p in points if p.dataset == dataset]
        for p in mine:
            groups.setdefault(_leaked(p), []).append(p.defense)
        tried = max((p.accounts_tried for p in mine), default=1)
        rows = next((c.n_rows for c in result.cells if c.dataset == dataset), None)
        size = f"{rows:,} hidden rows, " if rows else ""
        said = "; ".join(f"{what} under {', '.join(chains)}" for what, chains in groups.items())
        parts.append(f"{dataset} ({size}{_budget(choice.budget)}, {_accounts(tried)}): {said}")
    return f"What leaked in the {result.game.name} game: " + " | ".join(parts) + "."
