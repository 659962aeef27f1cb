"""A held submission as its owner sees it: flagged "held for review" on the API and the page with no score, not
selectable as a final while held (nor ever once the host withheld it), selectable once the host's dismissal has
released it, and counted once against the quota whatever happens to the hold. The real worker and PostgreSQL:
``tests/site/test_screening_integration.py``; the page in Chromium: ``tests/browser/test_screening.py``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tests.site.conftest import N_ROWS
from tests.site.test_screening import honest, probe

pytestmark = pytest.mark.django_db


def api_client(user: Any) -> Any:
    """An API client signed in as ``user`` (authenticated directly: these tests are about holds, not tokens)."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def publishes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    published: list[int] = []
    monkeypatch.setattr("leaderboard.screening.services._publish_release", published.append)
    return published


@pytest.fixture
def sybils(db: Any) -> tuple[Any, Any]:
    return User.objects.create_user("sybil-1"), User.objects.create_user("sybil-2")


def _hold(
    make_competition: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], **options: Any,
) -> tuple[Any, Any, Any]:
    """A competition in hold mode whose second probe account (sybil-2) has one held submission; the cluster."""
    from leaderboard.screening.models import SuspectCluster
    from leaderboard.screening.services import screen_settings_update

    competition = make_competition(**{"daily_limit": None, **options})
    screen_settings_update(competition=competition, mode="hold")
    submit(competition, sybils[0], probe([0, 1, 2]))
    assert score_all() == ["scored"]  # one account alone is no cluster
    held = submit(competition, sybils[1], probe([3, 4, 5]))
    assert score_all() == ["held"]
    return competition, SuspectCluster.objects.get(competition=competition), held


def _release(competition: Any, publishes: list[int]) -> None:
    """What the published release task does in the worker, run here."""
    from leaderboard.screening.tasks import held_release

    assert publishes == [competition.pk]
    held_release.run(competition.pk)
    publishes.clear()


