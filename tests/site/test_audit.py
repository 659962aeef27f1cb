"""The leakage audit on the site: the service runs a queued audit to ``done`` (or ``failed`` with a message,
never left ``running``), ``manage.py audit_competition`` prints the table and the verdict, the host API starts
and reads audits with validated options, the host page shows the verdict and the chart (progress while it
runs), and nobody but the host (and staff) sees any of it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from leaderboard.audits.models import Audit, AuditStatus
from leaderboard.audits.services import audit_request, audit_run, audits_expire
from tests.site.conftest import api_client

pytestmark = pytest.mark.django_db

BUDGET = 40  # small: the 40-row competition audits in about a second


@pytest.fixture(autouse=True)
def audits_enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The audit ids the site would publish (no broker in these tests)."""
    published: list[int] = []
    monkeypatch.setattr("leaderboard.audits.services.audit_enqueue",
                        lambda *, audit_id: published.append(audit_id))
    return published


@pytest.fixture
def leaky(make_competition: Callable[..., Any]) -> Any:
    """No defense, 5 decimals, 20 submissions per participant in all."""
    return make_competition(slug="leaky", daily_limit=5, total_limit=20)


def _done(competition: Any, **options: Any) -> Audit:
    audit = audit_request(competition=competition, budget=options.pop("budget", BUDGET), enqueue=False, **options)
    assert audit_run(audit_id=audit.pk) == "done"
    return Audit.objects.get(pk=audit.pk)


def test_a_queued_audit_runs_to_done_with_the_verdict(leaky: Any) -> None:
    audit = _done(leaky)
    assert audit.status == AuditStatus.DONE and audit.percent == 100 and audit.finished_at is not None
    result = audit.result
    assert result["quota"]["submissions"] == 20 and result["at_quota"]["budget"] == 20
    assert result["at_quota"]["public"] == 1.0  # an undefended 12-row public split falls within 20 submissions
    assert audit.verdict.startswith("Within your quota of 20 submissions")
    assert audit_run(audit_id=audit.pk) == "skipped"  # a task delivered twice does not run it again


