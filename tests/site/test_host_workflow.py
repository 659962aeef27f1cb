"""The host changes a competition after creation (``update_competition`` and ``PATCH host/competitions/{slug}/``,
validated exactly as creation validates), writes its description in Markdown (rendered safely on the page), and
is told which metric to use when multiclass labels meet a binary-only one."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.competitions.services import competition_create, competition_update
from leaderboard.errors import CompetitionConfigError
from leaderboard.web.description import render_markdown
from tests.site.factories import labels_csv

pytestmark = pytest.mark.django_db


def update(slug: str, *args: str) -> str:
    out = io.StringIO()
    call_command("update_competition", slug, *args, stdout=out)
    return out.getvalue()


# --- update_competition -----------------------------------------------------------------------------------


def test_only_the_options_given_change(competition: Any) -> None:
    before = Competition.objects.get(pk=competition.pk)
    out = update(
        competition.slug,
        "--daily-limit",
        "2",
        "--total-limit",
        "20",
        "--decimals",
        "4",
        "--title",
        "New title",
        "--closes-at",
        "2099-01-31T23:59:00Z",
        "--disclose",
        "Scores are rounded.",
    )
    after = Competition.objects.get(pk=competition.pk)
    assert (after.daily_limit, after.total_limit, after.score_decimals, after.title) == (2, 20, 4, "New title")
    assert after.closes_at is not None and after.closes_at.isoformat() == "2099-01-31T23:59:00+00:00"
    assert after.disclosed_defenses == "Scores are rounded."
    for unchanged in ("metric", "eps", "public_fraction", "defenses", "description", "opens_at", "arithmetic"):
        assert getattr(after, unchanged) == getattr(before, unchanged), unchanged
    assert "daily_limit: 5 -> 2" in out and "score_decimals: 5 -> 4" in out and "title: 'breast-cancer' -> " in out
    assert after.updated_at > before.updated_at


def test_none_and_never_lift_limits_and_the_closing(make_competition: Callable[..., Any]) -> None:
    competition = make_competition(slug="limits", total_limit=9, closes_at=timezone.now() + timedelta(days=3))
    update("limits", "--daily-limit", "none", "--total-limit", "none", "--decimals", "full", "--closes-at", "never")
    after = Competition.objects.get(pk=competition.pk)
    assert (after.daily_limit, after.total_limit, after.score_decimals, after.closes_at) == (None, None, None, None)


def test_a_new_chain_is_scored_from_the_next_submission_on(competition: Any) -> None:
    assert competition_scoring_spec(competition=competition).chain.to_json() == []
    update(competition.slug, "--defenses", '[{"name": "noise", "kind": "laplace", "scale": 1e-4}]')
    refreshed = Competition.objects.get(pk=competition.pk)
    chain = competition_scoring_spec(competition=refreshed).chain.to_json()
    assert [stage["name"] for stage in chain] == ["noise"] and chain[0]["scale"] == 1e-4


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--defenses", '[{"name": "nonexistent"}]'], "unknown defense 'nonexistent'"),
        (["--defenses", '[{"name": "rounding", "decimals": 99}]'], "decimals"),
        (["--defenses", "[{"], "--defenses is not valid JSON"),
        (["--decimals", "18"], "score_decimals: at most 17 decimals"),
        (["--daily-limit", "-1"], "daily_limit"),
        (["--closes-at", "2000-01-01T00:00:00Z"], "closes_at: must be after the opening time"),
        (["--closes-at", "next tuesday"], "--closes-at: 'next tuesday' is not an ISO 8601 date-time"),
        (["--also-report", "binary_logloss"], "already the primary metric"),
        (["--also-report", "nope"], "unknown metric 'nope'"),
    ],
)
def test_a_refused_setting_names_the_problem_and_saves_nothing(
    competition: Any, args: list[str], fragment: str
) -> None:
    before = Competition.objects.get(pk=competition.pk)
    with pytest.raises(CommandError) as info:
        update(competition.slug, "--daily-limit", "1", *args)  # a valid change beside it is not saved either
    assert fragment in str(info.value)
    after = Competition.objects.get(pk=competition.pk)
    assert (after.daily_limit, after.defenses, after.updated_at) == (
        before.daily_limit,
        before.defenses,
        before.updated_at,
    )


def test_a_chain_the_metric_cannot_serve_is_refused(make_competition: Callable[..., Any]) -> None:
    make_competition(slug="auc-comp", metric="auc")
    with pytest.raises(CommandError, match="auc"):
        update("auc-comp", "--defenses", '[{"name": "ladder", "mode": "parameter_free"}]')


@pytest.mark.parametrize(
    "settings_",
    [
        {"defenses": [{"name": "nonexistent"}]},
        {"defenses": [{"name": "rounding", "decimals": 99}]},
        {"defenses": [{"name": "noise", "kind": "laplace"}]},
        {"score_decimals": 18},
        {"closes_at": timezone.now() - timedelta(days=400)},
        {"also_report": ["nope"]},
    ],
)
def test_update_refuses_exactly_what_creation_refuses(
    hidden_labels: np.ndarray, competition: Any, settings_: dict[str, Any]
) -> None:
    with pytest.raises(CompetitionConfigError) as at_creation:
        competition_create(
            slug="twin", labels_csv=labels_csv(hidden_labels), opens_at=competition.opens_at, **settings_
        )
    with pytest.raises(CompetitionConfigError) as at_update:
        competition_update(competition=competition, **settings_)
    assert at_update.value.message == at_creation.value.message


def test_unknown_competitions_and_empty_updates_are_clear_errors(competition: Any) -> None:
    with pytest.raises(CommandError, match="no competition 'nope'"):
        update("nope", "--daily-limit", "1")
    with pytest.raises(CommandError, match="nothing to change"):
        update(competition.slug)


def test_the_description_comes_from_text_or_a_file(competition: Any, tmp_path: Path) -> None:
    update(competition.slug, "--description", "# Task\nPredict **well**.")
    assert Competition.objects.get(pk=competition.pk).description == "# Task\nPredict **well**."
    path = tmp_path / "description.md"
    path.write_text("From a *file*.", encoding="utf-8")
    update(competition.slug, "--description-file", str(path))
    assert Competition.objects.get(pk=competition.pk).description == "From a *file*."
    with pytest.raises(CommandError, match="not both"):
        update(competition.slug, "--description", "x", "--description-file", str(path))


# --- create_competition: description and the multiclass hint ------------------------------------------------


def test_create_competition_takes_a_markdown_description(tmp_path: Path, hidden_labels: np.ndarray) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_bytes(labels_csv(hidden_labels))
    call_command(
        "create_competition", "described", "--labels", str(labels), "--description", "**Hello**", stdout=io.StringIO()
    )
    page = Client().get("/c/described/").content.decode()
    assert "<strong>Hello</strong>" in page


def test_multiclass_labels_with_a_binary_metric_name_the_metric_to_use(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_bytes(labels_csv([0, 1, 2, 1, 0, 2]))
    with pytest.raises(CommandError) as info:
        call_command("create_competition", "three", "--labels", str(labels), stdout=io.StringIO())
    assert "the labels have 3 classes but binary_logloss is binary-only; use multiclass_logloss" in str(info.value)
    with pytest.raises(CommandError, match="auc is binary-only; use accuracy"):
        call_command("create_competition", "three", "--labels", str(labels), "--metric", "auc", stdout=io.StringIO())


# --- Markdown, safely -----------------------------------------------------------------------------------------


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<a href="javascript:alert(1)">raw link</a>',
    "<iframe src='https://evil.example'></iframe>",
    '<div style="position:fixed">overlay</div>',
    "![pixel](https://tracker.example/pixel.png)",
    "[x](https://ok.example){: onclick=alert(1)}",
    "<https://ok.example/auto>",
]


class _Elements(HTMLParser):
    """Every element and attribute of a piece of HTML (text, escaped or not, is not an element)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


