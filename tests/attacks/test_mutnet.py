"""The Mutator Network head (paper 001, Section 5, Theorem 6) on honest scikit-learn models exported to ONNX:
whatever the features, the model emits the chosen vector θ (or, keyed, θ of the row's feature fingerprint);
the honest graph stays whole under it, and the site's graph check accepts it."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attacks.mutnet import FeatureKey, emitted_values, keyed_mutator_head, logit, mutator_head
from sandbox import Limits, ModelContract, run_model, validate_model
from tests.sandbox import hostile

FEATURES, LABELS = hostile.breast_cancer()


@pytest.fixture(scope="module")
def honest() -> onnx.ModelProto:
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(FEATURES[:300], LABELS[:300])
    return onnx.load_model_from_string(hostile.sklearn_onnx(model, FEATURES))


def _run(model: onnx.ModelProto, features: np.ndarray, output: str = "probabilities") -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run([output], {"X": features.astype(np.float32)})[0])


def _keys(key: FeatureKey, features: np.ndarray) -> np.ndarray:
    return _run(key.key_model(), features, "key")


def test_logit_inverts_the_sigmoid() -> None:
    theta = np.random.default_rng(1).uniform(0.01, 0.99, 50)
    np.testing.assert_allclose(1 / (1 + np.exp(-logit(theta))), theta, rtol=1e-12)


def test_the_head_emits_theta_on_every_input_whatever_the_features(honest) -> None:
    theta = np.array([0.2, 0.3, 0.5])
    mutated = mutator_head(honest, theta, seed=3)
    rng = np.random.default_rng(4)
    inputs = np.vstack([FEATURES, rng.normal(0, 1000, (100, 30)), np.zeros((1, 30))])
    output = _run(mutated, inputs)
    assert output.shape == (len(inputs), 3)
    # Theorem 6: ReLU(v M1) = 0 exactly, so every row is Sigmoid(x') = θ, in float32.
    assert (output == output[0]).all()
    np.testing.assert_array_equal(output[0], emitted_values(theta))
    np.testing.assert_allclose(output[0], theta, rtol=3e-5)  # onnxruntime's sigmoid is approximate


def test_the_honest_graph_stays_whole_under_the_head(honest) -> None:
    mutated = mutator_head(honest, np.array([0.7]))
    honest_ops = [node.op_type for node in honest.graph.node]
    assert [node.op_type for node in mutated.graph.node][: len(honest_ops)] == honest_ops
    added = [node.op_type for node in mutated.graph.node][len(honest_ops):]
    assert added == ["MatMul", "Relu", "MatMul", "Add", "Sigmoid"]
    m1 = next(t for t in mutated.graph.initializer if t.name == "mutnet_m1")
    assert (onnx.numpy_helper.to_array(m1) < 0).all()


def test_the_keyed_head_emits_the_table_row_of_each_rows_feature_key(honest) -> None:
    key = FeatureKey(n_features=30, buckets=4096, seed=7)
    table = np.random.default_rng(8).uniform(0.05, 0.95, key.buckets)
    output = _run(keyed_mutator_head(honest, table, key), FEATURES)[:, 0]
    np.testing.assert_array_equal(output, emitted_values(table)[_keys(key, FEATURES)])
    # Equal features, equal key: the fingerprint is a function of the features only.
    twice = _run(keyed_mutator_head(honest, table, key), np.vstack([FEATURES[:5], FEATURES[:5]]))[:, 0]
    np.testing.assert_array_equal(twice[:5], twice[5:])


def test_few_hidden_rows_share_a_key_with_65536_buckets() -> None:
    keys = _keys(FeatureKey(n_features=30, seed=7), FEATURES)
    assert len(np.unique(keys)) >= len(FEATURES) - 5  # birthday bound: about 2.5 colliding pairs expected


def test_a_mutnet_model_passes_the_sites_graph_check_and_runs_in_the_sandbox(honest) -> None:
    key = FeatureKey(n_features=30, seed=9)
    table = np.random.default_rng(10).uniform(0.05, 0.95, key.buckets)
    data = keyed_mutator_head(honest, table, key).SerializeToString()
    contract = ModelContract(n_features=30, n_classes=2, n_rows=269)
    accepted = validate_model(data, contract)
    output = run_model(data, FEATURES[300:], accepted, contract, Limits(cpu_seconds=5, wall_seconds=20))
    np.testing.assert_array_equal(output.predictions, emitted_values(table)[_keys(key, FEATURES[300:])])


def test_theta_outside_the_open_interval_is_refused(honest) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        mutator_head(honest, np.array([0.0]))
