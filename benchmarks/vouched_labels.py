"""What ``auto`` vouches for, and whether its posteriors mean what they say.

Part 1, on boards where a label used to be called exact wrongly: the labels ``auto`` calls exact (confidence 1.0),
the wrong ones among them (must be 0), the labels right, and its guesses' mean confidence beside their accuracy.
Part 2: the calibration table of ``noisy``'s posteriors on seeded 1,000-row boards under Laplace noise (scale
1e-2 on the mean, 5 decimals) cut short at 0.25, 0.35 and 0.42 queries a row (the boards of
``tests/attacks/test_calibration.py``): per confidence decile, the labels, their mean confidence and the share
right. ``--large`` adds the 5,000-row 10-class Brier board (budget 20,000; about 4 minutes on one core).

    .venv/bin/python -m benchmarks.vouched_labels [--large] [--seeds 10] [--write docs/figures/vouched_labels.md]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle


def _laplace(scale: float) -> list[dict[str, Any]]:
    return [{"name": "noise", "kind": "laplace", "scale": scale}, {"name": "rounding", "decimals": 5}]


@dataclass(frozen=True)
class Board:
    """A seeded board ``auto`` plays with ``budget``."""

    name: str
    n: int
    budget: int
    metric: str = "binary_logloss"
    k: int = 2
    chain: list[dict[str, Any]] = field(default_factory=list)
    decimals: int | None = 5
    also_report: tuple[str, ...] = ()
    balanced_exactly: bool = False
    seed: int = 1


BOARDS: list[Board] = [
    Board("10-class Brier, Laplace 1e-3", 1000, 4000, "brier", 10, _laplace(1e-3)),
    Board("6-class Brier, Laplace 1e-3", 1000, 4000, "brier", 6, _laplace(1e-3)),
    Board("binary log loss, Laplace 1e-2, cut short", 1000, 400, chain=_laplace(1e-2)),
    Board("binary log loss, Laplace ε = 10 and a privacy budget of 200", 60, 500, chain=[
        {"name": "noise", "kind": "laplace", "epsilon": 10.0},
        {"name": "privacy_budget", "epsilon": 200.0, "composition": "basic"}, {"name": "rounding", "decimals": 5}]),
    Board("binary log loss, fixed Ladder 0.01, full precision, exactly balanced", 40, 500,
          chain=[{"name": "ladder", "mode": "fixed", "eta": 0.01}], decimals=None, balanced_exactly=True, seed=4),
    Board("binary log loss beside AUC, fresh randomized response 5 %", 200, 500, chain=[
        {"name": "randomized_response", "p": 0.05, "mode": "fresh"}, {"name": "rounding", "decimals": 5}],
          also_report=("auc",), balanced_exactly=True),
    Board("softmax CE, 3 classes, parameter-free Ladder", 40, 300, "softmax_ce", 3, [
        {"name": "ladder", "mode": "parameter_free"}, {"name": "rounding", "decimals": 5}]),
]
LARGE = Board("10-class Brier, Laplace 1e-3", 5000, 20000, "brier", 10, _laplace(1e-3))


def truth_of(board: Board) -> np.ndarray:
    rng = np.random.default_rng(board.seed)
    if board.balanced_exactly:
        return rng.permutation(np.arange(board.n) % board.k).astype(np.int64)
    return rng.integers(0, board.k, board.n).astype(np.int64)


def play(board: Board) -> dict[str, Any]:
    truth = truth_of(board)
    oracle = LocalOracle(truth, metric=board.metric, n_classes=board.k, decimals=board.decimals,
                         defenses=board.chain, also_report=board.also_report, seed=board.seed)
    started = time.perf_counter()
    result = attacks.run("auto", oracle, budget=board.budget, seed=0)
    confidence = result.fill_confidence()
    right = result.labels == truth
    exact = confidence >= 1.0
    guessed = ~exact & (result.labels >= 0)
    return {
        "board": board.name, "rows": board.n, "budget": board.budget, "queries": result.queries,
        "right": int(right.sum()), "exact": int(exact.sum()), "wrong_exact": int((exact & ~right).sum()),
        "guess_confidence": float(confidence[guessed].mean()) if guessed.any() else float("nan"),
        "guess_accuracy": float(right[guessed].mean()) if guessed.any() else float("nan"),
        "attack": result.details.get("attack"), "fallback": result.details.get("fallback"),
        "seconds": time.perf_counter() - started,
    }


def deciles(confidence: np.ndarray, right: np.ndarray) -> list[tuple[int, float, float]]:
    """(labels, mean confidence, share right) per tenth of the labels by confidence (ties kept together)."""
    edges = np.quantile(confidence, np.linspace(0, 1, 11))
    rows = []
    for i in range(10):
        upper = confidence <= edges[i + 1] if i == 9 else confidence < edges[i + 1]
        mask = ((confidence >= edges[i]) if i else np.ones_like(upper)) & upper
        if mask.any():
            rows.append((int(mask.sum()), float(confidence[mask].mean()), float(right[mask].mean())))
    return rows


def calibration(seeds: int) -> tuple[list[tuple[int, float, float]], int, float]:
    confidences, rights = [], []
    started = time.perf_counter()
    for fraction in (0.25, 0.35, 0.42):
        for seed in range(seeds):
            board_seed = seed + int(fraction * 1000)
            truth = (np.random.default_rng(1000 + board_seed).random(1000) < 0.5).astype(np.int64)
            oracle = LocalOracle(truth, decimals=5, seed=board_seed, defenses=_laplace(1e-2))
            result = attacks.run("noisy", oracle, budget=int(fraction * 1000) + 30, seed=board_seed)
            confidences.append(result.fill_confidence())
            rights.append(result.labels == truth)
    confidence, right = np.concatenate(confidences), np.concatenate(rights)
    return deciles(confidence, right), len(confidence), time.perf_counter() - started


def report(rows: list[dict[str, Any]], table: list[tuple[int, float, float]], labels: int, seconds: float,
           seeds: int) -> str:
    lines = ["What `auto` vouches for (confidence 1.0) and how its guesses' confidence compares with their accuracy "
             "(one seeded board each, 5 decimals unless said). Regenerate: "
             "`python -m benchmarks.vouched_labels --write docs/figures/vouched_labels.md`.", "",
             "| board | rows | budget | queries | right | exact | wrong among exact | guesses' mean confidence "
             "| guesses right | played | seconds |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['board']} | {row['rows']:,} | {row['budget']:,} | {row['queries']:,} | {row['right']:,} "
                     f"| {row['exact']:,} | {row['wrong_exact']} | {row['guess_confidence']:.3f} "
                     f"| {row['guess_accuracy']:.3f} | {row['attack']}"
                     f"{'' if row['fallback'] is None else ' → ' + str(row['fallback'])} | {row['seconds']:.1f} |")
    wrong_exact = [row["board"] for row in rows if row["wrong_exact"]]
    over = [f"{row['board']} ({row['guess_confidence']:.3f} claimed, {row['guess_accuracy']:.3f} right)"
            for row in rows if row["guess_confidence"] - row["guess_accuracy"] > 0.05]
    lines += ["", "Wrong labels vouched for: " + ("; ".join(wrong_exact) if wrong_exact else "none") + ". "
              "Guesses more than 0.05 more confident than right (one board is no calibration test, but a gap this "
              "size is a claim the attack cannot back): " + ("; ".join(over) if over else "none") + "."]
    lines += ["", f"Calibration of `noisy`'s posteriors: {labels:,} labels pooled from {3 * seeds} seeded 1,000-row "
              "boards (Laplace 1e-2 on the mean, 5 decimals; budgets of 0.25, 0.35 and 0.42 queries a row, so the "
              f"decode is cut short), {seconds:.0f} s. Each decile of the labels by reported confidence:", "",
              "| decile | labels | mean confidence | right | right − confidence |", "|---|---|---|---|---|"]
    for i, (count, mean, accuracy) in enumerate(table, start=1):
        lines.append(f"| {i} | {count:,} | {mean:.4f} | {accuracy:.4f} | {accuracy - mean:+.4f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    boards = BOARDS + ([LARGE] if args.large else [])
    rows = []
    for board in boards:
        rows.append(play(board))
        print(rows[-1], flush=True)
    table, labels, seconds = calibration(args.seeds)
    text = report(rows, table, labels, seconds, args.seeds)
    print(text)
    if args.write is not None:
        args.write.write_text(text)


if __name__ == "__main__":
    main()
