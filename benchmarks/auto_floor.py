"""``attacks.run("auto", oracle, budget=Q)`` under each standard defense chain: label accuracy against the
majority-class rate, queries, and what ``auto`` played (issue 10, items 2–3).

Seeded label vectors of ``--rows`` rows (Titanic-sized by default: 418) with 32 %, 38 % and 20 % ones, a few
seeds each, 5 released decimals, budget ``--budget`` (fingerprint included). Per chain: mean accuracy, mean
majority rate, the worst accuracy − majority gap, mean and max queries, and the attack (→ fallback) played.

    .venv/bin/python -m benchmarks.auto_floor [--rows 418] [--budget 300] [--seeds 3]
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

import numpy as np

import attacks
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
    "probe_detector reject": [{"name": "probe_detector", "reject": True}, ROUND5],
    "privacy_budget (laplace ε=10 each, 200 total)": [
        {"name": "noise", "kind": "laplace", "epsilon": 10.0},
        {"name": "privacy_budget", "epsilon": 200.0, "composition": "basic"}, ROUND5],
    "combined (rr 0.02 fresh, laplace 1e-4, ladder pf)": [
        {"name": "randomized_response", "p": 0.02, "mode": "fresh"},
        {"name": "noise", "kind": "laplace", "scale": 1e-4}, {"name": "ladder", "mode": "parameter_free"}, ROUND5],
}
SHARES = (0.32, 0.38, 0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=418)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(f"auto, {args.rows} rows, budget {args.budget}, 5 decimals; shares of ones {SHARES}, {args.seeds} seeds each")
    print("| defense | accuracy | majority rate | worst gap | queries (mean / max) | played |")
    print("|---|---|---|---|---|---|")
    for name, chain in CHAINS.items():
        accuracy, majority, gaps, queries = [], [], [], []
        played: Counter[str] = Counter()
        for share in SHARES:
            for seed in range(args.seeds):
                labels = (np.random.default_rng(1000 * seed + int(100 * share)).random(args.rows) < share).astype(int)
                oracle = LocalOracle(labels, decimals=5, defenses=chain, seed=seed)
                result = attacks.run("auto", oracle, budget=args.budget, seed=seed)
                rate = max(labels.mean(), 1 - labels.mean())
                accuracy.append(result.accuracy(labels))
                majority.append(rate)
                gaps.append(result.accuracy(labels) - rate)
                queries.append(result.queries)
                fallback = result.details["fallback"]
                played[result.details["attack"] + (f" → {fallback}" if fallback else "")] += 1
        print(f"| {name} | {np.mean(accuracy):.3f} | {np.mean(majority):.3f} | {min(gaps):+.3f} | "
              f"{np.mean(queries):.0f} / {max(queries)} | {', '.join(f'{k} ×{v}' for k, v in played.most_common())} |")


if __name__ == "__main__":
    main()
