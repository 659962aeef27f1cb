"""A participant in a real browser: sign up by invitation, read the API token on the profile and regenerate it,
upload through the form, read the released score and choose it as a final; log in, watch my submissions go from
queued to scored by itself, find the score on the leaderboard, meet no upload form once the day's quota is spent;
reset a forgotten password through the mailed link; the API docs load from the site alone; error pages are
styled and lead back."""

from __future__ import annotations

import email
import os
import re
import signal
from pathlib import Path

import pytest
import requests
from playwright.sync_api import FilePayload, Page, expect

from tests.browser.conftest import (
    DECIMALS,
    INVITE_CODE,
    OTHER,
    PARTICIPANT,
    PARTICIPANT_PASSWORD,
    SLUG,
    TITLE,
    TRAIN_CSV,
    WIDTH,
    BrowserSite,
    screenshot,
    sign_up_over_http,
)

pytestmark = pytest.mark.e2e


def log_in(page: Page, username: str, password: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def api_status(site: BrowserSite, token: str) -> int:
    headers = {"Authorization": f"Token {token}"}
    return requests.get(f"{site.url}/api/v1/competitions/{SLUG}/quota/", headers=headers, timeout=5).status_code


def test_a_newcomer_signs_up_reads_the_token_uploads_and_chooses_a_final(page: Page, site: BrowserSite) -> None:
    newcomer, password = "carol", "carol-uses-a-long-passphrase"
    page.goto("/")
    page.get_by_role("link", name="Sign up").click()
    expect(page).to_have_url(f"{site.url}/accounts/signup/")
    page.get_by_label("Username").fill(newcomer)
    page.get_by_label("Email").fill(f"{newcomer}@example.org")
    page.get_by_label(re.compile(r"^Password:?$")).fill(password)
    page.get_by_label("Password confirmation").fill(password)
    page.get_by_label("Invite code").fill(INVITE_CODE)
    screenshot(site, page, "signup")
    page.get_by_role("button", name="Sign up").click()

    # The profile makes a token and shows it once; it works on the API; afterwards the profile shows only its
    # prefix, and regenerating it shows a new one once and retires the old one.
    expect(page).to_have_url(f"{site.url}/accounts/profile/")
    expect(page.get_by_text(f"Welcome, {newcomer}")).to_be_visible()
    expect(page.locator("#no-api-token")).to_be_visible()
    page.get_by_role("button", name="Make an API token").click()
    expect(page.get_by_text("shown this once")).to_be_visible()
    token = page.locator("#api-token").inner_text().strip()
    assert re.fullmatch(r"lbl_[A-Za-z0-9_-]{43}", token), token
    assert api_status(site, token) == 200
    screenshot(site, page, "profile-token-made")
    page.goto("/accounts/profile/")
    expect(page.locator("#api-token-prefix")).to_have_text(token[:12])
    expect(page.locator("#api-token")).to_have_count(0)
    assert token not in page.content()
    screenshot(site, page, "profile")
    page.get_by_role("button", name="Regenerate the token").click()
    expect(page.get_by_text("the old one no longer works")).to_be_visible()
    new_token = page.locator("#api-token").inner_text().strip()
    assert new_token != token and api_status(site, token) == 401 and api_status(site, new_token) == 200
    screenshot(site, page, "profile-new-token")

    # The competition page (its Markdown description rendered), then an upload through the form.
    page.get_by_role("navigation").get_by_role("link", name="Competitions").click()
    page.get_by_role("link", name=TITLE).click()
    expect(page.locator(".description h3")).to_have_text("The task")  # "##", one level under the page
    expect(page.locator(".description strong")).to_have_text("probability of label 1")
    screenshot(site, page, "competition-described")
    # The Data page lists the host's file; signed in, its link downloads it under its own name, byte for byte.
    page.get_by_role("link", name="Data (1 file)").click()
    expect(page.get_by_role("row", name=re.compile("train.csv"))).to_contain_text("Training rows with their label")
    with page.expect_download() as downloading:
        page.get_by_role("link", name="train.csv").click()
    assert downloading.value.suggested_filename == "train.csv"
    assert Path(downloading.value.path()).read_bytes() == TRAIN_CSV
    screenshot(site, page, "competition-data")
    page.get_by_role("link", name=TITLE).click()
    page.get_by_role("link", name="Submit", exact=True).click()
    upload = FilePayload(name="carol.csv", mimeType="text/csv", buffer=site.predictions_csv(3))
    page.get_by_label("Predictions (CSV)").set_input_files(files=upload)
    page.get_by_role("button", name="Upload").click()
    expect(page).to_have_url(f"{site.url}/c/{SLUG}/submissions/")
    row = page.locator("tbody tr").first
    expect(row.locator("td").nth(3)).to_have_text("scored", timeout=30_000)  # the page refreshes by itself
    released = row.locator("td.num").first.inner_text().strip()
    assert re.fullmatch(rf"\d+\.\d{{{DECIMALS}}}", released), released
    screenshot(site, page, "newcomer-scored")

    # Choose it as a final.
    row.get_by_role("button", name="Select as final").click()
    expect(page.get_by_text(re.compile(r"Submission #\d+ is selected as final"))).to_be_visible()
    expect(page.get_by_text("Finals selected: 1 of 2")).to_be_visible()
    expect(row.get_by_role("button", name="Unselect")).to_be_visible()
    screenshot(site, page, "newcomer-final")

    page.get_by_role("link", name="Public leaderboard").click()
    expect(page.get_by_role("row", name=re.compile(newcomer))).to_contain_text(released)
    screenshot(site, page, "newcomer-leaderboard")


def test_a_forgotten_password_is_reset_through_the_mailed_link(page: Page, site: BrowserSite) -> None:
    user, new_password = "dora", "dora-chose-a-new-passphrase"
    sign_up_over_http(site.url, user, "dora-forgot-this-passphrase")
    page.goto("/accounts/login/")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill(f"{user}@example.org")
    screenshot(site, page, "password-reset")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    screenshot(site, page, "password-reset-sent")

    # The default mail backend writes each message to a file under the site's var/mail/.
    messages = [email.message_from_bytes(path.read_bytes()) for path in sorted((site.var / "mail").glob("*.log"))]
    mine = [message for message in messages if message["To"] == f"{user}@example.org"]
    assert len(mine) == 1, [message["To"] for message in messages]
    link = re.search(r"https?://\S+/accounts/password/reset/\S+/", str(mine[0].get_payload()))
    assert link is not None, mine[0].get_payload()
    page.goto(link.group(0))
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    page.get_by_label(re.compile(r"^New password:?$")).fill(new_password)
    page.get_by_label("New password confirmation").fill(new_password)
    screenshot(site, page, "password-reset-choose")
    page.get_by_role("button", name="Set the password").click()
    expect(page.get_by_role("heading", name="Password set")).to_be_visible()
    page.get_by_role("link", name="Log in").last.click()
    log_in(page, user, new_password)
    expect(page.get_by_role("link", name=user, exact=True)).to_be_visible()


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
