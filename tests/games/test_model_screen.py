"""The host's screen of submitted models (paper 001 §5): the graph check, the output statistics, the probe
detector and the behavioural runs tell the paper's MutNet heads from honest scikit-learn models, and what an
adaptive head that avoids the graph signals still shows."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from attacks.mutnet import FeatureKey, FeatureRank, keyed_mutator_head, mutator_head, ranked_mutator_head
from benchmarks.mutnet_detection import adaptive_head, runner, sklearn_onnx
from defenses.model_outputs import neighbour_correlation, output_signals
from games.model_screen import screen_model
from sandbox.inspect import inspect_graph
from tests.sandbox import hostile

N_HIDDEN = 120


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    features, labels = hostile.breast_cancer()
    order = np.random.default_rng(0).permutation(len(labels))
    features, labels = features[order], labels[order]
    return features[:300], labels[:300], features[300:300 + N_HIDDEN]


@pytest.fixture(scope="module")
def honest(data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict[str, onnx.ModelProto]:
    x, y, _ = data
    models = {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "tree": DecisionTreeClassifier(max_depth=4, random_state=0),
    }
    return {name: sklearn_onnx(model.fit(x, y), x) for name, model in models.items()}


def _probe(seed: int = 0) -> np.ndarray:
    """A batched probe as the attacks send it: 1/2 everywhere but a few rows with prime odds."""
    probe = np.full(N_HIDDEN, 0.5)
    probe[np.random.default_rng(seed).choice(N_HIDDEN, 6, replace=False)] = [1 / (1 + q) for q in (2, 3, 5, 7, 11, 13)]
    return probe


def test_honest_models_pass_every_detector(honest: dict[str, onnx.ModelProto], data: tuple) -> None:
    hidden = data[2]
    for name, model in honest.items():
        raw = model.SerializeToString()
        screening = screen_model(raw, hidden, runner(raw, 2), n_rows=N_HIDDEN)
        assert not screening.flagged, (name, screening.summary())


def test_graph_check_names_theorem_6(honest: dict[str, onnx.ModelProto]) -> None:
    literal = inspect_graph(mutator_head(honest["logreg"], np.array([0.3])), n_rows=N_HIDDEN)
    assert {"dead_relu", "dead_branch"} <= set(literal.signals)  # ReLU(v M1) = 0 and the base thrown away
    ranked = inspect_graph(ranked_mutator_head(honest["tree"], _probe(), FeatureRank(30, N_HIDDEN)), n_rows=N_HIDDEN)
    assert {"dead_relu", "batch_coupling", "feature_lookup", "constant_table"} <= set(ranked.signals)
    keyed = inspect_graph(keyed_mutator_head(honest["logreg"], np.full(256, 0.5), FeatureKey(30, buckets=256)))
    assert {"feature_hash", "feature_lookup"} <= set(keyed.signals)


def test_dead_relu_needs_no_positive_weight(honest: dict[str, onnx.ModelProto], data: tuple) -> None:
    """An MLP's own ReLU layer (mixed-sign weights) is not flagged; the same graph with its first layer's
    weights made non-positive is."""
    from sklearn.neural_network import MLPClassifier

    x, y, _ = data
    mlp = sklearn_onnx(make_pipeline(StandardScaler(), MLPClassifier((8,), max_iter=300, random_state=0)).fit(x, y), x)
    assert not inspect_graph(mlp).flagged
    for tensor in mlp.graph.initializer:
        if tensor.name == "coefficient":
            values = -np.abs(onnx.numpy_helper.to_array(tensor))
            tensor.CopyFrom(onnx.numpy_helper.from_array(values, tensor.name))
    assert "dead_relu" in inspect_graph(mlp).signals


def test_ranked_head_is_caught_by_outputs_probes_and_behaviour(honest: dict, data: tuple) -> None:
    hidden = data[2]
    head = ranked_mutator_head(honest["logreg"], _probe(), FeatureRank(30, N_HIDDEN)).SerializeToString()
    screening = screen_model(head, hidden, runner(head, 2), n_rows=N_HIDDEN)
    assert all(screening.flagged_by(d) for d in ("graph", "outputs", "probes", "behaviour")), screening.summary()
    assert any(line.startswith("batch_dependent") for line in screening.signals["behaviour"])


def test_adaptive_head_evades_the_graph_check_but_not_the_batch_check(honest: dict, data: tuple) -> None:
    """The honest answer to the adaptive attacker: the same lookup spelled with other operators passes the graph
    check (and, with honest-looking values, the probe detector), and emits its table; re-running the model on
    another batch still shows that a row's output depends on the other rows."""
    hidden = data[2]
    rank = FeatureRank(30, N_HIDDEN, seed=1)
    table = np.random.default_rng(1).uniform(0.05, 0.95, N_HIDDEN)
    head = adaptive_head(honest["tree"], table, rank).SerializeToString()
    ranks = np.asarray(runner(rank.rank_model().SerializeToString(), 0)(hidden), dtype=np.int64)
    assert np.abs(runner(head, 2)(hidden) - table[ranks]).max() < 1e-5  # it does carry the chosen vector
    screening = screen_model(head, hidden, runner(head, 2), n_rows=N_HIDDEN)
    assert not screening.flagged_by("graph"), screening.summary()
    assert not screening.flagged_by("probes")
    assert screening.flagged_by("behaviour")


