"""Write a played game: CSV tables, a JSON document, PNG charts and one self-contained HTML page.

Files in the output directory (the site serves the directory as is):

- ``cells.csv`` — one row per cell (data set × defense × attack × seed);
- ``summary.csv`` and ``summary.md`` — one row per data set × defense × attack, averaged over seeds (the
  Markdown file first names the game and its mode, offline or live);
- ``boards.csv`` — every honest participant's released and true scores per competition;
- ``game.json`` — the game, its mode (``offline`` or ``live``, with the site), the summary, the cells (with
  attack details) and the boards;
- ``frontier.png`` — privacy–utility frontier: the strongest attack's label accuracy vs the honest Kendall τ,
  one point per defense; ``accuracy_vs_queries.png`` — every attack's accuracy against its queries;
- ``report.html`` — all of it on one page (``games/templates/report.html``), charts inlined as base64 so the
  file stands alone.

Everything but the wall-time columns is a deterministic function of the game file.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from games.runner import Board, Cell, GameResult

CELL_COLUMNS = [
    "dataset", "defense", "attack", "seed", "status", "error", "n_rows", "queries", "seconds",
    "label_accuracy", "recovered_fraction", "claimed_accuracy", "exact_recovery",
    "attacker_public_score", "attacker_private_score", "attacker_public_rank", "attacker_private_rank",
    "n_participants", "honest_kendall_tau", "honest_best_wins", "honest_mean_abs_error",
    "honest_mean_abs_error_private", "honest_withheld", "honest_models",
]
SUMMARY_COLUMNS = [
    "dataset", "defense", "attack", "cells", "ok", "label_accuracy", "exact_recovery_rate", "queries", "seconds",
    "attacker_public_rank", "attacker_private_rank", "n_participants", "honest_kendall_tau",
    "honest_best_wins_rate", "honest_mean_abs_error",
]
BOARD_COLUMNS = [
    "dataset", "defense", "seed", "participant", "released_public", "released_private", "raw_public", "raw_private",
]
WALL_TIME_COLUMNS = ("seconds",)
#: The cell table of the HTML page: what a host compares; ``cells.csv`` has every column.
HTML_CELL_COLUMNS = [
    "dataset", "defense", "attack", "seed", "status", "label_accuracy", "recovered_fraction", "exact_recovery",
    "queries", "seconds", "attacker_public_rank", "attacker_private_rank", "error",
]


def _mean(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return float(np.mean(present)) if present else None


def _median(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return float(np.median(present)) if present else None


def summarize(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    """One row per (data set, defense, attack) in game order, averaged over seeds.

    Accuracy, queries and seconds are means over the cells; the exact-recovery rate and the best-wins rate
    are shares of cells; ranks are medians (a rank is ordinal).
    """
    groups: dict[tuple[str, str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.dataset, cell.defense, cell.attack), []).append(cell)
    rows = []
    for (dataset, defense, attack), group in groups.items():
        flat = [c.row() for c in group]
        rows.append({
            "dataset": dataset,
            "defense": defense,
            "attack": attack,
            "cells": len(group),
            "ok": sum(c.status == "ok" for c in group),
            "label_accuracy": _round(_mean([r["label_accuracy"] for r in flat]), 4),
            "exact_recovery_rate": _round(_mean([r["exact_recovery"] for r in flat]), 4),
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


def _text(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e6:
            return str(int(value))
        return f"{value:.4g}" if abs(value) < 1e-3 else f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


def markdown_table(summary: Sequence[dict[str, Any]]) -> str:
    """The summary as a Markdown table (the README's game table)."""
    headers = ["data set", "defense", "attack", "ok", "label acc.", "exact", "queries", "seconds",
               "public rank", "private rank", "honest τ", "best wins", "|released − true|"]
    keys = ["dataset", "defense", "attack", "ok", "label_accuracy", "exact_recovery_rate", "queries", "seconds",
            "attacker_public_rank", "attacker_private_rank", "honest_kendall_tau", "honest_best_wins_rate",
            "honest_mean_abs_error"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in summary:
        cells = [_text(row[k]) for k in keys]
        cells[3] = f"{row['ok']}/{row['cells']}"
        cells[8] = f"{_text(row['attacker_public_rank'])}/{row['n_participants']}"
        cells[9] = f"{_text(row['attacker_private_rank'])}/{row['n_participants']}"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary_markdown(result: GameResult, summary: Sequence[dict[str, Any]]) -> str:
    """``summary.md``: the game's name and mode above the summary table."""
    where = f" against {result.site}" if result.site else ""
    return (
        f"Game `{result.game.name}`, mode: {result.mode}{where}; {len(result.cells)} cells, mean over seeds "
        f"{', '.join(map(str, result.game.seeds))}.\n\n" + markdown_table(summary)
    )


def defense_table(summary: Sequence[dict[str, Any]]) -> str:
    """One Markdown row per (data set, defense): the strongest attack against it (highest mean label accuracy,
    then fewest queries) beside what the defense costs honest participants — the README's game table."""
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for row in summary:
        key = (row["dataset"], row["defense"])
        rank = (row["label_accuracy"] or 0.0, -(row["queries"] or 0.0))
        held = best.get(key)
        if held is None or rank > ((held["label_accuracy"] or 0.0), -(held["queries"] or 0.0)):
            best[key] = row
    lines = [
        "| data set | defense | strongest attack | its label accuracy | exact recovery | queries "
        "| honest Kendall τ | best model wins | mean \\|released − true\\| |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (dataset, defense), row in best.items():
        lines.append(
            f"| {dataset} | {defense} | {row['attack']} | {_text(row['label_accuracy'])} "
            f"| {_text(row['exact_recovery_rate'])} | {_text(row['queries'])} | {_text(row['honest_kendall_tau'])} "
            f"| {_text(row['honest_best_wins_rate'])} | {_text(row['honest_mean_abs_error'])} |"
        )
    return "\n".join(lines) + "\n"


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
        "summary": summarize(result.cells),
        "cells": [{**cell.row(), "details": cell.details} for cell in result.cells],
        "boards": board_rows(result),
    })


def write_report(result: GameResult, out: str | Path) -> dict[str, Path]:
    """Write every output file into ``out`` (created if needed); returns them by kind."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(result.cells)
    paths = {
        "cells_csv": out / "cells.csv",
        "summary_csv": out / "summary.csv",
        "summary_md": out / "summary.md",
        "boards_csv": out / "boards.csv",
        "json": out / "game.json",
        "frontier_png": out / "frontier.png",
        "queries_png": out / "accuracy_vs_queries.png",
        "html": out / "report.html",
    }
    _write_csv(paths["cells_csv"], CELL_COLUMNS, [c.row() for c in result.cells])
    _write_csv(paths["summary_csv"], SUMMARY_COLUMNS, summary)
    _write_csv(paths["boards_csv"], BOARD_COLUMNS, board_rows(result))
    paths["summary_md"].write_text(summary_markdown(result, summary), encoding="utf-8")
    paths["json"].write_text(json.dumps(game_document(result), indent=2) + "\n", encoding="utf-8")
    # The charts draw what the tables say: accuracy over the runs that finished, failed attacks not as 0.
    finished = finished_summary(summary, attack_lines(result.cells))
    frontier = frontier_chart(finished, result.game.name)
    queries = queries_chart(finished, result.game.name)
    paths["frontier_png"].write_bytes(frontier)
    paths["queries_png"].write_bytes(queries)
    paths["html"].write_text(html_report(result, summary, frontier, queries), encoding="utf-8")
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

    fig, axes = plt.subplots(1, len(datasets), figsize=(7.2 * len(datasets), 4.6), squeeze=False)
    return fig, list(axes[0])


def finished_summary(summary: Sequence[dict[str, Any]], lines: Sequence[AttackLine]) -> list[dict[str, Any]]:
    """The summary rows with ``label_accuracy`` over the runs that finished (``None`` when all failed)."""
    accuracy = {(line.dataset, line.defense, line.attack): line.label_accuracy for line in lines}
    return [{**row, "label_accuracy": accuracy[(row["dataset"], row["defense"], row["attack"])]} for row in summary]


def frontier_chart(summary: Sequence[dict[str, Any]], title: str) -> bytes:
    """Privacy–utility frontier per data set: for each defense, the strongest attack's mean label accuracy
    (y, lower = more private) against the honest population's mean Kendall τ (x, higher = more useful).
    Small grey points are the individual attacks; an attack that failed in every run (``label_accuracy``
    ``None``) is not drawn, and a defense that every attack failed against sits at 0, saying so."""
    datasets = list(dict.fromkeys(r["dataset"] for r in summary))
    fig, axes = _axes_per_dataset(datasets)
    import matplotlib.pyplot as plt

    colors = plt.get_cmap("tab10")
    for ax, dataset in zip(axes, datasets, strict=True):
        rows = [r for r in summary if r["dataset"] == dataset]
        defenses = list(dict.fromkeys(r["defense"] for r in rows))
        points = []
        for defense in defenses:
            group = [r for r in rows if r["defense"] == defense]
            tau = group[0]["honest_kendall_tau"]
            accuracies = [r["label_accuracy"] for r in group if r["label_accuracy"] is not None]
            points.append((tau if tau is not None else 0.0, max(accuracies, default=0.0), accuracies))
        xs = [p[0] for p in points]
        span = max(max(xs) - min(xs), 0.2)
        ax.set_xlim(min(xs) - 0.12 * span, max(xs) + 0.12 * span)
        clusters: list[tuple[float, float, list[str]]] = []
        for index, (defense, (x, best, accuracies)) in enumerate(zip(defenses, points, strict=True)):
            number = str(index + 1)
            ax.scatter([x] * len(accuracies), accuracies, s=12, color="0.7", zorder=1)
            said = f"accuracy {best:.3f}" if accuracies else "every attack failed"
            ax.scatter([x], [best], s=70, color=colors(index % 10), marker="os^D"[index // 10 % 4],
                       edgecolor="black", zorder=3, label=f"{number}. {defense}: τ {x:.3f}, {said}")
            near = [c for c in clusters if abs(c[0] - x) < 0.03 * span and abs(c[1] - best) < 0.03]
            if near:  # defenses on (nearly) one spot share one label: their numbers
                near[0][2].append(number)
            else:
                clusters.append((x, best, [number]))
        for x, y, numbers in clusters:
            ax.annotate(",".join(numbers), (x, y), textcoords="offset points", xytext=(-7, 4), fontsize=7,
                        ha="right", va="bottom")
        ax.set_xlabel("honest Kendall τ (released public vs true private ranking)")
        ax.set_ylabel("attacker label accuracy (strongest attack)")
        ax.set_ylim(-0.03, 1.08)
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{dataset}", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.suptitle(f"{title}: privacy–utility frontier", fontsize=11)
    return _figure_bytes(fig)


def queries_chart(summary: Sequence[dict[str, Any]], title: str) -> bytes:
    """Mean label accuracy against mean queries: one colour per attack, one marker per defense; attacks that
    failed in every run (``label_accuracy`` ``None``) are counted in the title, not drawn at 0."""
    datasets = list(dict.fromkeys(r["dataset"] for r in summary))
    fig, axes = _axes_per_dataset(datasets)
    import matplotlib.pyplot as plt

    colors = plt.get_cmap("tab10")
    markers = "osD^v<>pPX*h"
    for ax, dataset in zip(axes, datasets, strict=True):
        rows = [r for r in summary if r["dataset"] == dataset]
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
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    fig.suptitle(f"{title}: accuracy vs queries", fontsize=11)
    return _figure_bytes(fig)


# --- the host's reading: the answer first ---------------------------------------------------------------------

#: Chains whose strongest attack is within this much label accuracy of the least leaky one count as equally
#: private; among them the report recommends the one that costs honest participants least.
LEAK_TOLERANCE = 0.02

#: What the report's tables call each data key (the CSV and JSON keep the keys).
LABELS = {
    "dataset": "Data set",
    "defense": "Defense chain",
    "attack": "Attack",
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
class AttackLine:
    """One attack against one chain on one data set, over its seeds, as the report shows it: accuracy and
    exact recovery are means over the cells that ran to the end (``None`` when every cell failed), never a 0
    standing in for a failure."""

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

    @property
    def failed(self) -> int:
        return self.cells - self.ok


@dataclass(frozen=True)
class ChainVerdict:
    """One defense chain on one data set: what leaks through it (its strongest attack) and what it costs the
    honest participants."""

    dataset: str
    defense: str
    description: str
    chain: list[dict[str, Any]]
    strongest: AttackLine | None  # None when every attack against it failed
    kendall_tau: float | None
    best_wins_rate: float | None
    mean_abs_error: float | None
    recommended: bool = False

    @property
    def leak(self) -> float:
        """The strongest attack's mean label accuracy (0 when every attack failed: nothing was recovered)."""
        return 0.0 if self.strongest is None or self.strongest.label_accuracy is None else self.strongest.label_accuracy

    @property
    def honest_cost_key(self) -> tuple[float, float, float]:
        """Larger is better for honest participants: ranking kept, best model wins, small distortion."""
        return (
            -2.0 if self.kendall_tau is None else self.kendall_tau,
            self.best_wins_rate or 0.0,
            -(self.mean_abs_error or 0.0),
        )


def attack_lines(cells: Sequence[Cell]) -> list[AttackLine]:
    """One :class:`AttackLine` per (data set, defense, attack) in game order."""
    groups: dict[tuple[str, str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.dataset, cell.defense, cell.attack), []).append(cell)
    lines = []
    for (dataset, defense, attack), group in groups.items():
        ran = [c.row() for c in group if c.status == "ok"]
        every = [c.row() for c in group]
        failures = [c for c in group if c.status != "ok"]
        lines.append(AttackLine(
            dataset=dataset,
            defense=defense,
            attack=attack,
            cells=len(group),
            ok=len(ran),
            label_accuracy=_mean([r["label_accuracy"] for r in ran]),
            exact_recovery_rate=_mean([r["exact_recovery"] for r in ran]),
            queries=_mean([r["queries"] for r in (ran or every)]),
            seconds=_mean([r["seconds"] for r in every]),
            public_rank=_median([r["attacker_public_rank"] for r in every]),
            private_rank=_median([r["attacker_private_rank"] for r in every]),
            n_participants=every[0]["n_participants"],
            failure=f"{failures[0].status}: {failures[0].error}" if failures else "",
        ))
    return lines


def _strength(line: AttackLine) -> tuple[float, float, float]:
    """Which attack leaks most: the higher accuracy, then the more runs finished, then the fewer queries."""
    return (line.label_accuracy or 0.0, line.ok / line.cells, -(line.queries or 0.0))


def chain_verdicts(result: GameResult, lines: Sequence[AttackLine]) -> dict[str, list[ChainVerdict]]:
    """Per data set, one :class:`ChainVerdict` per chain in game order, the recommended one marked: among the
    chains within :data:`LEAK_TOLERANCE` of the least leaky, the one that keeps the honest ranking best."""
    chains = {d.name: d for d in result.game.defenses}
    utility: dict[tuple[str, str], list[Cell]] = {}
    for cell in result.cells:
        utility.setdefault((cell.dataset, cell.defense), []).append(cell)
    verdicts: dict[str, list[ChainVerdict]] = {}
    for (dataset, defense), group in utility.items():
        ran = [line for line in lines if (line.dataset, line.defense) == (dataset, defense) and line.ok]
        strongest = max(ran, key=_strength, default=None)
        # The honest board of a (data set, chain) is one per seed, shared by every attack: one value per seed.
        per_seed = {c.seed: c.utility.row() for c in group}.values()
        spec = chains.get(defense)
        verdicts.setdefault(dataset, []).append(ChainVerdict(
            dataset=dataset,
            defense=defense,
            description=spec.description if spec else "",
            chain=spec.chain if spec else [],
            strongest=strongest,
            kendall_tau=_mean([row["honest_kendall_tau"] for row in per_seed]),
            best_wins_rate=_mean([row["honest_best_wins"] for row in per_seed]),
            mean_abs_error=_mean([row["honest_mean_abs_error"] for row in per_seed]),
        ))
    for dataset, rows in verdicts.items():
        least = min(v.leak for v in rows)
        candidates = [v for v in rows if v.leak <= least + LEAK_TOLERANCE]
        best = max(candidates, key=lambda v: v.honest_cost_key)
        verdicts[dataset] = [replace(v, recommended=v is best) for v in rows]
    return verdicts


def _percent(value: float | None) -> str:
    """A share as a percentage for people: ``0.5409 → '54.1 %'``, ``1.0 → '100 %'``."""
    if value is None:
        return "–"
    text = f"{100 * value:.1f}".rstrip("0").rstrip(".")
    return f"{text} %"


def _small(value: float | None) -> str:
    """A distortion to two significant digits: ``0.000111 → '0.00011'``, ``3e-06 → '3e-06'``."""
    if value is None:
        return "–"
    return "0" if value == 0 else f"{value:.2g}"


# --- HTML ----------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    """The report's templates (``games/templates``), HTML-escaped."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("games", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters["text"] = _text
    environment.filters["percent"] = _percent
    environment.filters["small"] = _small
    environment.filters["json"] = lambda value, sort_keys=False: json.dumps(value, sort_keys=sort_keys)
    return environment


def html_report(result: GameResult, summary: Sequence[dict[str, Any]], frontier: bytes, queries: bytes) -> str:
    """One standalone HTML page (``games/templates/report.html``) a host reads in a minute: first the answer
    (per data set, the recommended chain, what leaks through each chain and what it costs honest players), then
    how the game was played (its mode), both charts (inline), each attack's summary, and, folded away, every
    cell and honest board. Failed cells read "failed", never accuracy 0; tables use people's column names."""
    rows = board_rows(result)

    def rows_of(board: Board) -> list[dict[str, Any]]:
        key = (board.dataset, board.defense, board.seed)
        return [r for r in rows if (r["dataset"], r["defense"], r["seed"]) == key]

    boards = [(board, rows_of(board)) for board in result.boards]
    lines = attack_lines(result.cells)
    return _templates().get_template("report.html").render(
        game=result.game,
        mode=result.mode,
        site=result.site,
        seconds=result.seconds,
        summary=summary,
        lines=lines,
        verdicts=chain_verdicts(result, lines),
        leak_tolerance=LEAK_TOLERANCE,
        labels=LABELS,
        cells=[c.row() for c in result.cells],
        cell_columns=HTML_CELL_COLUMNS,
        boards=boards,
        board_columns=BOARD_COLUMNS[3:],
        frontier=base64.b64encode(frontier).decode(),
        queries=base64.b64encode(queries).decode(),
    )
