"""The data files' API: anyone lists, signed-in participants download, only the host attaches and removes."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.competitions.selectors import list_data_files
from leaderboard.competitions.services import add_data_file

TRAIN = b"id,f1,label\n1,0.5,1\n2,0.25,0\n"
LIST = "/api/v1/competitions/{slug}/data/"
HOST = "/api/v1/host/competitions/{slug}/data/"


@pytest.fixture
def with_train(competition: Any) -> Any:
    add_data_file(competition, "train.csv", TRAIN, description="features and the label")
    return competition


def test_anyone_lists_name_size_sha256_description_and_the_download_url(clients: Any, with_train: Any) -> None:
    answer = clients["anonymous"].get(LIST.format(slug=with_train.slug))

    assert answer.status_code == 200
    [row] = answer.json()
    assert {key: row[key] for key in ("name", "size", "sha256", "description")} == {
        "name": "train.csv", "size": len(TRAIN), "sha256": hashlib.sha256(TRAIN).hexdigest(),
        "description": "features and the label",
    }
    assert row["url"] == f"http://testserver/api/v1/competitions/{with_train.slug}/data/train.csv"
    assert row["created_at"].endswith("Z")
    assert answer["X-Total-Count"] == "1"


def test_a_participant_downloads_it_as_an_attachment_never_sniffed(clients: Any, with_train: Any) -> None:
    answer = clients["participant"].get(f"/api/v1/competitions/{with_train.slug}/data/train.csv")

    assert answer.status_code == 200
    assert b"".join(answer.streaming_content) == TRAIN
    assert answer["Content-Disposition"] == 'attachment; filename="train.csv"'
    assert answer["Content-Type"] == "text/csv"
    assert answer["X-Content-Type-Options"] == "nosniff"
    assert answer["Content-Length"] == str(len(TRAIN))
    assert answer["ETag"] == f'"{hashlib.sha256(TRAIN).hexdigest()}"'


def test_downloading_takes_a_sign_in(clients: Any, with_train: Any) -> None:
    answer = clients["anonymous"].get(f"/api/v1/competitions/{with_train.slug}/data/train.csv")
    assert answer.status_code == 401
    assert "attachment" not in answer.get("Content-Disposition", "")


def test_a_missing_file_or_another_competitions_file_is_404(clients: Any, with_train: Any, make_competition: Any
                                                            ) -> None:
    other = make_competition()
    assert clients["participant"].get(f"/api/v1/competitions/{with_train.slug}/data/test.csv").status_code == 404
    assert clients["participant"].get(f"/api/v1/competitions/{other.slug}/data/train.csv").status_code == 404
    assert clients["participant"].get("/api/v1/competitions/no-such/data/train.csv").status_code == 404
    assert clients["participant"].get(f"/api/v1/competitions/{with_train.slug}/data/..%2Fhidden").status_code == 404


def test_a_name_beyond_ascii_reaches_the_disk_as_given(clients: Any, competition: Any) -> None:
    add_data_file(competition, "données d'été.csv", b"id\n1\n")
    [row] = clients["anonymous"].get(LIST.format(slug=competition.slug)).json()

    answer = clients["participant"].get(row["url"])

    assert answer.status_code == 200
    assert answer["Content-Disposition"] == "attachment; filename*=utf-8''donn%C3%A9es%20d%27%C3%A9t%C3%A9.csv"


def _upload(client: Any, slug: str, content: bytes = TRAIN, filename: str = "train.csv", **fields: Any) -> Any:
    return client.post(HOST.format(slug=slug), {"file": SimpleUploadedFile(filename, content), **fields},
                       format="multipart")


def test_the_host_attaches_a_file_with_a_name_and_a_description(clients: Any, competition: Any) -> None:
    answer = _upload(clients["host"], competition.slug, filename="local-name.csv", description="the train set",
                     name="train.csv")

    assert answer.status_code == 201, answer.json()
    assert (answer.json()["name"], answer.json()["description"]) == ("train.csv", "the train set")
    assert [f.name for f in list_data_files(competition)] == ["train.csv"]
    assert clients["host"].get(HOST.format(slug=competition.slug)).json()[0]["name"] == "train.csv"


def test_a_participant_may_neither_attach_nor_remove(clients: Any, with_train: Any) -> None:
    assert _upload(clients["participant"], with_train.slug, filename="labels.csv").status_code == 403
    assert clients["participant"].get(HOST.format(slug=with_train.slug)).status_code == 403
    assert clients["participant"].delete(HOST.format(slug=with_train.slug) + "train.csv").status_code == 403
    assert clients["anonymous"].delete(HOST.format(slug=with_train.slug) + "train.csv").status_code == 401
    assert [f.name for f in list_data_files(with_train)] == ["train.csv"]


def test_a_refused_upload_says_why_and_stores_nothing(clients: Any, with_train: Any, settings: Any) -> None:
    taken = _upload(clients["host"], with_train.slug)
    assert (taken.status_code, taken.json()["detail"]) == (400, "the competition already has a data file named "
                                                                "'train.csv'")
    bad_name = _upload(clients["host"], with_train.slug, name="../x.csv")
    assert bad_name.status_code == 400 and "is a path" in bad_name.json()["detail"]
    settings.LEADERBOARD_MAX_DATA_FILE_BYTES = 10
    too_large = _upload(clients["host"], with_train.slug, filename="big.csv")
    assert too_large.status_code == 413
    assert "larger than 10 bytes, the most a data file may be" in too_large.json()["detail"]
    declared_too_large = _upload(clients["host"], with_train.slug, content=b"x" * 70_000, filename="bigger.csv")
    assert declared_too_large.status_code == 413
    assert declared_too_large.json()["detail"].startswith("the upload is 70,")
    assert [f.name for f in list_data_files(with_train)] == ["train.csv"]


def test_the_host_replaces_and_removes_a_file(clients: Any, with_train: Any) -> None:
    replaced = _upload(clients["host"], with_train.slug, content=b"id\n9\n", replace="true")
    assert replaced.status_code == 201
    assert replaced.json()["sha256"] == hashlib.sha256(b"id\n9\n").hexdigest()

    assert clients["host"].delete(HOST.format(slug=with_train.slug) + "train.csv").status_code == 204
    assert list_data_files(with_train) == []
    assert clients["host"].delete(HOST.format(slug=with_train.slug) + "train.csv").status_code == 404
