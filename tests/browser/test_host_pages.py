"""A host creates and then edits a competition on the site's own pages, in a real browser: the chain builder lists
the registry's parameters, an invalid parameter is named while the host types it, the preview shows what
participants will read, a refused setting keeps the uploaded labels file, and the edit page shows what is fixed
at creation without a field for it. The pages' script is a static file: the browser reports no
Content-Security-Policy violation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from tests.browser.conftest import BrowserSite, screenshot
from tests.browser.test_host import log_in_as_host, no_horizontal_scroll

pytestmark = pytest.mark.e2e

NEW_SLUG = "browser-made"


def labels_file() -> dict[str, object]:
    labels = np.random.default_rng(23).integers(0, 2, 50)
    text = "id,label\n" + "".join(f"row{i},{y}\n" for i, y in enumerate(labels))
    return {"name": "class-labels.csv", "mimeType": "text/csv", "buffer": text.encode()}


def test_the_host_creates_then_edits_a_competition_on_the_pages(page: Page, site: BrowserSite) -> None:
    problems: list[str] = []

    def record(message: ConsoleMessage) -> None:
        # A refused form answers 400 on purpose; a blocked script or style, or a script error, is a problem.
        if message.type == "error" and "Failed to load resource" not in message.text:
            problems.append(message.text)

    page.on("console", record)
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in_as_host(page)
    page.get_by_role("link", name="New competition").click()
    expect(page.get_by_role("heading", name="New competition")).to_be_visible()
    page.locator("#id_labels_file").set_input_files(labels_file())  # type: ignore[arg-type]
    page.get_by_label("Slug").fill("bad slug")
    page.get_by_label("Title").fill("Made in the browser")
    page.get_by_label("Metric").select_option("binary_logloss")
    page.get_by_label("Disclosed defenses").fill("Scores carry a little Laplace noise.")
    expect(page.locator('[data-errors-for="slug"]')).to_contain_text("slug")  # named while typing

    # The builder lists a defense's parameters from the registry; a bad value is named as it is typed.
    page.get_by_label("Add a defense").select_option("noise")
    step = page.locator("li.chain-step").first
    expect(step).to_contain_text("noise")
    expect(step.locator("#chain-0-scale")).to_be_visible()
    expect(step.locator("#chain-0-alpha")).to_have_count(0)  # multiplicative noise only
    step.locator("#chain-0-scale").fill("-1")
    chain_errors = page.locator('[data-errors-for="defenses"]')
    expect(chain_errors).to_contain_text("defense #1: defense 'noise': 'scale' must be a positive number, got -1")
    expect(step).to_have_class(re.compile("invalid"))
    screenshot(site, page, "invalid-chain-while-typing")
    step.locator("#chain-0-scale").fill("0.001")
    expect(chain_errors).to_be_empty()
    expect(step).not_to_have_class(re.compile("invalid"))

    page.get_by_label("Add a defense").select_option("rounding")
    page.locator("#chain-1-decimals").fill("3")
    expect(page.locator("#id_defenses")).to_have_value(
        '[{"name":"noise","scale":0.001},{"name":"rounding","decimals":3}]'
    )
    preview = page.locator("#disclosure-preview")
    expect(preview).to_contain_text("3 decimals")
    expect(preview).to_contain_text("Scores carry a little Laplace noise.")

    # Typing the JSON itself: broken JSON is named with its line and column.
    page.locator("#id_defenses").fill('[{"name": "rounding",}]')
    expect(chain_errors).to_contain_text("not valid JSON")
    page.locator("#id_defenses").fill('[{"name": "noise", "scale": 0.001}, {"name": "rounding", "decimals": 3}]')
    expect(page.locator("li.chain-step")).to_have_count(2)
    expect(chain_errors).to_be_empty()

    # Saving with the slug still wrong: refused, and the labels file is kept on the server.
    page.get_by_role("button", name="Create the competition").click()
    expect(page.locator("#labels-kept")).to_contain_text("class-labels.csv (50 rows, 2 classes)")
    expect(page.locator('[data-errors-for="slug"]')).not_to_be_empty()
    screenshot(site, page, "refused-labels-kept")
    page.get_by_label("Slug").fill(NEW_SLUG)
    expect(page.locator("#validation-status")).to_have_text("Every setting is valid.")
    page.get_by_role("button", name="Create the competition").click()

    expect(page).to_have_url(f"{site.url}/c/{NEW_SLUG}/")
    expect(page.get_by_role("heading", name="Made in the browser")).to_be_visible()
    expect(page.get_by_text("Scores carry a little Laplace noise.")).to_be_visible()
    expect(page.get_by_text("3 decimals")).to_be_visible()
    expect(page.get_by_text("binary (2 classes, 50 rows)")).to_be_visible()

    # Editing: what is fixed at creation is shown, not editable; the chain changes.
    page.get_by_role("link", name="Edit settings").click()
    expect(page.get_by_role("heading", name=re.compile("Edit"))).to_be_visible()
    expect(page.locator("dl.fixed-settings")).to_contain_text("Public fraction")
    expect(page.locator('[name="public_fraction"]')).to_have_count(0)
    expect(page.locator("li.chain-step")).to_have_count(2)
    page.locator("li.chain-step").nth(1).get_by_role("button", name="Remove").click()
    page.locator("#chain-0-scale").fill("0")
    expect(page.locator('[data-errors-for="defenses"]')).to_contain_text("'scale' must be a positive number")
    page.locator("#chain-0-scale").fill("0.01")
    expect(page.locator("#disclosure-preview")).to_contain_text("5 decimals")
    assert no_horizontal_scroll(page)
    screenshot(site, page, "edit-page")
    page.get_by_role("button", name="Save changes").click()
    expect(page).to_have_url(f"{site.url}/c/{NEW_SLUG}/")
    expect(page.get_by_text("5 decimals")).to_be_visible()
    assert not problems, problems
