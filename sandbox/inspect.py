"""Graph inspection for MutNet heads (paper 001, Section 5): does an accepted ONNX model carry the structure of
a Mutator Network rather than of a trained classifier? Pure: it parses the graph, runs nothing, sees no data.

Signals, each on the part of the graph the scored output depends on (the honest ``label`` branch of a
scikit-learn export is not looked at):

* ``dead_relu`` — a ``Relu`` of ``MatMul``/``Gemm(x, W)`` with ``W`` a constant of non-positive entries and ``x``
  provably non-negative (an output of ``Sigmoid``, ``Softmax``, ``Relu``, ``Abs``, ``Exp``, a classifier's
  probabilities, ...): the result is always zero, Theorem 6's ``ReLU(v M1)`` with ``M1 < 0``. No trained network
  carries a layer that is zero on every input.
* ``dead_branch`` — operators that compute from the features but reach the scored output only through a
  provably-zero tensor (the zero above, a product with it, an all-zero constant): a base model whose output is
  computed and thrown away, the head emitting its own values.
* ``batch_coupling`` — an operator that mixes rows (``TopK``, ``ArgMax``, a reduction, a ``Softmax``, a
  ``Concat``, ``Gather``, ``Scatter`` or ``CumSum`` along axis 0 of a feature-derived tensor, a ``Transpose``
  that moves the row axis), or a constant whose leading dimension is the competition's row count: a row's
  output then depends on the other hidden rows (the ranked head sorts them). A classifier scores rows
  independently.
* ``feature_lookup`` — an index computed from the features (``Gather``/``GatherElements``/``GatherND``/
  ``ScatterElements``/``OneHot`` with feature-derived indices) into a constant table: the keyed head's
  ``table[key(v)]``. ``feature_hash`` — ``Floor``/``Ceil``/``Round``/``Mod`` or a cast to an integer type of a
  feature-derived tensor on the scored path: a fingerprint of the row.
* ``constant_table`` — a constant of at least :data:`TABLE_MIN_VALUES` values on the scored path used other than
  as a weight matrix (the second operand of ``MatMul``/``Gemm``) or a broadcast bias: a stored vector of
  outputs rather than parameters of a function.

What it cannot see: the same computation spelled with other operators. ``benchmarks/mutnet_detection.py`` builds
two heads that pass it (no signal on any of them): the ranked lookup with ranks from a broadcast ``Less`` against
the reshaped projection summed over columns and the table read by ``Equal`` against a ``Range`` then ``MatMul``;
and a row-wise head adding a per-bucket offset to the honest logit, buckets counted by ``Less`` against
``Range``-made thresholds. A tree ensemble on a linear projection (``TreeEnsembleRegressor`` with one leaf per
bucket) would do the same with exactly the operators scikit-learn exports. Graph inspection is a check against
the paper's construction, not against the attack: it is a blacklist, and an allow-list of row-wise operators
would still leave the last two.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import GraphProto, ModelProto, TensorProto, numpy_helper

#: A constant with at least this many values, used as data rather than as weights, is a stored table.
TABLE_MIN_VALUES = 64

# Outputs that are never negative whatever the input (the first output of each, unless listed below).
_NON_NEGATIVE_OPS = frozenset({
    "Relu", "Abs", "Sigmoid", "Softmax", "Exp", "Softplus", "Sqrt", "HardSigmoid", "ReduceSumSquare", "ReduceL1",
    "ReduceL2",
})
# Probability outputs (index 1) of scikit-learn's classifier operators.
_PROBABILITY_OPS = frozenset({"TreeEnsembleClassifier", "SVMClassifier", "LinearClassifier"})
# Operators that keep non-negativity and zeros of their first input (shape moves, casts).
_SHAPE_OPS = frozenset({"Identity", "Cast", "CastLike", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Slice",
                        "Transpose", "Expand", "Tile"})
_INTEGER_TYPES = frozenset({TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
                            TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64})
_ROUNDING_OPS = frozenset({"Floor", "Ceil", "Round", "Mod"})
# Operators with an ``axis`` attribute (default in parentheses) that mix rows when it is 0.
_AXIS_DEFAULTS = {
    "TopK": -1, "ArgMax": 0, "ArgMin": 0, "Softmax": -1, "LogSoftmax": -1, "Hardmax": -1, "Concat": None,
    "CumSum": None, "Gather": 0, "GatherElements": 0, "ScatterElements": 0, "Compress": None,
}
_DATA_FIRST = frozenset({"Gather", "GatherElements", "ScatterElements", "Compress"})
_REDUCE_OPS = frozenset({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
_LOOKUP_INDEX = {"Gather": 1, "GatherElements": 1, "GatherND": 1, "ScatterElements": 1, "OneHot": 0}
_WEIGHT_POSITION = {"MatMul": 1, "Gemm": 1, "Conv": 1}


@dataclass
class GraphReport:
    """The signals found (name → one line each saying where) and what was inspected."""

    signals: dict[str, list[str]] = field(default_factory=dict)
    scored_output: str = ""
    nodes_on_path: int = 0

    @property
    def flagged(self) -> bool:
        return bool(self.signals)

    def add(self, signal: str, detail: str) -> None:
        self.signals.setdefault(signal, []).append(detail)


def inspect_graph(model: ModelProto | bytes, *, n_rows: int | None = None, output: str | None = None) -> GraphReport:
    """Inspect ``model``'s main graph for the signals above. ``output`` names the scored output (default: the
    one named ``probabilities``, else the first float output); ``n_rows`` is the competition's row count."""
    if isinstance(model, bytes):
        model = onnx.load_model_from_string(model)
    graph = model.graph
    report = GraphReport(scored_output=output or _scored_output(graph))
    constants = _constants(graph)
    producer = {name: index for index, node in enumerate(graph.node) for name in node.output}
    features = {value.name for value in graph.input if value.name not in constants}
    derived = _feature_derived(graph, features)
    non_negative, zero = _sign_facts(graph, constants)
    path = _ancestors(report.scored_output, graph, producer, skip=set())
    live = _ancestors(report.scored_output, graph, producer, skip=zero)
    report.nodes_on_path = len(path)

    for index in sorted(path):
        node = graph.node[index]
        where = f"{node.op_type} node {node.name or index!s}"
        _dead_relu(node, where, graph, producer, constants, non_negative, report)
        if index not in live and any(name in derived for name in node.input):
            report.add("dead_branch", f"{where} reaches the output only through a tensor that is always zero")
        _batch_coupling(node, where, derived, report)
        _lookup(node, where, derived, constants, report)
    for index in sorted(path):
        _constant_uses(graph.node[index], constants, n_rows, report)
    return report


