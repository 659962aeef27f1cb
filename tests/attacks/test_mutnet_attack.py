"""MutNet against a model competition, offline: an existing attack (``capacity``) plays through
:class:`ModelOracle`, whose every query is an honest model with the ranked Mutator Network head, run on the
hidden features as the site's worker would; it recovers every label keyed by the feature rank, in as many
queries as with prediction files, and a follow-up model puts the labels back on their rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from sklearn.naive_bayes import GaussianNB

import attacks
from attacks import LocalOracle
from attacks.mutnet import FeatureRank, ModelOracle
from attacks.oracle import Released
from sandbox import Limits, ModelContract, run_model, validate_model
from tests.sandbox import hostile

FEATURES, LABELS = hostile.breast_cancer()
HIDDEN_FEATURES, HIDDEN_LABELS = FEATURES[300:], LABELS[300:]


def _outputs(data: bytes, name: str = "probabilities") -> np.ndarray:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return np.asarray(session.run([name], {"X": HIDDEN_FEATURES.astype(np.float32)})[0])


def _model_competition(board: LocalOracle) -> Callable[[bytes], Released]:
    """A model competition over ``board``: run the model on the hidden features, score its output."""

    def submit_model(data: bytes) -> Released:
        return board.submit(_outputs(data).astype(np.float64)[:, 0])

    return submit_model


@pytest.fixture(scope="module")
def base() -> onnx.ModelProto:
    model = GaussianNB().fit(FEATURES[:300], LABELS[:300])
    return onnx.load_model_from_string(hostile.sklearn_onnx(model, FEATURES))


def test_the_rank_is_a_bijection_onto_the_hidden_rows() -> None:
    rank = _outputs(FeatureRank(n_features=30, n_rows=269, seed=5).rank_model().SerializeToString(), "rank")
    assert sorted(rank.tolist()) == list(range(269))
    projection = HIDDEN_FEATURES.astype(np.float32) @ FeatureRank(n_features=30, n_rows=269, seed=5).projection
    assert (np.diff(projection[np.argsort(rank), 0]) >= 0).all()  # rank order is the projection's order


def test_a_query_model_emits_the_prediction_file_in_rank_order_and_passes_the_sites_check(base) -> None:
    oracle = ModelOracle(base, lambda data: None, n_rows=269, n_features=30, seed=5)
    file = np.random.default_rng(6).uniform(0.01, 0.99, 269).astype(np.float32).astype(np.float64)
    data = oracle.model_for(file)
    contract = ModelContract(n_features=30, n_classes=2, n_rows=269)
    output = run_model(data, HIDDEN_FEATURES, validate_model(data, contract), contract, Limits(cpu_seconds=5))
    rank = _outputs(oracle.rank.rank_model().SerializeToString(), "rank")
    np.testing.assert_array_equal(output.predictions, file[rank])  # exact: the identity head adds 0


def test_capacity_recovers_every_label_through_models_in_the_queries_of_prediction_files(base) -> None:
    board = LocalOracle(HIDDEN_LABELS, decimals=5)
    oracle = ModelOracle(base, _model_competition(board), n_rows=269, n_features=30, decimals=5, seed=5)
    result = attacks.run("capacity", oracle)
    rank = _outputs(oracle.rank.rank_model().SerializeToString(), "rank")
    by_rank = np.empty_like(HIDDEN_LABELS)
    by_rank[rank] = HIDDEN_LABELS
    np.testing.assert_array_equal(result.labels, by_rank)  # labels keyed by the feature rank
    with_files = attacks.run("capacity", LocalOracle(by_rank, decimals=5))
    assert result.queries == with_files.queries

    # The follow-up: the same head with the learned labels as its table puts each on its row.
    exploit = oracle.model_for(np.asarray(result.labels, dtype=np.float64))
    assert board.submit(_outputs(exploit).astype(np.float64)[:, 0]) == 0.0
