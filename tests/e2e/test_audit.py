"""The leakage audit end to end: the host starts it over HTTP, the real Celery worker runs it against the
competition's hidden labels (through Redis), the host polls its progress until it is done and reads the
result; a participant is refused."""

from __future__ import annotations

import time

import pytest

from bot.client import Audit, Conflict, Forbidden, LeaderboardClient
from tests.e2e.conftest import LiveSite

pytestmark = pytest.mark.e2e

POLL_SECONDS = 90.0


def test_the_worker_runs_an_audit_the_host_polls_to_done(live_site: LiveSite) -> None:
    host = LeaderboardClient(live_site.url, live_site.host_token)
    started = host.start_audit(live_site.slug, budget=60)
    assert started.status == "queued" and started.url.endswith(f"/audit/{started.id}/")
    with pytest.raises(Conflict):
        host.start_audit(live_site.slug)  # one audit of a competition at a time
    seen: list[Audit] = []
    deadline = time.monotonic() + POLL_SECONDS
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
    # An undefended board at 5 decimals: the 60 public rows fall within 60 submissions, to the last label.
    assert result["at_quota"]["budget"] == 60 and result["at_quota"]["public"] == 1.0
    assert audit.verdict.startswith("With no close date (10 a day), within 60 submissions")
    assert "100 % of public labels" in audit.verdict
    assert host.audit(live_site.slug).id == audit.id  # the latest
    with pytest.raises(Forbidden):
        LeaderboardClient(live_site.url, live_site.token).audit(live_site.slug)
    with pytest.raises(Forbidden):
        LeaderboardClient(live_site.url, live_site.token).start_audit(live_site.slug)
