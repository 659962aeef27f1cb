"""A participant in a real browser: find the competition, log in, upload a file through the form, watch my
submissions go from queued to scored by itself, find the score on the leaderboard, meet no upload form once the
day's quota is spent; the API docs load from the site alone; error pages are styled and lead back."""

from __future__ import annotations

import os
import re
import signal

import pytest
from playwright.sync_api import FilePayload, Page, expect

from tests.browser.conftest import (
    DECIMALS,
    OTHER,
    PARTICIPANT,
    PARTICIPANT_PASSWORD,
    SLUG,
    TITLE,
    WIDTH,
    BrowserSite,
    screenshot,
)

pytestmark = pytest.mark.e2e


def log_in(page: Page, username: str, password: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_a_participant_uploads_through_the_form_and_the_score_arrives_by_itself(page: Page, site: BrowserSite) -> None:
    page.goto("/")
    screenshot(site, page, "competitions")
    page.get_by_role("link", name=TITLE).click()
    expect(page).to_have_url(f"{site.url}/c/{SLUG}/")
    expect(page.get_by_role("heading", name=TITLE)).to_be_visible()
    expect(page.get_by_text(f"{DECIMALS} decimals")).to_be_visible()
    screenshot(site, page, "competition")

    page.get_by_role("link", name="Log in to submit").click()
    log_in(page, PARTICIPANT, PARTICIPANT_PASSWORD)
    expect(page).to_have_url(f"{site.url}/c/{SLUG}/")
    page.get_by_role("link", name="Submit", exact=True).click()
    expect(page.get_by_text("the daily counter resets at")).to_have_count(1)
    upload = FilePayload(name="alice.csv", mimeType="text/csv", buffer=site.predictions_csv(1))
    page.get_by_label("Predictions (CSV)").set_input_files(files=upload)
    screenshot(site, page, "submit-form")

    # Hold the worker so the page is seen queued; it then refreshes itself until the score is there.
    worker = site.stack.worker.pid
    os.kill(worker, signal.SIGSTOP)
    try:
        page.get_by_role("button", name="Upload").click()
        expect(page).to_have_url(f"{site.url}/c/{SLUG}/submissions/")
        row = page.locator("tbody tr").first
        status = row.locator("td").nth(3)
        expect(row).to_contain_text("alice.csv")
        expect(status).to_have_text("queued")
        expect(page.locator('meta[http-equiv="refresh"]')).to_have_count(1)
        expect(page.locator("#refreshing")).to_be_visible()
        screenshot(site, page, "my-submissions-queued")
    finally:
        os.kill(worker, signal.SIGCONT)
    expect(status).to_have_text("scored", timeout=30_000)  # no reload by the test
    expect(page.locator('meta[http-equiv="refresh"]')).to_have_count(0)  # every submission final: no more refresh
    expect(page.locator("#refreshing")).to_have_count(0)
    released = row.locator("td.num").first.inner_text().strip()
    assert re.fullmatch(rf"\d+\.\d{{{DECIMALS}}}", released), released  # the released precision, no more
    screenshot(site, page, "my-submissions-scored")

    page.get_by_role("link", name="Public leaderboard").click()
    expect(page.get_by_role("heading", name=re.compile("Public leaderboard"))).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(PARTICIPANT))).to_contain_text(released)
    expect(page.get_by_role("row", name=re.compile(OTHER))).to_contain_text(site.other_score_text)
    screenshot(site, page, "leaderboard")

    # The day's only upload is spent: no form, and the reset time said once.
    page.goto(f"/c/{SLUG}/submit/")
    expect(page.get_by_text("No submissions left")).to_be_visible()
    expect(page.locator("input[type=file]")).to_have_count(0)
    assert page.locator("main").inner_text().count("resets at") == 1
    screenshot(site, page, "submit-none-left")


def test_the_api_docs_load_everything_from_the_site(page: Page, site: BrowserSite, foreign_requests: list[str]) -> None:
    requested: list[str] = []
    blocked: dict[str, str | None] = {}
    page.on("request", lambda request: requested.append(request.url))
    page.on("requestfailed", lambda request: blocked.update({request.url: request.failure}))
    page.goto("/")
    page.get_by_role("link", name="API", exact=True).click()
    expect(page).to_have_url(f"{site.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Leaderboard Lab API")
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/competitions/").first).to_be_visible()
    screenshot(site, page, "api-swagger", full_page=False)

    page.goto("/api/redoc/")
    expect(page.get_by_role("heading", name=re.compile("Leaderboard Lab API"))).to_be_visible()
    expect(page.get_by_text("/api/v1/competitions/").first).to_be_attached()
    screenshot(site, page, "api-redoc", full_page=False)

    assert any("/static/drf_spectacular_sidecar/swagger-ui-dist/" in url for url in requested), requested
    assert any("/static/drf_spectacular_sidecar/redoc/" in url for url in requested), requested
    # Nothing reached another site: what the scripts try on their own (ReDoc's Redocly logo) the page's
    # Content-Security-Policy stops inside the browser.
    assert foreign_requests == [], f"the docs pages fetched {foreign_requests}"
    elsewhere = {url for url in requested if not url.startswith((site.url, "data:", "blob:"))}
    assert all(blocked.get(url) == "csp" for url in elsewhere), (elsewhere, blocked)


def test_error_pages_are_styled_and_lead_back(page: Page, site: BrowserSite) -> None:
    missing = page.goto("/c/no-such-competition/")
    assert missing is not None and missing.status == 404
    expect(page.get_by_role("heading", name="There is no such page")).to_be_visible()
    expect(page.get_by_role("navigation").get_by_role("link", name="Competitions")).to_be_visible()
    screenshot(site, page, "error-404")
    page.get_by_role("link", name="All competitions").click()
    expect(page).to_have_url(f"{site.url}/")

    page.goto(f"/accounts/login/?next=/c/{SLUG}/host/")
    log_in(page, PARTICIPANT, PARTICIPANT_PASSWORD)
    expect(page.get_by_role("heading", name="This page is not for your account")).to_be_visible()
    expect(page.get_by_text(f"You are logged in as {PARTICIPANT}")).to_be_visible()
    screenshot(site, page, "error-403")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH

    icon = page.request.get("/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
