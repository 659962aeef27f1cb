"""Model competitions on the site: a host uploads hidden features beside the labels; participants upload ONNX
models through the same endpoint and page; the worker runs them in the sandbox and scores their output through
the same core and chain as a file. A hostile model fails with a fixed message and counts against the quota."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from leaderboard.competitions.models import HiddenTestData
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.competitions.services import competition_create
from leaderboard.errors import CompetitionConfigError, InvalidUpload
from leaderboard.submissions.models import Status, Submission, UploadKind
from leaderboard.submissions.selectors import quota_status
from tests.sandbox import hostile
from tests.site.conftest import api_client
from tests.site.factories import features_csv, labels_csv

pytestmark = pytest.mark.django_db

FEATURES, LABELS = hostile.breast_cancer()
# scikit-learn's breast cancer data: participants train on the first 300 rows (public), the host keeps the other
# 269 as the hidden test set, features and labels.
TRAIN = slice(0, 300)
HIDDEN = slice(300, None)


@pytest.fixture
def model_competition(host: Any) -> Any:
    # Rows of the features file in reverse order: the site aligns them to the labels' ids.
    ids = [f"r{i:03d}" for i in range(len(LABELS[HIDDEN]))]
    return competition_create(
        slug="cancer-models", host=host, labels_csv=labels_csv(LABELS[HIDDEN], ids),
        features_csv=features_csv(FEATURES[HIDDEN][::-1], ids[::-1]), daily_limit=20, score_decimals=None,
    )


def _onnx(model: Any) -> bytes:
    return hostile.sklearn_onnx(model.fit(FEATURES[TRAIN], LABELS[TRAIN]), FEATURES)


@pytest.fixture
def upload(django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """POST a file to the submission endpoint, running the on-commit enqueue the test transaction never runs."""

    def post(client: Any, slug: str, data: bytes) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(
                f"/api/v1/competitions/{slug}/submissions/", {"file": io.BytesIO(data)}, format="multipart"
            )

    return post


def test_a_host_creates_a_model_competition_with_features_aligned_to_the_label_ids(model_competition) -> None:
    assert model_competition.takes_models and model_competition.n_features == 30
    stored = HiddenTestData.objects.get(competition=model_competition).features
    np.testing.assert_array_equal(stored, FEATURES[HIDDEN])


@pytest.mark.parametrize(
    ("features", "problem"),
    [
        (b"id,f1\nr000,1\n", "no row for id 'r001'"),
        (b"id,f1\nr000,1\nr001,x\nr002,2\n", "line 3: feature 'x' is not a number"),
        (b"id,f1\nr000,1\nr009,1\n", "line 3: id 'r009' is not in the labels file"),
        (b"id,f1\nr000,1\nr000,1\n", "line 3: duplicate id 'r000'"),
        (b"id,f1,f2\nr000,1\n", "line 2: expected 3 columns"),
        (b"label,f1\n", "line 1: the features header must be 'id,f1,...,fd'"),
        (b"id,f1\nr000,nan\n", "line 2: a feature is not a finite number"),
    ],
)
def test_a_malformed_features_file_is_refused_naming_the_line(host, features: bytes, problem: str) -> None:
    with pytest.raises(CompetitionConfigError) as caught:
        competition_create(slug="bad", host=host, labels_csv=labels_csv([0, 1, 0]), features_csv=features)
    assert problem in caught.value.message


def test_create_competition_command_takes_features(tmp_path: Path) -> None:
    labels, features = tmp_path / "labels.csv", tmp_path / "features.csv"
    labels.write_bytes(labels_csv(LABELS[HIDDEN]))
    features.write_bytes(features_csv(FEATURES[HIDDEN]))
    out = io.StringIO()
    call_command("create_competition", "cli-models", "--labels", str(labels), "--features", str(features), stdout=out)
    assert "takes ONNX models on 30 features" in out.getvalue()
    with pytest.raises(CommandError, match="--features: no such file"):
        call_command("create_competition", "cli-x", "--labels", str(labels), "--features", str(tmp_path / "no"))


def test_the_host_api_creates_a_model_competition(clients, host) -> None:
    host.is_staff = True
    host.save()
    response = clients["host"].post(
        "/api/v1/host/competitions/",
        {"slug": "api-models", "labels": io.BytesIO(labels_csv(LABELS[HIDDEN])),
         "features": io.BytesIO(features_csv(FEATURES[HIDDEN]))},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["n_features"] == 30 and response.json()["takes_models"] is True


def test_public_metadata_says_what_model_to_upload_and_never_shows_features(clients, model_competition) -> None:
    body = clients["anonymous"].get(f"/api/v1/competitions/{model_competition.slug}/").json()
    assert body["takes_models"] is True and body["n_features"] == 30
    assert body["submission_format"]["kind"] == "onnx"
    assert "[N, 30]" in body["submission_format"]["input"]
    assert "MatMul" in body["submission_format"]["operators"]["ai.onnx"]
    assert repr(float(FEATURES[HIDDEN][0, 0])) not in str(body)


def test_an_honest_model_is_scored_through_the_same_core_as_a_file(
    upload, clients, model_competition, score_all
) -> None:
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    response = upload(clients["participant"], model_competition.slug, _onnx(model))
    assert response.status_code == 202, response.content
    assert score_all() == ["scored"]
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.upload_kind == UploadKind.ONNX and submission.status == Status.SCORED
    # Cross-check: scikit-learn's log loss of the same model on the public rows (float32 inside the graph).
    spec = competition_scoring_spec(competition=model_competition)
    public = spec.split_rows["public"]
    expected = log_loss(LABELS[HIDDEN][public], model.predict_proba(FEATURES[HIDDEN])[public, 1], labels=[0, 1])
    assert submission.public_score == pytest.approx(expected, abs=1e-5)
    assert any("model run isolation" in note for note in submission.defense_notes)
    detail = clients["participant"].get(f"/api/v1/submissions/{submission.pk}/").json()
    assert "isolation" not in str(detail)


def test_an_honest_population_ranks_as_its_true_scores(
    upload, clients, model_competition, score_all, django_user_model
) -> None:
    population = {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "tree": DecisionTreeClassifier(max_depth=3, random_state=0),
        "forest": RandomForestClassifier(n_estimators=30, max_depth=5, random_state=0),
        "naive_bayes": GaussianNB(),
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=9)),
    }
    spec = competition_scoring_spec(competition=model_competition)
    public = spec.split_rows["public"]
    expected = {}
    for name, model in population.items():
        user = django_user_model.objects.create_user(f"honest-{name}")
        assert upload(api_client(user), model_competition.slug, _onnx(model)).status_code == 202
        probabilities = np.clip(model.predict_proba(FEATURES[HIDDEN])[:, 1], 1e-15, 1 - 1e-15)
        expected[f"honest-{name}"] = log_loss(LABELS[HIDDEN][public], probabilities[public], labels=[0, 1])
    assert score_all() == ["scored"] * len(population)
    board = clients["anonymous"].get(f"/api/v1/competitions/{model_competition.slug}/leaderboard/").json()
    rows = board["rows"] if isinstance(board, dict) else board
    names = [row.get("participant") or row.get("username") for row in rows]
    assert names == sorted(expected, key=expected.__getitem__)


def test_predictions_are_refused_on_a_model_competition(upload, clients, model_competition) -> None:
    response = clients["participant"].post(
        f"/api/v1/competitions/{model_competition.slug}/submissions/", {"predictions": [0.5]}, format="json"
    )
    assert response.status_code == 400 and "takes an ONNX model" in response.json()["detail"]
    csv_file = upload(clients["participant"], model_competition.slug, b"id,target\nr000,0.5\n")
    assert csv_file.status_code == 400 and "not an ONNX model" in csv_file.json()["detail"]


def test_a_refused_model_is_a_400_naming_the_problem_and_costs_nothing(
    upload, clients, model_competition, participant
) -> None:
    response = upload(clients["participant"], model_competition.slug, hostile.declared(input_width=29))
    assert response.status_code == 400
    assert "has 29 features; this competition has 30" in response.json()["detail"]
    assert quota_status(competition=model_competition, participant=participant).used_total == 0


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (hostile.nan_output, "the model's output contains NaN or infinite values"),
        (hostile.index_error, "the model raised an error while running on the hidden features"),
        (hostile.fewer_rows, "the model's output does not have the shape [N], [N, 1] or [N, 2] with N = 269 rows"),
    ],
    ids=["nan", "runtime-error", "wrong-shape"],
)
def test_a_hostile_model_fails_with_a_fixed_message_and_counts_against_the_quota(
    upload, clients, model_competition, participant, score_all, build: Callable[[], bytes], message: str
) -> None:
    response = upload(clients["participant"], model_competition.slug, build())
    assert response.status_code == 202
    assert score_all() == ["failed"]
    detail = clients["participant"].get(f"/api/v1/submissions/{response.json()['id']}/").json()
    assert detail["status"] == "failed" and detail["error"] == message
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.raw_public is None  # nothing was scored: no label was read
    assert any(note.startswith("model run failed") for note in submission.defense_notes)
    assert quota_status(competition=model_competition, participant=participant).used_total == 1


def test_an_endless_loop_fails_at_the_time_limit_instead_of_staying_stuck(
    upload, clients, model_competition, score_all, settings
) -> None:
    settings.LEADERBOARD_MODEL_CPU_SECONDS = 1
    settings.LEADERBOARD_MODEL_WALL_SECONDS = 3
    response = upload(clients["participant"], model_competition.slug, hostile.endless_loop())
    assert score_all() == ["failed"]
    error = Submission.objects.get(pk=response.json()["id"]).error
    assert "CPU-time limit of 1 s" in error or "wall-time limit of 3 s" in error


def test_a_model_competition_takes_uploads_from_the_web_page(
    model_competition, participant, client, score_all, django_capture_on_commit_callbacks
) -> None:
    client.force_login(participant)
    page = client.get(f"/c/{model_competition.slug}/submit/")
    assert b"Model (ONNX)" in page.content and b"[N, 30]" in page.content
    data = _onnx(GaussianNB())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/c/{model_competition.slug}/submit/", {"file": io.BytesIO(data)})
    assert response.status_code == 302
    assert score_all() == ["scored"]


def test_a_model_upload_to_a_prediction_competition_is_refused(competition, participant) -> None:
    from leaderboard.submissions.services import submission_create

    with pytest.raises(InvalidUpload):
        submission_create(competition=competition, participant=participant, data=_onnx(GaussianNB()))


def test_a_mutnet_model_carries_a_probe_past_the_move_to_models(upload, clients, model_competition, score_all):
    """Paper 001, Section 5: an honest model with the Mutator Network on top emits a chosen θ on every hidden
    row; its released log loss gives the public split's class count exactly, as a constant file would."""
    import onnx

    from attacks.mutnet import emitted_values, mutator_head

    honest = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    base = onnx.load_model_from_string(_onnx(honest))
    mutnet = mutator_head(base, np.array([0.7])).SerializeToString()
    response = upload(clients["participant"], model_competition.slug, mutnet)
    assert response.status_code == 202
    assert score_all() == ["scored"]
    released = Submission.objects.get(pk=response.json()["id"]).public_score
    theta = float(emitted_values(np.array([0.7]))[0])
    share = (released + np.log(1 - theta)) / (np.log(1 - theta) - np.log(theta))
    public = competition_scoring_spec(competition=model_competition).split_rows["public"]
    assert round(share * len(public)) == int(LABELS[HIDDEN][public].sum())


