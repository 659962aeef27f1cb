"""Write a played game: CSV tables, a JSON document, PNG charts and one self-contained HTML page.

Files in the output directory (the site serves the directory as is):

- ``cells.csv`` — one row per cell (data set × defense × attack × budget × accounts × seed); a cell whose attack
  failed has its status and reason and no accuracy (never a 0 standing in for a failure);
- ``summary.csv`` and ``summary.md`` — one row per data set × defense × attack × budget × accounts, averaged over
  the seeds that finished, with "failed (reason)" where none did and the information bound beside each row
  (:mod:`games.bounds`; the Markdown file first names the game and its mode, offline or live);
- ``boards.csv`` — every honest participant's released and true scores per competition;
- ``game.json`` — the game, its mode (``offline`` or ``live``, with the site), the summary, the cells (with
  attack details) and the boards;
- ``frontier.json`` and ``frontier.svg`` — the privacy–utility frontier (:mod:`games.frontier`): per data set
  and budget, each chain's leakage (the worst case over the accounts tried) against its honest-utility cost, the
  Pareto frontier, the recommended chain and, per account count, the strongest attack beside its information
  bound; ``accuracy_vs_queries.png`` — every attack's accuracy against its queries (failed ones named, not drawn);
- ``report.html`` — all of it on one page (``games/templates/report.html``), the frontier as inline SVG and the
  other chart as base64, so the file stands alone.

Everything but the wall-time columns is a deterministic function of the game file.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markupsafe
import numpy as np

from games.bounds import Bound, widest_bound
from games.caveats import DefenseNote, chain_caveats, defense_notes
from games.frontier import (
    AccountsCell,
    AttackLine,
    ChainPoint,
    Recommendation,
    accounts_cells,
    attack_label,
    chain_points,
    counts_at,
    frontier_document,
    recommend,
    strength,
)
from games.frontier_chart import frontier_svg
from games.gamefile import GameSpec
from games.runner import Board, Cell, GameResult
from games.screen_axis import SCREEN_COLUMNS, screen_markdown, screen_rows
from games.screened_board import CAREFUL as SCREEN_CAREFUL
from games.screened_board import TRACES as SCREEN_TRACES
from games.templating import percent, templates, text

CELL_COLUMNS = [
    "dataset", "defense", "attack", "budget", "accounts", "seed", "status", "error", "n_rows", "queries", "seconds",
    "label_accuracy", "majority_rate", "exact_fraction", "recovered_fraction", "claimed_accuracy", "exact_recovery",
    "attacker_public_score", "attacker_private_score", "attacker_public_rank", "attacker_private_rank",
    "n_participants", "honest_kendall_tau", "honest_best_wins", "honest_mean_abs_error",
    "honest_mean_abs_error_private", "honest_withheld", "honest_models",
]
SUMMARY_COLUMNS = [
    "dataset", "defense", "attack", "budget", "accounts", "cells", "ok", "failure", "label_accuracy", "majority_rate",
    "exact_fraction", "exact_recovery_rate", "bound_labels", "bound_rows", "bound_bits", "queries", "seconds",
    "attacker_public_rank", "attacker_private_rank", "n_participants", "honest_kendall_tau",
    "honest_best_wins_rate", "honest_mean_abs_error",
]
BOARD_COLUMNS = [
    "dataset", "defense", "seed", "participant", "released_public", "released_private", "raw_public", "raw_private",
]
WALL_TIME_COLUMNS = ("seconds",)
#: The cell table of the HTML page: what a host compares; ``cells.csv`` has every column.
HTML_CELL_COLUMNS = [
    "dataset", "defense", "attack", "budget", "accounts", "seed", "status", "label_accuracy", "recovered_fraction",
    "exact_recovery", "queries", "seconds", "attacker_public_rank", "attacker_private_rank", "error",
]


def _mean(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return float(np.mean(present)) if present else None


def _median(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return float(np.median(present)) if present else None


def failure_text(cells: int, ok: int, reason: str | None, *, limit: int | None = None) -> str:
    """How a row's failures read: ``""`` when every run finished, else "failed (reason)", with the count when
    some runs finished.

    >>> failure_text(3, 3, None), failure_text(2, 0, "budget spent"), failure_text(3, 2, "budget spent")
    ('', 'failed (budget spent)', 'failed in 1 of 3 runs (budget spent)')
    """
    if ok >= cells:
        return ""
    why = reason or "no reason given"
    if limit is not None and len(why) > limit:
        why = why[:limit - 1] + "…"
    return f"failed ({why})" if ok == 0 else f"failed in {cells - ok} of {cells} runs ({why})"


def summarize(cells: Sequence[Cell], game: GameSpec | None = None) -> list[dict[str, Any]]:
    """One row per (data set, defense, attack, budget, accounts) in game order, over seeds.

    Accuracy and the exact shares are means over the cells that finished (``None`` when none did: the row's
    ``failure`` says why, never an accuracy of 0); queries and seconds are means over every cell; ranks are
    medians (a rank is ordinal). With ``game``, each row also has the information bound of its chain, budget and
    accounts (``bound_labels``, ``bound_bits``; empty where there is none).
    """
    groups: dict[tuple[str, str, str, int | None, int], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.dataset, cell.defense, cell.attack, cell.budget, cell.accounts), []).append(cell)
    chains = {} if game is None else {d.name: d.chain for d in game.defenses}
    rows = []
    for (dataset, defense, attack, budget, accounts), group in groups.items():
        flat = [c.row() for c in group]
        ran = [c.row() for c in group if c.status == "ok"]
        ok = len(ran)
        error = next((c.error for c in group if c.status != "ok" and c.error), None)
        majority = _mean([r["majority_rate"] for r in flat])
        bound = None if game is None else widest_bound(
            game, chains.get(defense, []), scored_classes=[c.scored_classes for c in group], budget=budget,
            accounts=accounts, n_rows=group[0].n_rows)
        rows.append({
            "dataset": dataset,
            "defense": defense,
            "attack": attack,
            "budget": budget,
            "accounts": accounts,
            "cells": len(group),
            "ok": ok,
            "failure": failure_text(len(group), ok, error),
            "error": error,
            "label_accuracy": _round(_mean([r["label_accuracy"] for r in ran]), 4),
            "majority_rate": _round(majority, 4),
            "exact_fraction": _round(_mean([r["exact_fraction"] for r in ran]), 4),
            "exact_recovery_rate": _round(_mean([r["exact_recovery"] for r in ran]), 4),
            "bound_labels": None if bound is None else bound.labels,
            "bound_rows": None if bound is None else bound.scored_rows,
            "bound_bits": None if bound is None else round(bound.bits, 1),
            "queries": _round(_mean([r["queries"] for r in flat]), 1),
            "seconds": _round(_mean([r["seconds"] for r in flat]), 3),
            "attacker_public_rank": _median([r["attacker_public_rank"] for r in flat]),
            "attacker_private_rank": _median([r["attacker_private_rank"] for r in flat]),
            "n_participants": flat[0]["n_participants"],
            "honest_kendall_tau": _round(_mean([r["honest_kendall_tau"] for r in flat]), 4),
            "honest_best_wins_rate": _round(_mean([r["honest_best_wins"] for r in flat]), 4),
            "honest_mean_abs_error": _round(_mean([r["honest_mean_abs_error"] for r in flat]), 6),
        })
    return rows


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def markdown_table(summary: Sequence[dict[str, Any]]) -> str:
    """The summary as a Markdown table (the README's game table): accuracy over the runs that finished, "failed
    (reason)" where none did, and the information bound beside each row."""
    headers = ["data set", "defense", "attack", "budget", "accounts", "ok", "label acc.", "majority", "exact",
               "bound (labels)", "queries", "seconds", "public rank", "private rank", "honest τ", "best wins",
               "|released − true|"]
    keys = ["dataset", "defense", "attack", "budget", "accounts", "ok", "label_accuracy", "majority_rate",
            "exact_recovery_rate", "bound_labels", "queries", "seconds", "attacker_public_rank",
            "attacker_private_rank", "honest_kendall_tau", "honest_best_wins_rate", "honest_mean_abs_error"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in summary:
        cells = [text(row.get(k)) for k in keys]
        cells[3] = "none" if row["budget"] is None else f"{row['budget']:,}"
        cells[4] = f"{row.get('accounts', 1):,}"
        cells[5] = f"{row['ok']}/{row['cells']}"
        failure = failure_text(row["cells"], row["ok"], row.get("error"), limit=60)
        if row["ok"] == 0:
            # A failed attack measured nothing: its reason, never an accuracy of 0.
            cells[6] = failure
            cells[8] = "–"
        elif failure:
            cells[6] = f"{cells[6]} ({failure})"
        if row.get("bound_labels") is None:
            cells[9] = "–"
        elif row["bound_labels"] >= (row.get("bound_rows") or 0):
            cells[9] = f"all {row['bound_labels']:,}"
        else:
            cells[9] = f"≤ {row['bound_labels']:,} of {row['bound_rows']:,}"
        cells[12] = f"{text(row['attacker_public_rank'])}/{row['n_participants']}"
        cells[13] = f"{text(row['attacker_private_rank'])}/{row['n_participants']}"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary_markdown(result: GameResult, summary: Sequence[dict[str, Any]]) -> str:
    """``summary.md``: the game's name, mode and accounts above the summary table."""
    where = f" against {result.site}" if result.site else ""
    levels = result.game.account_levels
    accounts = "one attacker account" if levels == [1] else "attacker accounts " + ", ".join(f"{k:,}" for k in levels)
    return (
        f"Game `{result.game.name}`, mode: {result.mode}{where}; {len(result.cells)} cells, {accounts}, mean over the "
        f"seeds that finished of {', '.join(map(str, result.game.seeds))}.\n\n" + markdown_table(summary)
    )


def frontier_table(
    points: Sequence[ChainPoint], recommended: dict[str, Recommendation],
    by_accounts: Sequence[AccountsCell] = (),
) -> str:
    """One Markdown row per (data set, chain): the strongest attack's labels right at each budget (with any of the
    accounts tried), then at the largest budget per account count with its information bound beside it, the
    majority rate, the leakage at the largest budget, what the chain costs honest players, whether it is on the
    frontier there, and the recommended chain marked — the README's game table. "failed (reason)" where every
    attack failed, never 0 %."""
    levels = list(dict.fromkeys(p.budget for p in points))
    accounts = list(dict.fromkeys(c.accounts for c in by_accounts))
    top = {dataset: r.budget for dataset, r in recommended.items()}
    top_text = _budget_text(levels[-1] if levels else None)
    headers = ["data set", "chain"] + [f"labels right, {_budget_text(level)}" for level in levels] + [
        f"{top_text}, {k:,} account{'s' if k > 1 else ''}: labels right · bound" for k in accounts] + [
        "majority class", f"leakage, {top_text}", "honest cost (1 − τ)", "best model wins", "frontier",
    ]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    chains = list(dict.fromkeys((p.dataset, p.defense) for p in points))
    for dataset, defense in chains:
        mine = {p.budget: p for p in points if (p.dataset, p.defense) == (dataset, defense)}
        last = mine[top[dataset]]
        chosen = recommended[dataset].point
        name = f"**{defense}** (recommended)" if chosen is not None and chosen.defense == defense else defense
        leaks = [
            (mine[level].failure or "failed") if mine[level].attack is None
            else f"{percent(mine[level].label_accuracy)} {attack_label(mine[level].attack or '', mine[level].accounts)}"
            for level in levels
        ]
        per_accounts = [
            (f"{cell.failure or 'failed'}" if cell.attack is None else
             f"{percent(cell.label_accuracy)} {attack_label(cell.attack, cell.attack_accounts or 1)}")
            + f" · {'no bound' if cell.bound is None else cell.bound.text()}"
            for cell in by_accounts if (cell.dataset, cell.defense) == (dataset, defense)
        ]
        lines.append("| " + " | ".join([
            dataset, name, *leaks, *per_accounts, percent(last.majority_rate), text(round(last.leakage, 4)),
            text(round(last.cost, 4)), percent(last.best_wins_rate), "yes" if last.on_frontier else "",
        ]) + " |")
    return "\n".join(lines) + "\n"


def _budget_text(level: int | None) -> str:
    return "no cap" if level is None else f"{level:,} submissions"


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in columns})


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def board_rows(result: GameResult) -> list[dict[str, Any]]:
    return [
        {
            "dataset": board.dataset,
            "defense": board.defense,
            "seed": board.seed,
            "participant": p.name,
            "released_public": p.released_public,
            "released_private": p.released_private,
            "raw_public": p.raw_public,
            "raw_private": p.raw_private,
        }
        for board in result.boards
        for p in board.participants
    ]