def test_a_crashing_audit_is_failed_with_its_message(leaky: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the attack library broke")

    monkeypatch.setattr("games.audit.audit", crash)
    audit = audit_request(competition=leaky, enqueue=False)
    assert audit_run(audit_id=audit.pk) == "failed"
    audit.refresh_from_db()
    assert audit.status == AuditStatus.FAILED and "the attack library broke" in audit.error


def test_an_audit_whose_worker_died_or_never_came_is_failed_on_read(leaky: Any) -> None:
    running = Audit.objects.create(competition=leaky, status=AuditStatus.RUNNING,
                                   heartbeat_at=timezone.now() - timedelta(minutes=5))
    queued = Audit.objects.create(competition=leaky)
    Audit.objects.filter(pk=queued.pk).update(created_at=timezone.now() - timedelta(hours=2))
    fresh = Audit.objects.create(competition=leaky, status=AuditStatus.RUNNING, heartbeat_at=timezone.now())
    assert audits_expire(competition=leaky) == 2
    statuses = dict(Audit.objects.values_list("pk", "status"))
    assert statuses == {running.pk: "failed", queued.pk: "failed", fresh.pk: "running"}
    assert "heartbeat" in Audit.objects.get(pk=running.pk).error
    assert "worker" in Audit.objects.get(pk=queued.pk).error


def test_the_command_prints_the_table_and_the_verdict(leaky: Any) -> None:
    out = StringIO()
    call_command("audit_competition", leaky.slug, "--budget", str(BUDGET), stdout=out, stderr=StringIO())
    text = out.getvalue()
    assert "attack" in text and "capacity_split" in text and "majority class:" in text
    assert "verdict: Within your quota of 20 submissions" in text
    assert Audit.objects.get(competition=leaky).status == AuditStatus.DONE  # stored: the host page shows it


def test_the_command_prints_json_and_refuses_bad_input(leaky: Any) -> None:
    out = StringIO()
    call_command("audit_competition", leaky.slug, "--budget", "20", "--accounts", "2", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["accounts"] == 2 and result["budget"] == 20 and result["verdict"]
    assert {curve["attack"] for curve in result["curves"]} >= {"auto", "capacity_split"}
    with pytest.raises(CommandError, match="no competition"):
        call_command("audit_competition", "no-such-slug")
    with pytest.raises(CommandError, match="budget"):
        call_command("audit_competition", leaky.slug, "--budget", "0")


def test_the_host_starts_an_audit_and_reads_it(leaky: Any, host: Any, audits_enqueued: list[int],
                                               django_capture_on_commit_callbacks: Any) -> None:
    client = api_client(host)
    base = f"/api/v1/host/competitions/{leaky.slug}/audit/"
    assert client.get(base).status_code == 404  # none yet
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(base, {"budget": BUDGET, "accounts": 1}, format="json")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert body["status"] == "queued" and body["progress"] == 0 and body["result"] is None
    assert body["url"] == f"{base}{body['id']}/" and audits_enqueued == [body["id"]]
    busy = client.post(base, {}, format="json")
    assert busy.status_code == 409 and busy.json()["id"] == body["id"]
    assert audit_run(audit_id=body["id"]) == "done"  # what the worker does with the published id
    latest = client.get(base).json()
    assert latest["id"] == body["id"] and latest["status"] == "done" and latest["progress"] == 100
    assert latest["verdict"] == latest["result"]["verdict"] and latest["result"]["curves"]
    assert client.get(body["url"]).json()["verdict"] == latest["verdict"]


@pytest.mark.parametrize("payload, field", [
    ({"budget": 0}, "budget"), ({"budget": 20_001}, "budget"), ({"budget": "many"}, "budget"),
    ({"accounts": 0}, "accounts"), ({"accounts": 10_001}, "accounts"), ({"accounts": []}, "accounts"),
    ({"accounts": [1, "x"]}, "accounts"), ({"accounts": list(range(1, 14))}, "accounts"), ({"seed": -1}, "seed"),
])
def test_audit_options_out_of_range_are_a_400_naming_them(leaky: Any, host: Any, payload: dict[str, Any],
                                                          field: str) -> None:
    answer = api_client(host).post(f"/api/v1/host/competitions/{leaky.slug}/audit/", payload, format="json")
    assert answer.status_code == 400 and field in answer.json()
    assert not Audit.objects.exists()


def test_only_the_host_and_staff_reach_an_audit(leaky: Any, participant: Any, make_competition: Callable[..., Any],
                                                audits_enqueued: list[int]) -> None:
    from django.contrib.auth.models import User

    audit = _done(leaky)
    base = f"/api/v1/host/competitions/{leaky.slug}/audit/"
    paths = [base, f"{base}{audit.pk}/"]
    for path in paths:
        assert api_client(participant).get(path).status_code == 403
        assert api_client(None).get(path).status_code in {401, 403}
    assert api_client(participant).post(base, {}, format="json").status_code == 403
    assert api_client(None).post(base, {}, format="json").status_code in {401, 403}
    assert Audit.objects.count() == 1 and audits_enqueued == []
    staff = User.objects.create_user("sam_staff", is_staff=True)
    assert api_client(staff).get(base).json()["id"] == audit.pk
    other = make_competition(slug="another")  # the same host's other competition: its audits only
    assert api_client(staff).get(f"/api/v1/host/competitions/{other.slug}/audit/{audit.pk}/").status_code == 404


def test_the_host_page_shows_the_verdict_and_the_chart(leaky: Any, host: Any) -> None:
    audit = _done(leaky)
    client = Client()
    client.force_login(host)
    page = client.get(f"/c/{leaky.slug}/host/audit/")
    body = page.content.decode()
    assert page.status_code == 200
    assert audit.verdict.replace("×", "&#215;")[:40] in body or audit.verdict[:40] in body
    assert body.count("<svg") == 2  # public and private
    assert 'class="quota"' in body and 'class="majority"' in body
    assert 'http-equiv="refresh"' not in body  # finished: no more refreshing
    assert f"/c/{leaky.slug}/host/audit/" in client.get(f"/c/{leaky.slug}/").content.decode()  # linked


def test_the_host_page_starts_an_audit_and_refreshes_while_it_runs(leaky: Any, host: Any,
                                                                  audits_enqueued: list[int],
                                                                  django_capture_on_commit_callbacks: Any) -> None:
    client = Client()
    client.force_login(host)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(f"/c/{leaky.slug}/host/audit/", {"budget": "30", "accounts": "2"})
    assert answer.status_code == 302
    audit = Audit.objects.get(competition=leaky)
    assert (audit.budget, audit.accounts, audits_enqueued) == (30, 2, [audit.pk])
    Audit.objects.filter(pk=audit.pk).update(status=AuditStatus.RUNNING, progress=0.42, step="auto: 30 submissions",
                                             heartbeat_at=timezone.now())
    body = client.get(f"/c/{leaky.slug}/host/audit/").content.decode()
    assert 'http-equiv="refresh"' in body and "42 %" in body and "auto: 30 submissions" in body
    refused = client.post(f"/c/{leaky.slug}/host/audit/", {"budget": "0", "accounts": "1"})
    assert refused.status_code == 400 and Audit.objects.count() == 1


def test_a_participant_never_sees_the_audit_page(leaky: Any, participant: Any) -> None:
    _done(leaky)
    client = Client()
    assert client.get(f"/c/{leaky.slug}/host/audit/").status_code == 302  # to the login page
    client.force_login(participant)
    url = f"/c/{leaky.slug}/host/audit/"
    assert client.get(url).status_code == 403
    assert client.post(url, {"budget": "10", "accounts": "1"}).status_code == 403
    assert Audit.objects.count() == 1
    assert url not in client.get(f"/c/{leaky.slug}/").content.decode()


def test_the_accounts_axis_is_asked_stored_and_shown(make_competition: Callable[..., Any], host: Any,
                                                    audits_enqueued: list[int],
                                                    django_capture_on_commit_callbacks: Any) -> None:
    """A parameter-free Ladder board (200 rows, 30 % public, 10 submissions per participant): the host asks for
    1 and 30 accounts; the API returns both counts and a cell per count with its information bound, and the page
    shows the labels read against accounts and how many sign-ups it took, worded as a lower bound."""
    import numpy as np

    labels = (np.random.default_rng(200).random(200) < 0.7).astype(np.int64)
    ladder = make_competition(slug="ladder", labels=labels, total_limit=10,
                              defenses=[{"name": "ladder", "mode": "parameter_free"}])
    client = api_client(host)
    base = f"/api/v1/host/competitions/{ladder.slug}/audit/"
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(base, {"budget": 40, "accounts": [30, 1]}, format="json")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert body["account_counts"] == [1, 30] and body["accounts"] == 1
    assert audit_run(audit_id=body["id"]) == "done"
    result = client.get(body["url"]).json()["result"]
    assert result["account_counts"] == [1, 30]
    one, thirty = result["axis"]
    assert (one["accounts"], one["budget"], thirty["accounts"], thirty["budget"]) == (1, 10, 30, 40)
    assert one["bound"]["rows"] == thirty["bound"]["rows"] == result["n_public"]
    assert thirty["exact_public"] > one["exact_public"]  # more sign-ups, more labels read
    assert result["sign_ups"]["tried"] == 30
    assert result["verdict"].endswith("a lower bound on the leakage, not a limit on what other attacks could read.")
    page = Client()
    page.force_login(host)
    html = page.get(f"/c/{ladder.slug}/host/audit/").content.decode()
    assert 'id="accounts-axis"' in html and "Labels read against accounts" in html and 'id="sign-ups"' in html
    assert "Sign-ups: of the account counts tried (1, 30)" in html
    assert "safe" not in html.lower().split("<body", 1)[-1]  # nothing on the page calls a board safe
    out = StringIO()
    call_command("audit_competition", ladder.slug, "--budget", "20", "--accounts", "1,2", "--json", stdout=out)
    assert json.loads(out.getvalue())["account_counts"] == [1, 2]
    with pytest.raises(CommandError):
        call_command("audit_competition", ladder.slug, "--accounts", "1,x", stderr=StringIO())


def test_the_page_credits_the_best_run_within_each_budget_and_calls_an_unbounded_quota_so(
        make_competition: Callable[..., Any], host: Any) -> None:
    """A real audit whose curve falls (blocks_split reads every public label in 20 submissions, less in a fresh
    40-run), on a board with no close date: each split's accuracy beside its own majority, the top budget not
    called the quota, the fall credited and explained on the page and in the chart."""
    import html

    import numpy as np

    from games.audit import AuditSetup, Quota, audit, percent

    labels = np.random.default_rng(40).integers(0, 2, 40)
    report = audit(AuditSetup(labels, decimals=2, public_fraction=0.5, secret=3), budget=40, accounts=[1],
                   quota=Quota(daily_limit=5), attack_names=["blocks_split"], honest_models=2, screen=False)
    assert report.falls  # the measured fall this page must explain
    competition = make_competition(slug="unbounded", daily_limit=5)
    Audit.objects.create(competition=competition, status=AuditStatus.DONE, result=report.as_dict(),
                         finished_at=timezone.now(), account_counts=[1])
    client = Client()
    client.force_login(host)
    body = html.unescape(client.get(f"/c/{competition.slug}/host/audit/").content.decode())
    assert "40 (the audited budget; the quota is unbounded)" in body and "(quota)" not in body
    assert "No quota line: the participants' quota is unbounded." in body
    assert "unbounded (5 a day, no close date)" in body
    public, private = report.majority["public"], report.majority["private"]
    assert public is not None and private is not None
    assert f"Public right (majority {percent(public)})" in body
    assert f"Private right (majority {percent(private)})" in body
    assert "100 % (the 20-submission run)" in body  # the 40 row's best within its budget
    assert report.falls[0] in body and 'class="below-best"' in body
    assert "an attacker can stop early" in body
