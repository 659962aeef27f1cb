"""Check a participant's ONNX model before anything runs it: size, operators, tensors, input and output.

A model is hostile input. This module only parses and inspects the graph (no operator is executed): a model
passes when it is at most ``max_bytes``, has at most ``max_nodes`` nodes (subgraphs of ``If``/``Loop``/``Scan``
counted), uses only the operators of :data:`ALLOWED_OPERATORS` from the standard ``ai.onnx`` and
``ai.onnx.ml`` domains (no custom operator, no model-local function, no random operator), stores every tensor
inside the file (no external-data reference: the only way a standard ONNX graph names a file), takes one float
tensor ``[N, d]`` with the competition's ``d`` features, and declares a float output the competition can score.
Every refusal is a :class:`ModelRefused` whose message names the problem; it says nothing about hidden data,
which this module never sees.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import onnx
from onnx import AttributeProto, GraphProto, ModelProto, TensorProto

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_NODES = 20_000
# Deep nesting of control flow is refused before it can make the checker or the runtime recurse for long.
MAX_SUBGRAPH_DEPTH = 8

_STANDARD = frozenset({
    "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
    "BatchNormalization", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "CastLike",
    "Ceil", "Celu", "Clip", "Compress", "Concat", "Constant", "ConstantOfShape", "Conv", "ConvTranspose", "Cos",
    "Cosh", "CumSum", "DepthToSpace", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike",
    "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool",
    "GlobalMaxPool", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Hardmax", "Identity", "If",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual",
    "Log", "LogSoftmax", "Loop", "LpNormalization", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mish", "Mod", "Mul",
    "Neg", "NonZero", "Not", "OneHot", "Or", "PRelu", "Pad", "Pow", "Range", "Reciprocal", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
    "ReduceSumSquare", "Relu", "Reshape", "Round", "Scan", "ScatterElements", "ScatterND", "Selu", "Shape",
    "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign", "SpaceToDepth",
    "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK", "Transpose",
    "Trilu", "Unsqueeze", "Where", "Xor",
})
# scikit-learn's converters (skl2onnx) emit these; all are pure functions of their inputs.
_ML = frozenset({
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer", "FeatureVectorizer",
    "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder",
    "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsemble", "TreeEnsembleClassifier", "TreeEnsembleRegressor",
    "ZipMap",
})
ALLOWED_OPERATORS: dict[str, frozenset[str]] = {"": _STANDARD, "ai.onnx": _STANDARD, "ai.onnx.ml": _ML}
"""Operators a model may use, per domain. Left out on purpose: random operators (``RandomNormal``,
``Bernoulli``, ``Multinomial``, ...: a re-scored submission must get the same score), string and sequence
operators (nothing to score in them), training and quantisation operators, and every custom domain (a custom
operator is native code the runtime would have to load)."""

_FLOAT_TYPES = {TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64"}


class ModelRefused(ValueError):
    """The model is not accepted; the message says why and is safe to show the participant."""


@dataclass(frozen=True)
class ModelContract:
    """What a competition expects of a model: ``n_features`` float inputs per row, a prediction per row for
    ``n_classes`` classes, within the size limits."""

    n_features: int
    n_classes: int
    n_rows: int | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_nodes: int = DEFAULT_MAX_NODES


@dataclass(frozen=True)
class ValidatedModel:
    """How to run an accepted model: feed ``input_name`` (``input_dtype``) and read ``output_name``."""

    input_name: str
    input_dtype: str
    output_name: str
    n_nodes: int
    operators: tuple[str, ...]


def validate_model(data: bytes, contract: ModelContract) -> ValidatedModel:
    """Parse and check ``data`` (an ONNX file) against ``contract``; raises :class:`ModelRefused`."""
    if len(data) > contract.max_bytes:
        raise ModelRefused(f"the model is {len(data)} bytes, over the limit of {contract.max_bytes} bytes")
    try:
        model = onnx.load_model_from_string(data)
    except Exception:  # protobuf raises its own DecodeError, or others on garbage
        raise ModelRefused("the file is not an ONNX model (it does not parse as an ONNX protobuf)") from None
    if not model.HasField("graph") or not model.graph.node:
        raise ModelRefused("the file is not an ONNX model (it has no graph)")
    for opset in model.opset_import:
        if opset.domain not in ALLOWED_OPERATORS:
            raise ModelRefused(f"the model imports the operator domain {opset.domain!r}; only ai.onnx and "
                               "ai.onnx.ml are allowed (no custom operators)")
    if len(model.functions):
        raise ModelRefused("the model defines its own functions; only standard operators are allowed")
    operators = _check_graph(model.graph, contract)
    _check_tensors(model)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # ValidationError, or others on inconsistent protos
        raise ModelRefused(f"the model is not a valid ONNX graph: {_first_line(str(exc))}") from None
    input_name, input_dtype = _check_input(model.graph, contract)
    output_name = _choose_output(model.graph, contract)
    return ValidatedModel(
        input_name=input_name, input_dtype=input_dtype, output_name=output_name,
        n_nodes=sum(operators.values()), operators=tuple(sorted(operators)),
    )


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "unknown problem"
    return line[:300]


def _subgraphs(node: onnx.NodeProto) -> Iterator[GraphProto]:
    for attribute in node.attribute:
        if attribute.type == AttributeProto.GRAPH:
            yield attribute.g
        elif attribute.type == AttributeProto.GRAPHS:
            yield from attribute.graphs


def _check_graph(graph: GraphProto, contract: ModelContract) -> dict[str, int]:
    """Count the nodes of ``graph`` and its subgraphs (iteratively, depth-limited) and check every operator."""
    counts: dict[str, int] = {}
    total = 0
    stack: list[tuple[GraphProto, int]] = [(graph, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_SUBGRAPH_DEPTH:
            raise ModelRefused(f"control flow is nested more than {MAX_SUBGRAPH_DEPTH} levels deep")
        total += len(current.node)
        if total > contract.max_nodes:
            raise ModelRefused(f"the model has more than {contract.max_nodes} nodes")
        for node in current.node:
            allowed = ALLOWED_OPERATORS.get(node.domain)
            if allowed is None:
                raise ModelRefused(f"operator {node.op_type!r} of the custom domain {node.domain!r} is not allowed; "
                                   "only standard ONNX operators are")
            if node.op_type not in allowed:
                raise ModelRefused(f"operator {node.op_type!r} is not allowed (see the list of allowed operators)")
            key = f"{node.domain}:{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
            counts[key] = counts.get(key, 0) + 1
            stack.extend((sub, depth + 1) for sub in _subgraphs(node))
    return counts


def _all_tensors(model: ModelProto) -> Iterator[TensorProto]:
    graphs = [model.graph]
    while graphs:
        graph = graphs.pop()
        yield from graph.initializer
        for sparse in graph.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        for node in graph.node:
            for attribute in node.attribute:
                if attribute.type == AttributeProto.TENSOR:
                    yield attribute.t
                elif attribute.type == AttributeProto.TENSORS:
                    yield from attribute.tensors
                elif attribute.type == AttributeProto.SPARSE_TENSOR:
                    yield attribute.sparse_tensor.values
                    yield attribute.sparse_tensor.indices
            graphs.extend(_subgraphs(node))


def _check_tensors(model: ModelProto) -> None:
    """Refuse external-data tensors: the one place a standard graph names a file the runtime would open."""
    for tensor in _all_tensors(model):
        if tensor.data_location == TensorProto.EXTERNAL or len(tensor.external_data):
            raise ModelRefused(f"tensor {tensor.name!r} refers to external data (a file); every tensor must be "
                               "stored inside the model")


def _dims(value: onnx.ValueInfoProto) -> list[int | None] | None:
    """The declared dimensions (``None`` for a symbolic or unknown one), or ``None`` without a shape."""
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return [dim.dim_value if dim.HasField("dim_value") else None for dim in tensor.shape.dim]


def _check_input(graph: GraphProto, contract: ModelContract) -> tuple[str, str]:
    initializers = {tensor.name for tensor in graph.initializer}
    inputs = [value for value in graph.input if value.name not in initializers]
    if len(inputs) != 1:
        raise ModelRefused(f"the model must take exactly one input (the features), it takes {len(inputs)}")
    value = inputs[0]
    if value.type.WhichOneof("value") != "tensor_type" or value.type.tensor_type.elem_type not in _FLOAT_TYPES:
        raise ModelRefused(f"the input {value.name!r} must be a float or double tensor")
    dims = _dims(value)
    expected = f"[N, {contract.n_features}]"
    if dims is None or len(dims) != 2:
        raise ModelRefused(f"the input {value.name!r} must be declared with shape {expected}")
    if dims[1] != contract.n_features:
        raise ModelRefused(f"the input {value.name!r} has {dims[1] or 'an undeclared number of'} features; this "
                           f"competition has {contract.n_features} (shape {expected})")
    if dims[0] not in (None, contract.n_rows):
        raise ModelRefused(f"the input {value.name!r} has a fixed batch of {dims[0]} rows; declare it as N "
                           "(any number of rows)")
    return value.name, _FLOAT_TYPES[value.type.tensor_type.elem_type]


def _choose_output(graph: GraphProto, contract: ModelContract) -> str:
    """The output to score: the float tensor output (skl2onnx names it ``probabilities``), checked against
    the competition: ``[N, K]`` for K classes; for a binary one ``[N]``, ``[N, 1]`` (probability of label 1)
    or ``[N, 2]`` (its second column is used)."""
    floats = [
        value for value in graph.output
        if value.type.WhichOneof("value") == "tensor_type" and value.type.tensor_type.elem_type in _FLOAT_TYPES
    ]
    named = [value for value in floats if value.name == "probabilities"]
    if named:
        floats = named
    if not floats:
        raise ModelRefused("the model has no float tensor output to score (with skl2onnx, convert with "
                           "options={'zipmap': False} so that probabilities are a tensor)")
    if len(floats) > 1:
        names = ", ".join(repr(value.name) for value in floats)
        raise ModelRefused(f"the model has several float outputs ({names}); name the one to score 'probabilities'")
    value = floats[0]
    dims = _dims(value)
    k = contract.n_classes
    shapes = "[N], [N, 1] or [N, 2]" if k == 2 else f"[N, {k}]"
    if dims is None or not 1 <= len(dims) <= 2 or (len(dims) == 1 and k != 2):
        raise ModelRefused(f"the output {value.name!r} must be declared with shape {shapes}")
    if dims[0] not in (None, contract.n_rows):
        raise ModelRefused(f"the output {value.name!r} has a fixed batch of {dims[0]} rows; declare it as N")
    width = dims[1] if len(dims) == 2 else 1
    if (k == 2 and width in (1, 2)) or width == k:
        return value.name
    raise ModelRefused(f"the output {value.name!r} has {width or 'an undeclared number of'} columns; "
                       f"this competition needs shape {shapes}")
