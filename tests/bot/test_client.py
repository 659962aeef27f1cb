"""``LeaderboardClient`` against a scripted fake site (a real ``http.server`` in a thread, real HTTP): the
Idempotency-Key on every upload and on each of its retries, ``Retry-After`` (seconds and HTTP dates) on 503
and 429, the two answers to a quota 429, the error hierarchy, typed results and the host calls' wire format.
(The same behaviours against the real site: ``tests/e2e/test_client.py``.)"""

from __future__ import annotations

import email.utils
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from bot.client import (
    UNSET,
    Backoff,
    ClientError,
    Conflict,
    Forbidden,
    LeaderboardClient,
    NotAuthenticated,
    NotFound,
    QuotaExceeded,
    SubmissionFailed,
    TransientError,
    UploadRejected,
)
from bot.http_oracle import HttpOracleError, TransientHttpError
from tests.bot.support import JsonHandler, serving

NOW = datetime(2026, 11, 21, 23, 58, tzinfo=UTC)
Reply = tuple[int, Any, dict[str, str]]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeSite:
    """Scripted replies by ``"METHOD /path"`` (consumed in order; ``"drop"`` closes the connection without an
    answer, ``"store-then-drop"`` accepts an upload and then drops). Uploads honour ``Idempotency-Key`` the way
    the real site does: a repeated key answers the stored submission."""

    script: dict[str, list[Reply | str]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    by_key: dict[str, int] = field(default_factory=dict)
    uploads: list[bytes] = field(default_factory=list)

    def posts(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST"]


def _handler(site: FakeSite) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):

        def _drop(self) -> None:
            self.close_connection = True
            self.connection.shutdown(2)

        def _store(self, body: bytes) -> tuple[int, bool]:
            key = self.headers.get("Idempotency-Key", "")
            if key in site.by_key:
                return site.by_key[key], True
            site.uploads.append(body)
            site.by_key[key] = len(site.uploads)
            return len(site.uploads), False

        def _handle(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            site.seen.append(Seen(method, self.path, dict(self.headers), body))
            steps = site.script.get(f"{method} {self.path}")
            step = steps.pop(0) if steps else None
            if step == "drop":
                return self._drop()
            if step == "store-then-drop":
                self._store(body)
                return self._drop()
            if isinstance(step, tuple):
                return self._send(*step)
            if method == "POST" and self.path.endswith("/submissions/"):
                pk, replayed = self._store(body)
                return self._send(202, {"id": pk, "status": "queued", "url": f"/api/v1/submissions/{pk}/",
                                        "replayed": replayed})
            return self._send(404, {"detail": "Not found."})

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PUT(self) -> None:
            self._handle("PUT")

    return Handler


@pytest.fixture
def site() -> Iterator[tuple[FakeSite, str]]:
    fake = FakeSite()
    with serving(_handler(fake)) as url:
        yield fake, url


def _client(url: str, sleeps: list[float], **kwargs: Any) -> LeaderboardClient:
    return LeaderboardClient(url, "secret", sleep=sleeps.append, clock=lambda: NOW,
                             backoff=Backoff(initial=0.5, factor=2.0, retries=3), **kwargs)


UPLOAD = "POST /api/v1/competitions/c/submissions/"
CSV = "id,target\na,0.5\n"


# --- Idempotency-Key --------------------------------------------------------------------------------------


def test_every_upload_carries_a_fresh_key_and_the_token(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    client = _client(url, [])
    first = client.submit_csv("c", CSV)
    second = client.submit_json("c", [0.5])
    keys = [s.headers["Idempotency-Key"] for s in fake.posts()]
    assert len(set(keys)) == 2 and [first.idempotency_key, second.idempotency_key] == keys
    assert all(s.headers["Authorization"] == "Token secret" for s in fake.seen)
    assert (first.id, second.id, first.replayed) == (1, 2, False)
    assert json.loads(fake.uploads[1]) == {"predictions": [0.5]}
    assert fake.posts()[1].headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_a_retried_upload_repeats_its_key_so_the_site_keeps_one_submission(
    site: tuple[FakeSite, str], kind: str
) -> None:
    fake, url = site
    fake.script[UPLOAD] = ["store-then-drop", (502, "<html>bad gateway</html>", {})]
    sleeps: list[float] = []
    client = _client(url, sleeps)
    upload = client.submit_csv("c", CSV) if kind == "csv" else client.submit_json("c", [0.5])
    posts = fake.posts()
    assert len(posts) == 3 and len({p.headers["Idempotency-Key"] for p in posts}) == 1
    assert len(fake.uploads) == 1 and upload.id == 1 and upload.replayed
    assert sleeps == [0.5, 1.0] and client.stats.retries == 2


def test_a_caller_may_name_the_key_to_make_a_later_call_a_retry(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    client = _client(url, [])
    assert client.submit_json("c", [0.5], idempotency_key="mine").id == client.submit_json(
        "c", [0.5], idempotency_key="mine").id == 1
    assert [p.headers["Idempotency-Key"] for p in fake.posts()] == ["mine", "mine"]


def test_recover_by_name_finds_a_landed_upload_without_sending_it_again(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = ["store-then-drop"]
    fake.script["GET /api/v1/competitions/c/submissions/"] = [
        (200, [{"id": 1, "status": "scored", "upload_name": "unique.csv"}], {})]
    upload = _client(url, []).submit_csv("c", CSV, filename="unique.csv", recover_by_name=True)
    assert upload.id == 1 and upload.status == "scored" and len(fake.posts()) == 1


# --- Retry-After and backoff ------------------------------------------------------------------------------


def test_a_503_retry_after_in_seconds_replaces_the_backoff(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script["GET /api/v1/competitions/c/quota/"] = [
        (503, {"detail": "busy"}, {"Retry-After": "7"}), (503, {}, {}), (200, {"used_today": 2}, {})]
    sleeps: list[float] = []
    assert _client(url, sleeps).quota("c").used_today == 2
    assert sleeps == [7.0, 1.0]  # the site's delay, then the backoff's second step


def test_a_retry_after_http_date_is_honoured(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    when = email.utils.format_datetime(NOW + timedelta(seconds=42), usegmt=True)
    fake.script["GET /api/v1/competitions/c/quota/"] = [(503, {}, {"Retry-After": when}), (200, {}, {})]
    sleeps: list[float] = []
    _client(url, sleeps).quota("c")
    assert sleeps == [42.0]


def test_a_rate_limited_read_waits_as_asked(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script["GET /api/v1/submissions/5/"] = [(429, {"detail": "slow down"}, {"Retry-After": "3"}),
                                                 (200, {"id": 5, "status": "scored"}, {})]
    sleeps: list[float] = []
    assert _client(url, sleeps).submission(5).finished and sleeps == [3.0]


def test_a_retry_after_beyond_the_limit_gives_up_at_once(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script["GET /api/v1/competitions/c/quota/"] = [(503, {}, {"Retry-After": "3600"})]
    sleeps: list[float] = []
    with pytest.raises(TransientError, match="retry after 3600 s, over the 60 s"):
        _client(url, sleeps, max_retry_after=60).quota("c")
    assert sleeps == []


def test_transient_failures_give_up_after_the_retries(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script["GET /api/v1/competitions/c/"] = [(504, {}, {})] * 10
    sleeps: list[float] = []
    with pytest.raises(TransientError, match="gave up after 3 attempts") as caught:
        _client(url, sleeps, retries=2).competition("c")
    assert sleeps == [0.5, 1.0]
    assert isinstance(caught.value, TransientHttpError) and isinstance(caught.value, HttpOracleError)


# --- Quota ------------------------------------------------------------------------------------------------


def test_over_quota_stop_raises_with_the_reset_and_retry_after(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = [(429, {"detail": "daily limit of 5 reached", "resets_at": "2026-11-22T00:00:00Z"},
                            {"Retry-After": "120"})]
    with pytest.raises(QuotaExceeded, match="daily limit of 5 reached") as caught:
        _client(url, []).submit_csv("c", CSV)
    assert caught.value.resets_at == datetime(2026, 11, 22, tzinfo=UTC) and caught.value.retry_after == 120.0
    assert caught.value.status == 429 and isinstance(caught.value, ClientError) and fake.uploads == []


def test_over_quota_wait_sleeps_for_retry_after_and_resends_the_same_upload(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = [(429, {"detail": "daily limit", "resets_at": "2026-11-22T00:00:00Z"},
                            {"Retry-After": "30"})]
    sleeps: list[float] = []
    told: list[tuple[float, str]] = []
    client = _client(url, sleeps, on_wait=lambda s, why: told.append((s, why)))
    assert client.submit_csv("c", CSV, on_quota="wait").id == 1
    assert sleeps == [31.0] and told == [(31.0, "daily limit")] and client.stats.quota_waits == 31.0
    assert len({p.headers["Idempotency-Key"] for p in fake.posts()}) == 1


def test_over_quota_wait_without_retry_after_waits_for_the_utc_reset(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = [(429, {"detail": "daily limit", "resets_at": "2026-11-22T00:00:00Z"}, {})]
    sleeps: list[float] = []
    _client(url, sleeps, on_quota="wait").submit_csv("c", CSV)
    assert sleeps == [121.0]


def test_a_used_up_total_limit_raises_even_when_waiting(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = [(429, {"detail": "all 10 used", "resets_at": None}, {})]
    with pytest.raises(QuotaExceeded, match="never resets"):
        _client(url, [], on_quota="wait").submit_csv("c", CSV)


# --- Errors and typed results -----------------------------------------------------------------------------


def test_errors_map_to_one_hierarchy_with_the_sites_message(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = [(400, {"detail": "line 3: 'x' is not a number", "line": 3}, {}),
                           (403, {"detail": "the competition closed at 2026-01-01T00:00:00Z"}, {})]
    fake.script["GET /api/v1/competitions/c/"] = [(401, {"detail": "Invalid token."}, {})]
    fake.script["POST /api/v1/host/participants/"] = [(409, {"detail": "the username 'x' is taken"}, {})]
    sleeps: list[float] = []
    client = _client(url, sleeps)
    with pytest.raises(UploadRejected, match="HTTP 400: line 3: 'x' is not a number") as rejected:
        client.submit_csv("c", CSV)
    assert rejected.value.line == 3 and rejected.value.detail == "line 3: 'x' is not a number"
    with pytest.raises(Forbidden, match="closed at"):
        client.submit_csv("c", CSV)
    with pytest.raises(NotAuthenticated):
        client.competition("c")
    with pytest.raises(NotFound):
        client.submission(99)
    with pytest.raises(Conflict, match="is taken"):
        client.create_participant("x")
    assert sleeps == []  # none of these is retried


def test_waiting_for_a_failed_submission_can_raise_its_message(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script["GET /api/v1/submissions/3/"] = [
        (200, {"id": 3, "status": "queued"}, {}),
        (200, {"id": 3, "status": "failed", "error": "rejected by the probe detector"}, {})]
    sleeps: list[float] = []
    with pytest.raises(SubmissionFailed, match="probe detector"):
        _client(url, sleeps).wait(3, raise_on_failure=True)
    assert sleeps == [0.002]


def test_typed_results(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script["GET /api/v1/competitions/c/"] = [(200, {
        "slug": "c", "title": "C", "task": "binary", "metric": "binary_logloss", "n_rows": 2, "n_classes": 2,
        "opens_at": "2026-01-01T00:00:00Z", "closes_at": None, "is_open": True, "score_decimals": None,
        "public_fraction": 0.3, "daily_limit": 5, "total_limit": None, "also_report": ["auc"], "new_field": 1,
        "submission_format": {"columns": ["id", "target"]},
    }, {})]
    fake.script["GET /api/v1/competitions/c/sample-submission/"] = [(200, "id,target\nb,0.5\na,0.5\n", {})]
    fake.script["GET /api/v1/competitions/c/leaderboard/?board=public"] = [(200, {
        "competition": "c", "board": "public", "metric": "binary_logloss", "higher_is_better": False,
        "closed": False, "rows": [{"rank": 1, "participant": "alice", "score": 0.5, "score_text": "0.50000",
                                   "entries": 2, "submitted_at": "2026-01-02T00:00:00Z"}],
    }, {})]
    client = _client(url, [])
    competition = client.competition("c")
    assert (competition.n_rows, competition.score_decimals, competition.daily_limit) == (2, None, 5)
    assert competition.also_report == ("auc",) and competition.columns == ("id", "target")
    assert competition.opens_at == datetime(2026, 1, 1, tzinfo=UTC) and competition.data["new_field"] == 1
    sample = client.sample_submission("c")
    assert sample.header == ("id", "target") and sample.ids == ("b", "a")
    board = client.leaderboard("c")
    assert board.rows[0].participant == "alice" and board.rows[0].score_text == "0.50000"
    with pytest.raises(ValueError, match="board must be"):
        client.leaderboard("c", "secret")


def test_create_competition_sends_labels_and_only_the_options_given(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    answer = {"slug": "g", "metric": "binary_logloss", "n_rows": 2, "n_classes": 2, "defenses": [{"name": "x"}]}
    fake.script["POST /api/v1/host/competitions/"] = [(201, answer, {})]
    created = _client(url, []).create_competition(
        "g", [("a", 1), ("b", 0)], score_decimals=None, daily_limit=None, secret=2**100,
        defenses=[{"name": "rounding", "decimals": 3}], also_report=["auc", "accuracy"], title=UNSET,
    )
    assert created.slug == "g" and created.defenses == ({"name": "x"},)
    parts = _multipart(fake.posts()[0])
    fields = dict(parts)
    assert fields["labels"] == "id,label\na,1\nb,0\n"
    assert fields["score_decimals"] == "" and fields["daily_limit"] == "" and fields["secret"] == str(2**100)
    assert json.loads(fields["defenses"]) == [{"name": "rounding", "decimals": 3}]
    assert [value for name, value in parts if name == "also_report"] == ["auc", "accuracy"]
    assert "title" not in fields and "metric" not in fields and "public_fraction" not in fields


def _multipart(request: Seen) -> list[tuple[str, str]]:
    """The (name, value) fields of a multipart/form-data request body."""
    head = f"Content-Type: {request.headers['Content-Type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    assert isinstance(message, EmailMessage)
    return [
        (str(part.get_param("name", header="content-disposition")), bytes(part.get_payload(decode=True)).decode())
        for part in message.iter_parts()
    ]


def test_a_rate_limited_upload_is_retried_not_taken_for_the_quota(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.script[UPLOAD] = [(429, {"detail": "Request was throttled. Expected available in 2 seconds."},
                            {"Retry-After": "2"})]
    sleeps: list[float] = []
    upload = _client(url, sleeps, on_quota="stop").submit_csv("c", CSV)
    assert upload.id == 1 and sleeps == [2.0] and len(fake.uploads) == 1
    assert len({p.headers["Idempotency-Key"] for p in fake.posts()}) == 1


# --- Data files -------------------------------------------------------------------------------------------


def test_a_download_whose_bytes_are_not_the_stated_sha256_leaves_nothing(site: tuple[FakeSite, str],
                                                                         tmp_path: Any) -> None:
    fake, url = site
    fake.script["GET /api/v1/competitions/c/data/train.csv"] = [
        (200, "id,label\n1,0\n", {"ETag": '"' + "0" * 64 + '"', "Content-Type": "text/csv"})]
    with pytest.raises(ClientError, match="SHA-256"):
        _client(url, []).download_data_file("c", "train.csv", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_data_file_name_that_is_a_path_never_leaves_the_directory(site: tuple[FakeSite, str], tmp_path: Any
                                                                     ) -> None:
    _fake, url = site
    with pytest.raises(ClientError, match="not a plain file name"):
        _client(url, []).download_data_file("c", "../escape.csv", tmp_path)
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "escape.csv").exists()