def _scored_output(graph: GraphProto) -> str:
    floats = [value.name for value in graph.output
              if value.type.tensor_type.elem_type in (TensorProto.FLOAT, TensorProto.DOUBLE)]
    if "probabilities" in floats:
        return "probabilities"
    return floats[0] if floats else graph.output[0].name


def _constants(graph: GraphProto) -> dict[str, np.ndarray]:
    out = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value":
                    out[node.output[0]] = numpy_helper.to_array(attribute.t)
    return out


def _feature_derived(graph: GraphProto, features: set[str]) -> set[str]:
    """Tensors computed (transitively) from the features. Nodes are in topological order (the checker's rule)."""
    derived = set(features)
    for node in graph.node:
        if any(name in derived for name in node.input):
            derived.update(node.output)
    return derived


def _sign_facts(graph: GraphProto, constants: dict[str, np.ndarray]) -> tuple[set[str], set[str]]:
    """Tensors provably non-negative, and provably all zero, on every input."""
    producer = {name: index for index, node in enumerate(graph.node) for name in node.output}
    unit: set[str] = set()
    non_negative = {name for name, value in constants.items() if _is_numeric(value) and bool((value >= 0).all())}
    zero = {name for name, value in constants.items() if _is_numeric(value) and value.size and not value.any()}
    for node in graph.node:
        inputs = [name for name in node.input if name]
        op = node.op_type
        if op in _NON_NEGATIVE_OPS:
            non_negative.add(node.output[0])
        if op in ("Sigmoid", "Softmax", "HardSigmoid"):
            unit.add(node.output[0])
        if op == "Sub" and len(inputs) == 2 and inputs[1] in unit and _at_least_one(constants.get(inputs[0])):
            non_negative.add(node.output[0])  # 1 − p for a probability p (an MLP's binary output)
        if op in _PROBABILITY_OPS and len(node.output) > 1:
            non_negative.add(node.output[1])
        if op in _SHAPE_OPS and inputs:
            if inputs[0] in non_negative:
                non_negative.add(node.output[0])
            if inputs[0] in zero:
                zero.add(node.output[0])
        if op in ("Add", "Mul", "Concat", "Max", "Sum", "Mean", "Div", "MatMul") and inputs and all(
                name in non_negative for name in inputs):
            non_negative.add(node.output[0])
        if op in ("Mul", "MatMul") and any(name in zero for name in inputs):
            zero.add(node.output[0])
        if op in ("Add", "Sum", "Concat") and inputs and all(name in zero for name in inputs):
            zero.add(node.output[0])
        if op == "Relu" and inputs and _non_positive_product(inputs[0], graph, producer, constants, non_negative):
            zero.add(node.output[0])
    return non_negative, zero


