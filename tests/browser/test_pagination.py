"""A long list in a real browser: the home page shows 25 competitions a page with Next/Previous links that walk
every listed competition once, in a stable order, and never a game's unlisted cell."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import TITLE, BrowserSite, screenshot

pytestmark = pytest.mark.e2e

MORE = 30  # beside the module's own competition: 31 listed, two pages of 25
CELL = "game-00112233445566778899"


@pytest.fixture(scope="module")
def many(site: BrowserSite) -> list[str]:
    """30 more listed competitions and an unlisted game cell, made by the site's own services in one process;
    every listed title."""
    script = "\n".join([
        "from leaderboard.competitions.services import competition_create",
        "labels = 'id,label\\n' + ''.join(f'r{i},{i % 2}\\n' for i in range(10))",
        f"for n in range({MORE}): competition_create(slug=f'class-{{n:02d}}', title=f'Class contest {{n:02d}}', "
        "labels_csv=labels)",
        f"competition_create(slug={CELL!r}, title='game quick: a cell', labels_csv=labels, listed=False)",
    ])
    site.stack.manage("shell", "-c", script)
    return [TITLE, *(f"Class contest {n:02d}" for n in range(MORE))]


def titles(page: Page) -> list[str]:
    return page.locator("main table tbody tr td:first-child a").all_inner_texts()


def test_the_home_page_walks_every_listed_competition_a_page_at_a_time(
    page: Page, site: BrowserSite, many: list[str],
) -> None:
    page.goto("/")
    first = titles(page)
    assert len(first) == 25
    expect(page.get_by_text("Page 1 of 2 (rows 1–25 of 31)")).to_be_visible()
    screenshot(site, page, "home_page_1")
    page.get_by_role("link", name="Next →").click()
    page.wait_for_url("**/?page=2")
    second = titles(page)
    expect(page.get_by_text("Page 2 of 2 (rows 26–31 of 31)")).to_be_visible()
    expect(page.get_by_role("link", name="Next →")).to_have_count(0)  # the last page links no further
    screenshot(site, page, "home_page_2")
    # Every listed competition once, none twice; the game's cell on neither page.
    assert len(second) == 6 and sorted(first + second) == sorted(many)
    assert "game quick: a cell" not in first + second
    page.get_by_role("link", name="← Previous").click()
    page.wait_for_url("**/?page=1")
    assert titles(page) == first  # the same page again: the order is stable
    # A page past the end, or not a number, shows a page rather than an error.
    assert page.goto("/?page=99") is not None and titles(page) == second
    assert page.goto("/?page=x") is not None and titles(page) == first
