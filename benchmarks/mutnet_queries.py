"""MutNet (paper 001, Section 5) against model competitions, offline: each attack played with prediction files
(``LocalOracle``) and through models (``ModelOracle``: an honest logistic regression under the ranked Mutator
Network head, run with onnxruntime on the hidden features, its output scored by the same ``LocalOracle``).
Reports queries, exact labels recovered (labels right with confidence 1) and the follow-up model's released
score (the learned labels as a table; on a split board the unrecovered rows are the attack's best guesses).

    .venv/bin/python -m benchmarks.mutnet_queries [--decimals 5] [--skip-hash]

The last table: the registered ``mutnet`` (``auto`` through models on a public-data scikit-learn base) with the
rank head on a host that runs the whole test set at once, and with the feature-hash head on a host that runs one
row at a time in a shuffled order (the rank head fails there), per number of fingerprints and hash seed.

Data: scikit-learn's breast cancer (train 300 rows, 269 hidden; binary log loss) and digits (train 897 rows,
900 hidden, 10 classes; multiclass log loss).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import attacks
from attacks import LocalOracle
from attacks.mutnet import ModelOracle
from attacks.oracle import Released
from tests.sandbox import hostile


def _run(data: bytes, features: np.ndarray, output: str = "probabilities") -> np.ndarray:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return np.asarray(session.run([output], {"X": features.astype(np.float32)})[0])


def _case(name: str, features: np.ndarray, labels: np.ndarray, split: int, metric: str, decimals: int | None,
          attack_names: list[str], public_fraction: float | None = None) -> None:
    hidden_x, hidden_y = features[split:], labels[split:]
    k = int(labels.max()) + 1
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)).fit(features[:split], labels[:split])
    base = onnx.load_model_from_string(hostile.sklearn_onnx(model, features))
    board_options: dict[str, Any] = {"metric": metric, "decimals": decimals}
    if public_fraction is not None:
        board_options.update(public_fraction=public_fraction, seed=3)
    honest_board = LocalOracle(hidden_y, **board_options)
    honest_probabilities = _run(base.SerializeToString(), hidden_x).astype(np.float64)
    honest = honest_board.submit(honest_probabilities[:, 1] if k == 2 else honest_probabilities)
    public = "every row public" if public_fraction is None else f"public split {public_fraction:g}"
    print(f"\n{name}: {len(hidden_y)} hidden rows ({public}), {k} classes, {metric}, {decimals} decimals; "
          f"the honest base model scores {honest}")
    print(f"{'attack':<24} {'files: queries':>14} {'exact':>6} {'models: queries':>15} {'exact':>6} {'s':>6} "
          f"{'follow-up score':>15}")
    for attack in attack_names:
        board = LocalOracle(hidden_y, **board_options)

        def submit_model(data: bytes, board: LocalOracle = board) -> Released:
            output = _run(data, hidden_x).astype(np.float64)
            return board.submit(output[:, 0] if k == 2 else output)

        oracle = ModelOracle(base, submit_model, n_rows=len(hidden_y), n_features=features.shape[1], n_classes=k,
                             metric=metric, decimals=decimals, public_fraction=public_fraction, seed=1)
        rank = _run(oracle.rank.rank_model().SerializeToString(), hidden_x, "rank")
        by_rank = np.empty_like(hidden_y)
        by_rank[rank] = hidden_y
        files = attacks.run(attack, LocalOracle(by_rank, **board_options))
        files_exact = int(((np.asarray(files.labels) == by_rank) & (files.fill_confidence() >= 1.0)).sum())
        files_text = f"{files.queries:>14} {files_exact:>6}"
        start = time.perf_counter()
        try:
            result = attacks.run(attack, oracle)
        except Exception as exc:
            print(f"{attack:<24} {files_text} {'failed: ' + type(exc).__name__:>22}")
            continue
        seconds = time.perf_counter() - start
        learned = np.asarray(result.labels)
        table: Any = learned.astype(np.float64) if k == 2 else np.eye(k)[np.maximum(learned, 0)]
        follow_up = submit_model(oracle.model_for(table))
        confidence = result.fill_confidence()
        exact = int(((learned == by_rank) & (confidence >= 1.0)).sum())
        print(f"{attack:<24} {files_text} {result.queries:>15} {exact:>6} {seconds:>6.1f} "
              f"{follow_up!s:>15}")


def _registered(features: np.ndarray, labels: np.ndarray, split: int, decimals: int | None) -> None:
    from attacks.mutnet import FeatureHash, LocalModelBoard
    from scoring.hidden import public_split_mask

    hidden_x, hidden_y = features[split:], labels[split:]
    n = len(hidden_y)
    options: dict[str, Any] = {"decimals": decimals, "public_fraction": 0.3, "seed": 3}
    mask = public_split_mask(n, 0.3, 3)
    print(f"\nthe registered mutnet, breast cancer {n} hidden rows, public split 0.3 ({mask.sum()} public rows)")
    print(f"{'head':<34} {'host runs':<28} {'queries':>8} {'exact':>6} {'public collisions (seed kept)':>18} "
          f"{'s':>6}")
    files = attacks.run("auto", LocalOracle(hidden_y, **options))
    print(f"{'(prediction files, auto)':<34} {'-':<28} {files.queries:>8} {files.exact:>6} {'-':>18} {'-':>6}")
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("rank (auto)", {}, {}),
        ("auto: rank refused, then hash", {"batch_size": 1, "order_seed": 7}, {}),
    ]
    cases += [(f"hash, {b} fingerprints, seed {s}", {"batch_size": 1, "order_seed": 7},
               {"key": "hash", "buckets": b, "seed": s, "attack": "capacity_split"})
              for b in (4093, 8191) for s in (0, 1)]
    for name, host, params in cases:
        board = LocalModelBoard(hidden_x, hidden_y, **host, **options)
        start = time.perf_counter()
        hashed = "key" in params
        try:
            result = attacks.run("mutnet", board, **params)
            text = f"{result.queries:>8} {result.exact:>6}"
            buckets, seed = result.details["mutnet"]["keys"], result.details["mutnet"]["seed"]
            hashed = result.details["mutnet"]["key"] == "hash"
            if hashed and not params:
                name = f"{name} ({buckets})"
            if result.details["mutnet"]["given_up_queries"]:
                text += f" (seed {seed} kept; {result.details['mutnet']['given_up_queries']} q given up)"
        except Exception as exc:
            text = f"{'failed: ' + type(exc).__name__:>15} ({board.queries} q)"
            buckets, seed = params.get("buckets"), params.get("seed", 0)
        collisions = "-"
        if hashed:
            keys = FeatureHash(n_features=features.shape[1], buckets=buckets, seed=seed).keys_of(hidden_x)
            collisions = str(int(mask.sum()) - len(set(keys[mask].tolist())))
        where = "one row at a time, shuffled" if host else "the whole test set"
        print(f"{name:<34} {where:<28} {text} {collisions:>18} {time.perf_counter() - start:>6.1f}")


def _registered_digits(decimals: int | None) -> None:
    """The registered ``mutnet`` on digits (900 hidden rows, 10 classes, every row public): ``auto`` through
    models on its own public-data base (logistic regression on digits' first 897 rows)."""
    from attacks.mutnet import LocalModelBoard

    x, y = load_digits(return_X_y=True)
    hidden_x, hidden_y = np.asarray(x, dtype=np.float64)[897:], y[897:]
    files = attacks.run("auto", LocalOracle(hidden_y, metric="multiclass_logloss", decimals=decimals))
    board = LocalModelBoard(hidden_x, hidden_y, metric="multiclass_logloss", decimals=decimals)
    start = time.perf_counter()
    result = attacks.run("mutnet", board)
    print(f"\nthe registered mutnet, digits {len(hidden_y)} hidden rows (every row public), 10 classes: "
          f"prediction files (auto) {files.queries} queries, {files.exact} exact; mutnet (rank head) "
          f"{result.queries} queries, {result.exact} exact, {time.perf_counter() - start:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decimals", type=int, default=5)
    parser.add_argument("--skip-hash", action="store_true", help="skip the registered-mutnet table")
    args = parser.parse_args()
    cancer: Callable[..., Any] = load_breast_cancer
    x, y = cancer(return_X_y=True)
    _case("breast cancer", x, y, 300, "binary_logloss", args.decimals,
          ["capacity", "auto", "prime_powers", "binary_representation"])
    _case("breast cancer", x, y, 300, "binary_logloss", args.decimals, ["auto"], public_fraction=0.3)
    x, y = load_digits(return_X_y=True)
    _case("digits", x.astype(np.float64), y, 897, "multiclass_logloss", args.decimals, ["auto"])
    if not args.skip_hash:
        xc, yc = cancer(return_X_y=True)
        _registered(np.asarray(xc, dtype=np.float64), yc, 300, args.decimals)
        _registered_digits(args.decimals)


if __name__ == "__main__":
    main()
