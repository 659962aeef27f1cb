"""The site on a phone: at 390 px wide (an iPhone 12-15 in portrait) no page scrolls sideways. The main pages —
home, a competition, its board, the upload form, my submissions (with a scored and a failed upload), the host's
raw-vs-released page and the leakage audit — are loaded in Chromium at that width and each must fit:
``document.documentElement.scrollWidth <= 390``. Wide tables scroll inside their own box instead of the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests.browser.conftest import (
    HOST,
    HOST_PASSWORD,
    PARTICIPANT,
    PARTICIPANT_PASSWORD,
    SLUG,
    BrowserSite,
    screenshot,
)

pytestmark = pytest.mark.e2e

PHONE_WIDTH, PHONE_HEIGHT = 390, 844
PARTICIPANT_PAGES = {
    "home": "/",
    "competition": f"/c/{SLUG}/",
    "board": f"/c/{SLUG}/leaderboard/public/",
    "submit": f"/c/{SLUG}/submit/",
    "my-submissions": f"/c/{SLUG}/submissions/",
}
HOST_PAGES = {
    "host-raw-vs-released": f"/c/{SLUG}/host/",
    "host-audit": f"/c/{SLUG}/host/audit/",
}


@pytest.fixture
def phone(browser: Browser, site: BrowserSite) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": PHONE_WIDTH, "height": PHONE_HEIGHT}, base_url=site.url,
                                  is_mobile=True, has_touch=True, device_scale_factor=2)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    try:
        yield tab
    finally:
        context.close()


def log_in(page: Page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text(username, exact=True)).to_be_visible()


def page_width(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_the_participants_pages_fit_a_390_px_phone(phone: Page, site: BrowserSite) -> None:
    log_in(phone, PARTICIPANT, PARTICIPANT_PASSWORD)
    # A semicolon-separated file first (refused, naming line 1 and the delimiter), then a good one: my submissions
    # then holds a row, and the form's error is seen at phone width too.
    phone.goto(PARTICIPANT_PAGES["submit"])
    semicolons = site.predictions_csv(5).replace(b",", b";")
    phone.get_by_label("Predictions (CSV)").set_input_files(
        files=FilePayload(name="semicolons.csv", mimeType="text/csv", buffer=semicolons))
    phone.get_by_role("button", name="Upload").click()
    expect(phone.get_by_text("line 1: the header has 1 columns")).to_be_visible()
    expect(phone.get_by_text("separated by ';' (semicolon)")).to_be_visible()
    assert page_width(phone) <= PHONE_WIDTH, "the upload error scrolls sideways"
    phone.get_by_label("Predictions (CSV)").set_input_files(
        files=FilePayload(name="good.csv", mimeType="text/csv", buffer=site.predictions_csv(6)))
    phone.get_by_role("button", name="Upload").click()
    wide = {}
    for name, url in PARTICIPANT_PAGES.items():
        phone.goto(url)
        screenshot(site, phone, f"phone-{name}")
        wide[name] = page_width(phone)
    assert {name: width for name, width in wide.items() if width > PHONE_WIDTH} == {}


def test_the_host_pages_fit_a_390_px_phone(phone: Page, site: BrowserSite) -> None:
    log_in(phone, HOST, HOST_PASSWORD)
    # A finished audit, so its page holds the verdict, the tables and the charts.
    phone.goto(HOST_PAGES["host-audit"])
    phone.get_by_label("Budget (submissions)").fill("40")
    phone.get_by_label("Attacker's accounts (counts, comma-separated)").fill("1, 2")
    phone.get_by_role("button", name="Start an audit").click()
    expect(phone.locator("#verdict")).to_be_visible(timeout=90_000)  # the page refreshes itself until done
    wide = {}
    for name, url in {**PARTICIPANT_PAGES, **HOST_PAGES}.items():
        if name in ("submit", "my-submissions"):
            continue
        phone.goto(url)
        screenshot(site, phone, f"phone-{name}-as-host")
        wide[name] = page_width(phone)
    assert {name: width for name, width in wide.items() if width > PHONE_WIDTH} == {}