def test_a_model_is_scored_under_phi_bit_arithmetic_from_its_exact_outputs(upload, clients, host, score_all) -> None:
    competition = competition_create(
        slug="cancer-mpfr", host=host, labels_csv=labels_csv(LABELS[HIDDEN]),
        features_csv=features_csv(FEATURES[HIDDEN]), arithmetic="mpfr:200", score_decimals=None, public_fraction=1.0,
    )
    model = GaussianNB()
    response = upload(clients["participant"], competition.slug, _onnx(model))
    assert score_all() == ["scored"]
    submission = Submission.objects.get(pk=response.json()["id"])
    probabilities = np.clip(model.predict_proba(FEATURES[HIDDEN])[:, 1], 1e-15, 1 - 1e-15)
    assert submission.raw_public == pytest.approx(log_loss(LABELS[HIDDEN], probabilities), abs=1e-5)
    assert len(submission.raw_public_text) > 30  # the φ-bit value's digits, not a float64 repr


def test_audit_competition_plays_the_battery_through_models(host: Any) -> None:
    """``manage.py audit_competition`` on a model competition: every query is a MutNet model run on the hidden
    features (the note says so), and the labels it recovers are the competition's, row for row."""
    from io import StringIO

    ids = [f"r{i:02d}" for i in range(40)]
    competition_create(
        slug="cancer-audit", host=host, labels_csv=labels_csv(LABELS[HIDDEN][:40], ids),
        features_csv=features_csv(FEATURES[HIDDEN][:40], ids), daily_limit=5, total_limit=20, public_fraction=1.0,
    )
    out = StringIO()
    call_command("audit_competition", "cancer-audit", "--budget", "20", "--json", stdout=out, stderr=StringIO())
    result = json.loads(out.getvalue())
    assert any("model competition" in note for note in result["notes"])
    auto = next(curve for curve in result["curves"] if curve["attack"] == "auto")
    top = next(point for point in auto["points"] if point["budget"] == 20)
    assert top["status"] == "ok" and top["exact_public"] == 1.0, top


