"""The client against a live site (gunicorn + a real Celery worker + Redis + a fresh SQLite file).

An upload whose answer is lost on the way back (a proxy forwards it, then drops the connection) is retried by
the client under the same ``Idempotency-Key``, and the site keeps one submission and charges the quota once —
for CSV and JSON uploads. A real 429 carries the UTC reset and ``Retry-After``, which the client honours when
told to wait. The host side — competitions with every option (the secret included), participants, the defense
chain, raw-vs-released, leakage — works through the client alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import requests

from attacks import LocalOracle
from bot.client import (
    Backoff,
    Conflict,
    Forbidden,
    LeaderboardClient,
    NotAuthenticated,
    NotFound,
    QuotaExceeded,
    UploadRejected,
)
from tests.e2e.bot_support import LiveStack, live_stack, redis_available

pytestmark = pytest.mark.e2e

N_ROWS = 60
LABELS = np.random.default_rng(60).integers(0, 2, N_ROWS)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    if not redis_available():
        pytest.fail("the client's end-to-end tests need Redis at 127.0.0.1:6379")
    with live_stack(tmp_path_factory.mktemp("client-e2e")) as live:
        yield live


class LossyProxy:
    """A reverse proxy in front of the site that forwards every request, but for the first ``lose`` uploads
    drops the connection instead of passing the site's answer back: the upload landed, the client cannot know."""

    def __init__(self, upstream: str, lose: int) -> None:
        self.upstream = upstream
        self.lose = lose
        self.forwarded_uploads = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self, method: str) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
                answer = requests.request(method, proxy.upstream + self.path, headers=headers, data=body, timeout=60)
                if method == "POST" and self.path.endswith("/submissions/"):
                    proxy.forwarded_uploads += 1
                    if proxy.forwarded_uploads <= proxy.lose:
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                self.send_response(answer.status_code)
                for key, value in answer.headers.items():
                    if key.lower() not in HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _csv(client: LeaderboardClient, slug: str, seed: int) -> str:
    ids = client.sample_submission(slug).ids
    values = np.random.default_rng(seed).uniform(0.05, 0.95, len(ids))
    return "id,target\n" + "".join(f"{i},{v!r}\n" for i, v in zip(ids, values.tolist(), strict=True))


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_an_upload_whose_answer_was_lost_is_retried_once_and_charged_once(stack: LiveStack, kind: str) -> None:
    slug = f"client-lost-{kind}"
    stack.competition(slug, LABELS, daily_limit=5)
    token = stack.participant(f"{slug}-user")
    proxy = LossyProxy(stack.url, lose=2)
    sleeps: list[float] = []
    try:
        client = LeaderboardClient(proxy.url, token, backoff=Backoff(initial=0.05, retries=4), sleep=sleeps.append)
        if kind == "csv":
            upload = client.submit_csv(slug, _csv(client, slug, 1))
        else:
            upload = client.submit_json(slug, np.full(N_ROWS, 0.25).tolist())
    finally:
        proxy.close()
    assert proxy.forwarded_uploads == 3 and len(sleeps) == 2  # the site saw the upload three times
    assert upload.replayed and upload.quota is not None and upload.quota.used_today == 1
    assert stack.submissions_count(slug) == 1
    mine = stack.client(token)
    assert mine.quota(slug).used_total == 1 and mine.quota(slug).remaining_today == 4
    assert mine.wait(upload.id, timeout=60).status == "scored"


def test_a_key_names_one_upload(stack: LiveStack) -> None:
    slug = "client-keys"
    stack.competition(slug, LABELS, daily_limit=5)
    client = stack.client(stack.participant(f"{slug}-user"))
    body = _csv(client, slug, 2)
    first = client.submit_csv(slug, body, idempotency_key="run-7/query-1")
    again = client.submit_csv(slug, body, idempotency_key="run-7/query-1")
    assert (again.id, again.replayed, first.replayed) == (first.id, True, False)
    with pytest.raises(Conflict, match="already used for a different upload"):
        client.submit_csv(slug, _csv(client, slug, 3), idempotency_key="run-7/query-1")
    assert client.quota(slug).used_total == 1 and stack.submissions_count(slug) == 1