@pytest.mark.parametrize("text", HOSTILE)
def test_a_description_can_hold_no_script_no_raw_html_and_no_script_link(text: str) -> None:
    parser = _Elements()
    parser.feed(str(render_markdown(text)))
    for tag, attrs in parser.found:
        assert tag in {"p", "a", "code"}, (text, tag)
        assert set(attrs) <= {"href", "rel", "title"}, (text, attrs)
        href = attrs.get("href")
        assert href is None or href.startswith("https://ok.example"), (text, href)


def test_a_description_keeps_what_markdown_means() -> None:
    html = str(
        render_markdown(
            "# Task\n\nPredict **well**, *fast*; see [the rules](https://example.org/rules) or <https://example.org>.\n\n"
            "- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nid,target\n```\n\nA <b>raw</b> tag stays text."
        )
    )
    assert "<h2>Task</h2>" in html  # one level under the page's own heading
    assert "<strong>well</strong>" in html and "<em>fast</em>" in html
    assert '<a href="https://example.org/rules" rel="nofollow noopener noreferrer">the rules</a>' in html
    assert '<a href="https://example.org" rel="nofollow noopener noreferrer">' in html
    assert "<li>one</li>" in html and "<td>1</td>" in html and "<code>id,target" in html
    assert "&lt;b&gt;raw&lt;/b&gt;" in html


def test_the_competition_page_shows_the_rendered_description(make_competition: Callable[..., Any]) -> None:
    make_competition(slug="md", description="Use the **sample**.\n\n<script>alert('x')</script>")
    page = Client().get("/c/md/").content.decode()
    assert '<div class="description"><p>Use the <strong>sample</strong>.</p>' in page
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page


# --- PATCH host/competitions/{slug}/ ----------------------------------------------------------------------------


def test_the_host_api_updates_settings_like_the_command(clients: dict[str, Any], competition: Any) -> None:
    url = f"/api/v1/host/competitions/{competition.slug}/"
    answer = clients["host"].patch(url, {"daily_limit": 2, "closes_at": None, "description": "**New**"}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["daily_limit"] == 2 and answer.json()["description"] == "**New**"
    assert answer.json()["total_limit"] is None and answer.json()["score_decimals"] == 5  # not given: unchanged
    refused = clients["host"].patch(url, {"defenses": [{"name": "nope"}], "daily_limit": 9}, format="json")
    assert refused.status_code == 400 and "unknown defense 'nope'" in refused.json()["detail"]
    assert Competition.objects.get(pk=competition.pk).daily_limit == 2
    for who, status in (("participant", 403), ("other", 403), ("anonymous", 401)):
        assert clients[who].patch(url, {"daily_limit": 99}, format="json").status_code == status, who
    assert Competition.objects.get(pk=competition.pk).daily_limit == 2


def test_the_defenses_body_is_documented_in_the_schema() -> None:
    schema = Client().get("/api/schema/").content.decode()
    for fragment in (
        "Replace the defense chain",
        "Laplace noise, then rounding to 5 decimals",
        "The parameter-free Ladder",
        "not a patch of the old one",
        "Change a competition's settings",
    ):
        assert fragment in schema, fragment
