"""Submission uploads are streamed to a temporary file (``leaderboard.uploads``): one declared over the limit is
refused with a clear 400 before its body is read; one that turns out over it stops at the limit and stores
nothing; a valid one scores exactly as the same bytes given to the service directly."""

from __future__ import annotations

import hashlib
import io
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.submissions.models import Submission
from leaderboard.uploads import MULTIPART_SLACK
from tests.site.conftest import N_ROWS, predictions_csv

pytestmark = pytest.mark.django_db


class CountingStream(io.BytesIO):
    """A request body that records how much of it the site read."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.taken += len(chunk)
        return chunk

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        self.taken += len(line)
        return line


def _url(competition: Any) -> str:
    return f"/api/v1/competitions/{competition.slug}/submissions/"


def _values() -> np.ndarray:
    return np.random.default_rng(7).uniform(0.05, 0.95, N_ROWS)


def _multipart(data: bytes) -> tuple[bytes, str]:
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

    body = encode_multipart(BOUNDARY, {"file": SimpleUploadedFile("big.csv", data, content_type="text/csv")})
    return body, MULTIPART_CONTENT


@pytest.mark.parametrize("kind", ["multipart", "raw"])
def test_an_upload_declared_over_the_limit_is_refused_before_its_body_is_read(
    clients: Any, competition: Any, settings: Any, kind: str
) -> None:
    settings.LEADERBOARD_MAX_UPLOAD_BYTES = 1000
    data = b"id,target\n" + b"r0,0.5\n" * 20_000  # 140 kB
    body, content_type = _multipart(data) if kind == "multipart" else (data, "text/csv")
    stream = CountingStream(body)
    response = clients["participant"].generic(
        "POST", _url(competition), b"",
        **{"wsgi.input": stream, "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": content_type},
    )
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert f"the file is {len(body)} bytes, over the limit of 1000 bytes" in detail
    assert stream.taken == 0
    assert not Submission.objects.exists()


def test_a_file_over_the_limit_within_the_declared_slack_stops_at_the_limit(
    clients: Any, competition: Any, settings: Any
) -> None:
    data = predictions_csv(competition, _values())
    settings.LEADERBOARD_MAX_UPLOAD_BYTES = len(data) - 1  # the body is declared within limit + slack
    assert len(_multipart(data)[0]) <= len(data) + MULTIPART_SLACK
    response = clients["participant"].post(
        _url(competition), {"file": SimpleUploadedFile("p.csv", data, content_type="text/csv")}, format="multipart"
    )
    assert response.status_code == 400
    assert f"over the limit of {len(data) - 1} bytes" in response.json()["detail"]
    assert not Submission.objects.exists()


def test_the_web_form_shows_the_limit_for_an_upload_declared_over_it(
    participant: Any, competition: Any, settings: Any
) -> None:
    from django.test import Client

    settings.LEADERBOARD_MAX_UPLOAD_BYTES = 1000
    client: Any = Client()
    client.force_login(participant)
    body, content_type = _multipart(b"id,target\n" + b"r0,0.5\n" * 20_000)
    stream = CountingStream(body)
    response = client.generic(
        "POST", f"/c/{competition.slug}/submit/", b"",
        **{"wsgi.input": stream, "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": content_type},
    )
    assert stream.taken == 0
    assert b"over the limit of 1000 bytes" in response.content
    assert not Submission.objects.exists()


def test_a_streamed_upload_scores_as_the_same_bytes_given_to_the_service(
    clients: Any, competition: Any, participant: Any, enqueued: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    from leaderboard.submissions.services import submission_create, submission_score

    data = predictions_csv(competition, _values())
    lines = data.splitlines(keepends=True)
    shuffled = b"".join([lines[0], *reversed(lines[1:])])  # rows in another order: the hash-table path
    ids: list[int] = []
    for body in (data, shuffled):
        with django_capture_on_commit_callbacks(execute=True):
            multipart = clients["participant"].post(
                _url(competition), {"file": SimpleUploadedFile("p.csv", body, content_type="text/csv")},
                format="multipart", HTTP_IDEMPOTENCY_KEY=f"k-{len(ids)}",
            )
            raw = clients["participant"].generic("POST", _url(competition), body, content_type="text/csv")
        assert multipart.status_code == 202 and raw.status_code == 202, (multipart.content, raw.content)
        ids += [multipart.json()["id"], raw.json()["id"]]
    with django_capture_on_commit_callbacks(execute=True):
        direct = submission_create(competition=competition, participant=participant, data=data)
    ids.append(direct.pk)
    for pk in ids:
        assert submission_score(submission_id=pk).action == "scored"
    expected = Submission.objects.get(pk=direct.pk)
    rows = Submission.objects.filter(pk__in=ids)
    assert {(row.raw_public, row.raw_private, row.public_score) for row in rows} == {
        (expected.raw_public, expected.raw_private, expected.public_score)
    }
    assert Submission.objects.get(pk=ids[0]).upload_sha256 == hashlib.sha256(data).hexdigest()
    assert Submission.objects.get(pk=ids[0]).upload_size == len(data)
