"""A host audits the competition in a real browser: from the competition page to the leakage-audit page, the
"Start an audit" button, the progress while the worker runs it, then the verdict above two charts (label
accuracy against submissions on public and private rows, the quota a vertical line, the majority rate a
horizontal one) at 1280 px; a participant is refused the page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PARTICIPANT, PARTICIPANT_PASSWORD, SLUG, TITLE, WIDTH, BrowserSite, screenshot
from tests.browser.test_host import log_in_as_host, no_horizontal_scroll
from tests.browser.test_participant import log_in

pytestmark = pytest.mark.e2e


def test_the_host_audits_the_competition_and_reads_the_verdict(page: Page, site: BrowserSite) -> None:
    # A close date gives the participants a finite quota (one a day until then), which the charts mark.
    closes = (datetime.now(UTC) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    site.stack.manage("update_competition", SLUG, "--closes-at", closes)
    log_in_as_host(page)
    page.get_by_role("link", name=TITLE).click()
    page.get_by_role("link", name="Leakage audit").click()
    expect(page).to_have_url(f"{site.url}/c/{SLUG}/host/audit/")
    expect(page.get_by_text("No audit yet")).to_be_visible()
    page.get_by_label("Budget (submissions)").fill("120")
    page.get_by_role("button", name="Start an audit").click()
    expect(page.get_by_text("Audit queued")).to_be_visible()
    screenshot(site, page, "audit-started")
    verdict = page.locator("#verdict")
    expect(verdict).to_be_visible(timeout=90_000)  # the page refreshes itself until the worker is done
    expect(verdict).to_contain_text(re.compile(r"^Within your quota of 3[01] submissions"))
    charts = page.locator("figure.chart svg")
    expect(charts).to_have_count(2)
    screenshot(site, page, "audit-done")
    for index in range(2):
        chart = charts.nth(index)
        expect(chart.locator("line.quota")).to_have_count(1)
        expect(chart.locator("line.majority")).to_have_count(1)
        assert chart.locator("polyline").count() >= 2  # auto and at least one specific attack
        expect(chart.locator("circle").first).to_be_visible()
        box = chart.bounding_box()
        assert box is not None and box["width"] >= 400 and box["x"] + box["width"] <= WIDTH
    expect(page.get_by_role("cell", name="auto").first).to_be_visible()
    expect(page.locator("meta[http-equiv=refresh]")).to_have_count(0)
    assert no_horizontal_scroll(page)


def test_a_participant_is_refused_the_audit_page(page: Page, site: BrowserSite) -> None:
    page.goto("/accounts/login/")
    log_in(page, PARTICIPANT, PARTICIPANT_PASSWORD)
    expect(page.get_by_text(PARTICIPANT, exact=True)).to_be_visible()
    page.goto(f"/c/{SLUG}/")
    expect(page.get_by_role("link", name="Leakage audit")).to_have_count(0)
    answer = page.goto(f"/c/{SLUG}/host/audit/")
    assert answer is not None and answer.status == 403
    screenshot(site, page, "audit-refused")
