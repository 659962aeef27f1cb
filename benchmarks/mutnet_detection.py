"""Can the host tell a MutNet model (paper 001, Section 5) from an honest one? Detection and false-positive rates
of the four detectors of :mod:`games.model_screen` (graph, outputs, probes, behaviour) and of their union.

* **Honest population**: scikit-learn models (logistic regression, decision trees, random forests, gradient
  boosting, MLPs, SVMs with probabilities, at several hyper-parameters) trained on breast cancer (300 rows,
  269 hidden) and digits (897 rows, 900 hidden), over ``--seeds`` train/test splits, exported with skl2onnx.
* **MutNet population**: the queries the attacks ``capacity``, ``prime_batched``, ``boosting`` and ``camouflage``
  (binary) and ``auto`` (digits) submit against the hidden labels (in the head's rank order, as
  :class:`attacks.mutnet.ModelOracle` plays them), up to ``--queries`` per attack, each carried by the ranked
  Mutator Network head on an honest base model; and Theorem 6's literal head (one θ for every row).
* **Adaptive MutNet** (built to pass the graph check): the same ranked lookup spelled without ``TopK``,
  ``Gather``, ``Scatter`` or a ReLU head — ranks from a broadcast ``Less`` against the reshaped projection and a
  ``ReduceSum`` over columns, the table read by ``Equal`` against a ``Range`` + ``MatMul`` (padded past the row
  count, so no constant has one entry per row), and the honest output kept alive with a 1e-6 weight.

    .venv/bin/python -m benchmarks.mutnet_detection [--seeds 2] [--queries 4] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import attacks
from attacks import LocalOracle
from attacks.mutnet import FeatureRank, mutator_head, ranked_mutator_head
from games.model_screen import DETECTORS, Screening, screen_model

OPSET = 17


@dataclass
class Case:
    """One model to screen: its bytes, the hidden features and labels it runs on, and what it is."""

    kind: str  # "honest", "mutnet" or "adaptive"
    name: str
    data: bytes
    features: np.ndarray


def sklearn_onnx(model: Any, features: np.ndarray) -> onnx.ModelProto:
    from skl2onnx import to_onnx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_onnx(model, features[:1].astype(np.float32), target_opset={"": OPSET, "ai.onnx.ml": 3},
                       options={id(model): {"zipmap": False}})


def runner(data: bytes, n_classes: int) -> Callable[[np.ndarray], np.ndarray]:
    """The host's run of a model: scored predictions (binary: P(class 1))."""
    options = ort.SessionOptions()
    options.log_severity_level = 4  # a ranked head failing on half a batch is expected; the screen reports it
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    output = "probabilities" if any(o.name == "probabilities" for o in session.get_outputs()) else \
        session.get_outputs()[0].name

    def run(features: np.ndarray) -> np.ndarray:
        (values,) = session.run([output], {name: np.asarray(features, dtype=np.float32)})
        values = np.asarray(values, dtype=np.float64)
        if n_classes == 2 and values.ndim == 2:
            return values[:, -1]
        return values

    return run


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    from sklearn.datasets import load_breast_cancer, load_digits

    x, y = load_breast_cancer(return_X_y=True)
    xd, yd = load_digits(return_X_y=True)
    return {"breast_cancer": (x, y, 300), "digits": (xd.astype(np.float64), yd, 897)}


