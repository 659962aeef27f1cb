"""A host in a real browser: the raw-vs-released page reads at 1280 px (released precision, a chart of released
against raw), the chain changes in the admin, a game report reads answer first, with one scrollbar, and draws its
privacy–utility frontier readably, and the leakage audit starts from its page, shows its progress while the worker
runs it, then its verdict above two charts (label accuracy against submissions on public and private rows, the
quota a vertical line, the majority rate a horizontal one); a participant is refused that page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    DECIMALS,
    HOST,
    HOST_PASSWORD,
    OTHER,
    PARTICIPANT,
    PARTICIPANT_PASSWORD,
    SLUG,
    TITLE,
    WIDTH,
    BrowserSite,
    play_tiny_game,
    screenshot,
)
from tests.browser.test_participant import log_in

pytestmark = pytest.mark.e2e


def log_in_as_host(page: Page) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(HOST)
    page.get_by_label("Password").fill(HOST_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text(HOST, exact=True)).to_be_visible()


def no_horizontal_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"))


def test_the_host_reads_raw_against_released_at_1280_px(page: Page, site: BrowserSite) -> None:
    log_in_as_host(page)
    page.get_by_role("link", name=TITLE).click()
    page.get_by_role("link", name="Raw vs released scores").click()
    expect(page).to_have_url(f"{site.url}/c/{SLUG}/host/")
    expect(page.get_by_role("heading", name=re.compile("Raw vs released"))).to_be_visible()
    expect(page.get_by_text(f"{DECIMALS} decimals")).to_be_visible()
    expect(page.locator("ol.chain li").first).to_be_visible()
    chart = page.locator("figure.chart svg").first
    expect(chart).to_be_visible()
    expect(chart.locator("circle")).to_have_count(1)  # bob's one scored submission
    box = chart.bounding_box()
    assert box is not None and box["width"] >= 400 and box["x"] + box["width"] <= WIDTH
    row = page.get_by_role("row", name=re.compile(rf"#\d+ {OTHER}"))
    expect(row).to_contain_text(site.other_score_text)
    assert no_horizontal_scroll(page)
    screenshot(site, page, "raw-vs-released")


def test_the_host_changes_the_chain_in_the_admin(page: Page, site: BrowserSite) -> None:
    log_in_as_host(page)
    page.goto(f"/c/{SLUG}/")
    page.get_by_role("link", name="Edit in the admin").click()
    chain = page.locator("#id_defenses")
    expect(chain).to_be_visible()
    screenshot(site, page, "admin-competition")
    chain.fill('[{"name": "ladder", "mode": "parameter_free"}]')
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist .success")).to_be_visible()
    page.goto(f"/c/{SLUG}/host/")
    expect(page.locator("ol.chain li")).to_have_count(1)
    expect(page.locator("ol.chain")).to_contain_text("ladder (mode parameter_free)")
    screenshot(site, page, "raw-vs-released-new-chain")


def test_a_game_report_reads_answer_first_with_one_scrollbar(page: Page, site: BrowserSite) -> None:
    game = play_tiny_game(site)
    page.goto("/")
    page.get_by_role("navigation").get_by_role("link", name="Games").click()
    page.get_by_role("link", name=game, exact=True).click()
    expect(page).to_have_url(f"{site.url}/games/{game}/")
    report = page.frame_locator("iframe.report")
    answer = report.get_by_role("heading", name="The answer")
    expect(answer).to_be_visible()
    expect(report.locator("tr.recommended")).to_have_count(1)
    expect(report.get_by_role("columnheader", name="Labels right").first).to_be_visible()
    # The page itself does not scroll (only the report inside it does), in either direction.
    assert page.evaluate("document.documentElement.scrollHeight <= document.documentElement.clientHeight")
    assert no_horizontal_scroll(page)
    frame_box = page.locator("iframe.report").bounding_box()
    answer_box = answer.bounding_box()
    assert frame_box is not None and answer_box is not None
    assert frame_box["height"] >= 500 and answer_box["y"] + answer_box["height"] <= frame_box["y"] + frame_box["height"]
    screenshot(site, page, "game", full_page=False)

    page.goto("/games/tiny/files/report.html")
    expect(page.get_by_role("heading", name="The answer")).to_be_visible()
    assert no_horizontal_scroll(page)
    screenshot(site, page, "game-report")


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


def test_a_game_report_draws_its_frontier_chart_readably_at_1280_px(page: Page, site: BrowserSite) -> None:
    game = play_tiny_game(site)
    page.goto(f"/games/{game}/files/report.html")
    chart = page.locator(".chart svg.frontier")
    chart.scroll_into_view_if_needed()
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box is not None and 900 <= box["width"] <= WIDTH and box["height"] >= 350  # not shrunk to a thumbnail
    assert no_horizontal_scroll(page)
    # Two chains × two budgets, the frontier of each budget, the recommended chain ringed and named.
    expect(chart.locator("circle.on-frontier, circle.dominated")).to_have_count(4)
    expect(chart.locator("polyline.frontier-line")).to_have_count(2)
    expect(chart.locator("circle.recommended")).to_have_count(1)
    expect(chart.get_by_text("budget 1,000 submissions")).to_be_visible()
    # Text is drawn at a readable size once the chart is scaled to the page.
    font = page.evaluate(
        "() => { const t = document.querySelector('.chart svg.frontier g.legend text');"
        " return t.getBoundingClientRect().height; }"
    )
    assert font >= 11
    shot = site.shots / "game-frontier.png"
    chart.screenshot(path=str(shot))
    site.taken.append(shot)
    expect(page.get_by_role("heading", name="What each defense does not protect")).to_be_visible()
    screenshot(site, page, "game-report-frontier")
