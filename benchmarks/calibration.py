"""Are the posteriors calibrated? Per attack, seeded boards pooled, the labels of each confidence decile (equal
counts): their mean confidence against the share of them that is right. Prints the table of
``docs/figures/calibration.md``.

    python -m benchmarks.calibration            # every attack
    python -m benchmarks.calibration majority   # one

The boards (each attack's own collector below; the tests in ``tests/attacks/test_calibration_attacks.py`` play
the same collectors on fewer seeds):

* ``majority``: 3 classes (softmax CE on logits), 20 rows a board, class shares drawn from a flat Dirichlet (the
  prior the posterior assumes) and each row's class from them; the balance read from the two constant probes
  through Laplace noise of scale 10^-2 … 10, the majority class at its posterior (:mod:`attacks.noisy.shares`).
* ``one_vs_rest``: 3-class log loss, 300 rows, Laplace 10^-2 on the mean, 0.8 queries a row (two binary runs cut
  short).
* ``one_vs_rest_brier``: 6-class Brier, 300 rows, Laplace 10^-3 on the mean, 1.5 queries a row (three binary runs,
  each below AMP's threshold); the class shares drawn from a flat Dirichlet (balanced and unbalanced boards).
* ``noisy_split``: binary log loss, 300 rows, half of them public (undisclosed), Laplace 0.1, 0.8 queries a row (cut
  short); a label is right when its row is public and its label is the true one.
* ``noisy_split_short``: as ``noisy_split`` under Laplace 0.05 with 0.6 queries a row: every board cut short.
* ``budgeted``: binary log loss, 200 rows, 20–80 % ones, Laplace noise of ε = 10 a release under a privacy budget
  of ε = 60 (six releases), the noise scale from the disclosed ε.
* ``split_guess``: ``auto`` on 4-class boards of 60 rows scoring a half split under Laplace noise (even seeds:
  log loss, noise 0.5 on the mean; odd: softmax CE, 1.0), class shares drawn from a flat Dirichlet, 300 queries;
  every label (the public rows ``one_vs_rest`` decodes, the private rows the majority guess).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

import numpy as np

import attacks
from attacks import LocalOracle
from attacks.balance import measure_balance

Pooled = tuple[np.ndarray, np.ndarray]


def decile_table(confidence: np.ndarray, right: np.ndarray) -> list[tuple[int, float, float]]:
    """(labels, mean confidence, share right) of each tenth of the labels ordered by confidence (equal counts)."""
    order = np.argsort(confidence, kind="stable")
    return [(len(d), float(confidence[d].mean()), float(right[d].mean())) for d in np.array_split(order, 10)]


def _pool(parts: Iterable[Pooled]) -> Pooled:
    confidences, rights = zip(*parts, strict=True)
    return np.concatenate(confidences), np.concatenate(rights)


def majority_board(seed: int, n: int = 20, k: int = 3) -> Pooled:
    """One ``majority`` board (module docstring): the confidences and which labels are right."""
    rng = np.random.default_rng(50_000 + seed)
    shares = rng.dirichlet(np.ones(k))
    truth = rng.choice(k, size=n, p=shares)
    scale = float(10.0 ** rng.uniform(-2, 1))
    oracle = LocalOracle(truth, metric="softmax_ce", n_classes=k, decimals=5, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])
    rates = measure_balance(oracle).rates
    assert rates is not None
    # The noise as the fingerprint reports it: the spread of label-free probes (one draw of it, |a − b|).
    spread = abs(float(rng.laplace(0.0, scale) - rng.laplace(0.0, scale)))
    result = attacks.run("majority", oracle, rates=[float(r) for r in rates], spread=max(spread, 1e-12))
    return result.fill_confidence(), result.labels == truth


def one_vs_rest_board(seed: int, n: int = 300) -> Pooled:
    truth = np.random.default_rng(100 + seed).integers(0, 3, n)
    oracle = LocalOracle(truth, metric="multiclass_logloss", decimals=5, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-2}])
    result = attacks.run("one_vs_rest", oracle, budget=int(0.8 * n), seed=seed)
    return result.fill_confidence(), result.labels == truth


def one_vs_rest_brier_board(seed: int, n: int = 300, k: int = 6) -> Pooled:
    rng = np.random.default_rng(300 + seed)
    truth = rng.choice(k, n, p=rng.dirichlet(np.ones(k)))
    oracle = LocalOracle(truth, metric="brier", n_classes=k, decimals=5, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}])
    result = attacks.run("one_vs_rest", oracle, budget=int(1.5 * n), seed=seed)
    return result.fill_confidence(), result.labels == truth


def noisy_split_board(seed: int, n: int = 300, scale: float = 0.1, queries: float = 0.8) -> Pooled:
    truth = np.random.default_rng(100 + seed).integers(0, 2, n)
    oracle = LocalOracle(truth, decimals=5, public_fraction=0.5, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])
    public = oracle.spec.hidden.public_mask
    oracle.public_fraction = None  # undisclosed: the attack finds the split itself
    result = attacks.run("noisy_split", oracle, budget=int(queries * n), seed=seed)
    said = result.labels >= 0
    return result.fill_confidence()[said], ((result.labels == truth) & public)[said]


def noisy_split_short_board(seed: int) -> Pooled:
    return noisy_split_board(seed, scale=0.05, queries=0.6)


def budgeted_board(seed: int, n: int = 200) -> Pooled:
    rng = np.random.default_rng(100 + seed)
    truth = (rng.random(n) < rng.uniform(0.2, 0.8)).astype(np.int64)
    chain = [{"name": "noise", "kind": "laplace", "epsilon": 10.0},
             {"name": "privacy_budget", "epsilon": 60.0, "composition": "basic"}, {"name": "rounding", "decimals": 5}]
    result = attacks.run("budgeted", LocalOracle(truth, decimals=5, seed=seed, defenses=chain), epsilon=10.0)
    return result.fill_confidence(), result.labels == truth


def split_guess_board(seed: int, n: int = 60, k: int = 4) -> Pooled:
    metric, scale = ("multiclass_logloss", 0.5) if seed % 2 == 0 else ("softmax_ce", 1.0)
    rng = np.random.default_rng(60_000 + seed)
    truth = rng.choice(k, size=n, p=rng.dirichlet(np.ones(k)))
    oracle = LocalOracle(truth, metric=metric, n_classes=k, decimals=5, public_fraction=0.5, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])
    result = attacks.run("auto", oracle, budget=300, seed=seed)
    return result.fill_confidence(), result.labels == truth


#: Each attack's board and the seeds the benchmark pools.
BOARDS: dict[str, tuple[Callable[[int], Pooled], int]] = {
    "majority": (majority_board, 400),
    "one_vs_rest": (one_vs_rest_board, 100),
    "one_vs_rest_brier": (one_vs_rest_brier_board, 100),
    "noisy_split": (noisy_split_board, 60),
    "noisy_split_short": (noisy_split_short_board, 40),
    "budgeted": (budgeted_board, 40),
    "split_guess": (split_guess_board, 16),
}


def pooled(name: str, seeds: Iterable[int]) -> Pooled:
    board, _ = BOARDS[name]
    return _pool(board(seed) for seed in seeds)


def main(names: list[str]) -> None:
    print("| attack | labels | " + " | ".join(f"d{i + 1}" for i in range(10)) + " |")
    print("|---|---|" + "---|" * 10)
    for name in names or list(BOARDS):
        confidence, right = pooled(name, range(BOARDS[name][1]))
        cells = " | ".join(f"{mean:.3f} / {rate:.3f}" for _, mean, rate in decile_table(confidence, right))
        print(f"| {name} | {len(confidence)} | {cells} |", flush=True)
    print("\nEach cell: the decile's mean confidence / the share of its labels right.")


if __name__ == "__main__":
    main(sys.argv[1:])