def honest_estimators(quick: bool) -> dict[str, tuple[str, dict[str, Any]]]:
    """Name → (kind, hyper-parameters) of the honest models; :func:`honest_model` builds one."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for c in (0.01, 1.0) if quick else (0.01, 0.1, 1.0, 10.0):
        out[f"logreg C={c:g}"] = ("logreg", {"C": c, "max_iter": 3000})
    for depth in (2, None) if quick else (2, 4, 8, None):
        out[f"tree depth={depth}"] = ("tree", {"max_depth": depth})
    for trees, depth in ((20, None),) if quick else ((10, None), (50, 6), (100, None)):
        out[f"forest {trees}x{depth}"] = ("forest", {"n_estimators": trees, "max_depth": depth})
    for rounds, depth in ((20, 2),) if quick else ((20, 2), (50, 3), (100, 3)):
        out[f"boosting {rounds}x{depth}"] = ("boosting", {"n_estimators": rounds, "max_depth": depth})
    for hidden in ((16,),) if quick else ((16,), (64,), (32, 16)):
        out[f"mlp {hidden}"] = ("mlp", {"hidden_layer_sizes": hidden, "max_iter": 500})
    for c, kernel in ((1.0, "rbf"),) if quick else ((1.0, "rbf"), (10.0, "rbf"), (1.0, "linear")):
        out[f"svm {kernel} C={c:g}"] = ("svm", {"C": c, "kernel": kernel, "probability": True})
    return out


def honest_model(kind: str, params: dict[str, Any], seed: int) -> Any:
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    if kind == "logreg":
        return make_pipeline(StandardScaler(), LogisticRegression(**params))
    scaled = kind in ("mlp", "svm")
    classes = {"tree": DecisionTreeClassifier, "forest": RandomForestClassifier, "boosting": GradientBoostingClassifier,
               "mlp": MLPClassifier, "svm": SVC}
    model = classes[kind](**params, random_state=seed)
    return make_pipeline(StandardScaler(), model) if scaled else model


def honest_cases(seeds: int, quick: bool) -> tuple[list[Case], dict[str, dict[str, onnx.ModelProto]]]:
    """The honest population, and per data set the bases the heads sit on (seed 0's models)."""
    from sklearn.model_selection import train_test_split

    cases: list[Case] = []
    bases: dict[str, dict[str, onnx.ModelProto]] = {}
    for dataset, (x, y, split) in datasets().items():
        bases[dataset] = {}
        for seed in range(seeds):
            x_train, x_test, y_train, _ = train_test_split(x, y, train_size=split, random_state=seed, stratify=y)
            for name, (kind, params) in honest_estimators(quick).items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = honest_model(kind, params, seed).fit(x_train, y_train)
                exported = sklearn_onnx(model, x_train)
                cases.append(Case("honest", f"{dataset} {name}", exported.SerializeToString(), x_test))
                if seed == 0:
                    bases[dataset][name] = exported
    return cases, bases


class RecordingOracle:
    """Forwards to a ``LocalOracle`` and keeps every prediction vector submitted."""

    def __init__(self, inner: LocalOracle) -> None:
        self._inner = inner
        self.submitted: list[np.ndarray] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def submit(self, predictions: Any) -> Any:
        self.submitted.append(np.array(predictions, dtype=np.float64))
        return self._inner.submit(predictions)


def attack_queries(labels: np.ndarray, attack: str, limit: int, **options: Any) -> list[np.ndarray]:
    """Up to ``limit`` of the queries ``attack`` submits against ``labels`` (5 decimals), evenly spaced."""
    oracle = RecordingOracle(LocalOracle(labels, decimals=5, seed=1, **options))
    with contextlib.suppress(attacks.AttackFailed):
        attacks.run(attack, oracle)
    queries = oracle.submitted
    if len(queries) > limit:
        queries = [queries[i] for i in np.linspace(0, len(queries) - 1, limit).round().astype(int)]
    return queries


def mutnet_cases(bases: dict[str, dict[str, onnx.ModelProto]], limit: int, quick: bool) -> list[Case]:
    from sklearn.model_selection import train_test_split

    plan = {
        "breast_cancer": (["capacity", "prime_batched", "boosting", "camouflage"], {}),
        "digits": (["auto"], {"metric": "multiclass_logloss"}),
    }
    cases: list[Case] = []
    for dataset, (x, y, split) in datasets().items():
        _, x_test, _, y_test = train_test_split(x, y, train_size=split, random_state=0, stratify=y)
        k = int(y.max()) + 1
        rank = FeatureRank(n_features=x.shape[1], n_rows=len(y_test), seed=1)
        order = runner(rank.rank_model().SerializeToString(), 0)
        ranks = np.asarray(order(x_test), dtype=np.int64)
        by_rank = np.empty_like(y_test)
        by_rank[ranks] = y_test
        names = list(bases[dataset])[:: 3 if quick else 1]
        attack_names, options = plan[dataset]
        for attack in attack_names:
            for i, query in enumerate(attack_queries(by_rank, attack, limit, **options)):
                base_name = names[i % len(names)]
                table = query if k > 2 else query.reshape(len(y_test), -1)
                head = ranked_mutator_head(bases[dataset][base_name], table, rank)
                cases.append(Case("mutnet", f"{dataset} {attack} q{i} on {base_name}", head.SerializeToString(),
                                  x_test))
        theta = np.full(1 if k == 2 else k, 1 / 3 if k == 2 else 1 / k)
        for base_name in names[:2]:
            head = mutator_head(bases[dataset][base_name], theta)
            cases.append(Case("mutnet", f"{dataset} theorem 6 literal on {base_name}", head.SerializeToString(),
                              x_test))
    return cases


def adaptive_head(base: onnx.ModelProto, table: np.ndarray, rank: FeatureRank, *, pad: int = 7) -> onnx.ModelProto:
    """The ranked lookup with none of the operators the graph check keys on (see the module docstring)."""
    table = np.asarray(table, dtype=np.float64)
    table = table[:, None] if table.ndim == 1 else table
    n, width = table.shape
    model = onnx.ModelProto()
    model.CopyFrom(base)
    graph = model.graph
    features = graph.input[0].name
    for node in graph.node:
        node.output[:] = ["honest_internal" if o == "probabilities" else o for o in node.output]
        node.input[:] = ["honest_internal" if o == "probabilities" else o for o in node.input]
    kept = [value for value in graph.output if value.name != "probabilities"]
    del graph.output[:]
    graph.output.extend(kept)
    padded = np.vstack([table, np.full((pad, width), 0.5)])
    graph.node.extend([
        helper.make_node("MatMul", [features, "a_projection"], ["a_projected"]),
        helper.make_node("Reshape", ["a_projected", "a_row_shape"], ["a_all"]),
        helper.make_node("Less", ["a_all", "a_projected"], ["a_below"]),
        helper.make_node("Cast", ["a_below"], ["a_below_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["a_below_f", "a_axis1"], ["a_rank"], keepdims=1),
        helper.make_node("Range", ["a_zero", "a_count", "a_one"], ["a_range"]),
        helper.make_node("Unsqueeze", ["a_range", "a_axis0"], ["a_positions"]),
        helper.make_node("Equal", ["a_rank", "a_positions"], ["a_hit"]),
        helper.make_node("Cast", ["a_hit"], ["a_hit_d"], to=TensorProto.DOUBLE),
        helper.make_node("MatMul", ["a_hit_d", "a_table"], ["a_value"]),
        helper.make_node("Cast", ["honest_internal"], ["a_honest_d"], to=TensorProto.DOUBLE),
        helper.make_node("Slice", ["a_honest_d", "a_start", "a_end", "a_axis1"], ["a_honest_cols"]),
        helper.make_node("Sub", ["a_honest_cols", "a_value"], ["a_gap"]),
        helper.make_node("Mul", ["a_gap", "a_tiny"], ["a_nudge"]),
        helper.make_node("Add", ["a_value", "a_nudge"], ["probabilities"]),
    ])
    start = 1 if width == 1 else 0
    graph.initializer.extend([
        numpy_helper.from_array(rank.projection, "a_projection"),
        numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "a_row_shape"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "a_axis1"),
        numpy_helper.from_array(np.array(0, dtype=np.float32), "a_zero"),
        numpy_helper.from_array(np.array(n + pad, dtype=np.float32), "a_count"),
        numpy_helper.from_array(np.array(1, dtype=np.float32), "a_one"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "a_axis0"),
        numpy_helper.from_array(padded, "a_table"),
        numpy_helper.from_array(np.array([start], dtype=np.int64), "a_start"),
        numpy_helper.from_array(np.array([start + width], dtype=np.int64), "a_end"),
        numpy_helper.from_array(np.array(1e-6, dtype=np.float64), "a_tiny"),
    ])
    graph.output.append(helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE, [None, width]))
    onnx.checker.check_model(model)
    return model


def rowwise_head(base: onnx.ModelProto, offsets: np.ndarray, projection: np.ndarray, edges: tuple[float, float],
                 *, pad: int = 7) -> onnx.ModelProto:
    """A head that scores every row on its own and stays close to the honest model: the honest logit plus
    ``offsets[bucket(v)]``, the bucket a uniform cut of a projection ``v · a`` spelled as a count of ``Less``
    against ``Range``-made thresholds (no ``Floor``, ``Mod``, integer cast, ``Gather`` or stored row table).
    Binary only; ``offsets`` in logit, small (the code of a camouflage-style query)."""
    offsets = np.asarray(offsets, dtype=np.float32)
    buckets = len(offsets)
    low, high = edges
    width = (high - low) / buckets
    model = onnx.ModelProto()
    model.CopyFrom(base)
    graph = model.graph
    features = graph.input[0].name
    for node in graph.node:
        node.output[:] = ["honest_internal" if o == "probabilities" else o for o in node.output]
        node.input[:] = ["honest_internal" if o == "probabilities" else o for o in node.input]
    kept = [value for value in graph.output if value.name != "probabilities"]
    del graph.output[:]
    graph.output.extend(kept)
    padded = np.concatenate([offsets, np.zeros(pad, dtype=np.float32)])[:, None]
    graph.node.extend([
        helper.make_node("Cast", [features], ["r_x"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["r_x", "r_projection"], ["r_projected"]),
        helper.make_node("Range", ["r_low", "r_high", "r_width"], ["r_edges"]),
        helper.make_node("Unsqueeze", ["r_edges", "r_axis0"], ["r_edges_row"]),
        helper.make_node("Less", ["r_edges_row", "r_projected"], ["r_above"]),
        helper.make_node("Cast", ["r_above"], ["r_above_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["r_above_f", "r_axis1"], ["r_bucket"], keepdims=1),
        helper.make_node("Range", ["r_zero", "r_count", "r_one"], ["r_ids"]),
        helper.make_node("Unsqueeze", ["r_ids", "r_axis0"], ["r_ids_row"]),
        helper.make_node("Equal", ["r_bucket", "r_ids_row"], ["r_hit"]),
        helper.make_node("Cast", ["r_hit"], ["r_hit_f"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["r_hit_f", "r_offsets"], ["r_offset"]),
        helper.make_node("Slice", ["honest_internal", "r_one_i", "r_two_i", "r_axis1"], ["r_p"]),
        helper.make_node("Sub", ["r_one", "r_p"], ["r_q"]),
        helper.make_node("Div", ["r_p", "r_q"], ["r_odds"]),
        helper.make_node("Log", ["r_odds"], ["r_logit"]),
        helper.make_node("Add", ["r_logit", "r_offset"], ["r_moved"]),
        helper.make_node("Sigmoid", ["r_moved"], ["probabilities"]),
    ])
    graph.initializer.extend([
        numpy_helper.from_array(projection.astype(np.float32), "r_projection"),
        numpy_helper.from_array(np.array(low + width, dtype=np.float32), "r_low"),
        numpy_helper.from_array(np.array(high - width / 2, dtype=np.float32), "r_high"),
        numpy_helper.from_array(np.array(width, dtype=np.float32), "r_width"),
        numpy_helper.from_array(np.array(0, dtype=np.float32), "r_zero"),
        numpy_helper.from_array(np.array(buckets + pad, dtype=np.float32), "r_count"),
        numpy_helper.from_array(np.array(1, dtype=np.float32), "r_one"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "r_one_i"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "r_two_i"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "r_axis0"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "r_axis1"),
        numpy_helper.from_array(padded, "r_offsets"),
    ])
    graph.output.append(helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, 1]))
    onnx.checker.check_model(model)
    return model


def rowwise_cases(bases: dict[str, dict[str, onnx.ModelProto]], limit: int) -> list[Case]:
    """Row-wise adaptive heads on breast cancer: 64 buckets of a seeded projection over the spread an attacker
    can read off public data (the training rows), one bucket's logit moved by ±0.05 per query, as a
    camouflage-style query through a model would. What the host would see; the decoder is not built here."""
    from sklearn.model_selection import train_test_split

    x, y, split = datasets()["breast_cancer"]
    x_train, x_test, _, _ = train_test_split(x, y, train_size=split, random_state=0, stratify=y)
    projection = np.random.default_rng(4).standard_normal((x.shape[1], 1)) / x_train.std(axis=0)[:, None]
    values = (x_train @ projection)[:, 0]
    edges = (float(values.min()), float(values.max()))
    cases = []
    names = [n for n in bases["breast_cancer"] if not n.startswith("tree")]
    rng = np.random.default_rng(5)
    for i in range(2 * limit):
        offsets = np.zeros(64)
        offsets[rng.integers(64)] = rng.choice([-0.05, 0.05])
        base_name = names[i % len(names)]
        head = rowwise_head(bases["breast_cancer"][base_name], offsets, projection, edges)
        cases.append(Case("row-wise", f"breast_cancer bucket query {i} on {base_name}", head.SerializeToString(),
                          x_test))
    return cases


def adaptive_cases(bases: dict[str, dict[str, onnx.ModelProto]], limit: int) -> list[Case]:
    from sklearn.model_selection import train_test_split

    x, y, split = datasets()["breast_cancer"]
    _, x_test, _, y_test = train_test_split(x, y, train_size=split, random_state=0, stratify=y)
    rank = FeatureRank(n_features=x.shape[1], n_rows=len(y_test), seed=1)
    cases = []
    names = list(bases["breast_cancer"])
    for attack in ("capacity", "camouflage"):
        for i, query in enumerate(attack_queries(y_test, attack, limit)):
            base_name = names[i % len(names)]
            head = adaptive_head(bases["breast_cancer"][base_name], query, rank)
            cases.append(Case("adaptive", f"breast_cancer {attack} q{i} on {base_name}", head.SerializeToString(),
                              x_test))
    return cases


def screen(case: Case) -> Screening:
    k = 2 if case.name.startswith("breast_cancer") else 10
    return screen_model(case.data, case.features, runner(case.data, k), n_rows=len(case.features))


def adaptive_emits(bases: dict[str, dict[str, onnx.ModelProto]]) -> float:
    """Largest difference between what the adaptive head emits (in rank order) and its table: it must carry
    the probe, or evading the check means nothing."""
    x, y, split = datasets()["breast_cancer"]
    from sklearn.model_selection import train_test_split

    _, x_test, _, _ = train_test_split(x, y, train_size=split, random_state=0, stratify=y)
    rank = FeatureRank(n_features=x.shape[1], n_rows=len(x_test), seed=1)
    table = np.random.default_rng(0).uniform(0.01, 0.99, len(x_test))
    base = next(iter(bases["breast_cancer"].values()))
    emitted = runner(adaptive_head(base, table, rank).SerializeToString(), 2)(x_test)
    ranks = np.asarray(runner(rank.rank_model().SerializeToString(), 0)(x_test), dtype=np.int64)
    return float(np.abs(emitted - table[ranks]).max())


def table(results: list[tuple[Case, Screening]]) -> Iterator[str]:
    kinds = ["honest", "mutnet", "adaptive", "row-wise"]
    columns = [*DETECTORS, "any"]
    yield f"{'population':<10} {'models':>7} " + " ".join(f"{c:>10}" for c in columns)
    for kind in kinds:
        chosen = [s for c, s in results if c.kind == kind]
        if not chosen:
            continue
        rates = [np.mean([s.flagged_by(d) for s in chosen]) for d in DETECTORS]
        rates.append(np.mean([s.flagged for s in chosen]))
        yield f"{kind:<10} {len(chosen):>7} " + " ".join(f"{r:>10.1%}" for r in rates)


def per_attack(results: list[tuple[Case, Screening]]) -> Iterator[str]:
    """MutNet detection per carried attack (the case name's second word; the literal head as one)."""
    groups: dict[str, list[Screening]] = {}
    for case, screening in results:
        if case.kind == "mutnet":
            words = case.name.split()
            key = f"{words[0]} {'theorem 6 literal' if words[1] == 'theorem' else words[1]}"
            groups.setdefault(key, []).append(screening)
    yield f"{'MutNet carrying':<28} {'models':>7} " + " ".join(f"{c:>10}" for c in [*DETECTORS, "any"])
    for key, chosen in groups.items():
        rates = [np.mean([s.flagged_by(d) for s in chosen]) for d in DETECTORS]
        rates.append(np.mean([s.flagged for s in chosen]))
        yield f"{key:<28} {len(chosen):>7} " + " ".join(f"{r:>10.1%}" for r in rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=4)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print every flagged honest model and missed attack")
    args = parser.parse_args()
    start = time.perf_counter()
    honest, bases = honest_cases(args.seeds, args.quick)
    mutnet = mutnet_cases(bases, args.queries, args.quick)
    adaptive = adaptive_cases(bases, args.queries) + rowwise_cases(bases, args.queries)
    built = time.perf_counter() - start
    results = [(case, screen(case)) for case in [*honest, *mutnet, *adaptive]]
    print(f"built {len(honest)} honest, {len(mutnet)} MutNet, {len(adaptive)} adaptive (both kinds) models in "
          f"{built:.0f} s; "
          f"screened in {time.perf_counter() - start - built:.0f} s")
    print("rates: share of each population flagged (honest: false positives; MutNet: detection)")
    for line in table(results):
        print(line)
    for line in per_attack(results):
        print(line)
    print(f"adaptive head emits its table to within {adaptive_emits(bases):.1e}")
    signal_counts: dict[str, dict[str, int]] = {}
    for case, screening in results:
        for detector, lines in screening.signals.items():
            for line in lines:
                name = f"{detector}:{line.split(':')[0]}"
                signal_counts.setdefault(name, {"honest": 0, "mutnet": 0, "adaptive": 0, "row-wise": 0})[case.kind] += 1
    print("\nsignals (models flagged by each, per population)")
    for name, counts in sorted(signal_counts.items()):
        print(f"  {name:<34} " + "  ".join(f"{kind} {count:>3}" for kind, count in counts.items()))
    if args.verbose:
        for case, screening in results:
            if (case.kind == "honest") == screening.flagged:
                print(f"  {case.kind:<8} {case.name}: {screening.summary()}")


if __name__ == "__main__":
    main()
