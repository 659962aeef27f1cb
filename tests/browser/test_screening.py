"""The host's "Suspected multi-accounts" page in a real browser: the host turns the sybil screen to hold; two
accounts send complementary probes; the second one's submission is held (the participant sees "held for review"
and no score, and the page offers no "Select as final" for it); the page lists the cluster with its evidence and
held count; "Dismiss" releases the held submission through the normal release, and its owner can then select it."""

from __future__ import annotations

import time

import numpy as np
import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import HOST, HOST_PASSWORD, SLUG, BrowserSite, screenshot

pytestmark = pytest.mark.e2e

SYBILS = ("sybil-one", "sybil-two")
SYBIL_PASSWORD = "sybil-two-password-1"  # a throwaway account in a throwaway database


def log_in(page: Page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def _probe_csv(site: BrowserSite, rows: list[int]) -> bytes:
    values = np.full(len(site.ids), 0.5)
    for j, row in enumerate(rows):
        values[row] = 1.0 / (1.0 + np.exp(-(2.0**j)))
    return ("id,target\n" + "".join(f"{i},{v:.6f}\n" for i, v in zip(site.ids, values, strict=True))).encode()


def _submit(site: BrowserSite, token: str, data: bytes) -> int:
    answer = requests.post(f"{site.url}/api/v1/competitions/{SLUG}/submissions/",
                           headers={"Authorization": f"Token {token}"},
                           files={"file": ("probe.csv", data, "text/csv")}, timeout=10)
    assert answer.status_code == 202, answer.text
    return int(answer.json()["id"])


def _until(site: BrowserSite, token: str, submission_id: int, done: str) -> dict[str, object]:
    deadline = time.monotonic() + 30
    while True:
        body: dict[str, object] = requests.get(f"{site.url}/api/v1/submissions/{submission_id}/",
                                               headers={"Authorization": f"Token {token}"}, timeout=5).json()
        if body["status"] == "scored" and (body["public_score_text"] or done == "held"):
            return body
        assert time.monotonic() < deadline, (body, site.stack.logs())
        time.sleep(0.1)


def _owner_page(browser: Browser, site: BrowserSite) -> Page:
    """sybil-two's own browser (a password set with the site's shell: the host API makes token-only accounts)."""
    site.stack.manage("shell", "-c", (
        "from django.contrib.auth.models import User; u = User.objects.get(username='sybil-two'); "
        f"u.set_password('{SYBIL_PASSWORD}'); u.save()"))
    tab = browser.new_context(base_url=site.url).new_page()
    tab.set_default_timeout(15_000)
    log_in(tab, SYBILS[1], SYBIL_PASSWORD)
    return tab


def test_the_host_sees_a_flagged_cluster_and_dismiss_releases_its_held_submission(
    page: Page, site: BrowserSite, browser: Browser
) -> None:
    # The host turns the screen to hold on the page, reached from the competition page.
    log_in(page, HOST, HOST_PASSWORD)
    page.goto(f"/c/{SLUG}/")
    page.get_by_role("link", name="Suspected multi-accounts").click()
    expect(page.locator("#no-clusters")).to_contain_text("The screen is off")
    page.get_by_label("Mode").select_option("hold")
    page.get_by_role("button", name="Save the screen's settings").click()
    expect(page.get_by_text("The screen is now hold.")).to_be_visible()

    # Two accounts the host made send complementary probes; the second one's is held.
    host_token = requests.post(f"{site.url}/api/v1/auth/token/",
                               json={"username": HOST, "password": HOST_PASSWORD}, timeout=10).json()["token"]
    tokens = [
        requests.post(f"{site.url}/api/v1/host/participants/", json={"username": name},
                      headers={"Authorization": f"Token {host_token}"}, timeout=10).json()["token"]
        for name in SYBILS
    ]
    first = _submit(site, tokens[0], _probe_csv(site, [0, 1, 2]))
    assert _until(site, tokens[0], first, "released")["public_score_text"]
    second = _submit(site, tokens[1], _probe_csv(site, [3, 4, 5]))
    held = _until(site, tokens[1], second, "held")
    assert held["public_score"] is None and held["public_score_text"] == ""
    assert str(held["public_message"]).startswith("held for review")

    # Its owner's page says held for review, shows no score and offers no final selection.
    owner = _owner_page(browser, site)
    owner.goto(f"/c/{SLUG}/submissions/")
    row = owner.locator("tr", has_text=f"#{second}")
    expect(row.locator(".review")).to_have_text("held for review")
    expect(row).to_contain_text("selectable once the host releases it")
    expect(row.get_by_role("button", name="Select as final")).to_have_count(0)
    screenshot(site, owner, "screen-held-owner")

    # The page lists the cluster, its evidence and the held submission; dismiss releases it.
    page.reload()
    cluster = page.locator("section.cluster").first
    expect(cluster.locator("h2")).to_contain_text(f"{SYBILS[0]}, {SYBILS[1]}")
    expect(cluster.locator(".held-count")).to_have_text("1 held")
    expect(cluster.locator(".evidence")).to_contain_text("complementary")
    screenshot(site, page, "screen-cluster-held")
    cluster.get_by_role("button", name="Dismiss (release held)").click()
    expect(page.get_by_text("1 held submission(s) released in upload order")).to_be_visible()
    expect(page.locator("section.cluster").first.locator("h2")).to_contain_text("dismissed")
    released = _until(site, tokens[1], second, "released")
    assert released["public_score_text"] and not released["public_message"]

    # Released, it shows its score and may be selected as final.
    owner.goto(f"/c/{SLUG}/submissions/")
    row = owner.locator("tr", has_text=f"#{second}")
    expect(row.locator(".review")).to_have_count(0)
    expect(row).to_contain_text(str(released["public_score_text"]))
    row.get_by_role("button", name="Select as final").click()
    expect(owner.get_by_text(f"Submission #{second} is selected as final.")).to_be_visible()
    owner.context.close()
    screenshot(site, page, "screen-cluster-dismissed")
