"""``attacks.run("auto", oracle, budget=Q)`` under each standard defense chain: label accuracy against the
majority-class rate, queries, and what ``auto`` played (issue 10, items 2–3).

Seeded label vectors of ``--rows`` rows (Titanic-sized by default: 418) with 32 %, 38 % and 20 % ones, a few
seeds each, 5 released decimals, budget ``--budget`` (fingerprint included). Per chain: mean accuracy, mean
majority rate, the worst accuracy − majority gap, mean and max queries, and the attack (→ fallback) played.
``--compare`` also runs every case with the majority-class floor of :mod:`attacks.floor` switched off (no check
queries, no floor step) and prints that worst gap beside it; ``--chains`` picks chains by substring.

    .venv/bin/python -m benchmarks.auto_floor [--rows 418] [--budget 300] [--seeds 3] [--compare] [--chains a,b]
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

import numpy as np

import attacks
import attacks.auto
from attacks import LocalOracle

ROUND5 = {"name": "rounding", "decimals": 5}
CHAINS: dict[str, list[dict[str, Any]]] = {
    "none": [],
    "rounding 5": [ROUND5],
    "laplace 1e-4": [{"name": "noise", "kind": "laplace", "scale": 1e-4}, ROUND5],
    "laplace 1e-3": [{"name": "noise", "kind": "laplace", "scale": 1e-3}, ROUND5],
    "laplace 1e-2": [{"name": "noise", "kind": "laplace", "scale": 1e-2}, ROUND5],
    "subsetting 0.9": [{"name": "subsetting", "fraction": 0.9}, ROUND5],
    "randomized response 0.05 fixed": [{"name": "randomized_response", "p": 0.05, "mode": "fixed"}, ROUND5],
    "randomized response 0.05 fresh": [{"name": "randomized_response", "p": 0.05, "mode": "fresh"}, ROUND5],
    "ladder fixed 0.01": [{"name": "ladder", "mode": "fixed", "eta": 0.01}],
    "ladder parameter-free": [{"name": "ladder", "mode": "parameter_free"}, ROUND5],
    "thresholdout": [{"name": "thresholdout"}, ROUND5],
    "subsetting 0.5": [{"name": "subsetting", "fraction": 0.5}, ROUND5],
    "randomized response 0.2 fresh": [{"name": "randomized_response", "p": 0.2, "mode": "fresh"}, ROUND5],
    "ladder fixed (default η)": [{"name": "ladder", "mode": "fixed"}, ROUND5],
    "public split 0.3 + laplace 1e-3": [{"name": "noise", "kind": "laplace", "scale": 1e-3}, ROUND5],
    "probe_detector reject": [{"name": "probe_detector", "reject": True}, ROUND5],
    "privacy_budget (laplace ε=10 each, 200 total)": [
        {"name": "noise", "kind": "laplace", "epsilon": 10.0},
        {"name": "privacy_budget", "epsilon": 200.0, "composition": "basic"}, ROUND5],
    "combined (rr 0.02 fresh, laplace 1e-4, ladder pf)": [
        {"name": "randomized_response", "p": 0.02, "mode": "fresh"},
        {"name": "noise", "kind": "laplace", "scale": 1e-4}, {"name": "ladder", "mode": "parameter_free"}, ROUND5],
}
SHARES = (0.32, 0.38, 0.2)
#: Chains played on a board with a public split (the fraction of rows scored).
SPLITS = {"public split 0.3 + laplace 1e-3": 0.3}


def run_case(labels: np.ndarray, chain: list[dict[str, Any]], split: float | None, seed: int, budget: int,
             floor: bool) -> attacks.AttackResult:
    """One ``auto`` run; ``floor=False`` switches the majority-class floor off (the "before" column)."""
    oracle = LocalOracle(labels, decimals=5, defenses=chain, seed=seed, public_fraction=split)
    saved = attacks.auto._floor, attacks.auto.check_reserve
    if not floor:
        attacks.auto._floor = lambda *args, **kwargs: None  # type: ignore[assignment]
        attacks.auto.check_reserve = lambda *args, **kwargs: 0  # type: ignore[assignment]
    try:
        return attacks.run("auto", oracle, budget=budget, seed=seed)
    finally:
        attacks.auto._floor, attacks.auto.check_reserve = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=418)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--compare", action="store_true", help="also run with the floor off (before/after)")
    parser.add_argument("--chains", default="", help="comma-separated substrings of the chains to run")
    args = parser.parse_args()
    wanted = [w.strip() for w in args.chains.split(",") if w.strip()]
    print(f"auto, {args.rows} rows, budget {args.budget}, 5 decimals; shares of ones {SHARES}, {args.seeds} seeds each")
    before = " worst gap, floor off |" if args.compare else ""
    print(f"| defense | accuracy | majority rate | worst gap |{before} queries (mean / max) | played |")
    print("|---|---|---|---|" + ("---|" if args.compare else "") + "---|---|")
    for name, chain in CHAINS.items():
        if wanted and not any(w in name for w in wanted):
            continue
        accuracy, majority, gaps, gaps_off, queries = [], [], [], [], []
        played: Counter[str] = Counter()
        for share in SHARES:
            for seed in range(args.seeds):
                labels = (np.random.default_rng(1000 * seed + int(100 * share)).random(args.rows) < share).astype(int)
                result = run_case(labels, chain, SPLITS.get(name), seed, args.budget, floor=True)
                ones = int(labels.sum())
                top = max(ones, len(labels) - ones)  # rows the majority labeling gets right
                rate = top / len(labels)
                accuracy.append(result.accuracy(labels))
                majority.append(rate)
                gaps.append((int((result.labels == labels).sum()) - top) / len(labels))  # in whole rows: no -0.000
                queries.append(result.queries)
                fallback = result.details["fallback"]
                played[result.details["attack"] + (f" → {fallback}" if fallback else "")] += 1
                if args.compare:
                    off = run_case(labels, chain, SPLITS.get(name), seed, args.budget, floor=False)
                    gaps_off.append((int((off.labels == labels).sum()) - top) / len(labels))
        off_text = f" {min(gaps_off):+.3f} |" if args.compare else ""
        print(f"| {name} | {np.mean(accuracy):.3f} | {np.mean(majority):.3f} | {min(gaps):+.3f} |{off_text} "
              f"{np.mean(queries):.0f} / {max(queries)} | {', '.join(f'{k} ×{v}' for k, v in played.most_common())} |",
              flush=True)


if __name__ == "__main__":
    main()
