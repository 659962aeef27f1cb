"""Kaggle's competition API as the ``kaggle`` command line calls it (leaderboard.api.kaggle), through the test
client: the shapes kagglesdk reads, basic authentication with an API token, the three-step submission through the
site's upload service and quota, released scores only, and hostile input answered with Kaggle's error shape."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

from leaderboard.competitions.services import add_data_file
from leaderboard.kaggle_cli.models import CliUpload
from leaderboard.kaggle_cli.services import MAX_PENDING_UPLOADS
from leaderboard.submissions.models import Submission
from leaderboard.submissions.selectors import leaderboard_csv
from tests.site.conftest import issue_token
from tests.site.factories import N_ROWS, predictions_csv
from tests.site.kaggle_calls import content, kaggle_get, kaggle_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def web() -> Client:
    return Client()


@pytest.fixture
def alice(participant: Any) -> tuple[str, str]:
    return participant.username, issue_token(participant)


@pytest.fixture
def bob(other_participant: Any) -> tuple[str, str]:
    return other_participant.username, issue_token(other_participant)


def upload(web: Client, auth: tuple[str, str], slug: str, data: bytes, *, name: str = "preds.csv",
           description: str = "first try") -> Any:
    """The command line's three steps; the CreateSubmission answer."""
    started = kaggle_post(web, "StartSubmissionUpload",
                          {"competitionName": slug, "fileName": name, "contentLength": len(data)}, auth)
    assert started.status_code == 200, started.content
    answer = started.json()
    assert answer["createUrl"].startswith("http://testserver/api/v1/kaggle/uploads/")
    put = web.put(answer["createUrl"].removeprefix("http://testserver"), data=data,
                  content_type="application/octet-stream")
    assert put.status_code == 200, put.content
    return kaggle_post(web, "CreateSubmission", {"competitionName": slug, "blobFileTokens": answer["token"],
                                                 "submissionDescription": description}, auth)


def test_submit_list_and_see_the_released_score(web, alice, competition, participant, enqueued, score_all,
                                                django_capture_on_commit_callbacks) -> None:
    values = np.random.default_rng(3).uniform(0.05, 0.95, N_ROWS)
    with django_capture_on_commit_callbacks(execute=True):
        created = upload(web, alice, competition.slug, predictions_csv(competition, values), description="hi")
    assert created.status_code == 200, created.content
    ref = created.json()["ref"]
    assert created.json()["message"] == f"Successfully submitted to {competition.title or competition.slug}"
    submission = Submission.objects.get(pk=ref)
    assert (submission.participant, submission.upload_name, enqueued) == (participant, "preds.csv", [ref])

    pending = kaggle_post(web, "ListSubmissions", {"competitionName": competition.slug}, alice).json()
    assert pending["submissions"][0]["status"] == "PENDING" and "publicScore" not in pending["submissions"][0]
    assert score_all() == ["scored"]
    submission.refresh_from_db()
    listed = kaggle_post(web, "ListSubmissions", {"competitionName": competition.slug}, alice).json()
    assert listed == {"submissions": [{
        "ref": ref, "date": listed["submissions"][0]["date"], "description": "hi", "fileName": "preds.csv",
        "status": "COMPLETE", "publicScore": submission.public_score_text, "submittedBy": "alice",
    }], "nextPageToken": ""}
    assert listed["submissions"][0]["date"].endswith("Z")
    one = kaggle_post(web, "GetSubmission", {"ref": ref}, alice).json()
    assert one["publicScore"] == submission.public_score_text and one["status"] == "COMPLETE"
    board = kaggle_post(web, "GetLeaderboard", {"competitionName": competition.slug}).json()
    assert board["submissions"] == [{"teamName": "alice", "submissionDate": one["date"],
                                     "score": submission.public_score_text}]
    limits = kaggle_post(web, "GetSubmissionLimits", {"competitionName": competition.slug}, alice).json()
    assert limits == {"numToday": 1, "numTotal": 1, "numAllowedNow": 4, "limitedByTotal": False}


