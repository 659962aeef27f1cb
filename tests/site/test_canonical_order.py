"""On the site, the canonical row order (by id) hides the host file's order: a labels file sorted by label
leaks nothing through the sample submission (web and API) or the row order a model is fed."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from leaderboard.competitions.models import HiddenTestData
from leaderboard.competitions.services import competition_create
from leaderboard.submissions.models import Status, Submission
from tests.sandbox import hostile
from tests.site.factories import features_csv

pytestmark = pytest.mark.django_db

FEATURES, LABELS = hostile.breast_cancer()
HIDDEN = slice(300, None)
N = len(LABELS[HIDDEN])
IDS = [str(i) for i in np.random.default_rng(7).permutation(np.arange(1, 5 * N))[:N]]  # numbers, shuffled
BY_LABEL = np.argsort(LABELS[HIDDEN], kind="stable")  # the host's file: every 0 row first


def _files(order: np.ndarray) -> tuple[bytes, bytes]:
    ids = [IDS[i] for i in order]
    labels = "id,label\n" + "".join(f"{IDS[i]},{int(LABELS[HIDDEN][i])}\n" for i in order)
    return labels.encode(), features_csv(FEATURES[HIDDEN][order], ids)


def _position_model(n_zero: int) -> bytes:
    """Reads nothing but row positions: P(class 1) = 1 past row ``n_zero`` (the label-sorted file's cut)."""
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Range", ["start", "n", "step"], ["index"]),
        helper.make_node("Cast", ["index"], ["position"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["position", "cut"], ["offset"]),
        helper.make_node("Mul", ["offset", "steep"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["p_flat"]),
        helper.make_node("Unsqueeze", ["p_flat", "axes"], ["p"]),
        helper.make_node("Sub", ["onef", "p"], ["q"]),
        helper.make_node("Concat", ["q", "p"], ["probabilities"], axis=1),
    ]
    constants = [
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "start"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "step"),
        numpy_helper.from_array(np.array(n_zero - 0.5, dtype=np.float32), "cut"),
        numpy_helper.from_array(np.array(50.0, dtype=np.float32), "steep"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "onef"),
    ]
    graph = helper.make_graph(
        nodes, "positions", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 30])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, 2])], initializer=constants,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _create(host: Any, slug: str, order: np.ndarray) -> Any:
    labels, features = _files(order)
    return competition_create(slug=slug, host=host, labels_csv=labels, features_csv=features, metric="accuracy",
                              score_decimals=None, public_fraction=0.5, daily_limit=20, secret=11)


def test_the_sample_submission_is_in_id_order_whatever_the_files_order(host, clients) -> None:
    natural = sorted(IDS, key=int)
    by_label = _create(host, "by-label", BY_LABEL)
    shuffled = _create(host, "shuffled", np.random.default_rng(1).permutation(N))
    for competition in (by_label, shuffled):
        for url in (f"/api/v1/competitions/{competition.slug}/sample-submission/",
                    f"/c/{competition.slug}/sample-submission.csv"):
            body = clients["participant"].get(url).content.decode()
            assert [line.split(",")[0] for line in body.splitlines()[1:]] == natural, url
    one, other = (HiddenTestData.objects.get(competition=c) for c in (by_label, shuffled))
    assert list(one.ids) == list(other.ids) == natural
    np.testing.assert_array_equal(one.labels, other.labels)
    np.testing.assert_array_equal(one.features, other.features)  # the rows a model is fed, in the same order
    np.testing.assert_array_equal(one.public_mask, other.public_mask)


def test_a_model_reading_only_row_positions_scores_at_chance(
    host, clients, score_all, django_capture_on_commit_callbacks
) -> None:
    """The finding: with the file sorted by label, a model that predicts from the row position alone scored
    every label right in one query. In id order its accuracy is what any guess gets."""
    competition = _create(host, "positions", BY_LABEL)
    model = _position_model(int((LABELS[HIDDEN] == 0).sum()))
    with django_capture_on_commit_callbacks(execute=True):
        response = clients["participant"].post(
            f"/api/v1/competitions/{competition.slug}/submissions/", {"file": io.BytesIO(model)}, format="multipart"
        )
    assert response.status_code == 202, response.content
    assert score_all() == ["scored"]
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.status == Status.SCORED
    share = float(np.mean(LABELS[HIDDEN]))
    chance = share**2 + (1 - share) ** 2  # positions independent of the labels: the classes' shares squared
    for score in (submission.raw_public, submission.raw_private):
        assert score is not None and abs(score - chance) < 0.1, score  # the file's order: 1.0 on both splits