def game_document(result: GameResult) -> dict[str, Any]:
    """The JSON report: the game as validated, the summary, every cell and every honest board."""
    return _json_safe({
        "game": result.game.to_dict(),
        "mode": result.mode,
        "site": result.site,
        "available_attacks": result.available_attacks,
        "seconds": round(result.seconds, 3),
        "summary": summarize(result.cells, result.game),
        "cells": [{**cell.row(), "details": cell.details, "screen": cell.screen} for cell in result.cells],
        "boards": board_rows(result),
        "accounts_screen": screen_rows(result.cells),
    })


def write_report(result: GameResult, out: str | Path) -> dict[str, Path]:
    """Write every output file into ``out`` (created if needed); returns them by kind."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(result.cells, result.game)
    paths = {
        "cells_csv": out / "cells.csv",
        "summary_csv": out / "summary.csv",
        "summary_md": out / "summary.md",
        "boards_csv": out / "boards.csv",
        "json": out / "game.json",
        "frontier_json": out / "frontier.json",
        "frontier_svg": out / "frontier.svg",
        "queries_png": out / "accuracy_vs_queries.png",
        "html": out / "report.html",
    }
    _write_csv(paths["cells_csv"], CELL_COLUMNS, [c.row() for c in result.cells])
    _write_csv(paths["summary_csv"], SUMMARY_COLUMNS, summary)
    _write_csv(paths["boards_csv"], BOARD_COLUMNS, board_rows(result))
    screened = screen_rows(result.cells)
    paths["summary_md"].write_text(summary_markdown(result, summary)
                                   + ("\n" + screen_markdown(screened) if screened else ""), encoding="utf-8")
    if screened:
        paths["accounts_screen_csv"] = out / "accounts_screen.csv"
        _write_csv(paths["accounts_screen_csv"], SCREEN_COLUMNS, screened)
    paths["json"].write_text(json.dumps(game_document(result), indent=2) + "\n", encoding="utf-8")
    # The charts draw what the tables say: accuracy over the runs that finished, failed attacks not as 0.
    lines = attack_lines(result.cells)
    finished = finished_summary(summary, lines)
    document = frontier_document(result, lines)
    paths["frontier_json"].write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    points = chain_points(result, lines)
    chart = frontier_svg(points, recommend(points, result.game.utility_tolerance), result.game.utility_tolerance,
                         title=f"{result.game.name}: privacy–utility frontier")
    paths["frontier_svg"].write_text(chart, encoding="utf-8")
    queries = queries_chart(finished, result.game.name)
    paths["queries_png"].write_bytes(queries)
    paths["html"].write_text(html_report(result, summary, chart, queries), encoding="utf-8")
    return paths


# --- charts --------------------------------------------------------------------------------------------------


def _figure_bytes(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue()


def _axes_per_dataset(datasets: list[str]) -> tuple[Any, list[Any]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # One panel a row, its legend to its right: legends long with failures never run into the next panel.
    fig, axes = plt.subplots(len(datasets), 1, figsize=(8.0, 4.8 * len(datasets)), squeeze=False)
    fig.subplots_adjust(hspace=0.3)
    return fig, [row[0] for row in axes]


def finished_summary(summary: Sequence[dict[str, Any]], lines: Sequence[AttackLine]) -> list[dict[str, Any]]:
    """The summary rows with ``label_accuracy`` over the runs that finished (``None`` when all failed)."""
    accuracy = {(line.dataset, line.defense, line.attack, line.budget, line.accounts): line.label_accuracy
                for line in lines}
    return [{**row, "label_accuracy": accuracy[(row["dataset"], row["defense"], row["attack"], row["budget"],
                                                row["accounts"])]}
            for row in summary]


def failed_legend(failed: Sequence[dict[str, Any]], most: int = 8) -> list[str]:
    """The chart's legend entries for summary rows that failed in every run, one per attack: "attack · defense:
    failed (reason)", or "attack · n chains: failed (the first one's reason)" (at most ``most`` attacks, then how
    many more; summary.csv has each row's reason).

    >>> failed_legend([{"attack": "a", "defense": "d", "cells": 2, "error": "no fit"}])
    ['a · d: failed (no fit)']
    """
    by_attack: dict[str, list[dict[str, Any]]] = {}
    for row in failed:
        by_attack.setdefault(row["attack"], []).append(row)
    labels = []
    for attack, rows in list(by_attack.items())[:most]:
        where = rows[0]["defense"] if len(rows) == 1 else f"{len(rows)} chains"
        labels.append(f"{attack} · {where}: {failure_text(rows[0]['cells'], 0, rows[0].get('error'), limit=45)}")
    if len(by_attack) > most:
        labels.append(f"… and {len(by_attack) - most} more attacks failed (summary.csv)")
    return labels


def queries_chart(summary: Sequence[dict[str, Any]], title: str) -> bytes:
    """Mean label accuracy against mean queries: one colour per attack (and account count), one marker per
    defense; attacks that failed in every run (``label_accuracy`` ``None``) are not drawn at 0: the legend names
    each as "failed (reason)" under its panel."""
    datasets = list(dict.fromkeys(r["dataset"] for r in summary))
    fig, axes = _axes_per_dataset(datasets)
    import matplotlib.pyplot as plt

    colors = plt.get_cmap("tab10")
    markers = "osD^v<>pPX*h"
    for ax, dataset in zip(axes, datasets, strict=True):
        rows = [{**r, "attack": attack_label(r["attack"], r.get("accounts", 1))}
                for r in summary if r["dataset"] == dataset]
        attack_names = list(dict.fromkeys(r["attack"] for r in rows))
        defense_names = list(dict.fromkeys(r["defense"] for r in rows))
        failed = [row for row in rows if row["label_accuracy"] is None]
        for row in rows:
            if row["label_accuracy"] is None:
                continue
            ax.scatter(
                max(row["queries"] or 0.0, 1.0),
                row["label_accuracy"],
                color=colors(attack_names.index(row["attack"]) % 10),
                marker=markers[defense_names.index(row["defense"]) % len(markers)],
                s=40,
                edgecolor="black",
                linewidth=0.4,
            )
        for index, name in enumerate(attack_names):
            ax.scatter([], [], color=colors(index % 10), label=name, s=40)
        for index, name in enumerate(defense_names):
            ax.scatter([], [], color="white", edgecolor="black", marker=markers[index % len(markers)], label=name)
        ax.set_xscale("log")
        ax.set_xlabel("queries (mean over seeds)")
        ax.set_ylabel("attacker label accuracy")
        ax.set_ylim(-0.03, 1.05)
        ax.grid(True, alpha=0.3)
        not_drawn = f" ({len(failed)} attack × defense pairs failed every run: not drawn)" if failed else ""
        ax.set_title(f"{dataset}{not_drawn}", fontsize=10)
        for label in failed_legend(failed):  # named with the reason in the legend, never a point at 0
            ax.scatter([], [], color="none", label=label)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), ncol=1, frameon=False)
    fig.suptitle(f"{title}: accuracy vs queries", fontsize=11)
    return _figure_bytes(fig)


# --- the host's reading: the answer first ---------------------------------------------------------------------

#: What the report's tables call each data key (the CSV and JSON keep the keys).
LABELS = {
    "dataset": "Data set",
    "defense": "Defense chain",
    "attack": "Attack",
    "budget": "Budget (submissions)",
    "accounts": "Accounts",
    "majority_rate": "Majority class",
    "exact_fraction": "Labels exact",
    "seed": "Seed",
    "status": "Outcome",
    "error": "Why it failed",
    "n_rows": "Hidden rows",
    "queries": "Queries",
    "seconds": "Seconds",
    "label_accuracy": "Labels right",
    "recovered_fraction": "Labels claimed",
    "claimed_accuracy": "Right among claimed",
    "exact_recovery": "Every label right",
    "exact_recovery_rate": "Every label right",
    "attacker_public_score": "Attacker's public score",
    "attacker_private_score": "Attacker's private score",
    "attacker_public_rank": "Attacker's public rank",
    "attacker_private_rank": "Attacker's private rank",
    "n_participants": "Participants",
    "honest_kendall_tau": "Honest ranking kept (Kendall τ)",
    "honest_best_wins": "Best model wins",
    "honest_best_wins_rate": "Best model wins",
    "honest_mean_abs_error": "Mean |released − true|",
    "honest_mean_abs_error_private": "Mean |released public − true private|",
    "honest_withheld": "Honest scores withheld",
    "honest_models": "Honest models",
    "cells": "Cells",
    "ok": "Ran to the end",
    "participant": "Participant",
    "released_public": "Released public",
    "released_private": "Released private",
    "raw_public": "True public",
    "raw_private": "True private",
}


@dataclass(frozen=True)
class ChainVerdict:
    """One defense chain on one data set at the game's largest budget: what leaks through it (its strongest
    attack, ``point.leakage``), what it costs the honest participants (``point.cost``), what it does not
    protect (``caveats``, with this game's figures), and whether it is the recommended chain."""

    point: ChainPoint
    description: str
    chain: list[dict[str, Any]]
    strongest: AttackLine | None  # None when every attack against it failed
    caveats: list[str]
    recommended: bool = False

    @property
    def dataset(self) -> str:
        return self.point.dataset

    @property
    def defense(self) -> str:
        return self.point.defense

    @property
    def kendall_tau(self) -> float | None:
        return self.point.kendall_tau

    @property
    def best_wins_rate(self) -> float | None:
        return self.point.best_wins_rate

    @property
    def mean_abs_error(self) -> float | None:
        return self.point.mean_abs_error


def attack_lines(cells: Sequence[Cell]) -> list[AttackLine]:
    """One :class:`AttackLine` per (data set, defense, attack, budget, accounts) in game order."""
    groups: dict[tuple[str, str, str, int | None, int], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.dataset, cell.defense, cell.attack, cell.budget, cell.accounts), []).append(cell)
    lines = []
    for (dataset, defense, attack, budget, accounts), group in groups.items():
        ran = [c.row() for c in group if c.status == "ok"]
        every = [c.row() for c in group]
        failures = [c for c in group if c.status != "ok"]
        lines.append(AttackLine(
            dataset=dataset,
            defense=defense,
            attack=attack,
            budget=budget,
            accounts=accounts,
            cells=len(group),
            ok=len(ran),
            label_accuracy=_mean([r["label_accuracy"] for r in ran]),
            majority_rate=_mean([r["majority_rate"] for r in every]),
            exact_fraction=_mean([r["exact_fraction"] for r in ran]),
            exact_recovery_rate=_mean([r["exact_recovery"] for r in ran]),
            queries=_mean([r["queries"] for r in (ran or every)]),
            seconds=_mean([r["seconds"] for r in every]),
            public_rank=_median([r["attacker_public_rank"] for r in every]),
            private_rank=_median([r["attacker_private_rank"] for r in every]),
            n_participants=every[0]["n_participants"],
            failure=f"{failures[0].status}: {failures[0].error}" if failures else "",
        ))
    return lines