def test_create_submission_again_answers_the_same_submission_charged_once(web, alice, competition) -> None:
    data = predictions_csv(competition, np.full(N_ROWS, 0.5))
    started = kaggle_post(web, "StartSubmissionUpload",
                          {"competitionName": competition.slug, "fileName": "a.csv", "contentLength": len(data)},
                          alice).json()
    assert web.put(started["createUrl"], data=data, content_type="text/csv").status_code == 200
    body = {"competitionName": competition.slug, "blobFileTokens": started["token"]}
    first, second = (kaggle_post(web, "CreateSubmission", body, alice) for _ in range(2))
    assert first.json()["ref"] == second.json()["ref"]
    assert Submission.objects.count() == 1
    # The upload's copy of the file is dropped; its URL takes nothing more.
    assert CliUpload.objects.filter(content__isnull=True, submission__isnull=False).count() == 1
    again = web.put(started["createUrl"], data=data, content_type="text/csv")
    assert again.status_code == 409 and again.json()["code"] == 409


def test_refusals_come_in_kaggles_error_shape_and_charge_nothing(web, alice, bob, make_competition) -> None:
    competition = make_competition(slug="strict", daily_limit=1)
    slug = competition.slug
    bad = upload(web, alice, slug, b"id,prediction\nr000,0.5\n")
    assert bad.status_code == 400
    assert set(bad.json()) >= {"code", "message"} and bad.json()["code"] == 400 and bad.json()["message"]
    # Someone else's upload token is no token at all.
    started = kaggle_post(web, "StartSubmissionUpload", {"competitionName": slug, "fileName": "x.csv"}, alice).json()
    stolen = kaggle_post(web, "CreateSubmission", {"competitionName": slug, "blobFileTokens": started["token"]}, bob)
    assert stolen.status_code == 404 and "no upload of yours" in stolen.json()["message"]
    never_put = kaggle_post(web, "CreateSubmission", {"competitionName": slug, "blobFileTokens": started["token"]},
                            alice)
    assert never_put.status_code == 400 and "never arrived" in never_put.json()["message"]
    assert web.put("/api/v1/kaggle/uploads/not-a-token", data=b"x", content_type="text/csv").status_code == 404
    assert Submission.objects.count() == 0

    ok = upload(web, alice, slug, predictions_csv(competition, np.full(N_ROWS, 0.5)))
    assert ok.status_code == 200
    over = kaggle_post(web, "StartSubmissionUpload", {"competitionName": slug, "fileName": "y.csv"}, alice)
    assert over.status_code == 429 and over.json()["resets_at"].endswith("Z")
    assert "daily limit of 1 submissions reached" in over.json()["message"]

    cases = [
        ("NoSuchMethod", {}, 404, "does not serve"),
        ("ListSubmissions", {"competitionName": "no-such"}, 404, "no competition is named 'no-such'"),
        ("ListSubmissions", {"competitionName": 7}, 400, "competitionName: must be a string"),
        ("ListSubmissions", {"competitionName": "a\x00b"}, 400, "NUL"),
        ("ListCompetitions", {"pageSize": 501}, 400, "pageSize: must be at most 500"),
        ("ListCompetitions", {"pageToken": "x"}, 400, "pageToken"),
        ("StartSubmissionUpload", {"competitionName": "strict", "fileName": "x.csv", "contentLength": 1 << 40},
         429, "daily limit"),
        ("CreateSubmission", {"competitionName": slug, "blobFileTokens": "t", "sandbox": True}, 400, "sandbox"),
        ("CreateSubmission", {"competitionName": slug, "blobFileTokens": "t",
                              "submissionDescription": "x" * 1001}, 400, "at most 1000"),
        ("GetSubmission", {"ref": "abc"}, 400, "ref: must be a whole number"),
        ("GetSubmission", {"ref": 1 << 70}, 400, "ref: is out of range"),
        ("GetSubmission", {"ref": Submission.objects.get().pk + 1}, 404, "no submission"),
    ]
    for method, body, status, words in cases:
        answer = kaggle_post(web, method, body, alice)
        assert (answer.status_code, answer.json()["code"]) == (status, status), (method, answer.content)
        assert words in answer.json()["message"], (method, answer.json())
    not_object = web.post("/api/v1/competitions.CompetitionApiService/ListCompetitions", data="[1]",
                          content_type="application/json")
    assert not_object.status_code == 400 and "JSON object" in not_object.json()["message"]


