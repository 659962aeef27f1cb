"""The pipelined bot (``--window``) against a fake site that scores with the real scoring core: the same queries
in the same order and the same labels as one query at a time and as in process, answers taken in order even
when they come back out of order, the quota never exceeded, and checkpoint resumption without re-submitting."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle, run
from bot.checkpoint import BudgetExhausted, Checkpoint, Entry, ReplayOracle
from bot.client import PollSchedule, QuotaExceeded
from bot.http_oracle import HttpOracle
from tests.bot.support import JsonHandler, serving

SLUG = "pipe"
N = 240
LABELS = np.random.default_rng(240).integers(0, 2, N)


@dataclass
class ScoringSite:
    """A site that scores every upload with :class:`LocalOracle` (in upload order, as a worker would) and
    answers each one only after a seeded random delay, so answers finish out of order. ``total_limit`` is
    enforced under a lock, as the real site's row lock does."""

    total_limit: int | None = None
    delay: float = 0.03
    board: LocalOracle = field(default_factory=lambda: LocalOracle(LABELS, decimals=5))
    released: dict[int, tuple[float, str]] = field(default_factory=dict)  # id -> (ready at, released text)
    answered: set[int] = field(default_factory=set)
    posts: int = 0
    refused: int = 0
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    rng: random.Random = field(default_factory=lambda: random.Random(5))

    def metadata(self) -> dict[str, Any]:
        return {"slug": SLUG, "n_rows": N, "n_classes": 2, "metric": "binary_logloss", "score_decimals": 5,
                "eps": 1e-15, "arithmetic": "float64", "public_fraction": 1.0, "daily_limit": None,
                "total_limit": self.total_limit, "disclosed_defenses": ""}

    def quota(self) -> dict[str, Any]:
        left = None if self.total_limit is None else self.total_limit - self.posts
        return {"daily_limit": None, "used_today": self.posts, "remaining_today": None,
                "total_limit": self.total_limit, "used_total": self.posts, "remaining_total": left, "resets_at": None}


