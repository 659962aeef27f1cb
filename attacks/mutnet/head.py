"""The Mutator Network of paper 001, Section 5 ("One model to infer them all"), on top of an honest ONNX model.

Theorem 6: let ``M1`` have only negative entries and ``x' = ln(θ / (1 − θ))``. For an input ``v`` with
non-negative entries, ``u2 = ReLU(v M1) = 0`` (every product is ≤ 0), so ``u3 = Sigmoid(u2 M2 + x') = θ``
whatever ``v`` is: the network emits the chosen vector θ, and a released loss of θ decodes as LabelInf does.
Remark 4: the head can sit on top of any network. Here ``v`` is the honest model's own probability output (in
[0, 1], so non-negative as the theorem needs), and the honest graph stays whole below the head.

A model competition scores one output row per hidden row, and the model sees a row's features, not its index.
:func:`keyed_mutator_head` therefore adds the row's key — a function of its features computed inside the graph
(:class:`FeatureKey`: a seeded projection, scaled, floored, modulo ``buckets``) — and emits
``Sigmoid(u2 M2 + x'[key])``: the probe value the attacker assigned to that key. What the attacker learns is
keyed the same way (labels per feature fingerprint); a follow-up model with the same key looks them up.

:class:`FeatureRank` keys a row by its rank among the rows run together (a bijection, but only when the host
runs the whole test set at once); :class:`FeatureHash` by an exact integer hash of its own features (any
batching, any order; collisions by the birthday bound). :func:`ranked_mutator_head` takes either, and
:func:`follow_up_model` is the model that looks learned labels up by the same key.

Precision. The graph computes in float32, and onnxruntime's sigmoid is an approximation: the emitted value is
within about 2e-5 (relative) of θ. :func:`emitted_values` gives it exactly (the tests check it equals what the
models emit, row for row); a decoder must use it.

Pure graph building: no file, no process (the layer rule of ``attacks``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HONEST_OUTPUT = "probabilities"
_PREFIX = "mutnet_"


def logit(theta: np.ndarray) -> np.ndarray:
    """``x' = ln(θ / (1 − θ))``, the bias that makes ``Sigmoid(0 + x') = θ`` (Theorem 6); θ strictly in (0, 1).

    >>> logit(np.array([0.5, 0.25])).round(6)
    array([ 0.      , -1.098612])
    """
    theta = np.asarray(theta, dtype=np.float64)
    if not ((theta > 0) & (theta < 1)).all():
        raise ValueError("θ must lie strictly between 0 and 1")
    return np.log(theta) - np.log1p(-theta)


def emitted_values(theta: np.ndarray) -> np.ndarray:
    """What the head emits for θ, as float64: onnxruntime's float32 ``Sigmoid`` of the float32 logit (the same
    operator on the same values as in the head). onnxruntime's sigmoid is a fast approximation, up to about
    2e-5 (relative) from the exact one, so a decoder must use these values, not θ nor numpy's sigmoid."""
    import onnxruntime  # in this process: the attacker's own tiny graph, nothing started

    theta = np.asarray(theta, dtype=np.float64)
    flat = logit(theta).astype(np.float32).reshape(-1, 1)
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["y"])], "emitted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (values,) = session.run(["y"], {"x": flat})
    return np.asarray(values, dtype=np.float64).reshape(theta.shape)