def test_an_upload_over_the_limit_is_refused_before_it_is_sent(web, alice, competition, settings) -> None:
    settings.LEADERBOARD_MAX_UPLOAD_BYTES = 1000
    answer = kaggle_post(web, "StartSubmissionUpload",
                         {"competitionName": competition.slug, "fileName": "big.csv", "contentLength": 1001}, alice)
    assert answer.status_code == 400 and "over the limit of 1000 bytes" in answer.json()["message"]
    started = kaggle_post(web, "StartSubmissionUpload",
                          {"competitionName": competition.slug, "fileName": "big.csv", "contentLength": 10},
                          alice).json()
    # A body larger than declared still meets the limit.
    put = web.put(started["createUrl"], data=b"x" * 1001, content_type="text/csv")
    assert put.status_code == 400 and "over the limit" in put.json()["message"]


def test_pending_uploads_are_bounded_and_expire(web, alice, competition) -> None:
    body = {"competitionName": competition.slug, "fileName": "p.csv"}
    for _ in range(MAX_PENDING_UPLOADS):
        assert kaggle_post(web, "StartSubmissionUpload", body, alice).status_code == 200
    refused = kaggle_post(web, "StartSubmissionUpload", body, alice)
    assert refused.status_code == 429 and "not submitted" in refused.json()["message"]
    CliUpload.objects.update(created_at=timezone.now() - timedelta(hours=2))
    assert kaggle_post(web, "StartSubmissionUpload", body, alice).status_code == 200
    assert CliUpload.objects.count() == 1  # the expired ones went


def test_authentication_is_a_username_and_its_own_api_token(web, alice, bob, competition) -> None:
    slug = {"competitionName": competition.slug}
    assert kaggle_post(web, "ListSubmissions", slug, alice).status_code == 200
    for auth in [("bob", alice[1]), ("alice", "lbl_" + "x" * 43), ("alice", "")]:
        answer = kaggle_post(web, "ListSubmissions", slug, auth)
        assert answer.status_code == 401 and answer["WWW-Authenticate"].startswith("Basic"), auth
        assert answer.json()["code"] == 401
    assert kaggle_post(web, "ListSubmissions", slug).status_code == 401
    # Public reads need no account, as on the REST API; wrong credentials are refused even there.
    assert kaggle_post(web, "ListCompetitions").status_code == 200
    assert kaggle_post(web, "ListCompetitions", {}, ("bob", alice[1])).status_code == 401


def test_competitions_list_pages_search_and_entered(web, alice, make_competition, participant, submit) -> None:
    for n in range(5):
        make_competition(slug=f"c-{n}", title=f"Contest {n}", description=f"# Predict things {n}\n\nMore.",
                         opens_at=timezone.now() - timedelta(days=n))
    make_competition(slug="hidden", listed=False)
    submit(_competition("c-3"), participant, np.full(N_ROWS, 0.5))
    first = kaggle_post(web, "ListCompetitions", {"pageSize": 2, "page": 1}, alice).json()
    assert [c["ref"] for c in first["competitions"]] == ["c-0", "c-1"] and first["nextPageToken"] == "2"
    rest = kaggle_post(web, "ListCompetitions", {"pageSize": 10, "pageToken": "2"}, alice).json()
    assert [c["ref"] for c in rest["competitions"]] == ["c-2", "c-3", "c-4"] and rest["nextPageToken"] == ""
    c3 = rest["competitions"][1]
    assert c3["title"] == "Contest 3" and c3["description"] == "Predict things 3"
    assert c3["url"] == "http://testserver/c/c-3/" and c3["evaluationMetric"] == "binary_logloss"
    assert c3["userHasEntered"] is True and c3["teamCount"] == 0 and "userRank" not in c3  # queued: not on the board
    assert [c["ref"] for c in kaggle_post(web, "ListCompetitions", {"search": "test 4"}).json()["competitions"]] == [
        "c-4"]
    entered = kaggle_post(web, "ListCompetitions", {"group": "COMPETITION_LIST_TAB_ENTERED"}, alice).json()
    assert [c["ref"] for c in entered["competitions"]] == ["c-3"]


