"""Pages people read: styled error pages with navigation (500 without the database or the request), the favicon,
API docs served from the site, no upload form once the quota is spent (the reset time said once), my submissions
refreshing itself while scoring, and the host's raw-vs-released page with its chart. The real browser runs these
pages in ``tests/browser``."""

from __future__ import annotations

import doctest
import html
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.urls import path
from django.utils import timezone
from django.views.defaults import server_error

import leaderboard.urls
from leaderboard.submissions.models import Status, Submission
from leaderboard.web import charts
from tests.site.factories import N_ROWS

NAVIGATION = ('href="/"', 'href="/games/"', 'href="/api/docs/"')


def text(response: Any) -> str:
    return html.unescape(response.content.decode())


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def probs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, N_ROWS)


# --- error pages ----------------------------------------------------------------------------------------------


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a view")


# This module doubles as a URLconf for the 500 test: the site's routes plus one that fails.
urlpatterns = [path("boom/", boom), *leaderboard.urls.urlpatterns]


@pytest.mark.django_db
def test_an_unknown_address_is_a_styled_404_with_navigation(participant: Any) -> None:
    for client in (Client(), logged_in(participant)):
        response = client.get("/c/no-such-competition/")
        assert response.status_code == 404
        body = text(response)
        assert "There is no such page" in body and all(link in body for link in NAVIGATION)
        assert "web/site.css" in body and 'rel="icon"' in body


@pytest.mark.django_db
def test_a_forbidden_host_page_is_a_styled_403_that_names_no_raw_score(competition: Any, participant: Any) -> None:
    response = logged_in(participant).get(f"/c/{competition.slug}/host/")
    assert response.status_code == 403
    body = text(response)
    assert "This page is not for your account" in body and "logged in as <strong>alice</strong>" in body
    assert all(link in body for link in NAVIGATION) and "raw" not in body.lower()


def test_the_500_page_needs_neither_the_database_nor_the_request() -> None:
    # No django_db mark: any query raises. Django renders 500.html with no context at all.
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    body = response.content.decode()
    assert "Something went wrong on our side" in body and all(link in body for link in NAVIGATION)


def test_an_exception_in_a_view_shows_the_styled_500(settings: Any) -> None:
    settings.ROOT_URLCONF = __name__
    settings.DEBUG = False
    response = Client(raise_request_exception=False).get("/boom/")
    assert response.status_code == 500
    body = text(response)
    assert "Something went wrong on our side" in body and "a bug in a view" not in body


@pytest.mark.django_db
def test_a_stale_form_is_a_styled_csrf_403() -> None:
    response = Client(enforce_csrf_checks=True).post("/accounts/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    body = text(response)
    assert "The form could not be accepted" in body and 'href="/"' in body


def test_the_favicon_is_served_where_browsers_ask_for_it() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg") and "max-age" in response["Cache-Control"]


# --- API docs -------------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "asset"), [("/api/docs/", "swagger-ui-dist/swagger-ui-bundle.js"),
                                            ("/api/redoc/", "redoc/bundles/redoc.standalone.js")])
def test_the_api_docs_load_their_scripts_from_the_site(url: str, asset: str) -> None:
    response = Client().get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert f'src="/static/drf_spectacular_sidecar/{asset}"' in body
    external = re.findall(r'(?:src|href)="((?:https?:)?//[^"]+)"', body)
    assert external == [], external
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "img-src 'self' data:" in policy
    assert 'href="/"' in body  # the way back to the site


@pytest.mark.django_db
def test_the_docs_pages_are_not_in_the_schema() -> None:
    schema = Client().get("/api/schema/").content.decode()
    assert "/api/v1/competitions/" in schema and "/api/docs/" not in schema and "/api/redoc/" not in schema


# --- submitting -----------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_no_upload_form_once_the_daily_quota_is_spent_and_the_reset_time_once(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any]
) -> None:
    competition = make_competition(slug="one-a-day", daily_limit=1)
    client = logged_in(participant)
    before = text(client.get("/c/one-a-day/submit/"))
    assert 'type="file"' in before and before.count("resets at") == 1
    submit(competition, participant, probs(1))
    after = client.get("/c/one-a-day/submit/")
    assert after.status_code == 200
    body = text(after)
    tomorrow = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%d")
    assert 'type="file"' not in body and "No submissions left" in body
    assert body.count("resets at") == 1 and f"resets at {tomorrow} 00:00:00 UTC" in body
    assert "/c/one-a-day/submissions/" in body