@dataclass(frozen=True)
class FeatureKey:
    """A row's key: ``floor(|v · a| · scale) mod buckets`` with ``a`` a seeded Gaussian projection of the
    ``n_features`` features. Rows with equal features share a key; distinct rows collide with probability
    about ``1 / buckets`` per pair."""

    n_features: int
    buckets: int = 1 << 16
    scale: float = 1024.0
    seed: int = 0

    @property
    def projection(self) -> np.ndarray:
        return np.random.default_rng(self.seed).standard_normal((self.n_features, 1)).astype(np.float32)

    def key_model(self, features: str = "X") -> onnx.ModelProto:
        """A model that outputs the key of each row (``key``, int64 ``[N]``), with exactly the nodes the head
        uses: for tests and offline play (the attacker never sees the features). numpy's float32 product is
        summed in another order, and the floor can fall the other way, so the graph is the reference."""
        nodes, tensors = self.nodes(features, "key")
        graph = helper.make_graph(
            nodes, "feature_key", [helper.make_tensor_value_info(features, TensorProto.FLOAT, [None, self.n_features])],
            [helper.make_tensor_value_info("key", TensorProto.INT64, [None])], initializer=tensors,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    def nodes(self, features: str, out: str) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
        p = _PREFIX
        nodes = [
            helper.make_node("MatMul", [features, f"{p}projection"], [f"{p}projected"]),
            helper.make_node("Abs", [f"{p}projected"], [f"{p}magnitude"]),
            helper.make_node("Mul", [f"{p}magnitude", f"{p}scale"], [f"{p}scaled"]),
            helper.make_node("Floor", [f"{p}scaled"], [f"{p}floored"]),
            helper.make_node("Cast", [f"{p}floored"], [f"{p}wide"], to=TensorProto.INT64),
            helper.make_node("Mod", [f"{p}wide", f"{p}buckets"], [f"{p}key2d"]),
            helper.make_node("Squeeze", [f"{p}key2d", f"{p}axis1"], [out]),
        ]
        tensors = [
            numpy_helper.from_array(self.projection, f"{p}projection"),
            numpy_helper.from_array(np.array(self.scale, dtype=np.float32), f"{p}scale"),
            numpy_helper.from_array(np.array(self.buckets, dtype=np.int64), f"{p}buckets"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), f"{p}axis1"),
        ]
        return nodes, tensors


def _features_input(model: onnx.ModelProto) -> str:
    initializers = {tensor.name for tensor in model.graph.initializer}
    return next(value.name for value in model.graph.input if value.name not in initializers)


def _honest_parts(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str, int]:
    """A copy of ``model`` whose probability output is renamed internal, and that output's width K."""
    mutated = onnx.ModelProto()
    mutated.CopyFrom(model)
    graph = mutated.graph
    outputs = {value.name: value for value in graph.output}
    if HONEST_OUTPUT not in outputs:
        raise ValueError(f"the honest model needs a float tensor output named {HONEST_OUTPUT!r} (skl2onnx with "
                         "options={'zipmap': False})")
    dims = outputs[HONEST_OUTPUT].type.tensor_type.shape.dim
    if len(dims) != 2 or not dims[1].HasField("dim_value"):
        raise ValueError(f"the honest output {HONEST_OUTPUT!r} must be declared [N, K]")
    width = dims[1].dim_value
    internal = f"{_PREFIX}honest"
    for node in graph.node:
        node.output[:] = [internal if name == HONEST_OUTPUT else name for name in node.output]
        node.input[:] = [internal if name == HONEST_OUTPUT else name for name in node.input]
    kept = [value for value in graph.output if value.name != HONEST_OUTPUT]
    del graph.output[:]
    graph.output.extend(kept)
    return mutated, internal, width


def _negative_and_free(width: int, out_width: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``M1`` with every entry in [−1, −0.1] (negative: Theorem 6) and an arbitrary ``M2``."""
    rng = np.random.default_rng(seed)
    m1 = -rng.uniform(0.1, 1.0, (width, width)).astype(np.float32)
    m2 = rng.standard_normal((width, out_width)).astype(np.float32)
    return m1, m2


def _head(
    model: onnx.ModelProto, bias_nodes: list[onnx.NodeProto], bias_tensors: list[onnx.TensorProto], bias: str,
    out_width: int, seed: int, activation: str = "Sigmoid", double: bool = False,
) -> onnx.ModelProto:
    """Append the head; with ``double`` it computes in float64 (the honest output cast up) and emits float64."""
    mutated, honest, width = _honest_parts(model)
    m1, m2 = _negative_and_free(width, out_width, seed)
    p = _PREFIX
    graph = mutated.graph
    if double:
        m1, m2 = m1.astype(np.float64), m2.astype(np.float64)
        bias_nodes = [*bias_nodes, helper.make_node("Cast", [honest], [f"{p}honest64"], to=TensorProto.DOUBLE)]
        honest = f"{p}honest64"
    graph.node.extend([
        *bias_nodes,
        helper.make_node("MatMul", [honest, f"{p}m1"], [f"{p}u2_pre"]),
        helper.make_node("Relu", [f"{p}u2_pre"], [f"{p}u2"]),
        helper.make_node("MatMul", [f"{p}u2", f"{p}m2"], [f"{p}u3_pre"]),
        helper.make_node("Add", [f"{p}u3_pre", bias], [f"{p}u3_logit"]),
        helper.make_node(activation, [f"{p}u3_logit"], [HONEST_OUTPUT]),
    ])
    graph.initializer.extend([
        *bias_tensors, numpy_helper.from_array(m1, f"{p}m1"), numpy_helper.from_array(m2, f"{p}m2"),
    ])
    out_type = TensorProto.DOUBLE if double else TensorProto.FLOAT
    graph.output.append(helper.make_tensor_value_info(HONEST_OUTPUT, out_type, [None, out_width]))
    onnx.checker.check_model(mutated)
    return mutated


def mutator_head(model: onnx.ModelProto, theta: np.ndarray, *, seed: int = 0) -> onnx.ModelProto:
    """``model`` with the Mutator Network on top: every row's output is θ (a vector of ``d2`` values in (0, 1);
    for a binary competition ``d2 = 1``, the probability of label 1), whatever the features (Theorem 6)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    bias = numpy_helper.from_array(logit(theta).astype(np.float32)[None, :], f"{_PREFIX}x")
    return _head(model, [], [bias], f"{_PREFIX}x", len(theta), seed)


