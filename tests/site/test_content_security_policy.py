"""Every page answers with a Content-Security-Policy that allows scripts and styles from the site only, and no
template the site renders needs an inline script, style or event handler to work under it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

TEMPLATES = Path(__file__).resolve().parents[2] / "leaderboard"
# The API docs pages run the packages' inline scripts under their own, documented policy (leaderboard.web.api_docs).
OWN_POLICY = {"redoc.html", "swagger_ui.html", "_docs_bar.html"}
INLINE = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)|<style|\sstyle=|\son[a-z]+=", re.IGNORECASE)


def test_the_policy_allows_the_site_only() -> None:
    policy = dict(part.split(" ", 1) for part in settings.CONTENT_SECURITY_POLICY.split("; "))
    assert policy["default-src"] == "'self'" and "script-src" not in policy and "style-src" not in policy
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert "unsafe" not in settings.CONTENT_SECURITY_POLICY


@pytest.mark.django_db
def test_the_main_pages_send_it(competition: Any, participant: Any, host: Any) -> None:
    anonymous, signed_in, hosting = Client(), Client(), Client()
    signed_in.force_login(participant)
    hosting.force_login(host)
    slug = competition.slug
    pages = [
        (anonymous, "/"), (anonymous, f"/c/{slug}/"), (anonymous, f"/c/{slug}/leaderboard/public/"),
        (anonymous, "/accounts/login/"), (anonymous, "/accounts/signup/"), (anonymous, "/accounts/password/reset/"),
        (anonymous, "/games/"), (anonymous, "/c/no-such-competition/"), (signed_in, "/accounts/profile/"),
        (signed_in, f"/c/{slug}/submit/"), (signed_in, f"/c/{slug}/submissions/"), (hosting, f"/c/{slug}/host/"),
        (anonymous, f"/api/v1/competitions/{slug}/"),
    ]
    for client, url in pages:
        response = client.get(url)
        assert response.status_code in {200, 404}, url
        assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY, url


@pytest.mark.django_db
def test_a_view_with_its_own_policy_keeps_it() -> None:
    assert "'unsafe-inline'" in Client().get("/api/docs/")["Content-Security-Policy"]


def test_no_site_template_holds_an_inline_script_style_or_handler() -> None:
    offenders = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in TEMPLATES.rglob("*.html")
        if path.name not in OWN_POLICY
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if INLINE.search(line)
    ]
    assert offenders == []


def test_every_chart_colour_has_its_swatch_class() -> None:
    from leaderboard.web.charts import OTHERS_COLOR, PALETTE

    stylesheet = (TEMPLATES / "web" / "static" / "web" / "site.css").read_text()
    assert all(f".swatch-{colour[1:]} {{ background: {colour}; }}" in stylesheet for colour in (*PALETTE, OTHERS_COLOR))
