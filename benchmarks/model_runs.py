"""What the sandbox costs: an honest population of scikit-learn models exported to ONNX (skl2onnx), each run
on breast cancer's 269 hidden rows in the sandboxed child (``sandbox.run_model``) and, as the baseline in the
same run, in this process with onnxruntime and no limits. Also the graph check's time, each model's size and
node count, and the hostile models' outcomes with the site's default limits (30 s CPU, 60 s wall, 2 GiB)
unless ``--quick`` (2 s, 4 s, 512 MiB).

    .venv/bin/python -m benchmarks.model_runs [--repeats 5] [--quick]

Time: the median of ``--repeats`` runs each, sandbox and baseline interleaved so machine noise hits both.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from sandbox import Limits, ModelContract, ModelRefused, ModelRunFailed, run_model, validate_model
from tests.sandbox import hostile

POPULATION: dict[str, Callable[[], Any]] = {
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    "tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    "forest (100 trees)": lambda: RandomForestClassifier(n_estimators=100, random_state=0),
    "boosting": lambda: GradientBoostingClassifier(random_state=0),
    "naive Bayes": GaussianNB,
    "kNN": lambda: make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=9)),
    "MLP": lambda: make_pipeline(StandardScaler(), MLPClassifier((32,), max_iter=1000, random_state=0)),
    "SVC": lambda: make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)),
}
HOSTILE: dict[str, Callable[[], bytes]] = {
    "NaN outputs": hostile.nan_output,
    "feature-dependent row count": hostile.fewer_rows,
    "runtime error (index from a feature)": hostile.index_error,
    "memory bomb (N x 10^7 floats)": hostile.memory_bomb,
    "endless Loop": hostile.endless_loop,
    "external data (/etc/passwd)": lambda: hostile.reads_a_file("/etc/passwd"),
    "custom operator": hostile.custom_operator,
    "random operator": hostile.random_operator,
    "20,001 nodes": lambda: hostile.huge_graph(20_001),
}


def _in_process(data: bytes, features: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    (output,) = session.run(["probabilities"], {"X": features.astype(np.float32)})
    return np.asarray(output)[:, 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="tight limits for the hostile models")
    args = parser.parse_args()
    features, labels = hostile.breast_cancer()
    train, hidden = slice(0, 300), slice(300, None)
    contract = ModelContract(n_features=30, n_classes=2, n_rows=269)
    limits = Limits(cpu_seconds=2, wall_seconds=4, memory_bytes=512 * 2**20) if args.quick else Limits()
    print(f"honest population on breast cancer (train 300 rows, hidden 269), median of {args.repeats}")
    print(f"{'model':<20} {'KiB':>7} {'nodes':>5} {'check ms':>8} {'sandbox ms':>10} {'in-process ms':>13} "
          f"{'log loss':>8}  isolation")
    isolation: tuple[str, ...] = ()
    for name, make in POPULATION.items():
        model = make().fit(features[train], labels[train])
        data = hostile.sklearn_onnx(model, features)
        start = time.perf_counter()
        accepted = validate_model(data, contract)
        check = time.perf_counter() - start
        sandboxed, baseline = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            output = run_model(data, features[hidden], accepted, contract, limits)
            sandboxed.append(time.perf_counter() - start)
            start = time.perf_counter()
            reference = _in_process(data, features[hidden])
            baseline.append(time.perf_counter() - start)
        assert np.allclose(output.predictions, reference, atol=1e-6)
        isolation = output.isolation
        loss = log_loss(labels[hidden], np.clip(output.predictions, 1e-15, 1 - 1e-15), labels=[0, 1])
        print(f"{name:<20} {len(data) / 1024:>7.1f} {accepted.n_nodes:>5} {check * 1e3:>8.1f} "
              f"{statistics.median(sandboxed) * 1e3:>10.0f} {statistics.median(baseline) * 1e3:>13.1f} "
              f"{loss:>8.4f}")
    print("isolation the child reported:", "; ".join(isolation) or "resource limits only")
    print(f"\nhostile models, limits: {limits.describe()}")
    for name, build in HOSTILE.items():
        data = build()
        start = time.perf_counter()
        try:
            accepted = validate_model(data, contract)
            run_model(data, features[hidden], accepted, contract, limits)
            outcome = "RAN (should not)"
        except ModelRefused as exc:
            outcome = f"refused at upload: {exc}"
        except ModelRunFailed as exc:
            outcome = f"failed: {exc}"
        print(f"  {name:<38} {time.perf_counter() - start:>6.2f} s  {outcome}")


if __name__ == "__main__":
    main()
