"""The probe detector against honest participants and against attacks, before and after its strengthening
(issue 10), and what the camouflage attack pays to get through.

Detector configurations: **before** (``spike_tolerance: 0, sparse_edits: 0``: the signals of the first
version), **default** (near_spike and sparse_change on, their defaults) and **strict** (``min_changed: 0.5,
sparse_edits: 2``: more attacker cost, more honest false positives).

1. False positives per submission: every model of ``games.population.honest_population`` (13 scikit-learn
   models, several calibrated) on breast cancer over ``--seeds`` train/test splits, and on the 10-class digits.
2. False positives across submissions (one participant's sequence through one stateful detector): the 13
   population models in order, and hyperparameter sweeps an honest participant makes (k-NN k = 3..25, random
   forests re-seeded, logistic-regression C, gradient-boosting rounds, tree depth 1..8), on 3 splits.
3. Detection: every registered attack's queries against a plain ``LocalOracle`` (5 decimals; the single-query
   attacks over the first rows only, which is all they can decode), passed in order through one detector; the
   papers' probes with their constant rows jittered by up to 1e-7 (the camouflage the issue reports); and the
   camouflage attack's queries at each fixed stealth level.
4. Queries for full recovery, 5 decimals: breast-cancer labels (``honest_population(0).labels``, 171 rows) and
   seeded vectors of 2,201 and 25,000 rows: ``capacity`` undefended, ``camouflage`` undefended and against each
   detector with ``reject: true`` (it escalates its cover when refused), beside the counting lower bound
   ``N / information.rounding_bits``.

    .venv/bin/python -m benchmarks.probe_detector_rates [--seeds 10] [--sizes 171,2201,25000] [--quick|--recovery-only]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle, information
from attacks.camouflage import camouflage_attack
from defenses import DefenseContext, MetricView, ScoringView
from defenses.probe_detector import ProbeDetector, is_prime, probe_signals
from games.population import honest_population

CONFIGS: dict[str, dict[str, Any]] = {
    "before": {"spike_tolerance": 0.0, "sparse_edits": 0},
    "default": {},
    "strict": {"min_changed": 0.5, "sparse_edits": 2},
}
COMPETITION_SEED = 20261121


class RecordingOracle:
    """Forwards to a ``LocalOracle`` and keeps every prediction vector submitted."""

    def __init__(self, inner: LocalOracle) -> None:
        self._inner = inner
        self.submitted: list[np.ndarray] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def submit(self, predictions: Any) -> Any:
        rows = [r if isinstance(r, (list, tuple, np.ndarray)) else [r] for r in predictions]
        matrix = np.array([[float(v) for v in r] for r in rows], dtype=np.float64)
        self.submitted.append(matrix[:, 0] if matrix.shape[1] == 1 else matrix)
        return self._inner.submit(predictions)


def flagged_by_detector(submitted: list[np.ndarray], labels: np.ndarray, **params: Any) -> int:
    """How many of one participant's submissions a ``probe_detector`` with ``params`` flags, with its state kept
    between them (the cross-submission signals compare a submission with the earlier ones)."""
    detector = ProbeDetector(**params)
    state = detector.initial_state()
    metric = MetricView("unused", False, lambda p, y: 0.0, None, 1e-15)
    flagged = 0
    for predictions in submitted:
        ctx = DefenseContext(rng=np.random.default_rng(0), state=state, submission_key="",
                             competition_rng=np.random.default_rng(COMPETITION_SEED))
        detector.before_metric(ScoringView(predictions, labels, int(labels.max()) + 1, metric), ctx)
        flagged += bool(ctx.notes)
    return flagged


# --- 1 and 2: honest participants -----------------------------------------------------------------------------


def false_positives(seeds: int) -> list[tuple[str, int, dict[str, int]]]:
    """(data set, honest submissions, flagged per configuration), each submission judged on its own."""
    out = []
    for dataset, n_seeds in (("breast_cancer", seeds), ("digits", max(1, seeds // 5))):
        total = 0
        flagged = dict.fromkeys(CONFIGS, 0)
        for seed in range(n_seeds):
            population = honest_population(seed=seed, dataset=dataset)
            for predictions in population.predictions.values():
                total += 1
                for name, params in CONFIGS.items():
                    flagged[name] += bool(probe_signals(predictions, spike_tolerance=params.get(
                        "spike_tolerance", 1e-3)))
        out.append((dataset, total, flagged))
    return out


def honest_sequences(seeds: int) -> dict[str, list[tuple[list[np.ndarray], np.ndarray]]]:
    """Sequences one honest participant submits: the population's models in order, and hyperparameter sweeps."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    x, y = load_breast_cancer(return_X_y=True)
    sweeps: dict[str, Callable[[int], list[Any]]] = {
        "knn k=3..25": lambda s: [make_pipeline(StandardScaler(), KNeighborsClassifier(k)) for k in range(3, 26)],
        "forest re-seeded": lambda s: [RandomForestClassifier(50, random_state=100 * s + i) for i in range(6)],
        "logreg C sweep": lambda s: [make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
                                     for c in (0.03, 0.1, 0.3, 1, 3, 10)],
        "boosting rounds": lambda s: [GradientBoostingClassifier(n_estimators=m, random_state=s)
                                      for m in (25, 50, 75, 100, 150, 200)],
        "tree depth 1..8": lambda s: [DecisionTreeClassifier(max_depth=d, random_state=s) for d in range(1, 9)],
    }
    out: dict[str, list[tuple[list[np.ndarray], np.ndarray]]] = {"population, in order": []}
    for seed in range(seeds):
        population = honest_population(seed=seed)
        out["population, in order"].append((list(population.predictions.values()), population.labels))
    for name, make in sweeps.items():
        out[name] = []
        for seed in range(min(seeds, 3)):
            x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.3, random_state=seed, stratify=y)
            predictions = [m.fit(x_train, y_train).predict_proba(x_test)[:, 1] for m in make(seed)]
            out[name].append((predictions, y_test))
    return out


