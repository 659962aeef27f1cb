"""End to end over HTTP: a live gunicorn site and a real Celery worker score an uploaded CSV through Redis; the
released score is the scoring core's own rounded value; a malformed upload is a 400 naming the line; the
HTML pages render for the competition, for anonymous visitors and for the host after a form login; and the
worker runs the host's leakage audit, which the host polls to its result (a participant is refused)."""

from __future__ import annotations

import html
import io
import json
import re
import sqlite3
import time
from typing import Any

import numpy as np
import pytest
import requests

from bot.client import Audit, Conflict, Forbidden, LeaderboardClient
from defenses import DefenseChain
from scoring import Arithmetic, HiddenTestSet, ScoringSpec, evaluate, parse
from tests.e2e.conftest import PARTICIPANT, LiveSite

pytestmark = pytest.mark.e2e

POLL_SECONDS = 20.0
AUDIT_POLL_SECONDS = 90.0  # the audit takes seconds; under load, more


def predictions_csv(site: LiveSite, seed: int) -> bytes:
    values = np.random.default_rng(seed).uniform(0.02, 0.98, len(site.ids))
    return ("id,target\n" + "".join(f"{i},{float(v)!r}\n" for i, v in zip(site.ids, values, strict=True))).encode()


def token_session(site: LiveSite) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {site.token}"
    return session


def wait_until_finished(site: LiveSite, session: requests.Session, submission_id: int) -> dict[str, Any]:
    """Poll the submission until the worker has scored (or failed) it."""
    deadline = time.monotonic() + POLL_SECONDS
    while True:
        response = session.get(f"{site.url}/api/v1/submissions/{submission_id}/", timeout=5)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body["status"] in {"scored", "failed"}:
            return body
        assert site.worker.poll() is None, f"the worker died:\n{site.log_tail()}"
        assert time.monotonic() < deadline, f"submission {submission_id} still {body['status']}:\n{site.log_tail()}"
        time.sleep(0.1)


def core_released_text(site: LiveSite, data: bytes, submission_id: int) -> str:
    """The public score the pure scoring core releases for ``data``, from the hidden set in the site's database."""
    with sqlite3.connect(site.database) as db:
        ids_json, labels_npy, mask_npy, secret, metric, eps, decimals, chain, arithmetic = db.execute(
            "SELECT h.ids_json, h.labels_npy, h.public_mask_npy, h.secret, c.metric, c.eps, c.score_decimals, "
            "c.defenses, c.arithmetic FROM competitions_hiddentestdata h "
            "JOIN competitions_competition c ON c.id = h.competition_id WHERE c.slug = ?",
            (site.slug,),
        ).fetchone()
    labels = np.load(io.BytesIO(labels_npy), allow_pickle=False)
    assert json.loads(ids_json) == site.ids and np.array_equal(labels, site.labels)
    spec = ScoringSpec(
        hidden=HiddenTestSet(tuple(site.ids), labels, 2, np.load(io.BytesIO(mask_npy), allow_pickle=False)),
        metric_name=metric,
        eps=eps,
        decimals=decimals,
        arithmetic=Arithmetic.parse(arithmetic),
        chain=DefenseChain.from_json(json.loads(chain)),
        secret=int(secret, 16),
    )
    released = evaluate(spec, parse(spec, data), submission_id=submission_id).results["public"].released_text
    assert released is not None
    return released


def page(session: requests.Session, url: str) -> str:
    response = session.get(url, timeout=5)
    assert response.status_code == 200, (url, response.status_code, response.text[-2000:])
    return html.unescape(response.text)


def test_an_upload_over_http_is_scored_by_the_worker_and_shown(live_site: LiveSite) -> None:
    site = live_site
    session = token_session(site)
    data = predictions_csv(site, seed=1)
    created = session.post(
        f"{site.url}/api/v1/competitions/{site.slug}/submissions/",
        files={"file": ("alice.csv", data, "text/csv")},
        timeout=10,
    )
    assert created.status_code == 202, created.text
    submission_id = created.json()["id"]
    assert created.json()["status"] == "queued"

    scored = wait_until_finished(site, session, submission_id)
    assert scored["status"] == "scored", (scored, site.log_tail())
    expected = core_released_text(site, data, submission_id)
    assert scored["public_score_text"] == expected
    assert scored["public_score"] == float(expected)
    assert re.fullmatch(r"\d+\.\d{5}", expected)

    anonymous = requests.Session()
    assert site.slug in page(anonymous, f"{site.url}/")
    detail = page(anonymous, f"{site.url}/c/{site.slug}/")
    assert "E2E cancer" in detail and "Scores are rounded to 5 decimals." in detail
    board = page(anonymous, f"{site.url}/c/{site.slug}/leaderboard/public/")
    assert PARTICIPANT in board and expected in board
    export = page(anonymous, f"{site.url}/c/{site.slug}/leaderboard/public.csv")
    assert export.splitlines()[1].startswith(f"1,{PARTICIPANT},{expected},1,")
    assert page(anonymous, f"{site.url}/c/{site.slug}/sample-submission.csv").startswith("id,target\n")