def test_neighbour_correlation_separates_functions_from_tables() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 4))
    smooth = 1 / (1 + np.exp(-(x[:, 0] - x[:, 1])))
    assert (neighbour_correlation(smooth, x) or 0.0) > 0.8
    shuffled = rng.permutation(smooth)  # the same values, keyed by anything but the features
    assert abs(neighbour_correlation(shuffled, x) or 0.0) < 0.2
    assert neighbour_correlation(np.full(300, 0.4), x) is None
    assert output_signals(np.full(300, 0.4), x) == []  # a constant baseline is not a table
    nearly = np.full(300, 0.5)
    nearly[:5] = 0.9
    assert any(s.startswith("near_constant") for s in output_signals(nearly, x))


def test_a_row_wise_head_close_to_the_honest_model_passes_the_static_detectors(honest: dict, data: tuple) -> None:
    """The limit, measured: a head that scores each row on its own and moves one bucket's logit by 0.05 (a
    camouflage-style query) shows no graph signal, no output statistic and no probe structure."""
    from benchmarks.mutnet_detection import rowwise_head

    x, _, hidden = data
    projection = np.random.default_rng(4).standard_normal((30, 1)) / x.std(axis=0)[:, None]
    values = (x @ projection)[:, 0]
    low, high = float(values.min()), float(values.max())
    edges = low + (high - low) / 64 * np.arange(1, 64)
    offsets = np.zeros(64)
    offsets[int((edges < float((hidden[0] @ projection)[0])).sum())] = 0.05  # the first hidden row's bucket
    head = rowwise_head(honest["logreg"], offsets, projection, (low, high))
    raw = head.SerializeToString()
    moved = runner(raw, 2)(hidden)
    plain = runner(honest["logreg"].SerializeToString(), 2)(hidden)
    changed = np.abs(moved - plain) > 1e-6
    assert 0 < changed.sum() < len(hidden)  # it does move some rows, by a little
    screening = screen_model(raw, hidden, runner(raw, 2), n_rows=N_HIDDEN, behaviour=False)
    assert not screening.flagged, screening.summary()


def test_the_keyed_head_is_row_wise_but_jumps_when_the_features_move(honest: dict, data: tuple) -> None:
    """The keyed head (a hash of the row's features) scores rows independently, so the batch checks pass and
    the graph shows no row mixing; a nudge of 1e-3 of each feature's spread changes the hash and the output."""
    hidden = data[2]
    table = np.random.default_rng(2).uniform(0.1, 0.9, 1024)
    head = keyed_mutator_head(honest["tree"], table, FeatureKey(30, buckets=1024)).SerializeToString()
    screening = screen_model(head, hidden, runner(head, 2), n_rows=N_HIDDEN)
    assert not any("batch" in line for line in screening.signals["graph"] + screening.signals["behaviour"])
    assert [line.split(":")[0] for line in screening.signals["behaviour"]] == ["unstable"]
