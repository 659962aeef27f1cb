"""``HttpOracle`` against a scripted fake site (a real ``http.server`` in a thread, real HTTP — no mocks of
``requests``): reading metadata, exact uploads, polling, retries with backoff, never double-submitting, and
both answers to a 429."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
import pytest

from bot.http_oracle import (
    Backoff,
    HttpOracle,
    HttpOracleError,
    PollSchedule,
    QuotaExceeded,
    SubmissionFailed,
    TransientHttpError,
)
from tests.bot.support import JsonHandler, serving

SLUG = "fake"
IDS = ["b", "a", "c"]  # deliberately not sorted: uploads must follow the sample submission's order
NOW = datetime(2026, 11, 21, 23, 58, tzinfo=UTC)

Reply = tuple[int, dict[str, Any], dict[str, str]]


@dataclass
class FakeSite:
    """What the fake site answers. ``post_script``/``get_script`` are consumed first; then the defaults:
    a POST creates a submission (202), a GET of it answers ``statuses`` in turn and then ``final``."""

    metadata: dict[str, Any] = field(
        default_factory=lambda: {
            "slug": SLUG, "n_rows": 3, "n_classes": 2, "metric": "binary_logloss", "score_decimals": 5,
            "eps": 1e-15, "arithmetic": "float64", "public_fraction": 1.0, "daily_limit": None,
            "total_limit": None, "disclosed_defenses": "",
        }
    )
    post_script: list[Reply | str] = field(default_factory=list)
    get_script: list[Reply] = field(default_factory=list)
    statuses: list[str] = field(default_factory=lambda: ["queued", "scoring"])
    final: dict[str, Any] = field(default_factory=lambda: {"status": "scored", "public_score_text": "0.69315"})
    uploads: list[tuple[str, bytes]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    polls: int = 0
    log: list[str] = field(default_factory=list)


def _handler(site: FakeSite) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):

        def do_GET(self) -> None:
            site.log.append(f"GET {self.path}")
            assert self.headers["Authorization"] == "Token secret"
            if self.path == f"/api/v1/competitions/{SLUG}/":
                return self._send(200, site.metadata)
            if self.path == f"/api/v1/competitions/{SLUG}/sample-submission/":
                return self._send(200, "id,target\n" + "".join(f"{i},0.5\n" for i in IDS))
            if self.path == f"/api/v1/competitions/{SLUG}/submissions/":
                return self._send(200, [{"id": i + 1, "upload_name": n} for i, n in enumerate(site.names)])
            if site.get_script:
                return self._send(*site.get_script.pop(0))
            site.polls += 1
            status = site.statuses.pop(0) if site.statuses else None
            body = {"status": status, "public_score_text": ""} if status else dict(site.final)
            return self._send(200, {"id": 1, **body})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(length)
            site.log.append(f"POST {self.path}")
            step = site.post_script.pop(0) if site.post_script else None
            if step == "drop":  # close the connection without answering: the client cannot know what happened
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if step == "store-then-502":
                site.uploads.append((self.headers["Content-Type"], body))
                site.names.append(_multipart_name(body))
                return self._send(502, "<html>bad gateway</html>")
            if isinstance(step, tuple):
                return self._send(*step)
            site.uploads.append((self.headers["Content-Type"], body))
            site.names.append(_multipart_name(body))
            return self._send(202, {"id": len(site.uploads), "status": "queued"})

    return Handler


def _multipart_name(body: bytes) -> str:
    marker = b'filename="'
    start = body.find(marker)
    if start < 0:
        return ""
    start += len(marker)
    return body[start : body.index(b'"', start)].decode()


@pytest.fixture
def site() -> Iterator[tuple[FakeSite, str]]:
    fake = FakeSite()
    with serving(_handler(fake)) as url:
        yield fake, url


def _oracle(url: str, sleeps: list[float] | None = None, **kwargs: Any) -> HttpOracle:
    record: Callable[[float], None] = (sleeps.append if sleeps is not None else lambda _s: None)
    return HttpOracle(
        url, SLUG, "secret", sleep=record, clock=lambda: NOW, backoff=Backoff(initial=0.5, factor=2.0, retries=3),
        poll=PollSchedule(initial=0.01, factor=2.0, maximum=0.05, timeout=5.0), **kwargs,
    )


def test_it_reads_the_metadata_and_the_sample_submissions_order(site: tuple[FakeSite, str]) -> None:
    _, url = site
    oracle = _oracle(url)
    assert (oracle.n_rows, oracle.n_classes, oracle.metric, oracle.eps, oracle.decimals) == (
        3, 2, "binary_logloss", 1e-15, 5
    )
    assert oracle.ids == tuple(IDS) and oracle.columns == ["id", "target"]
    assert oracle.public_fraction is None and oracle.queries == 0


def test_it_uploads_exact_values_in_sample_order_and_polls_until_scored(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    sleeps: list[float] = []
    oracle = _oracle(url, sleeps)
    released = oracle.submit(np.array([0.1, 1 / 3, 1e-15]))
    assert released == 0.69315 and oracle.last_released_text == "0.69315" and oracle.queries == 1
    content_type, body = fake.uploads[0]
    assert content_type.startswith("multipart/form-data")
    assert b"id,target\nb,0.1\na,0.3333333333333333\nc,1e-15\n" in body
    assert fake.polls == 3  # queued, scoring, scored
    assert sleeps == [0.01, 0.02]


def test_it_can_upload_a_positional_json_list(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    _oracle(url, upload="json").submit([0.25, 0.5, 0.1])
    content_type, body = fake.uploads[0]
    assert content_type == "application/json"
    assert json.loads(body) == {"predictions": [0.25, 0.5, 0.1]}


def test_it_returns_a_decimal_when_the_site_releases_more_than_a_float(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.metadata.update(arithmetic="mpfr:300", score_decimals=None)
    fake.final["public_score_text"] = "0.693147180559945309417232121458176568"
    released = _oracle(url).submit(["0.5", "0.5", "0.5"])
    assert released == Decimal("0.693147180559945309417232121458176568")
    assert b"b,0.5\na,0.5\nc,0.5\n" in fake.uploads[0][1]


def test_it_retries_server_errors_with_exponential_backoff(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.post_script = [(503, {"detail": "busy"}, {}), (503, {"detail": "busy"}, {})]
    fake.get_script = [(502, {}, {})]
    sleeps: list[float] = []
    oracle = _oracle(url, sleeps)
    fake.statuses = []
    assert oracle.submit([0.5, 0.5, 0.5]) == 0.69315
    assert sleeps == [0.5, 1.0, 0.5]  # two POST retries, then one GET retry
    assert len(fake.uploads) == 1 and oracle.stats.retries == 3


def test_it_gives_up_after_its_retries(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.post_script = [(503, {}, {})] * 10
    sleeps: list[float] = []
    with pytest.raises(TransientHttpError, match="gave up after 4 attempts"):
        _oracle(url, sleeps).submit([0.5, 0.5, 0.5])
    assert sleeps == [0.5, 1.0, 2.0]


def test_an_upload_that_reached_the_site_is_never_sent_twice(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.post_script = ["store-then-502"]
    fake.statuses = []
    oracle = _oracle(url)
    assert oracle.submit([0.5, 0.5, 0.5]) == 0.69315
    assert [line for line in fake.log if line.startswith("POST")] == [f"POST /api/v1/competitions/{SLUG}/submissions/"]
    assert len(fake.uploads) == 1 and oracle.queries == 1


def test_a_dropped_connection_is_retried(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.post_script = ["drop"]
    fake.statuses = []
    sleeps: list[float] = []
    assert _oracle(url, sleeps).submit([0.5, 0.5, 0.5]) == 0.69315
    assert len(fake.uploads) == 1 and sleeps[:1] == [0.5]


def test_an_unreachable_site_is_a_clear_error() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps: list[float] = []
    with pytest.raises(TransientHttpError, match="ConnectionError"):
        _oracle(f"http://127.0.0.1:{port}", sleeps)
    assert sleeps == [0.5, 1.0, 2.0]


def test_over_quota_it_stops_with_the_reset_time(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    reset = "2026-11-22T00:00:00Z"
    answer = {"detail": "daily limit of 5 submissions reached", "resets_at": reset}
    fake.post_script = [(429, answer, {"Retry-After": "120"})]
    with pytest.raises(QuotaExceeded, match="daily limit") as caught:
        _oracle(url, on_quota="stop").submit([0.5, 0.5, 0.5])
    assert caught.value.resets_at == datetime(2026, 11, 22, tzinfo=UTC)
    assert fake.uploads == []


def test_over_quota_it_waits_for_the_utc_reset_and_submits_again(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    reset = NOW + timedelta(minutes=2)
    fake.post_script = [(429, {"detail": "daily limit", "resets_at": reset.isoformat().replace("+00:00", "Z")}, {})]
    fake.statuses = []
    sleeps: list[float] = []
    told: list[tuple[float, str]] = []
    oracle = _oracle(url, sleeps, on_quota="wait", on_wait=lambda s, why: told.append((s, why)))
    assert oracle.submit([0.5, 0.5, 0.5]) == 0.69315
    assert sleeps[0] == 121.0  # until the reset, plus a second of slack
    assert told == [(121.0, "daily limit")]
    assert len(fake.uploads) == 1 and oracle.queries == 1


def test_a_used_up_total_limit_stops_even_in_wait_mode(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.post_script = [(429, {"detail": "you have used all 10 submissions", "resets_at": None}, {})]
    with pytest.raises(QuotaExceeded, match="never resets"):
        _oracle(url, on_quota="wait").submit([0.5, 0.5, 0.5])


def test_a_failed_submission_raises_with_the_sites_message(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.statuses = ["queued"]
    fake.final = {"status": "failed", "error": "rejected by the probe detector", "public_score_text": ""}
    with pytest.raises(SubmissionFailed, match="rejected by the probe detector"):
        _oracle(url).submit([0.5, 0.5, 0.5])


def test_a_malformed_upload_is_a_clear_error_and_not_retried(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    fake.post_script = [(400, {"detail": "line 3: 'x' is not a number", "line": 3}, {})]
    sleeps: list[float] = []
    with pytest.raises(HttpOracleError, match="HTTP 400: line 3: 'x' is not a number"):
        _oracle(url, sleeps).submit([0.5, 0.5, 0.5])
    assert sleeps == []


def test_a_wrong_number_of_rows_is_refused_before_uploading(site: tuple[FakeSite, str]) -> None:
    fake, url = site
    with pytest.raises(ValueError, match="expected 3 rows"):
        _oracle(url).submit([0.5, 0.5])
    assert fake.uploads == []


def test_it_reads_a_hard_label_feedback_from_the_metadata(site: tuple[FakeSite, str]) -> None:
    from attacks.hard_label import Acceptance, is_hard_label

    fake, url = site
    assert _oracle(url).feedback == {"kind": "score"}  # a site that does not say releases scores
    fake.metadata.update(feedback={"kind": "threshold", "t": [0.6]}, released_decimals=0)
    oracle = _oracle(url)
    assert oracle.feedback["kind"] == "threshold" and is_hard_label(oracle)
    assert Acceptance.of(oracle).accepts(1.0)
