"""The graph check: honest scikit-learn exports pass; every hostile shape is refused with a reason, before
anything runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from sandbox import ModelContract, ModelRefused, validate_model
from tests.sandbox import hostile

CONTRACT = ModelContract(n_features=hostile.N_FEATURES, n_classes=2, n_rows=569)

HONEST: dict[str, Any] = {
    "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    "tree": DecisionTreeClassifier(max_depth=4, random_state=0),
    "forest": RandomForestClassifier(n_estimators=20, max_depth=5, random_state=0),
    "boosting": GradientBoostingClassifier(n_estimators=20, random_state=0),
    "naive_bayes": GaussianNB(),
    "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=7)),
    "mlp": make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(16,), max_iter=500, random_state=0)),
    "svc": make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_it_accepts_scikit_learn_models_exported_with_skl2onnx(name: str) -> None:
    features, labels = hostile.breast_cancer()
    model = HONEST[name].fit(features[:300], labels[:300])
    accepted = validate_model(hostile.sklearn_onnx(model, features), CONTRACT)
    assert accepted.input_name == "X"
    assert accepted.input_dtype == "float32"
    assert accepted.output_name == "probabilities"


def test_it_accepts_a_multiclass_model_with_k_columns() -> None:
    features, labels = hostile.breast_cancer()
    three = np.minimum(labels + (features[:, 0] > 15), 2)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(features, three)
    accepted = validate_model(hostile.sklearn_onnx(model, features), ModelContract(n_features=30, n_classes=3))
    assert accepted.output_name == "probabilities"


def _refusal(data: bytes, contract: ModelContract = CONTRACT) -> str:
    with pytest.raises(ModelRefused) as caught:
        validate_model(data, contract)
    return str(caught.value)


def test_it_refuses_a_file_that_is_not_onnx() -> None:
    assert "not an ONNX model" in _refusal(b"id,target\nr1,0.5\n")


def test_it_refuses_a_model_over_the_size_limit_before_parsing_it() -> None:
    small = ModelContract(n_features=30, n_classes=2, max_bytes=100)
    assert "over the limit of 100 bytes" in _refusal(hostile.honest_handmade(), small)


def test_it_refuses_a_huge_graph_by_its_node_count() -> None:
    assert "more than 20000 nodes" in _refusal(hostile.huge_graph(20_001))


def test_it_refuses_custom_operators() -> None:
    assert "com.example" in _refusal(hostile.custom_operator())


def test_it_refuses_random_operators_since_a_rescore_must_give_the_same_score() -> None:
    assert "'RandomUniformLike' is not allowed" in _refusal(hostile.random_operator())


def test_it_refuses_a_tensor_stored_as_external_data_the_one_way_a_graph_names_a_file() -> None:
    assert "external data" in _refusal(hostile.reads_a_file("/etc/passwd"))


def test_it_refuses_external_data_hidden_in_a_constant_inside_a_loop_body() -> None:
    model = onnx.load_model_from_string(hostile.endless_loop())
    loop = next(node for node in model.graph.node if node.op_type == "Loop")
    body = loop.attribute[0].g
    leaky = onnx.numpy_helper.from_array(np.array(1.0, dtype=np.float32), "leaky")
    leaky.ClearField("raw_data")
    leaky.data_location = TensorProto.EXTERNAL
    entry = leaky.external_data.add()
    entry.key, entry.value = "location", "secrets.bin"
    body.node.append(helper.make_node("Constant", [], ["unused"], value=leaky))
    assert "external data" in _refusal(model.SerializeToString())


def test_it_refuses_model_local_functions() -> None:
    model = onnx.load_model_from_string(hostile.honest_handmade())
    function = helper.make_function("local", "f", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])],
                                    [helper.make_opsetid("", 17)])
    model.functions.append(function)
    assert "functions" in _refusal(model.SerializeToString())


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (hostile.declared(input_width=29), "has 29 features; this competition has 30"),
        (hostile.declared(input_type=TensorProto.INT64), "must be a float or double tensor"),
        (hostile.declared(output_shape=[None, 3]), "has 3 columns"),
        (hostile.declared(output_shape=[100, 2]), "fixed batch of 100 rows"),
    ],
    ids=["input-width", "input-type", "output-columns", "output-batch"],
)
def test_it_refuses_declared_shapes_and_types_that_do_not_match_the_competition(data: bytes, problem: str) -> None:
    assert problem in _refusal(data)


def test_it_refuses_a_zipmap_output_and_says_how_to_export_a_tensor() -> None:
    from skl2onnx import to_onnx

    features, labels = hostile.breast_cancer()
    model = GaussianNB().fit(features, labels)
    zipped = to_onnx(model, features[:1].astype(np.float32)).SerializeToString()
    assert "zipmap" in _refusal(zipped)


def test_it_refuses_a_second_input() -> None:
    model = onnx.load_model_from_string(hostile.honest_handmade())
    model.graph.input.append(helper.make_tensor_value_info("labels", TensorProto.FLOAT, [None]))
    assert "exactly one input" in _refusal(model.SerializeToString())


def test_an_endless_loop_is_allowed_by_the_graph_check_so_the_runner_must_stop_it() -> None:
    accepted = validate_model(hostile.endless_loop(), CONTRACT)
    assert "Loop" in accepted.operators
