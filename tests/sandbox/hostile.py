"""ONNX models for the sandbox tests: honest scikit-learn exports and hand-built hostile graphs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_breast_cancer

N_FEATURES = 30


def breast_cancer() -> tuple[np.ndarray, np.ndarray]:
    features, labels = load_breast_cancer(return_X_y=True)
    return np.asarray(features, dtype=np.float64), np.asarray(labels, dtype=np.int64)


def sklearn_onnx(model: Any, features: np.ndarray) -> bytes:
    """A fitted scikit-learn classifier as ONNX, probabilities as a tensor (no ZipMap)."""
    from skl2onnx import to_onnx

    exported = to_onnx(model, features[:1].astype(np.float32), options={id(model): {"zipmap": False}})
    return exported.SerializeToString()


def _model(nodes: list[onnx.NodeProto], outputs: list[onnx.ValueInfoProto], *, width: int = N_FEATURES,
           initializers: list[onnx.TensorProto] | None = None, opset: int = 17,
           extra_opsets: list[onnx.OperatorSetIdProto] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "hostile", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, width])], outputs,
        initializer=initializers or [],
    )
    opsets = [helper.make_opsetid("", opset), *(extra_opsets or [])]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _probabilities(shape: list[Any]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, shape)


def _sigmoid_of_first_feature(source: str = "X") -> list[onnx.NodeProto]:
    """[N, 2]: (1 - p, p) with p = sigmoid(feature 0 of ``source`` / 100)."""
    return [
        helper.make_node("Slice", [source, "zero", "one", "one"], ["head"]),
        helper.make_node("Div", ["head", "hundred"], ["scaled"]),
        helper.make_node("Sigmoid", ["scaled"], ["p"]),
        helper.make_node("Sub", ["onef", "p"], ["q"]),
        helper.make_node("Concat", ["q", "p"], ["probabilities"], axis=1),
    ]


def _constants() -> list[onnx.TensorProto]:
    return [
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one"),
        numpy_helper.from_array(np.array(100.0, dtype=np.float32), "hundred"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "onef"),
    ]


def honest_handmade() -> bytes:
    return _model(_sigmoid_of_first_feature(), [_probabilities([None, 2])], initializers=_constants()) \
        .SerializeToString()


def nan_output() -> bytes:
    """Probabilities of 0/0 on every row whose first feature is above 15: NaN where the hidden data says so."""
    nodes = [
        helper.make_node("Slice", ["X", "zero", "one", "one"], ["first"]),
        helper.make_node("Greater", ["first", "fifteen"], ["big"]),
        helper.make_node("Div", ["zerof", "zerof"], ["nan"]),
        helper.make_node("Where", ["big", "nan", "half"], ["p"]),
        helper.make_node("Concat", ["p", "p"], ["probabilities"], axis=1),
    ]
    constants = [
        *_constants(),
        numpy_helper.from_array(np.array(15.0, dtype=np.float32), "fifteen"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zerof"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half"),
    ]
    return _model(nodes, [_probabilities([None, 2])], initializers=constants).SerializeToString()


def fewer_rows() -> bytes:
    """Declares [N, 2] but keeps only the rows whose first feature is above 15 (a feature-dependent count)."""
    nodes = [
        helper.make_node("Slice", ["X", "zero", "one", "one"], ["first"]),
        helper.make_node("Greater", ["first", "fifteen"], ["big2d"]),
        helper.make_node("Squeeze", ["big2d", "one"], ["big"]),
        helper.make_node("Compress", ["X", "big"], ["kept"], axis=0),
        *_sigmoid_of_first_feature(source="kept")[:-1],
        helper.make_node("Concat", ["q", "p"], ["probabilities"], axis=1),
    ]
    constants = [*_constants(), numpy_helper.from_array(np.array(15.0, dtype=np.float32), "fifteen")]
    return _model(nodes, [_probabilities([None, 2])], initializers=constants).SerializeToString()


def endless_loop() -> bytes:
    """A Loop with no trip count whose condition stays true: runs until something stops it."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["acc_in", "onef_body"], ["acc_out"]),
        ],
        "forever",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, []),
        ],
        initializer=[numpy_helper.from_array(np.array(1.0, dtype=np.float32), "onef_body")],
    )
    nodes = [
        helper.make_node("Loop", ["", "true", "zerof"], ["total"], body=body),
        *_sigmoid_of_first_feature()[:-1],
        helper.make_node("Add", ["p", "total"], ["p2"]),
        helper.make_node("Concat", ["q", "p2"], ["probabilities"], axis=1),
    ]
    constants = [
        *_constants(),
        numpy_helper.from_array(np.array(True), "true"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zerof"),
    ]
    return _model(nodes, [_probabilities([None, 2])], initializers=constants).SerializeToString()


def memory_bomb() -> bytes:
    """Expands every row to 10^7 values (N x 10^7 floats: 22 GB at N = 569) before reducing them."""
    nodes = [
        helper.make_node("Slice", ["X", "zero", "one", "one"], ["first"]),
        helper.make_node("Expand", ["first", "shape"], ["huge"]),
        helper.make_node("ReduceMean", ["huge"], ["mean"], axes=[1], keepdims=1),
        helper.make_node("Sigmoid", ["mean"], ["p"]),
        helper.make_node("Concat", ["p", "p"], ["probabilities"], axis=1),
    ]
    constants = [*_constants(), numpy_helper.from_array(np.array([1, 10**7], dtype=np.int64), "shape")]
    return _model(nodes, [_probabilities([None, 2])], initializers=constants).SerializeToString()


def index_error() -> bytes:
    """Gathers column floor(2 x feature 0): out of range on rows where the hidden feature is 15 or more, and
    the runtime's error text would quote the index, a value computed from a hidden feature."""
    nodes = [
        helper.make_node("Slice", ["X", "zero", "one", "one"], ["first"]),
        helper.make_node("Add", ["first", "first"], ["doubled"]),
        helper.make_node("Cast", ["doubled"], ["index"], to=TensorProto.INT64),
        helper.make_node("GatherElements", ["X", "index"], ["picked"], axis=1),
        helper.make_node("Sigmoid", ["picked"], ["p"]),
        helper.make_node("Sub", ["onef", "p"], ["q"]),
        helper.make_node("Concat", ["q", "p"], ["probabilities"], axis=1),
    ]
    return _model(nodes, [_probabilities([None, 2])], initializers=_constants()).SerializeToString()


def reads_a_file(path: str = "../../../../../../etc/passwd") -> bytes:
    """An initializer stored as external data pointing at ``path``: the runtime would read that file."""
    model = _model(_sigmoid_of_first_feature(), [_probabilities([None, 2])], initializers=_constants())
    tensor = model.graph.initializer[2]  # "hundred"
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", path), ("offset", "0"), ("length", "4")):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return model.SerializeToString()


def huge_graph(n_nodes: int) -> bytes:
    """A chain of ``n_nodes`` Identity nodes before an honest head."""
    names = ["X", *(f"x{i}" for i in range(n_nodes))]
    chain = [helper.make_node("Identity", [names[i]], [names[i + 1]]) for i in range(n_nodes)]
    nodes = chain + _sigmoid_of_first_feature(source=names[-1])
    return _model(nodes, [_probabilities([None, 2])], initializers=_constants()).SerializeToString()


def custom_operator() -> bytes:
    nodes = [helper.make_node("Evil", ["X"], ["probabilities"], domain="com.example")]
    return _model(nodes, [_probabilities([None, 2])],
                  extra_opsets=[helper.make_opsetid("com.example", 1)]).SerializeToString()


def random_operator() -> bytes:
    nodes = [
        helper.make_node("RandomUniformLike", ["X"], ["noise"]),
        *_sigmoid_of_first_feature(source="noise"),
    ]
    return _model(nodes, [_probabilities([None, 2])], initializers=_constants()).SerializeToString()


def declared(input_width: int = N_FEATURES, output_shape: list[Any] | None = None,
             input_type: int = TensorProto.FLOAT) -> bytes:
    """An honest graph with a chosen declared input width, input type and output shape."""
    graph = helper.make_graph(
        _sigmoid_of_first_feature(), "declared",
        [helper.make_tensor_value_info("X", input_type, [None, input_width])],
        [_probabilities(output_shape if output_shape is not None else [None, 2])],
        initializer=_constants(),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
