"""The REST API: the interface contract, permissions with a fixed cast, malformed uploads, quota answers."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from leaderboard.submissions.models import Status, Submission
from tests.site.conftest import N_ROWS, labels_csv, predictions_csv

pytestmark = pytest.mark.django_db


def _probs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, N_ROWS)


def upload(client: Any, slug: str, data: bytes, name: str = "preds.csv") -> Any:
    return client.post(
        f"/api/v1/competitions/{slug}/submissions/",
        {"file": SimpleUploadedFile(name, data, content_type="text/csv")},
        format="multipart",
    )


# --- Public metadata ------------------------------------------------------------------------------------


def test_competition_metadata_is_public_and_holds_no_secret(clients, competition, hidden_labels) -> None:
    for who in ("anonymous", "participant"):
        listed = clients[who].get("/api/v1/competitions/")
        assert listed.status_code == 200 and listed.json()[0]["slug"] == competition.slug
        detail = clients[who].get(f"/api/v1/competitions/{competition.slug}/")
        assert detail.status_code == 200
        body = detail.json()
        assert body["n_rows"] == N_ROWS and body["n_classes"] == 2 and body["task"] == "binary"
        assert body["metric"] == "binary_logloss" and body["score_decimals"] == 5 and body["eps"] == 1e-15
        assert body["public_fraction"] == 0.3 and body["daily_limit"] == 5 and body["arithmetic"] == "float64"
        assert body["submission_format"]["columns"] == ["id", "target"]
        assert body["opens_at"].endswith("Z")
        for forbidden in ("labels", "secret", "defenses", "public_mask", "ids", "host"):
            assert forbidden not in body
    assert clients["anonymous"].get("/api/v1/competitions/nope/").status_code == 404


def test_metadata_tells_the_precision_released_scores_carry(clients, make_competition) -> None:
    plain = make_competition(slug="plain-5", score_decimals=5)
    coarse = make_competition(
        slug="coarse-3", score_decimals=5, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-4},
                                                   {"name": "rounding", "decimals": 3}]
    )
    full = make_competition(slug="full", score_decimals=None)
    for competition, released in ((plain, 5), (coarse, 3), (full, None)):
        body = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/").json()
        assert body["released_decimals"] == released and "defenses" not in body


def test_sample_submission_is_the_exact_template(clients, competition) -> None:
    response = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/sample-submission/")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert lines[0] == "id,target" and len(lines) == N_ROWS + 1
    assert all(line.endswith(",0.5") for line in lines[1:])
    # The template itself is a valid upload.
    assert upload(clients["participant"], competition.slug, response.content).status_code == 202


def test_openapi_schema_is_served(clients) -> None:
    response = clients["anonymous"].get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    assert "/api/v1/competitions/{slug}/submissions/" in paths
    assert "/api/v1/submissions/{submission_id}/" in paths


# --- Submitting -----------------------------------------------------------------------------------------


def test_upload_answers_202_with_id_and_status_then_scores(clients, competition, enqueued, score_all) -> None:
    with_callbacks = clients["participant"]
    response = upload(with_callbacks, competition.slug, predictions_csv(competition, _probs(1)))
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["quota"]["remaining_today"] == 4
    submission = Submission.objects.get(pk=body["id"])
    from leaderboard.submissions.services import submission_score

    submission_score(submission_id=submission.pk)
    detail = with_callbacks.get(f"/api/v1/submissions/{submission.pk}/").json()
    submission.refresh_from_db()
    assert detail["status"] == "scored"
    assert detail["public_score_text"] == submission.public_score_text
    assert detail["public_score"] == float(submission.public_score_text)
    assert detail["private_score"] is None and detail["private_score_text"] == ""  # not before the close
    assert not any(key.startswith("raw") for key in detail)
    assert submission.raw_public_text not in json.dumps(detail)


def test_json_uploads_are_accepted_in_every_documented_shape(clients, competition) -> None:
    from leaderboard.competitions.selectors import competition_scoring_spec

    ids = competition_scoring_spec(competition=competition).hidden.ids
    values = _probs(2)
    shapes = [
        {"predictions": [float(v) for v in values]},
        {"predictions": {i: float(v) for i, v in zip(ids, values, strict=True)}},
        {"predictions": [{"id": i, "target": str(v)} for i, v in zip(ids, values, strict=True)]},
    ]
    for payload in shapes:
        response = clients["participant"].post(
            f"/api/v1/competitions/{competition.slug}/submissions/", payload, format="json"
        )
        assert response.status_code == 202, response.content
        assert Submission.objects.get(pk=response.json()["id"]).upload_kind == "json"


def test_a_raw_csv_body_is_accepted(clients, competition) -> None:
    response = clients["participant"].post(
        f"/api/v1/competitions/{competition.slug}/submissions/",
        data=predictions_csv(competition, _probs(3)),
        content_type="text/csv",
    )
    assert response.status_code == 202, response.content


def _good_lines(competition: Any) -> list[str]:
    return predictions_csv(competition, _probs(4)).decode().splitlines()


def _with_line(competition: Any, index: int, text: str) -> bytes:
    lines = _good_lines(competition)
    lines[index] = text
    return ("\n".join(lines) + "\n").encode()


MALFORMED: dict[str, tuple[Any, str]] = {
    # name: (builder(competition, ids) -> bytes, expected fragment of the message)
    "missing id": (lambda c: ("\n".join(_good_lines(c)[:-1]) + "\n").encode(), "missing"),
    "unknown id": (lambda c: _with_line(c, 5, "zzz,0.5"), "line 6: id 'zzz' is not in the test set"),
    "duplicate id": (lambda c: _with_line(c, 5, _good_lines(c)[3].split(",")[0] + ",0.5"), "line 6: duplicate id"),
    "extra column": (lambda c: _with_line(c, 7, _good_lines(c)[7] + ",0.1"), "line 8: expected 2 columns, got 3"),
    "too few columns": (lambda c: _with_line(c, 7, _good_lines(c)[7].split(",")[0]), "line 8: expected 2 columns"),
    "non-numeric": (lambda c: _with_line(c, 2, _good_lines(c)[2].split(",")[0] + ",abc"), "line 3"),
    "nan": (lambda c: _with_line(c, 4, _good_lines(c)[4].split(",")[0] + ",nan"), "line 5"),
    "infinity": (lambda c: _with_line(c, 4, _good_lines(c)[4].split(",")[0] + ",inf"), "line 5"),
    "above one": (lambda c: _with_line(c, 9, _good_lines(c)[9].split(",")[0] + ",1.5"), "line 10"),
    "negative": (lambda c: _with_line(c, 9, _good_lines(c)[9].split(",")[0] + ",-0.1"), "line 10"),
    "bad header": (lambda c: _with_line(c, 0, "id,prediction"), "line 1"),
    # A spreadsheet set to a comma decimal mark writes ';' between columns: the message says so.
    "semicolons": (lambda c: "\n".join(line.replace(",", ";") for line in _good_lines(c)).encode(),
                   "line 1: the header has 1 columns, expected 2: id,target; this line is separated by ';'"),
    "a semicolon row": (lambda c: _with_line(c, 4, _good_lines(c)[4].replace(",", ";")),
                        "line 5: expected 2 columns, got 1; this line is separated by ';' (semicolon): separate "
                        "columns with ','"),
    "empty file": (lambda c: b"", "empty"),
    "only whitespace": (lambda c: b"\n\n  \n", "empty"),
    "header only": (lambda c: b"id,target\n", "no rows"),
    "not utf-8": (lambda c: _with_line(c, 3, "r\xe9\xe9,0.5").replace("é".encode(), b"\xe9"), "UTF-8"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_each_malformed_upload_is_a_400_naming_the_problem_and_costs_nothing(clients, competition, case) -> None:
    build, fragment = MALFORMED[case]
    data = build(competition)
    response = upload(clients["participant"], competition.slug, data)
    assert response.status_code == 400, response.content
    assert fragment in response.json()["detail"]
    assert Submission.objects.count() == 0
    quota = clients["participant"].get(f"/api/v1/competitions/{competition.slug}/quota/").json()
    assert quota["used_today"] == 0 and quota["remaining_today"] == 5


def test_a_file_over_the_size_limit_is_rejected(clients, competition, settings) -> None:
    settings.LEADERBOARD_MAX_UPLOAD_BYTES = 100
    from leaderboard.competitions import selectors

    selectors._SPEC_CACHE.clear()
    response = upload(clients["participant"], competition.slug, predictions_csv(competition, _probs(5)))
    assert response.status_code == 400 and "over the limit of 100 bytes" in response.json()["detail"]
    selectors._SPEC_CACHE.clear()


def test_malformed_json_bodies_are_400s(clients, competition) -> None:
    url = f"/api/v1/competitions/{competition.slug}/submissions/"
    bad_json = clients["participant"].post(url, data=b'{"predictions": [0.5,', content_type="application/json")
    assert bad_json.status_code == 400 and "not valid JSON" in bad_json.json()["detail"]
    wrong_length = clients["participant"].post(url, {"predictions": [0.5, 0.5]}, format="json")
    assert wrong_length.status_code == 400 and "needs 40 items" in wrong_length.json()["detail"]
    nan_item = clients["participant"].post(
        url, data=json.dumps({"predictions": [0.5] * 39 + ["NaN"]}).encode(), content_type="application/json"
    )
    assert nan_item.status_code == 400 and "item 39" in nan_item.json()["detail"]
    no_file = clients["participant"].post(url, {"other": "x"}, format="multipart")
    assert no_file.status_code == 400 and '"file"' in no_file.json()["detail"]
    odd_type = clients["participant"].post(url, data=b"<xml/>", content_type="application/xml")
    assert odd_type.status_code == 400 and "unsupported content type" in odd_type.json()["detail"]
    assert Submission.objects.count() == 0


def test_multiclass_rows_are_renormalised_within_tolerance_and_rejected_beyond(
    clients, make_competition, hidden_labels
) -> None:
    labels = np.random.default_rng(3).integers(0, 3, N_ROWS)
    competition = make_competition(labels=labels, metric="multiclass_logloss")
    near = np.tile([0.2, 0.3, 0.50005], (N_ROWS, 1))
    assert upload(clients["participant"], competition.slug, predictions_csv(competition, near)).status_code == 202
    far = near.copy()
    far[6] = [0.2, 0.3, 0.6]
    response = upload(clients["participant"], competition.slug, predictions_csv(competition, far))
    assert response.status_code == 400 and "line 8" in response.json()["detail"]
    assert "sum to" in response.json()["detail"]


def test_over_quota_is_a_429_with_the_utc_reset_time(clients, competition) -> None:
    for seed in range(5):
        response = upload(clients["participant"], competition.slug, predictions_csv(competition, _probs(seed)))
        assert response.status_code == 202
    response = upload(clients["participant"], competition.slug, predictions_csv(competition, _probs(9)))
    assert response.status_code == 429
    body = response.json()
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()
    assert body["resets_at"] == f"{tomorrow}T00:00:00Z"
    assert 0 < int(response["Retry-After"]) <= 86400
    assert "resets at" in body["detail"]
    quota = clients["participant"].get(f"/api/v1/competitions/{competition.slug}/quota/").json()
    assert quota["remaining_today"] == 0 and quota["resets_at"] == body["resets_at"]
    # Another participant's quota is untouched.
    assert upload(clients["other"], competition.slug, predictions_csv(competition, _probs(9))).status_code == 202


def test_closed_and_not_yet_open_competitions_refuse_uploads(clients, make_competition) -> None:
    now = timezone.now()
    closed = make_competition(opens_at=now - timedelta(days=3), closes_at=now - timedelta(days=1))
    later = make_competition(opens_at=now + timedelta(days=1))
    for competition, fragment in ((closed, "closed at"), (later, "opens at")):
        response = upload(clients["participant"], competition.slug, predictions_csv(competition, _probs(1)))
        assert response.status_code == 403 and fragment in response.json()["detail"]
    assert Submission.objects.count() == 0


# --- Permissions with a fixed cast ------------------------------------------------------------------------


@pytest.fixture
def alice_scored(clients, competition, participant) -> Submission:
    from leaderboard.submissions.services import submission_score

    response = upload(clients["participant"], competition.slug, predictions_csv(competition, _probs(11)))
    submission_score(submission_id=response.json()["id"])
    return Submission.objects.get(pk=response.json()["id"])


OWNER_ONLY = {"participant": 200, "other": 404, "host": 404, "anonymous": 401}
SIGNED_IN = {"participant": 200, "other": 200, "host": 200, "anonymous": 401}
HOST_ONLY = {"participant": 403, "other": 403, "host": 200, "anonymous": 401}

EXPECTED_STATUS = {
    # (method, path template): {who: status}
    ("get", "/api/v1/submissions/{sub}/"): OWNER_ONLY,
    ("post", "/api/v1/submissions/{sub}/select/"): OWNER_ONLY,
    ("get", "/api/v1/competitions/{slug}/submissions/"): SIGNED_IN,
    ("get", "/api/v1/competitions/{slug}/quota/"): SIGNED_IN,
    ("get", "/api/v1/competitions/{slug}/leaderboard/"): dict.fromkeys(SIGNED_IN, 200),
    ("get", "/api/v1/competitions/{slug}/leaderboard/?board=private"): {
        "participant": 403, "other": 403, "host": 200, "anonymous": 403,
    },
    ("get", "/api/v1/host/competitions/{slug}/"): HOST_ONLY,
    ("get", "/api/v1/host/competitions/{slug}/submissions/"): HOST_ONLY,
    ("put", "/api/v1/host/competitions/{slug}/defenses/"): HOST_ONLY,
    ("get", "/api/v1/host/competitions/{slug}/leakage/"): HOST_ONLY,
}


@pytest.mark.parametrize(("method", "template"), sorted(EXPECTED_STATUS))
def test_permissions_of_the_fixed_cast(clients, competition, alice_scored, method, template) -> None:
    path = template.format(sub=alice_scored.pk, slug=competition.slug)
    body = {"defenses": [{"name": "rounding", "decimals": 4}]} if method == "put" else {}
    for who, expected in EXPECTED_STATUS[(method, template)].items():
        response = getattr(clients[who], method)(path, body, format="json")
        assert response.status_code == expected, (who, response.content)
        if method == "post" and who == "participant":
            getattr(clients[who], method)(path, body, format="json")  # toggle back


def test_a_participant_lists_only_their_own_submissions(clients, competition, alice_scored) -> None:
    upload(clients["other"], competition.slug, predictions_csv(competition, _probs(12)))
    mine = clients["participant"].get(f"/api/v1/competitions/{competition.slug}/submissions/").json()
    theirs = clients["other"].get(f"/api/v1/competitions/{competition.slug}/submissions/").json()
    assert [s["id"] for s in mine] == [alice_scored.pk]
    assert len(theirs) == 1 and theirs[0]["id"] != alice_scored.pk


def test_host_sees_raw_next_to_released(clients, competition, alice_scored) -> None:
    rows = clients["host"].get(f"/api/v1/host/competitions/{competition.slug}/submissions/").json()
    assert rows[0]["raw_public_text"] == alice_scored.raw_public_text
    assert rows[0]["public_score_text"] == alice_scored.public_score_text
    leakage = clients["host"].get(f"/api/v1/host/competitions/{competition.slug}/leakage/").json()
    assert leakage[0]["participant"] == "alice" and leakage[0]["scored"] == 1
    expected = abs(alice_scored.public_score - alice_scored.raw_public)
    assert leakage[0]["mean_abs_public_error"] == pytest.approx(expected)
    assert 0 < expected <= 0.5e-5


def test_host_sets_a_validated_defense_chain(clients, competition) -> None:
    url = f"/api/v1/host/competitions/{competition.slug}/defenses/"
    ok = clients["host"].put(
        url, {"defenses": [{"name": "rounding", "decimals": 3}], "disclosed_defenses": "rounded to 3"}, format="json"
    )
    assert ok.status_code == 200 and ok.json()["defenses"] == [{"name": "rounding", "decimals": 3}]
    assert clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/").json()["disclosed_defenses"] == (
        "rounded to 3"
    )
    for bad, fragment in (
        ([{"name": "nope"}], "unknown defense 'nope'"),
        ([{"name": "rounding", "digits": 3}], "unknown parameter"),
        ({"name": "rounding"}, "must be a JSON list"),
    ):
        response = clients["host"].put(url, {"defenses": bad}, format="json")
        assert response.status_code == 400 and fragment in response.json()["detail"], response.content


def test_staff_create_a_competition_through_the_host_api(clients, hidden_labels) -> None:
    from django.contrib.auth.models import User

    from tests.site.conftest import api_client

    staff = api_client(User.objects.create_user("sam", is_staff=True))
    form = {
        "slug": "api-made",
        "labels": SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv"),
        "metric": "binary_logloss",
        "score_decimals": "4",
        "daily_limit": "3",
        "defenses": json.dumps([{"name": "rounding", "decimals": 4}]),
    }
    response = staff.post("/api/v1/host/competitions/", form, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["n_rows"] == N_ROWS and response.json()["score_decimals"] == 4
    form["slug"] = "api-made-2"
    form["labels"] = SimpleUploadedFile("labels.csv", b"id,label\na,0\nb,x\n", content_type="text/csv")
    bad = staff.post("/api/v1/host/competitions/", form, format="multipart")
    assert bad.status_code == 400 and "line 3" in bad.json()["detail"]
    form["labels"] = SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv")
    assert clients["participant"].post("/api/v1/host/competitions/", form, format="multipart").status_code == 403


def test_final_selection_through_the_api(clients, competition, alice_scored) -> None:
    url = f"/api/v1/submissions/{alice_scored.pk}/select/"
    assert clients["participant"].post(url, {"selected": True}, format="json").json()["selected_for_final"] is True
    assert clients["participant"].post(url, {}, format="json").json()["selected_for_final"] is False
    queued = upload(clients["participant"], competition.slug, predictions_csv(competition, _probs(13))).json()["id"]
    response = clients["participant"].post(f"/api/v1/submissions/{queued}/select/", {}, format="json")
    assert response.status_code == 400 and "scored" in response.json()["detail"]


def test_leaderboard_json_and_csv(clients, competition, alice_scored) -> None:
    board = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/leaderboard/").json()
    assert board["board"] == "public" and board["rows"][0]["participant"] == "alice"
    assert board["rows"][0]["score_text"] == alice_scored.public_score_text
    assert "submission_id" not in board["rows"][0]
    csv_response = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/leaderboard/?format=csv")
    assert csv_response.status_code == 200 and csv_response["Content-Type"].startswith("text/csv")
    assert csv_response.content.decode().splitlines()[1].startswith(f"1,alice,{alice_scored.public_score_text},1,")
    private_csv = clients["anonymous"].get(
        f"/api/v1/competitions/{competition.slug}/leaderboard/?board=private&format=csv"
    )
    assert private_csv.status_code == 403
    assert clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/leaderboard/?board=x").status_code == 404


def test_after_the_close_the_private_score_and_board_appear(clients, competition, alice_scored) -> None:
    type(competition).objects.filter(pk=competition.pk).update(
        opens_at=timezone.now() - timedelta(days=2), closes_at=timezone.now() - timedelta(seconds=1)
    )
    detail = clients["participant"].get(f"/api/v1/submissions/{alice_scored.pk}/").json()
    assert detail["private_score_text"] == alice_scored.private_score_text != ""
    board = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/leaderboard/?board=private").json()
    assert board["rows"][0]["score_text"] == alice_scored.private_score_text
    assert Submission.objects.get(pk=alice_scored.pk).status == Status.SCORED


# --- Idempotent uploads (Idempotency-Key) -----------------------------------------------------------------


def _keyed(client: Any, slug: str, key: str, data: bytes | None = None, payload: Any = None) -> Any:
    url = f"/api/v1/competitions/{slug}/submissions/"
    if payload is not None:
        return client.post(url, payload, format="json", HTTP_IDEMPOTENCY_KEY=key)
    return client.post(
        url, {"file": SimpleUploadedFile("p.csv", data or b"", content_type="text/csv")}, format="multipart",
        HTTP_IDEMPOTENCY_KEY=key,
    )


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_a_repeated_idempotency_key_returns_the_original_submission_and_charges_nothing(
    clients, competition, kind
) -> None:
    data = predictions_csv(competition, _probs(21))
    payload = {"predictions": [float(v) for v in _probs(21)]} if kind == "json" else None
    first = _keyed(clients["participant"], competition.slug, "key-1", data, payload)
    assert first.status_code == 202 and first.json()["replayed"] is False
    assert "Idempotent-Replayed" not in first
    again = _keyed(clients["participant"], competition.slug, "key-1", data, payload)
    assert again.status_code == 202, again.content
    assert again.json()["id"] == first.json()["id"] and again.json()["replayed"] is True
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["quota"]["used_today"] == 1 and again.json()["quota"]["remaining_today"] == 4
    assert Submission.objects.count() == 1
    assert Submission.objects.get().upload_kind == kind
    # The replay shows the submission as it is now.
    from leaderboard.submissions.services import submission_score

    submission_score(submission_id=first.json()["id"])
    assert _keyed(clients["participant"], competition.slug, "key-1", data, payload).json()["status"] == "scored"
    # A new key is a new upload.
    assert _keyed(clients["participant"], competition.slug, "key-2", data, payload).json()["id"] != first.json()["id"]
    assert Submission.objects.count() == 2


def test_a_key_is_per_participant_and_per_competition(clients, competition, make_competition) -> None:
    other_competition = make_competition()
    data = predictions_csv(competition, _probs(22))
    ids = {
        _keyed(clients["participant"], competition.slug, "shared", data).json()["id"],
        _keyed(clients["other"], competition.slug, "shared", data).json()["id"],
        _keyed(clients["participant"], other_competition.slug, "shared", data).json()["id"],
    }
    assert len(ids) == 3 and Submission.objects.count() == 3


def test_a_key_reused_with_a_different_upload_is_a_422_and_creates_nothing(clients, competition) -> None:
    first = _keyed(clients["participant"], competition.slug, "k", predictions_csv(competition, _probs(23)))
    other = _keyed(clients["participant"], competition.slug, "k", predictions_csv(competition, _probs(24)))
    assert other.status_code == 422
    assert "already used for a different upload" in other.json()["detail"]
    as_json = _keyed(clients["participant"], competition.slug, "k", payload={"predictions": [0.5] * N_ROWS})
    assert as_json.status_code == 422
    assert [s.pk for s in Submission.objects.all()] == [first.json()["id"]]


def test_a_replay_is_answered_even_over_quota_and_without_revalidation(clients, make_competition) -> None:
    competition = make_competition(daily_limit=1)
    data = predictions_csv(competition, _probs(25))
    first = _keyed(clients["participant"], competition.slug, "only", data)
    assert first.status_code == 202
    assert _keyed(clients["participant"], competition.slug, "new", data).status_code == 429
    again = _keyed(clients["participant"], competition.slug, "only", data)
    assert again.status_code == 202 and again.json()["id"] == first.json()["id"]
    assert Submission.objects.count() == 1


@pytest.mark.parametrize(
    ("key", "fragment"),
    [("  ", "header is empty"), ("x" * 256, "256 characters long, over the limit of 255"), ("clé", "printable ASCII")],
)
def test_a_malformed_idempotency_key_is_a_400_naming_the_header(clients, competition, key, fragment) -> None:
    response = _keyed(clients["participant"], competition.slug, key, predictions_csv(competition, _probs(26)))
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["detail"] and fragment in response.json()["detail"]
    assert Submission.objects.count() == 0


def test_the_idempotency_key_header_is_in_the_openapi_schema(clients) -> None:
    schema = json.loads(clients["anonymous"].get("/api/schema/", HTTP_ACCEPT="application/json").content)
    upload = schema["paths"]["/api/v1/competitions/{slug}/submissions/"]["post"]
    (header,) = [p for p in upload["parameters"] if p["in"] == "header"]
    assert header["name"] == "Idempotency-Key" and not header.get("required", False)
    assert "422" in upload["responses"]
    assert "/api/v1/host/participants/" in schema["paths"]


# --- Host: participants and the competition secret --------------------------------------------------------


def _staff(username: str = "sam") -> Any:
    from django.contrib.auth.models import User

    from tests.site.conftest import api_client

    return api_client(User.objects.create_user(username, is_staff=True))


def test_a_host_creates_a_participant_and_its_token_works(clients, competition) -> None:
    from django.contrib.auth.models import User

    from leaderboard.accounts.models import ApiToken

    staff = _staff()
    made = staff.post("/api/v1/host/participants/", {"username": "bot-1"}, format="json")
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["username"] == "bot-1" and body["created"] is True
    stored = ApiToken.objects.get(user__username="bot-1")
    assert body["token"].startswith(stored.prefix) and body["token"] not in (stored.prefix, stored.digest)
    user = User.objects.get(username="bot-1")
    assert not user.has_usable_password() and not user.is_staff
    from tests.site.conftest import api_client

    bot = api_client(None)
    bot.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert upload(bot, competition.slug, predictions_csv(competition, _probs(30))).status_code == 202
    # Asking again answers the host that made it with the same account, 200, and a new token replacing the old.
    again = staff.post("/api/v1/host/participants/", {"username": "bot-1"}, format="json")
    assert again.status_code == 200 and again.json() == {**body, "token": again.json()["token"], "created": False}
    assert again.json()["token"] != body["token"]
    assert upload(bot, competition.slug, predictions_csv(competition, _probs(31))).status_code == 401
    bot.credentials(HTTP_AUTHORIZATION=f"Token {again.json()['token']}")
    assert upload(bot, competition.slug, predictions_csv(competition, _probs(31))).status_code == 202


def test_a_host_never_gets_the_token_of_an_account_it_did_not_make(clients) -> None:
    staff, rival = _staff("sam"), _staff("rita")
    assert rival.post("/api/v1/host/participants/", {"username": "rivals-bot"}, format="json").status_code == 201
    for taken in ("alice", "rivals-bot", "rita"):  # a person who signed up, another host's account, a staff user
        response = staff.post("/api/v1/host/participants/", {"username": taken}, format="json")
        assert response.status_code == 409, (taken, response.content)
        assert "token" not in response.json() and "is taken" in response.json()["detail"]


def test_only_hosts_may_create_participants(clients) -> None:
    path = "/api/v1/host/participants/"
    assert clients["anonymous"].post(path, {"username": "x"}, format="json").status_code == 401
    for who in ("participant", "host"):  # the fixture host owns a competition but is not staff
        response = clients[who].post(path, {"username": "x"}, format="json")
        assert response.status_code == 403 and "only staff" in response.json()["detail"]
    from django.contrib.auth.models import Permission, User

    from tests.site.conftest import api_client

    allowed = User.objects.create_user("helper")
    allowed.user_permissions.add(Permission.objects.get(codename="add_competition"))
    assert api_client(allowed).post(path, {"username": "x"}, format="json").status_code == 201
    assert not User.objects.filter(username="x", is_staff=True).exists()


def test_invalid_participant_names_are_400s(clients) -> None:
    staff = _staff()
    for bad in ("", "has space", "x" * 151):
        response = staff.post("/api/v1/host/participants/", {"username": bad}, format="json")
        assert response.status_code == 400 and "username" in response.json(), (bad, response.content)
    response = staff.post("/api/v1/host/participants/", {"username": "ok", "email": "nope"}, format="json")
    assert response.status_code == 400 and "email" in response.json()


def test_the_host_api_accepts_a_secret_and_never_shows_it(clients, hidden_labels) -> None:
    from leaderboard.competitions.models import HiddenTestData

    staff = _staff()
    secret = 2**100 + 12345
    form = {
        "slug": "seeded",
        "labels": SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv"),
        "secret": str(secret),
    }
    response = staff.post("/api/v1/host/competitions/", form, format="multipart")
    assert response.status_code == 201, response.content
    assert HiddenTestData.objects.get(competition__slug="seeded").secret_int == secret
    for answer in (
        response,
        staff.get("/api/v1/host/competitions/seeded/"),
        clients["participant"].get("/api/v1/competitions/seeded/"),
    ):
        assert "secret" not in answer.json() and str(secret) not in answer.content.decode()
        assert format(secret, "x") not in answer.content.decode()
    # The same secret, the same split: a second competition over the same labels gets the same public rows.
    form.update(slug="seeded-2", labels=SimpleUploadedFile("l.csv", labels_csv(hidden_labels), content_type="text/csv"))
    assert staff.post("/api/v1/host/competitions/", form, format="multipart").status_code == 201
    masks = [HiddenTestData.objects.get(competition__slug=s).public_mask_npy for s in ("seeded", "seeded-2")]
    assert bytes(masks[0]) == bytes(masks[1])
    bad_secrets = (("-1", "greater than or equal to 0"), (str(2**128), "less than or equal to"), ("x", "integer"))
    for bad, fragment in bad_secrets:
        form.update(slug="seeded-3", secret=bad,
                    labels=SimpleUploadedFile("l.csv", labels_csv(hidden_labels), content_type="text/csv"))
        answer = staff.post("/api/v1/host/competitions/", form, format="multipart")
        assert answer.status_code == 400 and fragment in json.dumps(answer.json()), (bad, answer.content)