def test_a_malformed_upload_is_a_400_naming_the_line(live_site: LiveSite) -> None:
    site = live_site
    lines = predictions_csv(site, seed=2).decode().splitlines()
    lines[3] = f"{site.ids[2]},not-a-number"
    response = token_session(site).post(
        f"{site.url}/api/v1/competitions/{site.slug}/submissions/",
        files={"file": ("bad.csv", ("\n".join(lines) + "\n").encode(), "text/csv")},
        timeout=10,
    )
    assert response.status_code == 400, response.text
    assert "line 4" in response.json()["detail"]


def test_the_host_logs_in_submits_through_the_form_and_sees_raw_next_to_released(live_site: LiveSite) -> None:
    site = live_site
    browser = requests.Session()
    login = f"{site.url}/accounts/login/"
    browser.get(login, timeout=5)
    answer = browser.post(
        login,
        data={
            "username": site.host,
            "password": site.host_password,
            "csrfmiddlewaretoken": browser.cookies["csrftoken"],
            "next": f"/c/{site.slug}/",
        },
        timeout=10,
    )
    assert answer.status_code == 200 and answer.url.endswith(f"/c/{site.slug}/"), answer.url
    assert "Raw vs released scores" in html.unescape(answer.text)

    submit = f"{site.url}/c/{site.slug}/submit/"
    page(browser, submit)
    uploaded = browser.post(
        submit,
        data={"csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        files={"file": ("host-form.csv", predictions_csv(site, seed=3), "text/csv")},
        timeout=10,
    )
    assert uploaded.status_code == 200 and uploaded.url.endswith(f"/c/{site.slug}/submissions/"), uploaded.text
    received = re.search(r"Submission #(\d+) received", uploaded.text)
    assert received, uploaded.text
    submission_id = int(received.group(1))
    deadline = time.monotonic() + POLL_SECONDS
    while "<td>scored" not in (mine := page(browser, f"{site.url}/c/{site.slug}/submissions/")):
        assert time.monotonic() < deadline, site.log_tail()
        time.sleep(0.1)
    assert f"#{submission_id}" in mine and "host-form.csv" in mine

    host_page = page(browser, f"{site.url}/c/{site.slug}/host/")
    with sqlite3.connect(site.database) as db:
        raw_text, released_text = db.execute(
            "SELECT raw_public_text, public_score_text FROM submissions_submission WHERE id = ?", (submission_id,)
        ).fetchone()
    assert raw_text in host_page and released_text in host_page
    assert page(browser, f"{site.url}/games/")


def test_the_worker_runs_an_audit_the_host_polls_to_done(live_site: LiveSite) -> None:
    host = LeaderboardClient(live_site.url, live_site.host_token)
    started = host.start_audit(live_site.slug, budget=60, accounts=[1, 3])
    assert started.status == "queued" and started.url.endswith(f"/audit/{started.id}/")
    with pytest.raises(Conflict):
        host.start_audit(live_site.slug)  # one audit of a competition at a time
    seen: list[Audit] = []
    deadline = time.monotonic() + AUDIT_POLL_SECONDS
    while True:
        audit = host.audit(live_site.slug, started.id)
        seen.append(audit)
        if audit.finished:
            break
        assert live_site.worker.poll() is None, f"the worker died:\n{live_site.log_tail()}"
        assert time.monotonic() < deadline, f"audit still {audit.status} at {audit.progress} %:\n{live_site.log_tail()}"
        time.sleep(0.2)
    assert audit.status == "done", (audit.error, live_site.log_tail())
    progress = [a.progress for a in seen]
    assert progress == sorted(progress) and progress[-1] == 100
    result = audit.result
    assert result is not None and result["n_rows"] == len(live_site.labels) and result["budget"] == 60
    assert result["account_counts"] == [1, 3] and len(result["axis"]) == 2  # the client sent both counts
    # An undefended board at 5 decimals: the 60 public rows fall within 60 submissions, to the last label.
    assert result["at_quota"]["budget"] == 60 and result["at_quota"]["public"] == 1.0
    assert audit.verdict.startswith("With no close date (10 a day), within 60 submissions")
    assert "100 % of public labels" in audit.verdict
    assert host.audit(live_site.slug).id == audit.id  # the latest
    with pytest.raises(Forbidden):
        LeaderboardClient(live_site.url, live_site.token).audit(live_site.slug)
    with pytest.raises(Forbidden):
        LeaderboardClient(live_site.url, live_site.token).start_audit(live_site.slug)
