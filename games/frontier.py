"""The game's answer: per data set and attacker budget, what leaks through each defense chain against what the
chain costs honest players, the Pareto frontier of the two, and the chain to recommend.

For one data set, chain and budget level ``B``:

* **leakage** — the strongest attack allowed ``B`` submissions (every attack whose cell budget is at most
  ``B``; one played without a cap counts only when the game has no budgets) with any of the account counts the
  game tried (the worst case over them: an attacker with more accounts can do what one with fewer does), its
  mean label accuracy over the runs that finished, as the share of what the majority guess misses that the
  attacker got right:
  ``(accuracy − majority rate) / (1 − majority rate)``, clipped at 0. 0: no better than predicting the majority
  class, which one constant submission reveals; 1: every label. A chain every attack failed against leaks 0.
* **honest-utility cost** — ``1 − Kendall τ`` between the released public ranking of the honest models and
  their true private ranking (:mod:`games.utility`), mean over seeds; 0: the ranking is kept, 2: reversed; a
  ranking that cannot be compared (every score withheld) costs 1. It does not depend on the budget.
* **frontier** — the chains no other chain beats on both (cost ≤, leakage ≤, one of them <).
* **recommended** — at the game's largest budget, among the chains whose cost is within the game's
  ``utility_tolerance``, the one with the least leakage (ties: the lower cost, then game order). It lies on
  the frontier, since any chain dominating it would be within the tolerance and leak less. What leaks through it
  is what *our* attacks found with the accounts tried (``ChainPoint.accounts_tried``): a lower bound on what an
  attacker can read, never a limit on all attackers; the information bound (:mod:`games.bounds`) beside it says
  how much the releases could carry.
* **per account count** (:func:`accounts_cells`) — at the largest budget, for each account count ``k`` tried,
  the strongest attack with at most ``k`` accounts, beside the information bound for ``k`` accounts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from games.bounds import Bound, widest_bound

if TYPE_CHECKING:
    from games.runner import GameResult


@dataclass(frozen=True)
class AttackLine:
    """One attack against one chain on one data set, over its seeds, as the report shows it
    (:func:`games.report.attack_lines`): accuracy and exact recovery are means over the cells that ran to the end
    (``None`` when every cell failed), never a 0 standing in for a failure."""

    dataset: str
    defense: str
    attack: str
    cells: int
    ok: int
    label_accuracy: float | None
    exact_recovery_rate: float | None
    queries: float | None
    seconds: float | None
    public_rank: float | None
    private_rank: float | None
    n_participants: int
    failure: str  # the first failed cell's reason, "" when none failed
    budget: int | None = None  # the cells' cap on submissions (None: no cap)
    accounts: int = 1
    majority_rate: float | None = None  # accuracy of predicting the majority class on every row
    exact_fraction: float | None = None  # share of labels vouched for exactly (and right), over finished runs

    @property
    def failed(self) -> int:
        return self.cells - self.ok


@dataclass(frozen=True)
class ChainPoint:
    """One chain on one data set at one budget level: its leakage (the strongest attack within the budget) and
    its honest-utility cost, and whether it is on that level's frontier."""

    dataset: str
    defense: str
    budget: int | None
    cost: float
    leakage: float
    kendall_tau: float | None
    best_wins_rate: float | None
    mean_abs_error: float | None
    majority_rate: float | None
    label_accuracy: float | None  # the strongest attack's; None when every attack failed (or none ran)
    exact_fraction: float | None  # share of labels it vouched for exactly and got right
    attack: str | None
    attack_budget: int | None
    queries: float | None
    on_frontier: bool = False
    accounts: int = 1  # the strongest attack's accounts
    accounts_tried: int = 1  # the most accounts of an attack that finished against this chain within the budget
    failure: str = ""  # when every attack failed: the first one's reason

    def as_dict(self) -> dict[str, Any]:
        return {key: _rounded(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class AccountsCell:
    """One chain on one data set at one budget with at most ``accounts`` accounts: the strongest attack that
    finished (``attack`` ``None``: every one failed, ``failure`` says why) and the information bound beside it
    (``bound`` ``None`` where :mod:`attacks.information` has no model for the chain, or without a budget)."""

    dataset: str
    defense: str
    budget: int | None
    accounts: int
    label_accuracy: float | None
    majority_rate: float | None
    leakage: float
    exact_fraction: float | None
    attack: str | None
    attack_accounts: int | None
    failure: str
    bound: Bound | None

    def as_dict(self) -> dict[str, Any]:
        data = {key: _rounded(value) for key, value in asdict(self).items() if key != "bound"}
        data["bound"] = None if self.bound is None else self.bound.as_dict()
        return data


@dataclass(frozen=True)
class Recommendation:
    """The recommended chain of one data set (``point`` ``None`` when no chain is within the tolerance)."""

    dataset: str
    budget: int | None
    tolerance: float
    point: ChainPoint | None

    def as_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "budget": self.budget, "tolerance": self.tolerance,
                "defense": None if self.point is None else self.point.defense,
                "point": None if self.point is None else self.point.as_dict()}


def leakage(accuracy: float | None, majority: float | None) -> float:
    """Labels leaked beyond the majority guess: ``(accuracy − majority) / (1 − majority)``, clipped to [0, 1].

    >>> round(leakage(0.8, 0.6), 6), leakage(0.55, 0.6), leakage(None, 0.6), leakage(1.0, 1.0)
    (0.5, 0.0, 0.0, 0.0)
    """
    if accuracy is None or majority is None or majority >= 1.0:
        return 0.0
    return min(1.0, max(0.0, (accuracy - majority) / (1.0 - majority)))


def utility_cost(kendall_tau: float | None) -> float:
    """``1 − τ``; a ranking that could not be compared (τ undefined) costs 1.

    >>> utility_cost(1.0), utility_cost(0.75), utility_cost(None)
    (0.0, 0.25, 1.0)
    """
    return 1.0 if kendall_tau is None or not math.isfinite(kendall_tau) else 1.0 - kendall_tau


def pareto(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Which (cost, leakage) points no other point dominates (both ≤, one <): lower is better on both.

    >>> pareto([(0.0, 1.0), (0.1, 0.5), (0.2, 0.5), (0.3, 0.0), (0.0, 1.0)])
    [True, True, False, True, True]
    """
    return [
        not any(c <= cost and v <= leak and (c < cost or v < leak) for c, v in points)
        for cost, leak in points
    ]


def counts_at(line_budget: int | None, level: int | None) -> bool:
    """Whether an attack played at ``line_budget`` is within an attacker budget ``level`` (``None``: no cap)."""
    if level is None:
        return True
    return line_budget is not None and line_budget <= level


def strength(line: AttackLine) -> tuple[float, float, float, float]:
    """Which attack leaks most: the higher accuracy, then the more runs finished, then the fewer queries, then
    the fewer accounts."""
    return (line.label_accuracy or 0.0, line.ok / line.cells, -(line.queries or 0.0), -line.accounts)


def attack_label(attack: str, accounts: int) -> str:
    """An attack as the report names it: ``auto``, or ``auto (30 accounts)``.

    >>> attack_label("auto", 1), attack_label("auto", 1000)
    ('auto', 'auto (1,000 accounts)')
    """
    return attack if accounts == 1 else f"{attack} ({accounts:,} accounts)"


def failure_of(lines: Sequence[AttackLine]) -> str:
    """Why nothing finished: the first failed line's reason, as "failed (reason)" (``""`` when a line finished)."""
    if any(line.label_accuracy is not None for line in lines):
        return ""
    reason = next((line.failure for line in lines if line.failure), "")
    reason = reason.split(": ", 1)[1] if reason.startswith(("failed: ", "error: ")) else reason
    return f"failed ({reason or 'no attack ran'})"


def _mean(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return sum(present) / len(present) if present else None


def chain_points(result: GameResult, lines: Sequence[AttackLine]) -> list[ChainPoint]:
    """Every (data set, budget level, chain) point, in that order (chains in game order), frontier marked."""
    levels = result.game.levels
    per_seed: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for cell in result.cells:
        per_seed.setdefault((cell.dataset, cell.defense), {})[cell.seed] = cell.utility.row()
    points: list[ChainPoint] = []
    datasets = list(dict.fromkeys(c.dataset for c in result.cells))
    defenses = list(dict.fromkeys(c.defense for c in result.cells))
    for dataset in datasets:
        for level in levels:
            row: list[ChainPoint] = []
            for defense in defenses:
                seeds = per_seed.get((dataset, defense))
                if seeds is None:
                    continue
                tau = _mean([r["honest_kendall_tau"] for r in seeds.values()])
                counted = [line for line in lines if (line.dataset, line.defense) == (dataset, defense)
                           and counts_at(line.budget, level)]
                ran = [line for line in counted if line.label_accuracy is not None]
                strongest = max(ran, key=strength, default=None)
                majority = _mean([line.majority_rate for line in lines
                                  if (line.dataset, line.defense) == (dataset, defense)])
                accuracy = None if strongest is None else strongest.label_accuracy
                row.append(ChainPoint(
                    dataset=dataset, defense=defense, budget=level, cost=utility_cost(tau),
                    leakage=leakage(accuracy, majority), kendall_tau=tau,
                    best_wins_rate=_mean([r["honest_best_wins"] for r in seeds.values()]),
                    mean_abs_error=_mean([r["honest_mean_abs_error"] for r in seeds.values()]),
                    majority_rate=majority, label_accuracy=accuracy,
                    exact_fraction=None if strongest is None else strongest.exact_fraction,
                    attack=None if strongest is None else strongest.attack,
                    attack_budget=None if strongest is None else strongest.budget,
                    queries=None if strongest is None else strongest.queries,
                    accounts=1 if strongest is None else strongest.accounts,
                    accounts_tried=max((line.accounts for line in ran), default=1),
                    failure=failure_of(counted),
                ))
            marks = pareto([(p.cost, p.leakage) for p in row])
            points.extend(replace(p, on_frontier=on) for p, on in zip(row, marks, strict=True))
    return points


def accounts_cells(result: GameResult, lines: Sequence[AttackLine]) -> list[AccountsCell]:
    """Per data set, chain and account count tried (in that order), at the game's largest budget: the strongest
    attack with at most that many accounts that finished, beside the information bound for that many accounts
    (:func:`games.bounds.information_bound`)."""
    spec = result.game
    top = _top_level(spec.levels)
    chains = {d.name: d.chain for d in spec.defenses}
    scored: dict[tuple[str, str], list[list[int]]] = {}
    for cell in result.cells:
        scored.setdefault((cell.dataset, cell.defense), []).append(cell.scored_classes)
    n_rows = {cell.dataset: cell.n_rows for cell in result.cells}
    out: list[AccountsCell] = []
    for dataset in dict.fromkeys(c.dataset for c in result.cells):
        for defense in dict.fromkeys(c.defense for c in result.cells if c.dataset == dataset):
            mine = [line for line in lines if (line.dataset, line.defense) == (dataset, defense)
                    and counts_at(line.budget, top)]
            majority = _mean([line.majority_rate for line in lines if (line.dataset, line.defense) == (dataset,
                                                                                                     defense)])
            for k in spec.account_levels:
                counted = [line for line in mine if line.accounts <= k]
                strongest = max((line for line in counted if line.label_accuracy is not None), key=strength,
                                default=None)
                accuracy = None if strongest is None else strongest.label_accuracy
                out.append(AccountsCell(
                    dataset=dataset, defense=defense, budget=top, accounts=k, label_accuracy=accuracy,
                    majority_rate=majority, leakage=leakage(accuracy, majority),
                    exact_fraction=None if strongest is None else strongest.exact_fraction,
                    attack=None if strongest is None else strongest.attack,
                    attack_accounts=None if strongest is None else strongest.accounts,
                    failure=failure_of(counted),
                    bound=widest_bound(spec, chains.get(defense, []), scored_classes=scored[(dataset, defense)],
                                       budget=top, accounts=k, n_rows=n_rows[dataset]),
                ))
    return out


def recommend(points: Sequence[ChainPoint], tolerance: float) -> dict[str, Recommendation]:
    """Per data set, at its largest budget level: the least leaky chain whose cost is within ``tolerance``
    (ties: the lower cost, then the earlier chain)."""
    out: dict[str, Recommendation] = {}
    for dataset in dict.fromkeys(p.dataset for p in points):
        mine = [p for p in points if p.dataset == dataset]
        top = _top_level([p.budget for p in mine])
        at_top = [p for p in mine if p.budget == top]
        within = [(p.leakage, p.cost, index, p) for index, p in enumerate(at_top) if p.cost <= tolerance + 1e-12]
        best = min(within, key=lambda item: item[:3])[3] if within else None
        out[dataset] = Recommendation(dataset, top, tolerance, best)
    return out


def _top_level(levels: Sequence[int | None]) -> int | None:
    """The strongest attacker's budget: no cap beats any cap, else the largest."""
    if any(level is None for level in levels):
        return None
    return max(level for level in levels if level is not None)


def frontier_document(result: GameResult, lines: Sequence[AttackLine]) -> dict[str, Any]:
    """``frontier.json``: the definitions, every point and the recommended chain per data set."""
    points = chain_points(result, lines)
    recommended = recommend(points, result.game.utility_tolerance)
    return {
        "game": result.game.name,
        "budgets": result.game.levels,
        "accounts": result.game.account_levels,
        "utility_tolerance": result.game.utility_tolerance,
        "definitions": {
            "leakage": "(accuracy − majority rate) / (1 − majority rate), clipped to [0, 1], of the strongest "
                       "attack within the budget (mean over the runs that finished); 0 = the majority guess",
            "cost": "1 − Kendall τ between the honest models' released public ranking and their true private "
                    "ranking, mean over seeds (1 when undefined)",
            "on_frontier": "no other chain has cost ≤ and leakage ≤ with one strictly less, at the same budget",
            "recommended": "at the largest budget, the least leaky chain with cost ≤ utility_tolerance",
            "accounts_tried": "the most accounts an attack that finished had: the leakage is what the library's "
                              "attacks found with at most that many, a lower bound on what an attacker can read",
            "by_accounts": "at the largest budget, per account count k, the strongest attack with at most k "
                           "accounts, beside the information bound: the most labels the releases could carry "
                           "(bits over the entropy of one label at the board's class balance)",
        },
        "points": [p.as_dict() for p in points],
        "by_accounts": [c.as_dict() for c in accounts_cells(result, lines)],
        "recommended": {dataset: r.as_dict() for dataset, r in recommended.items()},
    }


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, 6)
    return value
