"""The games' accounts axis behind the sybil screen: every offline cell with several attacker accounts is played a
second time on the same competition with the sybil screen in hold mode in front of the board
(:class:`games.screened_board.ScreenedBoard`: the attacker's accounts signed up from a few addresses over a few hours,
the game's honest models screened beside them, the screen run after every submission, every account of a flagged
cluster held). The cell keeps what the attack read then and what the hold cost it (``Cell.screen``); the report
writes one row per data set × defense × attack × budget × accounts, mean over the seeds (``accounts_screen.csv``,
a section of ``summary.md`` and of the HTML report).

Every figure is what the library's attacks read: a lower bound on the leakage, never a limit on every attacker. A
careful attacker (distinct addresses, spread sign-ups, camouflaged probes) may pass the screen.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import attacks
from attacks.auto import BudgetedView
from attacks.oracle import Oracle
from attacks.result import AttackFailed
from games.screened_board import CAREFUL, TRACES, ScreenedBoard, crowd

#: The columns of ``accounts_screen.csv`` (``label_accuracy``: the same cells without the screen).
SCREEN_COLUMNS = [
    "dataset", "defense", "attack", "budget", "accounts", "cells", "label_accuracy", "screened_label_accuracy",
    "screened_exact_fraction", "let_through", "held_accounts", "held_submissions", "flagged_at", "honest_flagged",
    "honest_accounts", "failure",
]


def play_screened(board: Oracle, attack: str, params: dict[str, Any], *, budget: int | None, hidden: np.ndarray,
                  honest: Sequence[np.ndarray], seed: int) -> dict[str, Any]:
    """``attack`` (with ``params``, within ``budget``) on ``board`` (a fresh competition with the cell's accounts)
    behind the sybil screen in hold mode, the ``honest`` uploads screened beside it: ``status`` (``ok``, ``failed``,
    ``error``) and ``error``, ``label_accuracy`` and ``exact_fraction`` over every row (unrecovered rows wrong),
    ``queries``, ``seconds`` and the hold's tally (:class:`games.screened_board.ScreenTally`)."""
    screened = ScreenedBoard(board, crowd=crowd(list(honest), seed=seed), seed=seed)
    target: Any = BudgetedView(screened, budget) if budget is not None else screened
    figures: dict[str, Any] = {"status": "ok", "error": "", "label_accuracy": None, "exact_fraction": None}
    started = time.perf_counter()
    try:
        result = attacks.run(attack, target, **params)
        labels = np.asarray(result.labels, dtype=np.int64)
        if labels.shape != hidden.shape:
            raise AttackFailed(f"the attack returned {labels.shape[0]} labels for {hidden.shape[0]} rows")
        correct = labels == hidden
        exact = (labels >= 0) & (result.fill_confidence() >= 1.0) & correct
        figures.update(label_accuracy=float(correct.mean()), exact_fraction=float(exact.mean()))
    except AttackFailed as exc:
        figures.update(status="failed", error=str(exc) or type(exc).__name__)
    except Exception as exc:  # a crashing attack is this run's error, the game goes on
        figures.update(status="error", error=f"{type(exc).__name__}: {exc}")
    figures.update(queries=int(board.queries), seconds=round(time.perf_counter() - started, 4))
    figures.update(screened.tally.row())
    return figures


def _mean(values: Sequence[float | int | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return round(sum(kept) / len(kept), 6) if kept else None


def screen_rows(cells: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per data set × defense × attack × budget × accounts played behind the screen (game order), each
    figure the mean over the seeds (labels right over the cells that finished, without the screen and with the
    hold; the tally over every screened run); ``failure`` says why no screened run finished, if none did."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for cell in cells:
        if getattr(cell, "screen", None):
            groups.setdefault((cell.dataset, cell.defense, cell.attack, cell.budget, cell.accounts), []).append(cell)
    rows = []
    for (dataset, defense, attack, budget, accounts), group in groups.items():
        screens = [cell.screen for cell in group]
        finished = [s for s in screens if s["status"] == "ok"]
        rows.append({
            "dataset": dataset, "defense": defense, "attack": attack, "budget": budget, "accounts": accounts,
            "cells": len(group),
            "label_accuracy": _mean([c.outcome.label_accuracy for c in group if c.status == "ok"]),
            "screened_label_accuracy": _mean([s["label_accuracy"] for s in finished]),
            "screened_exact_fraction": _mean([s["exact_fraction"] for s in finished]),
            **{key: _mean([s[key] for s in screens]) for key in ("let_through", "held_accounts", "held_submissions")},
            "flagged_at": _mean([s["flagged_at"] for s in screens]),
            "honest_flagged": max(int(s["honest_flagged"]) for s in screens),
            "honest_accounts": max(int(s["honest_accounts"]) for s in screens),
            "failure": "" if finished else f"{screens[0]['status']} ({screens[0]['error'] or 'no reason given'})",
        })
    return rows


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _count(value: float | None) -> str:
    if value is None:
        return "never"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def screen_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`screen_rows` as a Markdown section (empty when no cell was screened)."""
    if not rows:
        return ""
    headers = ["data set", "defense", "attack", "budget", "accounts", "labels right, no screen", "labels right, hold",
               "exact, hold", "let through", "accounts held", "submissions held", "flagged after", "honest flagged"]
    lines = [
        "## The accounts axis behind the sybil screen (hold mode)", "",
        f"Every cell with several attacker accounts played again with the sybil screen holding the accounts it "
        f"clusters ({TRACES}; the game's honest models screened beside them, each an account). \"Let through\": "
        "attacker accounts that got a release before the hold; \"flagged after\": accounts that had submitted when "
        f"the first was held. Means over the seeds. {CAREFUL} Every figure is what the library's attacks read: a "
        "lower bound on the leakage, not a limit on every attacker.", "",
        "| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|",
    ]
    for row in rows:
        budget = "no cap" if row["budget"] is None else f"{row['budget']:,}"
        held = _pct(row["screened_label_accuracy"]) if not row["failure"] else row["failure"]
        lines.append("| " + " | ".join([
            row["dataset"], row["defense"], row["attack"], budget, f"{row['accounts']:,}", _pct(row["label_accuracy"]),
            held, _pct(row["screened_exact_fraction"]), _count(row["let_through"]), _count(row["held_accounts"]),
            _count(row["held_submissions"]), _count(row["flagged_at"]),
            f"{row['honest_flagged']} of {row['honest_accounts']}",
        ]) + " |")
    return "\n".join(lines) + "\n"
