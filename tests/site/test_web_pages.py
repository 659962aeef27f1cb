"""Pages people read: styled error pages with navigation (500 without the database or the request), the favicon,
API docs served from the site, no upload form once the quota is spent (the reset time said once), my submissions
refreshing itself while scoring, and the host's raw-vs-released page with its chart of released − raw (host only).
The real browser runs these pages in ``tests/browser``."""

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
def test_a_row_shown_as_scoring_refreshes_the_page_though_it_was_scored_before_the_second_read(
    competition: Any, participant: Any, submit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker can finish between the read of the rows shown and the read that decides the refresh: the row
    then shows "scoring" and the page must still refresh, or it stays "scoring" for good."""
    from leaderboard.web import views

    submission = submit(competition, participant, probs(1))
    Submission.objects.filter(pk=submission.pk).update(status=Status.SCORING)
    real_page_of = views.page_of

    def page_then_the_worker_finishes(*args: Any, **kwargs: Any) -> Any:
        page = real_page_of(*args, **kwargs)
        if kwargs.get("param", "page") == "page":
            list(page)  # the rows shown are read now: scoring
            Submission.objects.filter(pk=submission.pk).update(status=Status.SCORED)
        return page

    monkeypatch.setattr(views, "page_of", page_then_the_worker_finishes)
    body = text(logged_in(participant).get(f"/c/{competition.slug}/submissions/"))
    assert "<td>scoring</td>" in body
    assert '<meta http-equiv="refresh" content="3">' in body


@pytest.mark.django_db
def test_the_private_board_before_the_close_reads_as_one_sentence(competition: Any) -> None:
    body = text(Client().get(f"/c/{competition.slug}/leaderboard/private/"))
    assert "The private leaderboard is shown after the competition closes" in body
    assert "The the" not in body


# --- the host's raw-vs-released page --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_host_page_charts_released_minus_raw_where_noise_of_a_thousandth_is_visible(
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
        assert svg.count("<circle") == 3 and "released = raw" in svg and "released − raw" in svg
        # The vertical ticks are on the scale of the noise (thousandths), not of the scores.
        labels = [float(label) for label in re.findall(r'text-anchor="end"[^>]*>([-0-9.e]+)</text>', svg)]
        assert labels and max(labels) - min(labels) < 0.05 and 0.0 in labels
    assert "alice" in body and "bob" in body and 'class="wide"' in body


@pytest.mark.django_db
def test_the_host_page_without_scores_has_no_chart(competition: Any, host: Any) -> None:
    body = text(logged_in(host).get(f"/c/{competition.slug}/host/"))
    assert "<svg" not in body and "No scored submission has a released score yet" in body
    assert "none: scores are released as computed" in body


@pytest.mark.django_db
def test_only_the_host_reaches_the_chart_and_its_figures(
    make_competition: Callable[..., Any], host: Any, participant: Any, submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
) -> None:
    competition = make_competition(slug="noisy", defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}])
    submission = submit(competition, participant, probs(7))
    assert score_all() == ["scored"]
    submission.refresh_from_db()
    raw = repr(submission.raw_public)
    assert raw in text(logged_in(host).get("/c/noisy/host/"))  # the chart's dot names it, for the host
    anonymous = Client().get("/c/noisy/host/")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    own = logged_in(participant)
    refused = own.get("/c/noisy/host/")
    assert refused.status_code == 403 and "<svg" not in text(refused) and raw not in text(refused)
    # Nor do the participant's own pages carry the raw score or the chart's difference.
    pages = ("/c/noisy/", "/c/noisy/submissions/", "/c/noisy/leaderboard/public/",
             f"/api/v1/submissions/{submission.pk}/")
    for url in pages:
        page = own.get(url)
        assert page.status_code == 200, url
        assert raw not in text(page) and "released − raw" not in text(page) and "<circle" not in text(page), url


def test_noise_of_a_thousandth_spreads_over_the_plot_on_scores_of_zero_to_twenty_five() -> None:
    rng = np.random.default_rng(12)
    raws = np.concatenate([rng.uniform(0.5, 0.7, 20), [25.0, 0.0]])  # honest scores, an attack's probe, a perfect one
    points = [charts.Point(k, "alice", float(raw), float(raw + rng.laplace(0, 1e-3))) for k, raw in enumerate(raws)]
    chart = charts.released_minus_raw(points, split="public")
    assert chart is not None and chart.count == len(points)
    assert chart.lo >= -0.05 and chart.hi <= 0.05 and chart.lo <= 0.0 <= chart.hi  # the differences' scale
    spread = max(p.y for p in chart.points) - min(p.y for p in chart.points)
    assert spread > chart.plot_height / 2
    assert all(chart.left <= p.x <= chart.plot_right and chart.top <= p.y <= chart.plot_bottom for p in chart.points)
    # Oldest first, left to right.
    assert [p.point.submission_id for p in sorted(chart.points, key=lambda p: p.x)] == list(range(len(points)))


def test_a_released_unchanged_score_sits_on_the_zero_line() -> None:
    points = [charts.Point(1, "alice", 0.70, 0.71), charts.Point(2, "bob", 0.60, 0.60)]
    chart = charts.released_minus_raw(points, split="public")
    assert chart is not None
    alice, bob = sorted(chart.points, key=lambda p: p.point.submission_id)
    assert bob.y == chart.zero_y and alice.y < chart.zero_y
    assert chart.unchanged == 1 and chart.largest == pytest.approx(0.01)
    assert charts.released_minus_raw([], split="public") is None
    same = charts.released_minus_raw([charts.Point(1, "alice", 0.5, 0.5)], split="public")
    assert same is not None and same.points[0].y == same.zero_y and same.largest == 0.0


def test_fifteen_participants_get_no_shared_colour_the_tail_grouped_as_others() -> None:
    points = [charts.Point(100 * k + j, f"p{k:02}", 0.5, 0.5 + 1e-4 * j) for k in range(15) for j in range(15 - k)]
    chart = charts.released_minus_raw(points, split="public")
    assert chart is not None
    colours = [entry.color for entry in chart.legend]
    assert len(colours) == len(set(colours)) == len(charts.PALETTE)
    names = [entry.participant for entry in chart.legend]
    # The most active participants are named; the eight with the fewest submissions share the grey series.
    assert names[:7] == [f"p{k:02}" for k in range(7)] and names[7] == "others (8 participants)"
    by_colour = {entry.color: entry.participant for entry in chart.legend}
    for placed in chart.points:
        member = placed.point.participant
        assert by_colour[placed.color] == (member if int(member[1:]) < 7 else "others (8 participants)")
    few = charts.released_minus_raw(points[: 15 + 14 + 13], split="public")  # three participants
    assert few is not None and len({entry.color for entry in few.legend}) == 3
    assert charts.OTHERS_COLOR not in {entry.color for entry in few.legend}


def test_the_chart_module_examples_hold() -> None:
    assert doctest.testmod(charts).failed == 0
