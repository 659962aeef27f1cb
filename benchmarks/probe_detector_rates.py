"""The probe detector's false-positive rate on honest models and its detection rate on real attack queries.

False positives: every model of ``games.population.honest_population`` (13 scikit-learn models, several
calibrated) on breast cancer over ``--seeds`` train/test splits, and on the 10-class digits data.
Detection: every registered attack is run against a plain ``LocalOracle`` (5 decimals, no defense) over the
breast-cancer test labels (multiclass attacks over digits labels; the single-query attacks over the first
rows only, which is all they can decode); every prediction vector it submits is recorded and passed, in
order, through one default ``probe_detector`` (state kept, as for one participant on the site).

    .venv/bin/python -m benchmarks.probe_detector_rates [--seeds 10]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle
from defenses import DefenseContext, MetricView, ScoringView
from defenses.probe_detector import ProbeDetector, probe_signals
from games.population import honest_population


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


def false_positives(seeds: int) -> list[tuple[str, int, int]]:
    """(data set, honest submissions, flagged) per data set."""
    out = []
    for dataset, n_seeds in (("breast_cancer", seeds), ("digits", max(1, seeds // 5))):
        total = flagged = 0
        for seed in range(n_seeds):
            population = honest_population(seed=seed, dataset=dataset)
            for predictions in population.predictions.values():
                total += 1
                flagged += bool(probe_signals(predictions))
        out.append((dataset, total, flagged))
    return out


def detections() -> list[tuple[str, int, int, str]]:
    """(attack, queries submitted, queries flagged, outcome) per registered attack."""
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
        labels, options = cases.get(name, (binary, {}))
        oracle = RecordingOracle(LocalOracle(labels, seed=1, **{"decimals": 5, **options}))
        try:
            result = attacks.run(name, oracle)
            outcome = f"accuracy {np.mean(np.asarray(result.labels) == labels):.2f}"
        except attacks.AttackFailed as exc:
            outcome = f"failed: {str(exc)[:60]}"
        out.append((name, len(oracle.submitted), flagged_by_detector(oracle.submitted, labels), outcome))
    return out


def flagged_by_detector(submitted: list[np.ndarray], labels: np.ndarray) -> int:
    """How many of one participant's submissions the default ``probe_detector`` flags, with its state kept
    between them (the random-hard-labels signal compares a submission with the earlier ones)."""
    detector = ProbeDetector()
    state = detector.initial_state()
    metric = MetricView("unused", False, lambda p, y: 0.0, None, 1e-15)
    flagged = 0
    for predictions in submitted:
        ctx = DefenseContext(rng=np.random.default_rng(0), state=state, submission_key="")
        detector.before_metric(ScoringView(predictions, labels, int(labels.max()) + 1, metric), ctx)
        flagged += bool(ctx.notes)
    return flagged


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    print("False positives on honest scikit-learn models (13 models per split)")
    for dataset, total, flagged in false_positives(args.seeds):
        print(f"  {dataset:<14} {flagged}/{total} flagged  (FPR {flagged / total:.1%})")
    print("Detection on the queries the registered attacks submit (no defense, 5 decimals)")
    for name, total, flagged, outcome in detections():
        rate = f"{flagged / total:.0%}" if total else "n/a"
        print(f"  {name:<22} {flagged:>4}/{total:<4} flagged ({rate:>4})   attack {outcome}")


if __name__ == "__main__":
    main()
