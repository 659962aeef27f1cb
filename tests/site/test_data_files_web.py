"""The Data page (anyone sees the list, signed-in participants download) and the host's data page."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.competitions.selectors import list_data_files, open_data_file
from leaderboard.competitions.services import add_data_file

pytestmark = pytest.mark.django_db

TRAIN = b"id,f1,label\n1,0.5,1\n"


def _client(user: Any | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def with_train(competition: Any) -> Any:
    add_data_file(competition, "train.csv", TRAIN, description="features and the label")
    return competition


def test_the_competition_page_links_its_data_page_which_lists_the_files(participant: Any, with_train: Any) -> None:
    page = html.unescape(_client(None).get(f"/c/{with_train.slug}/").content.decode())
    assert f'href="/c/{with_train.slug}/data/" id="data-link">Data (1 file)</a>' in page

    data = html.unescape(_client(participant).get(f"/c/{with_train.slug}/data/").content.decode())
    assert f'href="/c/{with_train.slug}/data/train.csv" download>train.csv</a>' in data
    assert "features and the label" in data and list_data_files(with_train)[0].sha256 in data


def test_a_signed_in_participant_downloads_an_anonymous_visitor_is_sent_to_log_in(participant: Any, with_train: Any
                                                                                   ) -> None:
    answer = _client(participant).get(f"/c/{with_train.slug}/data/train.csv")
    assert answer.status_code == 200 and b"".join(answer.streaming_content) == TRAIN  # type: ignore[attr-defined]
    assert answer["Content-Disposition"] == 'attachment; filename="train.csv"'
    assert answer["X-Content-Type-Options"] == "nosniff"

    anonymous = _client(None).get(f"/c/{with_train.slug}/data/train.csv")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert _client(participant).get(f"/c/{with_train.slug}/data/labels.csv").status_code == 404


def test_the_host_attaches_and_removes_files_on_the_host_data_page(host: Any, competition: Any) -> None:
    client = _client(host)
    answer = client.post(f"/c/{competition.slug}/host/data/", {
        "file": SimpleUploadedFile("local.csv", TRAIN), "name": "train.csv", "description": "the train set",
    })
    assert answer.status_code == 302
    [stored] = list_data_files(competition)
    assert (stored.name, stored.description, open_data_file(stored).read()) == ("train.csv", "the train set", TRAIN)

    refused = client.post(f"/c/{competition.slug}/host/data/", {"file": SimpleUploadedFile("train.csv", TRAIN)})
    assert refused.status_code == 400
    assert "already has a data file named 'train.csv'" in html.unescape(refused.content.decode())

    assert client.post(f"/c/{competition.slug}/host/data/train.csv/remove/").status_code == 302
    assert list_data_files(competition) == []


def test_a_participant_may_not_use_the_host_data_page(participant: Any, with_train: Any) -> None:
    client = _client(participant)
    assert client.get(f"/c/{with_train.slug}/host/data/").status_code == 403
    assert client.post(f"/c/{with_train.slug}/host/data/", {"file": SimpleUploadedFile("x.csv", b"x")}
                       ).status_code == 403
    assert client.post(f"/c/{with_train.slug}/host/data/train.csv/remove/").status_code == 403
    assert [f.name for f in list_data_files(with_train)] == ["train.csv"]


def test_staff_attach_a_file_in_the_admin_and_see_it_on_the_competition(admin_user: Any, competition: Any) -> None:
    client = _client(admin_user)
    refused = client.post("/admin/competitions/datafile/add/", {
        "competition": competition.pk, "name": "../x.csv", "upload": SimpleUploadedFile("x.csv", TRAIN)})
    assert refused.status_code == 200 and "is a path" in html.unescape(refused.content.decode())

    answer = client.post("/admin/competitions/datafile/add/", {
        "competition": competition.pk, "description": "train", "upload": SimpleUploadedFile("train.csv", TRAIN)})

    assert answer.status_code == 302, html.unescape(answer.content.decode())[:2000]
    [stored] = list_data_files(competition)
    assert (stored.name, stored.description, open_data_file(stored).read()) == ("train.csv", "train", TRAIN)
    page = client.get(f"/admin/competitions/competition/{competition.pk}/change/").content.decode()
    assert f'href="/admin/competitions/datafile/{stored.pk}/change/">train.csv</a>' in page
    assert stored.sha256[:12] in page
    changed = client.post(f"/admin/competitions/datafile/{stored.pk}/change/", {"description": "the train set"})
    assert changed.status_code == 302
    assert open_data_file(list_data_files(competition)[0]).read() == TRAIN
    assert list_data_files(competition)[0].description == "the train set"


def test_the_host_edit_page_links_the_data_page(admin_user: Any, competition: Any) -> None:
    page = _client(admin_user).get(f"/c/{competition.slug}/host/edit/").content.decode()
    assert f'<a href="/c/{competition.slug}/host/data/">Data files</a>' in page
