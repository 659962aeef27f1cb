"""The team journey in a real browser: alice creates a team on the "My team" page and invites carol; carol sees
the invitation and accepts it; carol uploads through the form and her score arrives; alice then finds the
team's one daily upload spent; the leaderboard shows one row under the team's name beside bob's."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests.browser.conftest import (
    HEIGHT,
    OTHER,
    PARTICIPANT,
    PARTICIPANT_PASSWORD,
    SLUG,
    WIDTH,
    BrowserSite,
    screenshot,
    sign_up_over_http,
)

pytestmark = pytest.mark.e2e

TEAMMATE, TEAMMATE_PASSWORD = "carol", "carol-password-1"
TEAM = "Night Owls"


def log_in(page: Page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


@pytest.fixture
def second_page(browser: Browser, site: BrowserSite) -> Iterator[Page]:
    """Another person's browser (its own cookies)."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, base_url=site.url)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    try:
        yield tab
    finally:
        context.close()


def test_create_invite_accept_submit_and_one_row_by_team(page: Page, second_page: Page, site: BrowserSite) -> None:
    sign_up_over_http(site.url, TEAMMATE, TEAMMATE_PASSWORD)

    # alice: the competition page links to "My team"; she creates the team and invites carol.
    log_in(page, PARTICIPANT, PARTICIPANT_PASSWORD)
    page.goto(f"/c/{SLUG}/")
    page.get_by_role("link", name="My team").click()
    expect(page).to_have_url(f"{site.url}/c/{SLUG}/team/")
    expect(page.get_by_text("You are not in a team")).to_be_visible()
    page.get_by_label("Team name").fill(TEAM)
    page.get_by_role("button", name="Create a team").click()
    expect(page.locator("#team-name")).to_have_text(TEAM)
    expect(page.locator("#members")).to_have_text(PARTICIPANT)
    page.get_by_label("Invite a user by username").fill(TEAMMATE)
    page.get_by_role("button", name="Invite").click()
    expect(page.locator("#pending")).to_contain_text(TEAMMATE)
    screenshot(site, page, "team-invited")

    # carol: sees the invitation on her team page and accepts it.
    log_in(second_page, TEAMMATE, TEAMMATE_PASSWORD)
    second_page.goto(f"/c/{SLUG}/team/")
    expect(second_page.locator("#my-invitations")).to_contain_text(TEAM)
    second_page.get_by_role("button", name="Accept").click()
    expect(second_page.get_by_text(f"You joined team '{TEAM}'.")).to_be_visible()
    expect(second_page.locator("#members li")).to_have_text([PARTICIPANT, TEAMMATE])
    screenshot(site, second_page, "team-joined")

    # carol uploads through the form; the score arrives by itself.
    second_page.goto(f"/c/{SLUG}/submit/")
    upload = FilePayload(name="carol.csv", mimeType="text/csv", buffer=site.predictions_csv(5))
    second_page.get_by_label("Predictions (CSV)").set_input_files(files=upload)
    second_page.get_by_role("button", name="Upload").click()
    expect(second_page).to_have_url(f"{site.url}/c/{SLUG}/submissions/")
    status = second_page.locator("tbody tr").first.locator("td").nth(3)
    expect(status).to_have_text("scored", timeout=30_000)
    released = second_page.locator("tbody tr").first.locator("td.num").first.inner_text().strip()

    # alice: the team's one upload of the day is spent.
    page.goto(f"/c/{SLUG}/submit/")
    expect(page.get_by_text("No submissions left")).to_be_visible()
    expect(page.locator("input[type=file]")).to_have_count(0)

    # The board: one row under the team's name (carol's score), bob's own row, no row for either member.
    page.goto(f"/c/{SLUG}/leaderboard/public/")
    expect(page.get_by_role("row", name=re.compile(TEAM))).to_contain_text(released)
    expect(page.get_by_role("row", name=re.compile(OTHER))).to_contain_text(site.other_score_text)
    body = page.locator("tbody").inner_text()
    assert PARTICIPANT not in body and TEAMMATE not in body, body
    screenshot(site, page, "leaderboard-by-team")

    # After the team's first submission, leaving is refused with a clear message.
    page.goto(f"/c/{SLUG}/team/")
    page.get_by_role("button", name="Leave the team").click()
    expect(page.get_by_text("you cannot leave the team after its first submission")).to_be_visible()