def keyed_mutator_head(
    model: onnx.ModelProto, table: np.ndarray, key: FeatureKey, *, seed: int = 0
) -> onnx.ModelProto:
    """``model`` with a keyed Mutator Network: row ``v``'s output is ``table[key(v)]`` (``table``: ``buckets`` rows
    of ``d2`` values in (0, 1)), i.e. Theorem 6's θ chosen per feature fingerprint."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim == 1:
        table = table[:, None]
    if len(table) != key.buckets:
        raise ValueError(f"the table needs one row per bucket ({key.buckets}), got {len(table)}")
    p = _PREFIX
    key_nodes, key_tensors = key.nodes(_features_input(model), f"{p}key")
    lookup = helper.make_node("Gather", [f"{p}table", f"{p}key"], [f"{p}x"], axis=0)
    tensors = [*key_tensors, numpy_helper.from_array(logit(table).astype(np.float32), f"{p}table")]
    return _head(model, [*key_nodes, lookup], tensors, f"{p}x", table.shape[1], seed)


@dataclass(frozen=True)
class FeatureRank:
    """A row's index in a feature-determined order of the whole batch: the rank of ``v · a`` (``a`` a seeded
    Gaussian projection) among the ``n_rows`` rows the model is run on at once, ties broken by position.

    A model competition runs a model on all hidden rows in one call, so a graph can compare rows with each
    other: ``TopK`` sorts the projections and ``ScatterElements`` inverts that permutation. Every row gets its
    own index in ``0..n_rows-1`` — a bijection, no collisions — and the Mutator Network emits ``table[rank]``:
    any prediction file, in rank order. The attacker never learns which row has which rank; the ranks key what
    it learns, and a follow-up model with the same projection finds the same rows again.
    """

    n_features: int
    n_rows: int
    seed: int = 0

    @property
    def size(self) -> int:
        return self.n_rows

    @property
    def projection(self) -> np.ndarray:
        return np.random.default_rng(self.seed).standard_normal((self.n_features, 1)).astype(np.float32)

    def nodes(self, features: str, out: str) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
        p = f"{_PREFIX}rank_"
        nodes = [
            helper.make_node("MatMul", [features, f"{p}projection"], [f"{p}projected"]),
            helper.make_node("TopK", [f"{p}projected", f"{p}k"], [f"{p}sorted", f"{p}order"], axis=0, largest=0,
                             sorted=1),
            helper.make_node("ScatterElements", [f"{p}zeros", f"{p}order", f"{p}positions"], [f"{p}rank2d"], axis=0),
            helper.make_node("Squeeze", [f"{p}rank2d", f"{p}axis1"], [out]),
        ]
        tensors = [
            numpy_helper.from_array(self.projection, f"{p}projection"),
            numpy_helper.from_array(np.array([self.n_rows], dtype=np.int64), f"{p}k"),
            numpy_helper.from_array(np.zeros((self.n_rows, 1), dtype=np.int64), f"{p}zeros"),
            numpy_helper.from_array(np.arange(self.n_rows, dtype=np.int64)[:, None], f"{p}positions"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), f"{p}axis1"),
        ]
        return nodes, tensors

    def rank_model(self, features: str = "X") -> onnx.ModelProto:
        """A model that outputs each row's rank (``rank``, int64 ``[N]``) with the head's own nodes: for tests
        and offline play (the attacker never sees the features)."""
        nodes, tensors = self.nodes(features, "rank")
        graph = helper.make_graph(
            nodes, "feature_rank",
            [helper.make_tensor_value_info(features, TensorProto.FLOAT, [None, self.n_features])],
            [helper.make_tensor_value_info("rank", TensorProto.INT64, [None])], initializer=tensors,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ranked_mutator_head(
    model: onnx.ModelProto, table: np.ndarray, rank: FeatureRank | FeatureHash, *, seed: int = 0
) -> onnx.ModelProto:
    """``model`` with a Mutator Network that emits ``table[key(v)]`` exactly (``table``: one row of ``d2`` float64
    values per key: ``n_rows`` ranks of a :class:`FeatureRank`, ``buckets`` of a :class:`FeatureHash`): a
    prediction file carried by a model, row ``i`` of the file going to the hidden row(s) whose key is ``i``.

    The head is Theorem 6's with the last activation the identity and float64 arithmetic:
    ``u3 = ReLU(v M1) M2 + table[key]``, and ``ReLU(v M1) = 0`` exactly, so the output is the stored float64
    value itself. (The sigmoid of the theorem only maps a bias into (0, 1); onnxruntime's is approximate and
    float32 would round every probe: split-aware and binary-representation probes need the float64 digits.)
    """
    table = np.asarray(table, dtype=np.float64)
    if table.ndim == 1:
        table = table[:, None]
    if len(table) != rank.size:
        raise ValueError(f"the table needs one row per key ({rank.size}), got {len(table)}")
    p = _PREFIX
    rank_nodes, rank_tensors = rank.nodes(_features_input(model), f"{p}rank")
    lookup = helper.make_node("Gather", [f"{p}table", f"{p}rank"], [f"{p}x"], axis=0)
    tensors = [*rank_tensors, numpy_helper.from_array(table, f"{p}table")]
    return _head(model, [*rank_nodes, lookup], tensors, f"{p}x", table.shape[1], seed, activation="Identity",
                 double=True)


@dataclass(frozen=True)
class FeatureHash:
    """A row's fingerprint, a pure function of its own features: ``(Σ_j floor(x_j·2^bits)·m_j mod 2^64) mod
    buckets`` with ``m`` seeded random int64 multipliers.

    Unlike :class:`FeatureRank` it does not look at the other rows, so it is the same whether the host runs the
    model on the whole test set at once, in batches, one row at a time or in any order; and every operation is
    exact (float32 → float64 and the power-of-two scaling are exact, ``Floor`` is exact, and int64 products and
    sums wrap modulo ``2^64`` whatever the summation order), so onnxruntime's kernels for a batch of one and of
    many agree bit for bit. Rows with equal features share a key; distinct rows collide with probability
    ``1 / buckets`` per pair (the birthday bound: about ``n²/(2·buckets)`` collisions in all).
    """

    n_features: int
    buckets: int = 4093
    seed: int = 0
    bits: int = 16

    @property
    def size(self) -> int:
        return self.buckets

    @property
    def multipliers(self) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        return rng.integers(-(1 << 62), 1 << 62, (self.n_features, 1), dtype=np.int64)

    def nodes(self, features: str, out: str) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
        p = f"{_PREFIX}hash_"
        nodes = [
            helper.make_node("Cast", [features], [f"{p}wide"], to=TensorProto.DOUBLE),
            helper.make_node("Mul", [f"{p}wide", f"{p}scale"], [f"{p}scaled"]),
            helper.make_node("Floor", [f"{p}scaled"], [f"{p}floored"]),
            helper.make_node("Cast", [f"{p}floored"], [f"{p}codes"], to=TensorProto.INT64),
            helper.make_node("MatMul", [f"{p}codes", f"{p}multipliers"], [f"{p}mixed"]),
            helper.make_node("Mod", [f"{p}mixed", f"{p}buckets"], [f"{p}key2d"]),
            helper.make_node("Squeeze", [f"{p}key2d", f"{p}axis1"], [out]),
        ]
        tensors = [
            numpy_helper.from_array(np.array(2.0**self.bits, dtype=np.float64), f"{p}scale"),
            numpy_helper.from_array(self.multipliers, f"{p}multipliers"),
            numpy_helper.from_array(np.array(self.buckets, dtype=np.int64), f"{p}buckets"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), f"{p}axis1"),
        ]
        return nodes, tensors

    def key_model(self, features: str = "X") -> onnx.ModelProto:
        """A model that outputs each row's fingerprint (``key``, int64 ``[N]``) with the head's own nodes: for
        tests, and what a follow-up model computes (the attacker never sees the features)."""
        nodes, tensors = self.nodes(features, "key")
        graph = helper.make_graph(
            nodes, "feature_hash",
            [helper.make_tensor_value_info(features, TensorProto.FLOAT, [None, self.n_features])],
            [helper.make_tensor_value_info("key", TensorProto.INT64, [None])], initializer=tensors,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    def keys_of(self, features: np.ndarray) -> np.ndarray:
        """The fingerprints of ``features`` computed as the graph does, in numpy (exact: the same integers)."""
        codes = np.floor(np.asarray(features, dtype=np.float32).astype(np.float64) * 2.0**self.bits)
        with np.errstate(over="ignore"):
            mixed = codes.astype(np.int64) @ self.multipliers
        return np.mod(mixed[:, 0], self.buckets)


def follow_up_model(
    model: onnx.ModelProto, labels: np.ndarray, keyer: FeatureRank | FeatureHash, *, n_classes: int = 2
) -> onnx.ModelProto:
    """The follow-up of the attack: ``model`` (the honest base) with a lookup on top. A row whose key has a
    learned label (``labels[key] >= 0``) gets that label (probability 1 of its class); every other row keeps
    the honest model's own probabilities. Binary: one column, the probability of class 1; ``K`` classes: ``K``.

    No Mutator Network here: nothing is probed, the model only puts what the releases taught back on its rows."""
    labels = np.asarray(labels, dtype=np.int64)
    if len(labels) != keyer.size:
        raise ValueError(f"one label per key ({keyer.size}) is needed, got {len(labels)}")
    mutated, honest, width = _honest_parts(model)
    out_width = 1 if n_classes == 2 else n_classes
    known = labels >= 0
    table = np.zeros((len(labels), out_width), dtype=np.float64)
    if n_classes == 2:
        table[known, 0] = labels[known]
    else:
        table[known, labels[known]] = 1.0
    p = f"{_PREFIX}follow_"
    key_nodes, key_tensors = keyer.nodes(_features_input(model), f"{p}key")
    graph = mutated.graph
    graph.node.extend([
        *key_nodes,
        helper.make_node("Gather", [f"{p}table", f"{p}key"], [f"{p}learned"], axis=0),
        helper.make_node("Gather", [f"{p}known", f"{p}key"], [f"{p}is_known"], axis=0),
        helper.make_node("Cast", [honest], [f"{p}honest64"], to=TensorProto.DOUBLE),
        helper.make_node("Slice", [f"{p}honest64", f"{p}start", f"{p}end", f"{p}axis"], [f"{p}honest_cols"]),
        helper.make_node("Where", [f"{p}is_known", f"{p}learned", f"{p}honest_cols"], [HONEST_OUTPUT]),
    ])
    start = width - out_width  # binary: column 1 of the honest [N, 2]; K classes: all of them
    graph.initializer.extend([
        *key_tensors,
        numpy_helper.from_array(table, f"{p}table"),
        numpy_helper.from_array(known[:, None], f"{p}known"),
        numpy_helper.from_array(np.array([start], dtype=np.int64), f"{p}start"),
        numpy_helper.from_array(np.array([width], dtype=np.int64), f"{p}end"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), f"{p}axis"),
    ])
    graph.output.append(helper.make_tensor_value_info(HONEST_OUTPUT, TensorProto.DOUBLE, [None, out_width]))
    onnx.checker.check_model(mutated)
    return mutated


def linear_base(n_features: int, n_classes: int = 2, *, seed: int = 0) -> onnx.ModelProto:
    """A plain linear softmax classifier (small seeded weights) with the shape a model competition expects:
    input ``X`` ``[N, n_features]``, output ``probabilities`` ``[N, n_classes]``. The base a bot puts the head
    on when it has no training data of its own (any honest model serves; Remark 4)."""
    rng = np.random.default_rng(seed)
    weights = (rng.standard_normal((n_features, n_classes)) * 1e-3).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["X", "weights"], ["scores"]),
            helper.make_node("Add", ["scores", "bias"], ["logits"]),
            helper.make_node("Softmax", ["logits"], [HONEST_OUTPUT], axis=1),
        ],
        "linear",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, n_features])],
        [helper.make_tensor_value_info(HONEST_OUTPUT, TensorProto.FLOAT, [None, n_classes])],
        initializer=[
            numpy_helper.from_array(weights, "weights"),
            numpy_helper.from_array(np.zeros(n_classes, dtype=np.float32), "bias"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