def test_over_quota_the_client_stops_or_waits_for_the_sites_retry_after(stack: LiveStack) -> None:
    slug = "client-quota"
    stack.competition(slug, LABELS, daily_limit=1)
    token = stack.participant(f"{slug}-user")
    client = stack.client(token)
    client.submit_csv(slug, _csv(client, slug, 4))
    with pytest.raises(QuotaExceeded, match="daily limit of 1 submissions reached") as caught:
        client.submit_csv(slug, _csv(client, slug, 5))
    midnight = (datetime.now(UTC) + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    assert caught.value.resets_at == midnight and caught.value.retry_after is not None
    assert abs(caught.value.retry_after - (midnight - datetime.now(UTC)).total_seconds()) < 5

    class Stop(Exception):
        pass

    waits: list[float] = []

    def sleep(seconds: float) -> None:  # record the wait, then stop instead of waiting until midnight
        waits.append(seconds)
        raise Stop

    waiting = LeaderboardClient(stack.url, token, on_quota="wait", sleep=sleep)
    with pytest.raises(Stop):
        waiting.submit_csv(slug, _csv(client, slug, 5))
    assert waits and abs(waits[0] - 1.0 - (midnight - datetime.now(UTC)).total_seconds()) < 5
    assert stack.submissions_count(slug) == 1


def test_the_host_side_through_the_client(stack: LiveStack, tmp_path: Path) -> None:
    host = stack.host
    secret = 2**90 + 7
    closes = datetime.now(UTC) + timedelta(days=30)
    made = host.create_competition(
        "client-host", [(f"r{i:02d}", int(y)) for i, y in enumerate(LABELS)], title="Through the client",
        description="made over HTTP", metric="binary_logloss", eps=1e-12, score_decimals=4, public_fraction=0.5,
        daily_limit=None, total_limit=50, closes_at=closes, defenses=[{"name": "rounding", "decimals": 4}],
        disclosed_defenses="rounded", same_file_same_score=True, also_report=["auc"], secret=secret,
    )
    assert (made.title, made.description, made.eps, made.score_decimals, made.public_fraction) == (
        "Through the client", "made over HTTP", 1e-12, 4, 0.5)
    assert (made.daily_limit, made.total_limit, made.also_report, made.same_file_same_score) == (None, 50, ("auc",),
                                                                                                True)
    assert made.closes_at is not None and abs((made.closes_at - closes).total_seconds()) < 1
    assert made.defenses == ({"name": "rounding", "decimals": 4},) and made.host == "host"
    assert host.create_competition("client-host", "id,label\nx,1\n", exist_ok=True).slug == "client-host"

    first = host.create_participant("client-host-user")
    participant = host.create_participant("client-host-user")  # the same account again, with a new token
    assert first.created and not participant.created and participant.username == first.username
    assert participant.token != first.token
    with pytest.raises(NotAuthenticated):  # the new token retired the old one
        stack.client(first.token).quota("client-host")
    alice = stack.client(participant.token)
    public = alice.competition("client-host")
    assert "defenses" not in public.data and "secret" not in public.data and str(secret) not in str(public.data)
    with pytest.raises(Forbidden):
        alice.host_submissions("client-host")
    with pytest.raises(Forbidden):
        alice.create_participant("sneaky")
    with pytest.raises(NotFound):
        alice.competition("no-such-competition")
    lines = _csv(alice, "client-host", 8).splitlines()
    lines[2] = "r01,abc"
    with pytest.raises(UploadRejected, match="line 3") as rejected:
        alice.submit_csv("client-host", "\n".join(lines) + "\n")
    assert rejected.value.line == 3 and alice.quota("client-host").used_total == 0

    # The site splits and releases exactly as LocalOracle(seed=secret) does: the secret was honoured.
    predictions = np.random.default_rng(9).uniform(0.05, 0.95, N_ROWS)
    ids = alice.sample_submission("client-host").ids
    upload = alice.submit_json("client-host", predictions.tolist())
    scored = alice.wait(upload.id, timeout=60, raise_on_failure=True)
    offline = LocalOracle(LABELS, eps=1e-12, decimals=4, seed=secret, public_fraction=0.5, ids=ids,
                          defenses=[{"name": "rounding", "decimals": 4}], same_file_same_score=True)
    assert scored.public_score == offline.submit(predictions)
    assert set(scored.extra_scores) == {"auc"}

    (row,) = host.host_submissions("client-host")
    assert row.participant == "client-host-user" and row.public_score_text == scored.public_score_text
    assert row.raw_public_text and row.raw_public_text != row.public_score_text
    (leak,) = host.leakage("client-host")
    assert leak.participant == "client-host-user" and leak.scored == 1
    assert 0 <= (leak.max_abs_public_error or 0.0) <= 0.5e-4
    assert alice.select_final(upload.id).selected_for_final
    board = alice.leaderboard("client-host")
    assert [(r.participant, r.score_text) for r in board.rows] == [("client-host-user", scored.public_score_text)]
    exported = alice.leaderboard_csv("client-host").splitlines()
    assert exported[1].startswith(f"1,client-host-user,{row.public_score_text},")
    with pytest.raises(Forbidden):
        alice.leaderboard("client-host", "private")
    changed = host.set_defenses("client-host", [{"name": "rounding", "decimals": 2}], disclosed_defenses="2 places")
    assert changed.defenses == ({"name": "rounding", "decimals": 2},)
    assert alice.competition("client-host").disclosed_defenses == "2 places"


def test_data_files_through_the_client(stack: LiveStack, tmp_path: Path) -> None:
    host = stack.host
    host.create_competition("client-data", [(f"r{i:02d}", int(y)) for i, y in enumerate(LABELS)], exist_ok=True)
    train = b"id,f1,label\n" + b"".join(f"t{i},{i / 10},{i % 2}\n".encode() for i in range(20))
    (tmp_path / "train.csv").write_bytes(train)
    attached = host.add_data_file("client-data", tmp_path / "train.csv", description="with the label")
    host.add_data_file("client-data", b"id,f1\nr00,0.5\n", name="test features.csv")
    alice = stack.client(host.create_participant("client-data-user").token)

    listed = alice.data_files("client-data")
    assert [(f.name, f.size, f.description) for f in listed] == [
        ("test features.csv", 14, ""), ("train.csv", len(train), "with the label")]
    assert listed[1].sha256 == attached.sha256
    (tmp_path / "in").mkdir()
    written = alice.download_data_file("client-data", "train.csv", tmp_path / "in")
    assert written == tmp_path / "in" / "train.csv" and written.read_bytes() == train
    assert alice.download_data_file("client-data", "test features.csv", tmp_path / "t.csv").read_bytes() == (
        b"id,f1\nr00,0.5\n")
    with pytest.raises(NotAuthenticated):
        stack.client(None).download_data_file("client-data", "train.csv", tmp_path / "anonymous.csv")
    assert not (tmp_path / "anonymous.csv").exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "in", "t.csv", "train.csv"]
    with pytest.raises(NotFound):
        alice.download_data_file("client-data", "labels.csv", tmp_path)
    with pytest.raises(Forbidden):
        alice.add_data_file("client-data", b"x", name="mine.csv")
    host.remove_data_file("client-data", "test features.csv")
    assert [f.name for f in alice.data_files("client-data")] == ["train.csv"]