def test_the_model_screen_flags_or_rejects_a_mutnet_head_and_passes_an_honest_model(
    upload, clients, model_competition, score_all, settings
) -> None:
    """``LEADERBOARD_MODEL_SCREEN``: ``flag`` notes a MutNet head for the host only; ``reject`` fails it with a
    fixed message; an honest model passes either way."""
    import onnx

    from attacks.mutnet import FeatureRank, ranked_mutator_head
    from leaderboard.submissions.model_runs import SCREEN_REJECT_MESSAGE

    honest = _onnx(make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)))
    n = len(LABELS[HIDDEN])
    probe = np.full(n, 0.5)
    probe[:5] = [1 / 3, 1 / 4, 1 / 6, 1 / 8, 1 / 12]
    mutnet = ranked_mutator_head(onnx.load_model_from_string(honest), probe, FeatureRank(30, n)).SerializeToString()
    outcomes = {}
    for mode in ("flag", "reject"):
        settings.LEADERBOARD_MODEL_SCREEN = mode
        for name, data in (("honest", honest), ("mutnet", mutnet)):
            pk = upload(clients["participant"], model_competition.slug, data).json()["id"]
            score_all()
            outcomes[mode, name] = Submission.objects.get(pk=pk)
    for mode in ("flag", "reject"):
        assert outcomes[mode, "honest"].status == Status.SCORED
        assert any("model screen: nothing found" in note for note in outcomes[mode, "honest"].defense_notes)
    flagged = outcomes["flag", "mutnet"]
    assert flagged.status == Status.SCORED and any("dead_relu" in note for note in flagged.defense_notes)
    rejected = outcomes["reject", "mutnet"]
    assert rejected.status == Status.FAILED and rejected.error == SCREEN_REJECT_MESSAGE
    detail = clients["participant"].get(f"/api/v1/submissions/{flagged.pk}/").json()
    assert "dead_relu" not in json.dumps(detail) and "screen" not in json.dumps(detail)  # host-only note