def _handler(site: ScoringSite) -> type[JsonHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            if self.path == f"/api/v1/competitions/{SLUG}/":
                return self._send(200, site.metadata())
            if self.path == f"/api/v1/competitions/{SLUG}/sample-submission/":
                return self._send(200, "id,target\n" + "".join(f"{i},0.5\n" for i in range(N)))
            if self.path == f"/api/v1/competitions/{SLUG}/quota/":
                with site.lock:
                    return self._send(200, site.quota())
            match = re.fullmatch(r"/api/v1/submissions/(\d+)/", self.path)
            assert match, self.path
            submission_id = int(match.group(1))
            with site.lock:
                ready, text = site.released[submission_id]
                done = time.monotonic() >= ready
                if done and submission_id not in site.answered:
                    site.answered.add(submission_id)
                    site.in_flight -= 1
            if not done:
                return self._send(200, {"id": submission_id, "status": "scoring", "public_score_text": ""})
            return self._send(200, {"id": submission_id, "status": "scored", "public_score_text": text})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with site.lock:
                if site.total_limit is not None and site.posts >= site.total_limit:
                    site.refused += 1
                    return self._send(429, {"detail": "total limit reached", "resets_at": None})
                site.posts += 1
                value = site.board.submit(body["predictions"])
                site.released[site.posts] = (time.monotonic() + site.rng.uniform(0, site.delay), f"{value:.5f}")
                site.in_flight += 1
                site.most_in_flight = max(site.most_in_flight, site.in_flight)
                return self._send(202, {"id": site.posts, "status": "queued"})

    return Handler


@pytest.fixture
def site() -> Iterator[tuple[ScoringSite, str]]:
    fake = ScoringSite()
    with serving(_handler(fake)) as url:
        yield fake, url


def _oracle(url: str, window: int, **kwargs: Any) -> HttpOracle:
    return HttpOracle(url, SLUG, "secret", upload="json", window=window,
                      poll=PollSchedule(initial=0.002, factor=1.5, maximum=0.01, timeout=30.0), **kwargs)


def _run(url: str, path: Path, window: int, attack: str = "prime_batched", **params: Any) -> Any:
    oracle = ReplayOracle(_oracle(url, window), Checkpoint.open(path, {"competition": SLUG, "n_rows": N}))
    try:
        return run(attack, oracle, confirm=False, **params), oracle
    finally:
        oracle.checkpoint.close()


def _lines(path: Path) -> list[tuple[str, str]]:
    """(digest, released text) of every answered query, in order."""
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [(r["sha256"], r["released"]) for r in records if r["kind"] != "posted"]


@pytest.mark.parametrize(("attack", "params"), [("prime_batched", {}), ("capacity", {"round_size": 8})])
def test_a_window_sends_the_same_queries_in_the_same_order_and_decodes_the_same_labels(
    tmp_path: Path, attack: str, params: dict[str, Any]
) -> None:
    offline = run(attack, LocalOracle(LABELS, decimals=5), confirm=False, **params)
    runs = {}
    for window in (1, 8):
        fake = ScoringSite()
        with serving(_handler(fake)) as url:
            result, oracle = _run(url, tmp_path / f"w{window}.jsonl", window, attack, **params)
        runs[window] = (result, fake)
        assert (result.labels == LABELS).all() and (result.labels == offline.labels).all()
        assert result.queries == offline.queries == fake.posts == oracle.queries
    assert runs[1][1].most_in_flight == 1 < runs[8][1].most_in_flight <= 8  # it did pipeline, within its window
    assert _lines(tmp_path / "w1.jsonl") == _lines(tmp_path / "w8.jsonl")  # query for query, answer for answer


def test_answers_come_back_in_order_whatever_order_the_site_finishes_them(site: tuple[ScoringSite, str]) -> None:
    fake, url = site
    fake.delay = 0.2
    oracle = _oracle(url, 6)
    vectors = [np.where(np.arange(N) == i, 0.9, 0.5) for i in range(12)]
    expected = LocalOracle(LABELS, decimals=5)
    assert oracle.submit_many(vectors) == [expected.submit(v) for v in vectors]
    assert oracle.queries == 12 and oracle.submission_ids == list(range(1, 13)) and fake.most_in_flight > 1


def test_the_quota_is_never_exceeded_and_the_stopped_run_resumes_without_resubmitting(
    site: tuple[ScoringSite, str], tmp_path: Path
) -> None:
    fake, url = site
    fake.total_limit = 23
    path = tmp_path / "run.jsonl"
    first = ReplayOracle(_oracle(url, 8, on_quota="stop"), Checkpoint.open(path, {"competition": SLUG, "n_rows": N}))
    with pytest.raises(QuotaExceeded):
        run("prime_batched", first, confirm=False)
    first.checkpoint.close()
    assert fake.posts == 23 and fake.refused == 1  # only the one upload sent at 0 left met the 429
    assert first.queries == 23 and len(_lines(path)) == 23

    fake.total_limit = None  # the host raises the limit
    resumed = ReplayOracle(_oracle(url, 8), Checkpoint.open(path, {"competition": SLUG, "n_rows": N}))
    result = run("prime_batched", resumed, confirm=False)
    assert (result.labels == LABELS).all() and resumed.replayed == 23
    assert fake.posts == result.queries  # every query submitted exactly once over both runs


def test_a_budget_cut_pipelined_run_resumes_as_a_prefix_of_the_full_run(
    site: tuple[ScoringSite, str], tmp_path: Path
) -> None:
    fake, url = site
    path = tmp_path / "run.jsonl"
    first = ReplayOracle(_oracle(url, 8), Checkpoint.open(path, {"competition": SLUG, "n_rows": N}), budget=10)
    with pytest.raises(BudgetExhausted):
        run("prime_batched", first, confirm=False)
    first.checkpoint.close()
    assert fake.posts == 10 == first.queries  # the round that crossed the budget sent only what fitted
    result, resumed = _run(url, path, 8)
    assert (result.labels == LABELS).all() and resumed.replayed == 10 and fake.posts == result.queries


def test_queries_in_flight_at_a_kill_are_polled_on_resume_not_uploaded_again(
    site: tuple[ScoringSite, str], tmp_path: Path
) -> None:
    fake, url = site
    full_path = tmp_path / "full.jsonl"
    result, _ = _run(url, full_path, 8)
    posts = fake.posts
    # The checkpoint of a run killed after 9 answers with queries 10-14 accepted by the site, not yet answered.
    full = Checkpoint.open(full_path, {"competition": SLUG, "n_rows": N})
    cut_path = tmp_path / "cut.jsonl"
    cut = Checkpoint(cut_path, full.header, full.entries[:9])
    cut._rewrite()
    for index in range(9, 14):
        answered = full.entries[index]
        cut.append_posted(index, Entry(answered.digest, None, "posted", answered.submission_id))
    cut.close()
    assert len(Checkpoint.open(cut_path, full.header).posted) == 5

    again, resumed = _run(url, cut_path, 8)
    assert (again.labels == result.labels).all() and resumed.replayed == 9
    assert fake.posts - posts == result.queries - 14  # the five accepted ones were polled, not re-sent