def _competition(slug: str) -> Any:
    from leaderboard.competitions.models import Competition

    return Competition.objects.get(slug=slug)


def test_boards_show_released_texts_and_the_private_one_after_the_close(
    web, alice, make_competition, participant, other_participant, submit, score_all
) -> None:
    competition = make_competition(slug="board", closes_at=timezone.now() + timedelta(days=1))
    rng = np.random.default_rng(5)
    for user in (participant, other_participant):
        submit(competition, user, rng.uniform(0.05, 0.95, N_ROWS))
    score_all()
    slug = {"competitionName": competition.slug}
    public = kaggle_post(web, "GetLeaderboard", slug).json()["submissions"]
    texts = {s.participant.username: s for s in Submission.objects.select_related("participant")}
    assert {row["teamName"]: row["score"] for row in public} == {
        name: s.public_score_text for name, s in texts.items()}
    listed = kaggle_post(web, "ListCompetitions", {}, alice).json()["competitions"][0]
    assert listed["teamCount"] == 2 and listed["userRank"] in {1, 2}
    assert "privateScore" not in kaggle_post(web, "ListSubmissions", slug, alice).json()["submissions"][0]

    competition.closes_at = timezone.now() - timedelta(seconds=1)
    competition.save()
    private = kaggle_post(web, "GetLeaderboard", slug).json()["submissions"]
    assert {row["teamName"]: row["score"] for row in private} == {
        name: s.private_score_text for name, s in texts.items()}
    assert kaggle_post(web, "GetLeaderboard", {**slug, "overridePublic": True}).json()["submissions"] == public
    mine = kaggle_post(web, "ListSubmissions", slug, alice).json()["submissions"][0]
    assert mine["privateScore"] == texts["alice"].private_score_text
    download = kaggle_post(web, "DownloadLeaderboard", slug)
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(content(download))) as archive:
        assert archive.namelist() == ["board-privateleaderboard.csv"]
        assert archive.read("board-privateleaderboard.csv").decode() == leaderboard_csv(
            competition=competition, board="private")