@pytest.mark.django_db
def test_over_quota_says_the_reset_time_once_and_shows_no_form(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any]
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.site.factories import predictions_csv

    competition = make_competition(slug="tight", daily_limit=1)
    submit(competition, participant, probs(1))
    upload = SimpleUploadedFile("p.csv", predictions_csv(competition, probs(2)), content_type="text/csv")
    response = logged_in(participant).post("/c/tight/submit/", {"file": upload})
    assert response.status_code == 429
    body = text(response)
    assert "Over quota" in body and body.count("resets at") == 1 and 'type="file"' not in body


@pytest.mark.django_db
def test_a_spent_total_limit_shows_no_form_and_no_reset_time(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any]
) -> None:
    competition = make_competition(slug="two-ever", daily_limit=None, total_limit=1)
    submit(competition, participant, probs(1))
    body = text(logged_in(participant).get("/c/two-ever/submit/"))
    assert "used all 1 submissions of this competition" in body
    assert 'type="file"' not in body and "resets" not in body


@pytest.mark.django_db
def test_a_closed_competition_shows_no_upload_form(make_competition: Callable[..., Any], participant: Any) -> None:
    make_competition(slug="over", opens_at=timezone.now() - timedelta(days=2),
                     closes_at=timezone.now() - timedelta(days=1))
    body = text(logged_in(participant).get("/c/over/submit/"))
    assert "This competition closed at" in body and 'type="file"' not in body


# --- my submissions -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_my_submissions_refresh_themselves_only_while_one_is_queued_or_scoring(
    competition: Any, participant: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]]
) -> None:
    client = logged_in(participant)
    url = f"/c/{competition.slug}/submissions/"
    assert 'http-equiv="refresh"' not in text(client.get(url))  # nothing yet
    submission = submit(competition, participant, probs(1))
    queued = text(client.get(url))
    assert '<meta http-equiv="refresh" content="3">' in queued and "refreshes itself" in queued
    Submission.objects.filter(pk=submission.pk).update(status=Status.SCORING)
    assert 'http-equiv="refresh"' in text(client.get(url))
    Submission.objects.filter(pk=submission.pk).update(status=Status.QUEUED)
    assert score_all() == ["scored"]
    scored = text(client.get(url))
    assert 'http-equiv="refresh"' not in scored and "refreshes itself" not in scored


@pytest.mark.django_db
def test_the_private_board_before_the_close_reads_as_one_sentence(competition: Any) -> None:
    body = text(Client().get(f"/c/{competition.slug}/leaderboard/private/"))
    assert "The private leaderboard is shown after the competition closes" in body
    assert "The the" not in body


# --- the host's raw-vs-released page --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_host_page_states_the_released_precision_and_charts_released_against_raw(
    make_competition: Callable[..., Any], host: Any, participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Callable[[], list[str]],
) -> None:
    competition = make_competition(
        slug="noisy", score_decimals=4, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    )
    for seed, user in enumerate((participant, participant, other_participant)):
        submit(competition, user, probs(seed))
    assert score_all() == ["scored"] * 3
    body = text(logged_in(host).get("/c/noisy/host/"))
    assert "4 decimals" in body and "noise (kind laplace, scale 0.001" in body
    charts_shown = re.findall(r"<svg .*?</svg>", body, flags=re.S)
    assert len(charts_shown) == 2  # public and private
    for svg in charts_shown:
        assert svg.count("<circle") == 3 and "released = raw" in svg
    assert "alice" in body and "bob" in body and 'class="wide"' in body


@pytest.mark.django_db
def test_the_host_page_without_scores_has_no_chart(competition: Any, host: Any) -> None:
    body = text(logged_in(host).get(f"/c/{competition.slug}/host/"))
    assert "<svg" not in body and "No scored submission has a released score yet" in body
    assert "none: scores are released as computed" in body


def test_the_chart_puts_released_against_raw_on_equal_axes() -> None:
    points = [charts.Point(1, "alice", 0.70, 0.71), charts.Point(2, "bob", 0.60, 0.60)]
    chart = charts.released_vs_raw(points, split="public")
    assert chart is not None and chart.lo <= 0.6 and chart.hi >= 0.71
    exact = next(p for p in chart.points if p.point.participant == "bob")
    x1, y1, x2, y2 = chart.diagonal
    # bob's score was released unchanged: his dot lies on the diagonal.
    assert abs((exact.y - y1) * (x2 - x1) - (y2 - y1) * (exact.x - x1)) < 1.0
    assert {entry.participant for entry in chart.legend} == {"alice", "bob"}
    assert len({p.color for p in chart.points}) == 2
    assert all(chart.left <= p.x <= chart.plot_right and chart.top <= p.y <= chart.plot_bottom for p in chart.points)
    assert charts.released_vs_raw([], split="public") is None


def test_the_chart_module_examples_hold() -> None:
    assert doctest.testmod(charts).failed == 0
