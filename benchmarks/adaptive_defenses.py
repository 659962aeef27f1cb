"""What leaks through the adaptive defenses — the Ladder (fixed step, parameter-free), Thresholdout and a
privacy budget — against the strongest attack we have for each, beside the information bound.

For each data set (breast cancer's 171-row test split from ``games.population``, seeded 2,201 rows with
Titanic's balance, optionally 25,000 balanced rows) at 5 released decimals: the attack (``ladder``,
``thresholdout``, ``budgeted``, and ``auto`` where asked), the accounts it may use, label accuracy over every
row (every row is public here), exact labels (confidence 1.0), rows decoded with confidence >= 0.99 and how many
of them are right, submissions used, the bits per submission achieved (``decoded × h(π) / submissions``)
and the information bound per submission for the same transcript (:mod:`attacks.information`: ``ladder_bits``
for the fixed step over the releases the attack saw, the rounding count for exact releases,
``privacy_budget_bits`` for a budget), with the majority-class rate beside.

    .venv/bin/python -m benchmarks.adaptive_defenses [--sizes 171,2201] [--cases all] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle
from attacks import information as info

EPS = 1e-15
A = math.log((1 - EPS) / EPS)


def case_list() -> dict[str, dict[str, Any]]:
    """name → chain, attack, accounts, attack parameters (``budget``: submissions as a multiple of N)."""
    eps1 = {"name": "noise", "kind": "laplace", "epsilon": 1.0}
    fixed_1e3 = {"name": "noise", "kind": "laplace", "scale": 1e-3}
    return {
        "ladder η=n^-1/3": {"chain": [{"name": "ladder", "mode": "fixed"}], "attack": "ladder", "accounts": 1},
        "ladder η=n^-1/3 ×10": {"chain": [{"name": "ladder", "mode": "fixed"}], "attack": "ladder", "accounts": 10},
        "ladder η=0.01": {"chain": [{"name": "ladder", "mode": "fixed", "eta": 0.01}], "attack": "ladder",
                          "accounts": 1, "params": {"eta": 0.01}},
        "ladder η=0.001": {"chain": [{"name": "ladder", "mode": "fixed", "eta": 0.001}], "attack": "ladder",
                           "accounts": 1, "params": {"eta": 0.001}},
        "ladder parameter-free": {"chain": [{"name": "ladder", "mode": "parameter_free"}], "attack": "ladder",
                                  "accounts": 1},
        "auto: ladder η=n^-1/3": {"chain": [{"name": "ladder", "mode": "fixed"}], "attack": "auto", "accounts": 1},
        "auto: ladder η=0.01": {"chain": [{"name": "ladder", "mode": "fixed", "eta": 0.01}], "attack": "auto",
                                "accounts": 1},
        "auto: ladder parameter-free": {"chain": [{"name": "ladder", "mode": "parameter_free"}], "attack": "auto",
                                        "accounts": 1},
        "auto: ladder η=n^-1/3 ×10": {"chain": [{"name": "ladder", "mode": "fixed"}], "attack": "auto",
                                      "accounts": 10},
        "thresholdout": {"chain": [{"name": "thresholdout"}], "attack": "thresholdout", "accounts": 1},
        "thresholdout ×10": {"chain": [{"name": "thresholdout"}], "attack": "thresholdout", "accounts": 10},
        "auto: thresholdout": {"chain": [{"name": "thresholdout"}], "attack": "auto", "accounts": 1},
        "auto: budget ε=10 at 1/release ×10": {
            "chain": [eps1, {"name": "privacy_budget", "epsilon": 10, "composition": "basic"}],
            "attack": "auto", "accounts": 10},
        "budget ε=10 at 1/release": {"chain": [eps1, {"name": "privacy_budget", "epsilon": 10, "composition": "basic"}],
                                   "attack": "budgeted", "accounts": 1, "params": {"epsilon": 1.0}},
        "budget ε=10 at 1/release ×10": {
            "chain": [eps1, {"name": "privacy_budget", "epsilon": 10, "composition": "basic"}],
            "attack": "budgeted", "accounts": 10, "params": {"epsilon": 1.0}},
        "budget ε=100 at 1/release": {
            "chain": [eps1, {"name": "privacy_budget", "epsilon": 100, "composition": "basic"}],
            "attack": "budgeted", "accounts": 1, "params": {"epsilon": 1.0}},
        "budget ε=1000 Laplace 1e-3": {
            "chain": [fixed_1e3, {"name": "privacy_budget", "epsilon": 1000, "composition": "basic"}],
            "attack": "budgeted", "accounts": 1, "params": {"scale": 1e-3}},
        "budget ε=1000 Laplace 1e-3 ×10": {
            "chain": [fixed_1e3, {"name": "privacy_budget", "epsilon": 1000, "composition": "basic"}],
            "attack": "budgeted", "accounts": 10, "params": {"scale": 1e-3}},
    }


def labels_for(size: int, seed: int) -> tuple[str, np.ndarray]:
    if size == 171:
        from games.population import honest_population

        return "breast cancer", honest_population(seed=seed).labels
    balance = 711 / 2201 if size == 2201 else 0.5
    return f"seeded {size:,}", (np.random.default_rng(seed).random(size) < balance).astype(np.int64)


def bound_per_query(case: dict[str, Any], result: attacks.AttackResult, n: int) -> float | None:
    """Bits one submission can carry for this transcript (see the module docstring)."""
    details = result.details.get("attack_details", result.details)
    queries = max(result.queries, 1)
    chain = case["chain"]
    first = chain[0]
    if first["name"] == "ladder" and first.get("mode") == "fixed":
        if details.get("bound_bits") is not None:
            return float(details["bound_bits"]) / queries
        step = float(first.get("eta", n ** (-1 / 3)))
        return info.ladder_bits(step, queries, EPS) * case["accounts"] / queries
    if first["name"] == "noise":
        scale = float(first["scale"]) if "scale" in first else A / n / float(first["epsilon"])
        per_release = info.additive_noise_bits("laplace", scale, n, 5)
        releases = int(details.get("releases", queries))
        return info.privacy_budget_bits(releases, per_release) / queries
    return info.rounding_bits(n, 5)


def run_case(name: str, case: dict[str, Any], size: int, seed: int, budget_factor: float) -> list[str]:
    data, y = labels_for(size, seed)
    n = len(y)
    oracle = LocalOracle(y, decimals=5, defenses=case["chain"], seed=100 + seed, accounts=case["accounts"])
    budget = int(budget_factor * n)
    params: dict[str, Any] = dict(case.get("params", {}))
    started = time.perf_counter()
    try:
        if case["attack"] == "auto":
            result = attacks.run("auto", oracle, budget=budget)
        else:
            params["budget"] = budget
            result = attacks.run(case["attack"], oracle, **params)
    except attacks.AttackFailed as exc:
        return [data, name, case["attack"], str(case["accounts"]), "failed", "", "", "", str(oracle.queries), "",
                "", f"{max(y.mean(), 1 - y.mean()):.3f}", f"{time.perf_counter() - started:.1f}  ({exc})"]
    seconds = time.perf_counter() - started
    conf = result.fill_confidence()
    exact = conf >= 1.0
    decoded = conf >= 0.99
    right = int((result.labels[decoded] == y[decoded]).sum())
    h = info.binary_entropy(float(y.mean()))
    achieved = decoded.sum() * h / max(result.queries, 1)
    bound = bound_per_query(case, result, n)
    played = result.details.get("attack", case["attack"])
    return [data, name, str(played), str(case["accounts"]), f"{result.accuracy(y):.4f}", str(int(exact.sum())),
            str(int(decoded.sum())), str(right), str(result.queries), f"{achieved:.2f}",
            "" if bound is None else f"{bound:.2f}", f"{max(y.mean(), 1 - y.mean()):.4f}", f"{seconds:.1f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="171,2201")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", default="all", help="comma-separated case names, or 'all'")
    parser.add_argument("--budget", type=float, default=2.0, help="submissions allowed, as a multiple of N")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    cases = case_list()
    names = list(cases) if args.cases == "all" else args.cases.split(",")
    header = ("data", "defense", "attack", "accounts", "accuracy", "exact", "decoded", "decoded right",
              "submissions", "bits/sub", "bound bits/sub", "majority", "seconds")
    sep = " | " if args.markdown else "  "
    print(sep.join(header))
    if args.markdown:
        print("|".join("---" for _ in header))
    for size in (int(s) for s in args.sizes.split(",")):
        for name in names:
            row = run_case(name, cases[name], size, args.seed, args.budget)
            print(sep.join(row), flush=True)


if __name__ == "__main__":
    main()