def test_a_held_submission_says_held_shows_no_score_and_is_no_final_until_the_host_dismisses_the_hold(
    make_competition: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from leaderboard.screening.services import HELD_MESSAGE, cluster_dismiss

    competition, cluster, held = _hold(make_competition, sybils, submit, score_all)
    api = api_client(sybils[1])
    body = api.get(f"/api/v1/submissions/{held.pk}/").json()
    assert (body["status"], body["review"], body["public_message"]) == ("scored", "held", HELD_MESSAGE)
    assert (body["public_score"], body["public_score_text"], body["private_score"], body["extra_scores"]) == (
        None, "", None, {})
    assert [row["review"] for row in api.get(f"/api/v1/competitions/{competition.slug}/submissions/").json()] == [
        "held"]

    refused = api.post(f"/api/v1/submissions/{held.pk}/select/", {"selected": True}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == (
        f"submission #{held.pk} is held for review by the host and cannot be selected as final; it can be once the "
        "host releases it and its score is released")
    page = Client()
    page.force_login(sybils[1])
    text = page.get(f"/c/{competition.slug}/submissions/").content.decode()
    assert 'data-review="held">held for review' in text and "Select as final" not in text
    # Posting the page's form anyway is refused with the same message, shown on the page.
    answer = page.post(f"/c/{competition.slug}/submissions/{held.pk}/final/", {"selected": "1"}, follow=True)
    assert "is held for review by the host and cannot be selected as final" in answer.content.decode()
    held.refresh_from_db()
    assert not held.selected_for_final

    with django_capture_on_commit_callbacks(execute=True):
        cluster_dismiss(cluster_id=cluster.pk, host=competition.host)
    assert api.get(f"/api/v1/submissions/{held.pk}/").json()["review"] == "releasing"
    assert api.post(f"/api/v1/submissions/{held.pk}/select/", {"selected": True}, format="json").status_code == 400
    _release(competition, publishes)
    body = api.get(f"/api/v1/submissions/{held.pk}/").json()
    assert body["review"] is None and body["public_score_text"] and body["public_message"] == ""
    chosen = api.post(f"/api/v1/submissions/{held.pk}/select/", {"selected": True}, format="json")
    assert chosen.status_code == 200 and chosen.json()["selected_for_final"] is True
    assert "Unselect" in page.get(f"/c/{competition.slug}/submissions/").content.decode()


def test_a_submission_the_host_withheld_is_never_selectable_and_shows_no_score_after_the_close(
    make_competition: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int],
) -> None:
    from leaderboard.screening.services import WITHHELD_MESSAGE, cluster_disqualify
    from leaderboard.submissions.services import submission_select_final

    competition, cluster, held = _hold(make_competition, sybils, submit, score_all)
    cluster_disqualify(cluster_id=cluster.pk, host=competition.host)
    api = api_client(sybils[1])
    body = api.get(f"/api/v1/submissions/{held.pk}/").json()
    assert (body["review"], body["public_message"], body["public_score"]) == ("withheld", WITHHELD_MESSAGE, None)
    refused = api.post(f"/api/v1/submissions/{held.pk}/select/", {"selected": True}, format="json")
    assert refused.status_code == 400 and "the host disqualified this account" in refused.json()["detail"]
    page = Client()
    page.force_login(sybils[1])
    text = page.get(f"/c/{competition.slug}/submissions/").content.decode()
    assert 'data-review="withheld"' in text and "Select as final" not in text
    assert publishes == []

    # After the close the private score is shown on released submissions; a withheld one has none to show.
    type(competition).objects.filter(pk=competition.pk).update(closes_at=timezone.now() - timedelta(seconds=1))
    body = api.get(f"/api/v1/submissions/{held.pk}/").json()
    assert (body["private_score"], body["private_score_text"], body["public_score_text"]) == (None, "", "")
    host_row = next(row for row in api_client(competition.host).get(
        f"/api/v1/host/competitions/{competition.slug}/submissions/").json() if row["id"] == held.pk)
    assert (host_row["raw_public"], host_row["raw_private"]) == (None, None)  # never scored against the labels
    held.refresh_from_db()
    with pytest.raises(Exception, match="after the competition closes"):
        submission_select_final(submission=held, participant=sybils[1], selected=True)


def test_a_held_submission_counts_once_against_the_quota_held_and_released(
    make_competition: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from leaderboard.errors import QuotaExceeded
    from leaderboard.screening.services import cluster_dismiss
    from leaderboard.submissions.selectors import quota_status

    competition, cluster, _ = _hold(make_competition, sybils, submit, score_all, daily_limit=2)
    assert quota_status(competition=competition, participant=sybils[1]).used_today == 1  # the held one counts
    submit(competition, sybils[1], probe([6, 7, 8]))
    assert score_all() == ["held"]
    assert quota_status(competition=competition, participant=sybils[1]).remaining_today == 0
    with pytest.raises(QuotaExceeded):
        submit(competition, sybils[1], honest(3))
    with django_capture_on_commit_callbacks(execute=True):
        cluster_dismiss(cluster_id=cluster.pk, host=competition.host)
    _release(competition, publishes)
    # Released, the same two rows are scored again: still two uploads, not four, and no slot handed back.
    status = quota_status(competition=competition, participant=sybils[1])
    assert (status.used_today, status.used_total, status.remaining_today) == (2, 2, 0)


@pytest.mark.parametrize(("fillers", "second_probe"), [(0, "held"), (2, "scored")])
def test_the_screen_sees_only_the_latest_accounts_so_enough_other_uploads_between_two_probes_hide_them(
    make_competition: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], monkeypatch: pytest.MonkeyPatch, fillers: int, second_probe: str,
    enqueued: list[int],
) -> None:
    """The documented cap (docs/sybil_screen.md, "The cap"): a screen reads the latest uploads of at most
    ``MAX_ACCOUNTS`` accounts, the submitting one included; here 3, so two other accounts' uploads between two
    probes put the first probe out of the second one's screen, and the second probe is released (the site's 200
    are measured by benchmarks/screen_cap.py)."""
    from leaderboard.screening.services import screen_settings_update

    monkeypatch.setattr("leaderboard.screening.services.MAX_ACCOUNTS", 3)
    competition = make_competition(daily_limit=None)
    screen_settings_update(competition=competition, mode="hold")
    submit(competition, sybils[0], probe([0, 1, 2]))
    assert score_all() == ["scored"]
    for n in range(fillers):  # other accounts' uploads (here the sample submission), not scored yet
        submit(competition, User.objects.create_user(f"filler-{n}"), np.full(N_ROWS, 0.5))
    enqueued.clear()
    submit(competition, sybils[1], probe([3, 4, 5]))
    assert score_all() == [second_probe]
