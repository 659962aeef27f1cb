"""The host's "Suspected multi-accounts" page in a real browser: the host turns the sybil screen to hold; two
accounts send complementary probes; the second one's submission is held (the participant sees "held for review"
and no score); the page lists the cluster with its evidence and held count; "Dismiss" releases the held
submission through the normal release."""

from __future__ import annotations

import time

import numpy as np
import pytest
import requests
from playwright.sync_api import Page, expect

from tests.browser.conftest import HOST, HOST_PASSWORD, SLUG, BrowserSite, screenshot

pytestmark = pytest.mark.e2e

SYBILS = ("sybil-one", "sybil-two")


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


def test_the_host_sees_a_flagged_cluster_and_dismiss_releases_its_held_submission(
    page: Page, site: BrowserSite
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
    screenshot(site, page, "screen-cluster-dismissed")