def chain_verdicts(
    result: GameResult, lines: Sequence[AttackLine], points: Sequence[ChainPoint] | None = None,
) -> dict[str, list[ChainVerdict]]:
    """Per data set, one :class:`ChainVerdict` per chain in game order at the largest budget, the recommended
    one marked (:func:`games.frontier.recommend`: the least leaky chain within the utility tolerance)."""
    points = chain_points(result, lines) if points is None else points
    recommended = recommend(points, result.game.utility_tolerance)
    chains = {d.name: d for d in result.game.defenses}
    verdicts: dict[str, list[ChainVerdict]] = {}
    for dataset, choice in recommended.items():
        for point in (p for p in points if p.dataset == dataset and p.budget == choice.budget):
            ran = [line for line in lines if (line.dataset, line.defense) == (dataset, point.defense)
                   and line.label_accuracy is not None and counts_at(line.budget, choice.budget)]
            strongest = max(ran, key=strength, default=None)
            spec = chains.get(point.defense)
            chain = spec.chain if spec else []
            verdicts.setdefault(dataset, []).append(ChainVerdict(
                point=point,
                description=spec.description if spec else "",
                chain=chain,
                strongest=strongest,
                caveats=chain_caveats(chain, point),
                recommended=choice.point is not None and choice.point.defense == point.defense,
            ))
    return verdicts


