"""The model runner: an honest model's output equals scikit-learn's; a hostile one fails with a fixed message
that quotes nothing computed from the hidden features, and never hangs."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sandbox import Limits, ModelContract, ModelRunFailed, ValidatedModel, run_model, validate_model
from tests.sandbox import hostile

FEATURES, LABELS = hostile.breast_cancer()
CONTRACT = ModelContract(n_features=30, n_classes=2, n_rows=len(FEATURES))
# Small limits keep the hostile cases short; the site's defaults are 30 s CPU, 60 s wall, 2 GiB.
TIGHT = Limits(cpu_seconds=2, wall_seconds=4.0, memory_bytes=512 * 2**20)


def _run(data: bytes, limits: Limits = TIGHT, model: ValidatedModel | None = None) -> np.ndarray:
    model = model or validate_model(data, CONTRACT)
    return run_model(data, FEATURES, model, CONTRACT, limits).predictions


def _failure(data: bytes, model: ValidatedModel | None = None) -> ModelRunFailed:
    with pytest.raises(ModelRunFailed) as caught:
        _run(data, model=model)
    return caught.value


def test_an_honest_model_gives_scikit_learns_probabilities_for_every_row_in_order() -> None:
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(FEATURES[:300], LABELS[:300])
    predictions = _run(hostile.sklearn_onnx(model, FEATURES))
    assert predictions.shape == (len(FEATURES),)
    # float32 inside the graph: agreement to float32 precision.
    np.testing.assert_allclose(predictions, model.predict_proba(FEATURES)[:, 1], atol=1e-5)


def test_a_multiclass_model_gives_one_row_of_k_probabilities_per_hidden_row() -> None:
    three = np.minimum(LABELS + (FEATURES[:, 0] > 15), 2)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(FEATURES, three)
    data = hostile.sklearn_onnx(model, FEATURES)
    contract = ModelContract(n_features=30, n_classes=3)
    output = run_model(data, FEATURES, validate_model(data, contract), contract, TIGHT)
    np.testing.assert_allclose(output.predictions, model.predict_proba(FEATURES), atol=1e-5)


def test_the_child_reports_what_isolation_it_had() -> None:
    output = run_model(hostile.honest_handmade(), FEATURES, validate_model(hostile.honest_handmade(), CONTRACT),
                       CONTRACT, TIGHT)
    # What is available depends on the kernel and user; whatever it is, it is reported, never assumed.
    assert all(isinstance(step, str) for step in output.isolation)


def test_nan_outputs_fail_without_naming_the_rows() -> None:
    failure = _failure(hostile.nan_output())
    assert str(failure) == "the model's output contains NaN or infinite values"
    assert "173" in failure.host_detail  # the host sees how many rows (a function of the hidden features)


def test_a_feature_dependent_number_of_rows_fails_without_quoting_the_count() -> None:
    failure = _failure(hostile.fewer_rows())
    assert "569" in str(failure) and "173" not in str(failure)
    assert "(173, 2)" in failure.host_detail


def test_an_endless_loop_is_stopped_by_the_cpu_or_wall_time_limit() -> None:
    message = str(_failure(hostile.endless_loop()))
    assert "CPU-time limit of 2 s" in message or "wall-time limit of 4 s" in message


def test_a_model_that_allocates_too_much_memory_fails_with_the_memory_limit() -> None:
    message = str(_failure(hostile.memory_bomb()))
    assert "512 MiB" in message


def test_a_runtime_error_is_reported_without_the_runtimes_text() -> None:
    failure = _failure(hostile.index_error())
    assert str(failure) == "the model raised an error while running on the hidden features"
    assert "GatherElements" in failure.host_detail


def test_a_model_reading_a_file_through_external_data_cannot_even_when_the_graph_check_is_bypassed() -> None:
    bypass = ValidatedModel(input_name="X", input_dtype="float32", output_name="probabilities", n_nodes=5,
                            operators=())
    for path in ("/etc/passwd", "../../../../../../etc/passwd"):
        failure = _failure(hostile.reads_a_file(path), model=bypass)
        assert str(failure) == "the ONNX runtime could not load the model"
        assert "root:" not in failure.host_detail