def sequence_false_positives(seeds: int) -> list[tuple[str, int, dict[str, int]]]:
    rows = []
    for name, runs in honest_sequences(seeds).items():
        total = sum(len(p) for p, _ in runs)
        flagged = {c: sum(flagged_by_detector(p, y, **params) for p, y in runs) for c, params in CONFIGS.items()}
        rows.append((name, total, flagged))
    return rows


# --- 3: detection ---------------------------------------------------------------------------------------------


def detections() -> list[tuple[str, int, dict[str, int], str]]:
    """(attack, queries submitted, queries flagged per configuration, outcome) per registered attack."""
    binary = honest_population(seed=0).labels
    multiclass = honest_population(seed=0, dataset="digits").labels[:120] % 3
    # Single-query attacks decode a few rows only; give them what they can handle.
    cases: dict[str, tuple[np.ndarray, dict[str, Any]]] = {
        "prime_single": (binary[:20], {"decimals": None}),
        "robust_single": (binary[:10], {"decimals": None}),
        "prime_powers": (multiclass, {"metric": "multiclass_logloss", "n_classes": 3}),
    }
    out = []
    for name in attacks.available():
        if name == "auto":
            continue  # it plays the others
        labels, options = cases.get(name, (binary, {}))
        oracle = RecordingOracle(LocalOracle(labels, seed=1, **{"decimals": 5, **options}))
        try:
            result = attacks.run(name, oracle)
            outcome = f"accuracy {np.mean(np.asarray(result.labels) == labels):.2f}"
        except attacks.AttackFailed as exc:
            outcome = f"failed: {str(exc)[:50]}"
        flagged = {c: flagged_by_detector(oracle.submitted, labels, **p) for c, p in CONFIGS.items()}
        out.append((name, len(oracle.submitted), flagged, outcome))
    return out


def jittered_papers_probes(n: int = 171, seed: int = 0) -> dict[str, np.ndarray]:
    """The papers' batched probes (as pinned in the detector's tests) with the constant rows moved by ≤ 1e-7."""
    rng = np.random.default_rng(seed)
    primes = [q for q in range(2, 400) if is_prime(q)]
    twin = [q for q in primes if q >= 5 and is_prime(q + 2)]
    batches = {
        "paper000_algorithm1": [1 / (1 + q) for q in primes[:6]],
        "paper000_algorithm3": [1 / (1 + 3 * math.exp(2**j * n * 1e-3)) for j in range(1, 7)],
        "paper004_twin_primes": [q / (q + 2) for q in twin[:5]],
        "paper004_binary": [2 ** (2 ** (i - 1)) / (1 + 2 ** (2 ** (i - 1))) for i in range(1, 7)],
        "dsb2017_kernel": [1 / (1 + math.exp(15 * 1.05e-5 * 2**j)) for j in range(15)],
        "single_row": [1e-15],
    }
    out = {}
    for name, values in batches.items():
        probe = 0.5 + rng.uniform(-1e-7, 1e-7, n)
        probe[: len(values)] = values
        out[name] = probe
    return out