def _is_numeric(value: np.ndarray) -> bool:
    return value.dtype.kind in "fiub"


def _at_least_one(value: np.ndarray | None) -> bool:
    return value is not None and _is_numeric(value) and value.size > 0 and bool((value >= 1).all())


def _linear_layer(name: str, graph: GraphProto, producer: dict[str, int],
                  constants: dict[str, np.ndarray]) -> tuple[str, np.ndarray, bool] | None:
    """``(x, W, bias ≤ 0)`` when ``name`` is ``MatMul/Gemm(x, W[, b])`` or ``Add(MatMul(x, W), b)`` with ``W`` a
    constant (an MLP's layer: skl2onnx adds the intercept separately)."""
    index = producer.get(name)
    node = None if index is None else graph.node[index]
    bias: np.ndarray | None = None
    if node is not None and node.op_type == "Add" and len(node.input) == 2:
        inner, bias = next(((a, constants[b]) for a, b in (node.input, node.input[::-1]) if b in constants),
                           (None, None))
        index = producer.get(inner) if inner else None
        node = None if index is None else graph.node[index]
    if node is None or node.op_type not in ("MatMul", "Gemm"):
        return None
    if node.op_type == "Gemm":
        if any(a.name in ("transA", "alpha") for a in node.attribute):
            return None  # alpha < 0 or a transposed x: leave it
        if len(node.input) > 2 and node.input[2]:
            bias = constants.get(node.input[2], np.array([1.0]))
    weight = constants.get(node.input[1])
    if weight is None or not _is_numeric(weight) or not weight.size:
        return None
    return node.input[0], weight, bias is None or (_is_numeric(bias) and bool((bias <= 0).all()))


def _non_positive_product(name: str, graph: GraphProto, producer: dict[str, int],
                          constants: dict[str, np.ndarray], non_negative: set[str]) -> bool:
    """``name`` is a linear layer of ``x ≥ 0`` with every ``W ≤ 0`` and ``b ≤ 0``, so it is ≤ 0."""
    layer = _linear_layer(name, graph, producer, constants)
    return layer is not None and layer[0] in non_negative and bool((layer[1] <= 0).all()) and layer[2]


def _ancestors(output: str, graph: GraphProto, producer: dict[str, int], *, skip: set[str]) -> set[int]:
    """Indices in ``graph.node`` of the nodes ``output`` depends on, not following the tensors in ``skip``."""
    seen: set[int] = set()
    stack = [output]
    visited: set[str] = set()
    while stack:
        name = stack.pop()
        if name in visited or name in skip:
            continue
        visited.add(name)
        index = producer.get(name)
        if index is not None and index not in seen:
            seen.add(index)
            stack.extend(n for n in graph.node[index].input if n)
    return seen