def test_data_files_list_download_and_bundle(web, alice, competition) -> None:
    add_data_file(competition, "train.csv", b"id,x,label\na,1,0\n", "Training rows with labels")
    add_data_file(competition, "test features.csv", b"id,x\nb,2\n")
    slug = {"competitionName": competition.slug}
    listed = kaggle_post(web, "ListDataFiles", slug).json()  # public metadata, as on the REST API
    assert [(f["name"], f["totalBytes"]) for f in listed["files"][:2]] == [("test features.csv", 9),
                                                                          ("train.csv", 17)]
    assert listed["files"][1]["description"] == "Training rows with labels"
    assert listed["files"][2]["name"] == "sample_submission.csv" and listed["nextPageToken"] == ""

    assert kaggle_post(web, "DownloadDataFile", {**slug, "fileName": "train.csv"}).status_code == 401
    redirect = kaggle_post(web, "DownloadDataFile", {**slug, "fileName": "test features.csv"}, alice)
    assert redirect.status_code == 302
    assert redirect["Location"] == f"/api/v1/kaggle/competitions/{competition.slug}/files/test%20features.csv"
    assert kaggle_get(web, redirect["Location"]).status_code == 401
    assert content(kaggle_get(web, redirect["Location"], alice)) == b"id,x\nb,2\n"
    sample = kaggle_get(web, kaggle_post(web, "DownloadDataFile", {**slug, "fileName": "sample_submission.csv"},
                                         alice)["Location"], alice)
    assert content(sample).decode() == web.get(f"/api/v1/competitions/{competition.slug}/sample-submission/"
                                               ).content.decode()
    missing = kaggle_post(web, "DownloadDataFile", {**slug, "fileName": "labels.csv"}, alice)
    assert missing.status_code == 404 and "no data file named 'labels.csv'" in missing.json()["message"]

    bundle = kaggle_post(web, "DownloadDataFiles", slug, alice)
    assert bundle.status_code == 302 and bundle["Location"].endswith(f"/{competition.slug}.zip")
    with zipfile.ZipFile(io.BytesIO(content(kaggle_get(web, bundle["Location"], alice)))) as archive:
        assert sorted(archive.namelist()) == ["sample_submission.csv", "test features.csv", "train.csv"]
        assert archive.read("train.csv") == b"id,x,label\na,1,0\n"


def test_limits_of_a_competition_without_one_say_so(web, alice, make_competition) -> None:
    competition = make_competition(slug="free", daily_limit=None)
    answer = kaggle_post(web, "GetSubmissionLimits", {"competitionName": competition.slug}, alice)
    assert answer.status_code == 400 and "no submission limit" in answer.json()["message"]


def test_the_methods_stay_out_of_the_openapi_document(web) -> None:
    schema = web.get("/api/schema/").content.decode()
    assert "CompetitionApiService" not in schema and "/kaggle/" not in schema


def test_a_json_upload_goes_through_the_json_checks(web, alice, competition: Any) -> None:
    """A .json file is read as the REST API reads a JSON body: its shape is checked before it is parsed."""
    answer = upload(web, alice, competition.slug, b'{"predictions": ' + b"[" * 40 + b"]" * 40 + b"}", name="p.json")
    assert answer.status_code == 400 and "nests 41 levels deep" in answer.json()["message"]
    column = competition.submission_columns[1]
    good = {"predictions": [{"id": f"r{i:03d}", column: 0.5} for i in range(N_ROWS)]}
    assert upload(web, alice, competition.slug, json.dumps(good).encode(), name="p.json").status_code == 200


def test_the_token_alone_works_as_kaggle_api_token(web, alice, participant, competition) -> None:
    """``KAGGLE_API_TOKEN``: the command line asks IntrospectToken whose token it is, then sends it as a bearer."""
    introspect = "/api/v1/security.OAuthService/IntrospectToken"
    known = web.post(introspect, data=json.dumps({"token": alice[1]}), content_type="application/json")
    assert known.json() == {"active": True, "username": "alice"}
    unknown = web.post(introspect, data=json.dumps({"token": "kaggle-oauth-token"}), content_type="application/json")
    assert unknown.json() == {"active": False}
    participant.is_active = False
    participant.save()
    assert web.post(introspect, data=json.dumps({"token": alice[1]}), content_type="application/json").json() == {
        "active": False}
    participant.is_active = True
    participant.save()
    body = json.dumps({"competitionName": competition.slug})
    mine = web.post("/api/v1/competitions.CompetitionApiService/ListSubmissions", data=body,
                    content_type="application/json", headers={"Authorization": f"Bearer {alice[1]}"})
    assert mine.status_code == 200 and mine.json() == {"submissions": [], "nextPageToken": ""}
    wrong = web.post("/api/v1/competitions.CompetitionApiService/ListSubmissions", data=body,
                     content_type="application/json", headers={"Authorization": "Bearer kaggle-oauth-token"})
    assert wrong.status_code == 401