def camouflage_detection(n: int = 2201) -> list[tuple[str, int, dict[str, int]]]:
    """The camouflage attack's queries at each fixed stealth level (undefended board, so none is refused),
    through each detector configuration."""
    labels = np.random.default_rng(2201).integers(0, 2, n)
    rows = []
    for level in range(4):
        oracle = RecordingOracle(LocalOracle(labels, decimals=5))
        camouflage_attack(oracle, level=level, max_level=level, seed=1)
        flagged = {c: flagged_by_detector(oracle.submitted, labels, **p) for c, p in CONFIGS.items()}
        rows.append((f"camouflage level {level}", len(oracle.submitted), flagged))
    return rows


# --- 4: queries -----------------------------------------------------------------------------------------------


def recovery(sizes: list[int]) -> Iterator[dict[str, Any]]:
    """Queries for full recovery per data set and board (each run seeded), one row at a time."""
    for n in sizes:
        labels = honest_population(seed=0).labels if n == 171 else np.random.default_rng(n).integers(0, 2, n)
        name = "breast cancer (171)" if n == 171 else f"seeded {n:,}"
        bound = information.queries_lower_bound(n, information.rounding_bits(n, 5), float(labels.mean()))
        boards: list[tuple[str, str, list[dict[str, Any]]]] = [
            ("capacity", "undefended", []),
            ("camouflage", "undefended", []),
        ] + [("camouflage", f"detector {c}", [{"name": "probe_detector", "reject": True, **p}])
             for c, p in CONFIGS.items()]
        for attack, board, chain in boards:
            oracle = LocalOracle(labels, decimals=5, defenses=chain, seed=1)
            started = time.perf_counter()
            try:
                result = attacks.run(attack, oracle)
                accuracy = result.accuracy(labels)
                info = result.details
            except attacks.AttackFailed as exc:
                accuracy, info = float("nan"), {"error": str(exc)}
            yield {"data": name, "attack": attack, "board": board, "queries": oracle.queries,
                   "accuracy": accuracy, "refused": info.get("refused", 0), "level": info.get("stealth_level"),
                   "bound": bound, "seconds": time.perf_counter() - started}


def _rates(flagged: dict[str, int], total: int) -> str:
    return "  ".join(f"{c} {flagged[c]:>4}/{total:<4} ({flagged[c] / max(total, 1):>4.0%})" for c in CONFIGS)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sizes", default="171,2201,25000")
    parser.add_argument("--quick", action="store_true", help="sections 1-3 only")
    parser.add_argument("--recovery-only", action="store_true", help="section 4 only")
    args = parser.parse_args(argv)
    if not args.recovery_only:
        rates(args.seeds)
    if not args.quick:
        queries([int(s) for s in args.sizes.split(",")])


def rates(seeds: int) -> None:
    """Sections 1-3."""
    print("1. False positives per submission, honest scikit-learn models (13 per split)")
    for dataset, total, flagged in false_positives(seeds):
        print(f"  {dataset:<22} {_rates(flagged, total)}")
    print("2. False positives across one honest participant's submissions (stateful detector)")
    for name, total, flagged in sequence_false_positives(seeds):
        print(f"  {name:<22} {_rates(flagged, total)}")
    print("3. Detection: queries flagged (no defense on the board, 5 decimals)")
    for name, total, flagged, outcome in detections():
        print(f"  {name:<22} {_rates(flagged, total)}   attack {outcome}")
    probes = jittered_papers_probes()
    print(f"  {'papers, 1e-7 jitter':<22} " + _rates(
        {c: sum(bool(probe_signals(p, spike_tolerance=params.get("spike_tolerance", 1e-3))) for p in probes.values())
         for c, params in CONFIGS.items()}, len(probes)))
    for name, total, flagged in camouflage_detection():
        print(f"  {name:<22} {_rates(flagged, total)}")


def queries(sizes: list[int]) -> None:
    """Section 4."""
    print("4. Queries for full recovery (5 decimals; bound = N·h(balance) / rounding_bits)")
    print(f"  {'data':<20} {'attack':<11} {'board':<18} {'queries':>8} {'accuracy':>9} {'refused':>8} {'level':>6} "
          f"{'bound':>7} {'seconds':>8}")
    for row in recovery(sizes):
        level = "" if row["level"] is None else str(row["level"])
        print(f"  {row['data']:<20} {row['attack']:<11} {row['board']:<18} {row['queries']:>8} "
              f"{row['accuracy']:>9.3f} {row['refused']:>8} {level:>6} {row['bound']:>7.0f} {row['seconds']:>8.1f}",
              flush=True)


if __name__ == "__main__":
    main()