def line_bounds(result: GameResult, lines: Sequence[AttackLine]) -> list[Bound | None]:
    """The information bound of each line's chain, budget and accounts (:func:`games.bounds.information_bound`)."""
    chains = {d.name: d.chain for d in result.game.defenses}
    scored: dict[tuple[str, str], list[list[int]]] = {}
    for cell in result.cells:
        scored.setdefault((cell.dataset, cell.defense), []).append(cell.scored_classes)
    n_rows = {cell.dataset: cell.n_rows for cell in result.cells}
    return [widest_bound(result.game, chains.get(line.defense, []), scored_classes=scored[(line.dataset, line.defense)],
                         budget=line.budget, accounts=line.accounts, n_rows=n_rows[line.dataset]) for line in lines]


def notes_of(verdicts: dict[str, list[ChainVerdict]]) -> list[DefenseNote]:
    """What each defense of the game does not protect, once each, with every chain's figures."""
    return defense_notes([(v.chain, v.point) for rows in verdicts.values() for v in rows])


# --- HTML ----------------------------------------------------------------------------------------------------


def html_report(result: GameResult, summary: Sequence[dict[str, Any]], frontier: str, queries: bytes) -> str:
    """One standalone HTML page (``games/templates/report.html``) a host reads in a minute: first the answer
    (per data set, the recommended chain, what leaks through each chain at the largest budget, what it costs
    honest players and what it does not protect), then the frontier chart (inline SVG, ``frontier``) and its
    table per budget, how the game was played (its mode), each attack's summary, and, folded away, every cell
    and honest board. Failed cells read "failed", never accuracy 0; tables use people's column names."""
    rows = board_rows(result)

    def rows_of(board: Board) -> list[dict[str, Any]]:
        key = (board.dataset, board.defense, board.seed)
        return [r for r in rows if (r["dataset"], r["defense"], r["seed"]) == key]

    boards = [(board, rows_of(board)) for board in result.boards]
    lines = attack_lines(result.cells)
    points = chain_points(result, lines)
    verdicts = chain_verdicts(result, lines, points)
    recommended = recommend(points, result.game.utility_tolerance)
    by_accounts = accounts_cells(result, lines)
    most = result.game.account_levels[-1]
    top_bounds = {
        dataset: next((c for c in by_accounts if c.dataset == dataset and c.accounts == most
                       and choice.point is not None and c.defense == choice.point.defense), None)
        for dataset, choice in recommended.items()
    }
    return templates().get_template("report.html").render(
        game=result.game,
        mode=result.mode,
        site=result.site,
        seconds=result.seconds,
        summary=summary,
        lines=lines,
        verdicts=verdicts,
        notes=notes_of(verdicts),
        recommended=recommended,
        by_accounts=by_accounts,
        screen_rows=screen_rows(result.cells),
        screen_traces=SCREEN_TRACES,
        screen_careful=SCREEN_CAREFUL,
        top_bounds=top_bounds,
        line_bounds=line_bounds(result, lines),
        label=attack_label,
        failure=failure_text,
        points=points,
        levels=result.game.levels,
        labels=LABELS,
        cells=[c.row() for c in result.cells],
        cell_columns=HTML_CELL_COLUMNS,
        boards=boards,
        board_columns=BOARD_COLUMNS[3:],
        frontier=markupsafe.Markup(frontier),
        queries=base64.b64encode(queries).decode(),
    )