def _attribute(node: onnx.NodeProto, name: str, default: object) -> object:
    for attribute in node.attribute:
        if attribute.name == name:
            return onnx.helper.get_attribute_value(attribute)
    return default


def _dead_relu(node: onnx.NodeProto, where: str, graph: GraphProto, producer: dict[str, int],
               constants: dict[str, np.ndarray], non_negative: set[str], report: GraphReport) -> None:
    if node.op_type != "Relu" or not node.input:
        return
    layer = _linear_layer(node.input[0], graph, producer, constants)
    if layer is None or not bool((layer[1] <= 0).all()):
        return
    x, weight, bias_non_positive = layer
    if x in non_negative and bias_non_positive:
        report.add("dead_relu", f"{where}: ReLU of a non-negative input times a {weight.shape} matrix with no "
                                "positive entry is zero on every input (Theorem 6's M1)")
    else:  # no trained layer has no positive weight at all, whatever feeds it
        report.add("dead_relu", f"{where}: ReLU after a {weight.shape} matrix with no positive entry")


def _batch_coupling(node: onnx.NodeProto, where: str, derived: set[str], report: GraphReport) -> None:
    inputs = [name for name in node.input if name]
    if not inputs or not any(name in derived for name in inputs):
        return
    op = node.op_type
    if op in _DATA_FIRST and inputs[0] not in derived:
        return  # reading a constant table by a feature-derived index: feature_lookup's, not a mix of rows
    if op in _AXIS_DEFAULTS:
        axis = _attribute(node, "axis", _AXIS_DEFAULTS[op])
        if axis == 0:
            report.add("batch_coupling", f"{where} works along axis 0, across the rows")
    elif op in _REDUCE_OPS:
        axes = _attribute(node, "axes", None)
        if axes is None and len(inputs) < 2 and not _attribute(node, "noop_with_empty_axes", 0):
            report.add("batch_coupling", f"{where} reduces over every axis, rows included")
        elif axes is not None and 0 in list(axes):  # type: ignore[call-overload]
            report.add("batch_coupling", f"{where} reduces over axis 0, across the rows")
    elif op == "Transpose":
        perm = _attribute(node, "perm", None)
        if perm is None or next(iter(perm)) != 0:  # type: ignore[call-overload]
            report.add("batch_coupling", f"{where} moves the row axis")


def _lookup(node: onnx.NodeProto, where: str, derived: set[str], constants: dict[str, np.ndarray],
            report: GraphReport) -> None:
    op = node.op_type
    if op in _LOOKUP_INDEX:
        position = _LOOKUP_INDEX[op]
        index = node.input[position] if len(node.input) > position else ""
        data = [name for i, name in enumerate(node.input) if i != position and name]
        if index in derived and any(name in constants for name in data[:1] or data):
            report.add("feature_lookup", f"{where} indexes a constant table with an index computed from the features")
    rounds = op in _ROUNDING_OPS or (op == "Cast" and _attribute(node, "to", None) in _INTEGER_TYPES)
    if rounds and node.input and node.input[0] in derived:
        report.add("feature_hash", f"{where} rounds or wraps a value computed from the features")


def _constant_uses(node: onnx.NodeProto, constants: dict[str, np.ndarray], n_rows: int | None,
                   report: GraphReport) -> None:
    for position, name in enumerate(node.input):
        value = constants.get(name)
        if value is None or not _is_numeric(value):
            continue
        if n_rows is not None and n_rows > 1 and value.ndim >= 1 and value.shape[0] == n_rows:
            report.add("batch_coupling", f"constant {name!r} has one entry per hidden row ({n_rows})")
        if value.size < TABLE_MIN_VALUES or _WEIGHT_POSITION.get(node.op_type) == position:
            continue
        if node.op_type in ("Add", "Sub", "Mul", "Div") and value.ndim <= 2 and (value.ndim < 2 or value.shape[0] == 1):
            continue  # a broadcast bias or scale over the columns
        report.add("constant_table", f"constant {name!r} ({value.size} values) is data of a {node.op_type}, "
                                     "not a weight matrix")
