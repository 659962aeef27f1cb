"""What each defense costs honest participants: an honest population of scikit-learn models on the breast-
cancer data (``games.population.honest_population``), each model one participant submitting once to a
competition over the test rows, scored through the site's pipeline (``evaluate``) under each defense chain.

Per defense, averaged over competition seeds (the public/private split and the defense randomness):
Kendall τ between the released public scores and the true private scores, how often the true private best
model tops the released board (ties broken at random), mean |released − true| on the public split, and how
many releases were withheld or rejected.

    .venv/bin/python -m benchmarks.defense_utility [--metric binary_logloss] [--seeds 5] [--public-fraction 0.3]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from attacks import LocalOracle
from games.population import Population, honest_population
from scoring.metrics import get_metric
from scoring.parsing import ParsedPredictions, validate_array
from scoring.pipeline import evaluate

# Typical parameters per defense (the chain JSON a host would set); rounding to the Kaggle 5 decimals is
# applied by the competition itself (decimals=5) under every chain.
CHAINS: dict[str, list[dict[str, Any]]] = {
    "none": [],
    "rounding 2 decimals": [{"name": "rounding", "decimals": 2}],
    "noise laplace scale 0.01": [{"name": "noise", "kind": "laplace", "scale": 0.01}],
    "noise laplace ε=1 (calibrated)": [{"name": "noise", "kind": "laplace", "epsilon": 1.0}],
    "noise gaussian ε=1 δ=1e-6": [{"name": "noise", "kind": "gaussian", "epsilon": 1.0, "delta": 1e-6}],
    "noise multiplicative α=0.05": [{"name": "noise", "kind": "multiplicative", "alpha": 0.05}],
    "subsetting 50%": [{"name": "subsetting", "fraction": 0.5}],
    "randomized_response p=0.05 fixed": [{"name": "randomized_response", "p": 0.05}],
    "randomized_response p=0.05 fresh": [{"name": "randomized_response", "p": 0.05, "mode": "fresh"}],
    "ladder fixed η=0.01": [{"name": "ladder", "eta": 0.01}],
    "ladder parameter_free": [{"name": "ladder", "mode": "parameter_free"}],
    "thresholdout T=0.1 σ=0.01": [{"name": "thresholdout", "threshold": 0.1, "sigma": 0.01}],
    "noise ε=1 + privacy_budget ε=5": [
        {"name": "noise", "kind": "laplace", "epsilon": 1.0},
        {"name": "privacy_budget", "epsilon": 5.0},
    ],
    "probe_detector (reject)": [{"name": "probe_detector", "reject": True}],
}


@dataclass(frozen=True)
class Row:
    defense: str
    tau: float
    best_wins: float
    mean_abs_error: float
    withheld: float


def released_board(
    population: Population, chain: list[dict[str, Any]], *, metric: str, seed: int, public_fraction: float
) -> tuple[list[float | None], list[float], list[float]]:
    """(released public, true public, true private) per model; each model is a participant with fresh state
    and its own submission id, so defense randomness differs between participants as on the site."""
    oracle = LocalOracle(
        population.labels, metric=metric, decimals=5, defenses=chain, seed=seed, public_fraction=public_fraction,
        n_classes=population.n_classes,
    )
    spec = oracle.spec
    score = get_metric(metric)
    released: list[float | None] = []
    true_public: list[float] = []
    true_private: list[float] = []
    for position, predictions in enumerate(population.predictions.values()):
        parsed = ParsedPredictions(validate_array(np.asarray(predictions, dtype=np.float64), spec.submission_format))
        evaluation = evaluate(spec, parsed, submission_id=f"honest-{position}", states=None, splits=("public",))
        result = evaluation.results.get("public")
        released.append(None if evaluation.reject or result is None else result.released)
        for split, out in (("public", true_public), ("private", true_private)):
            rows = spec.split_rows[split]
            out.append(score.score(parsed.values[rows], population.labels[rows], spec.eps))
    return released, true_public, true_private


def utility(
    released: list[float | None], true_public: list[float], true_private: list[float], higher_is_better: bool
) -> tuple[float, float, float, int]:
    """(Kendall τ released vs true private, the true private best's chance of being the released best with
    ties broken at random, mean |released − true public|, number withheld), over the released models."""
    kept = [i for i, r in enumerate(released) if r is not None]
    sign = -1.0 if higher_is_better else 1.0  # rank by "lower is better" either way
    got = np.array([sign * float(released[i]) for i in kept])  # type: ignore[arg-type]
    private = np.array([sign * true_private[i] for i in kept])
    tau = float(kendalltau(got, private).statistic) if len(kept) >= 2 else float("nan")
    best_true = int(np.argmin(private))
    tied = np.flatnonzero(got == got.min())
    best_wins = 1 / len(tied) if best_true in tied else 0.0  # ties broken at random
    error = float(np.mean([abs(float(released[i]) - true_public[i]) for i in kept]))  # type: ignore[arg-type]
    return tau, best_wins, error, len(released) - len(kept)


def run(*, metric: str, seeds: int, public_fraction: float, population_seed: int = 0) -> list[Row]:
    population = honest_population(seed=population_seed, test_size=0.5)
    higher = get_metric(metric).higher_is_better
    rows: list[Row] = []
    for name, chain in CHAINS.items():
        taus, wins, errors, withheld = [], [], [], []
        for seed in range(seeds):
            t, w, e, h = utility(
                *released_board(population, chain, metric=metric, seed=seed, public_fraction=public_fraction), higher
            )
            taus.append(t)
            wins.append(w)
            errors.append(e)
            withheld.append(h)
        rows.append(Row(name, float(np.nanmean(taus)), float(np.mean(wins)), float(np.mean(errors)),
                        float(np.mean(withheld))))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--metric", default="binary_logloss")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--public-fraction", type=float, default=0.3)
    args = parser.parse_args(argv)
    population = honest_population(seed=0, test_size=0.5)
    n_public = round(args.public_fraction * len(population.labels))
    print(
        f"breast cancer: {len(population.names)} honest models, {len(population.labels)} hidden test rows "
        f"(~{n_public} public), metric {args.metric}, 5 decimals, mean over {args.seeds} competition seeds"
    )
    print(f"{'defense':<36} {'Kendall τ (vs private)':>22} {'best wins':>10} {'mean |rel−true|':>16} {'withheld':>9}")
    for row in run(metric=args.metric, seeds=args.seeds, public_fraction=args.public_fraction):
        print(
            f"{row.defense:<36} {row.tau:>22.3f} {row.best_wins:>10.0%} {row.mean_abs_error:>16.5f} "
            f"{row.withheld:>9.1f}"
        )


if __name__ == "__main__":
    main()
