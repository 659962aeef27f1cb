"""Long lists come a page at a time: the pages (home, my submissions, a board, the host's submissions) show a
bounded number of rows with Previous/Next links in a stable order, and the API's list endpoints answer a bounded
page of their JSON list with ``Link`` and ``X-Total-Count`` headers, refusing a hostile page size with a clear
message; the client walks every page."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.site.conftest import N_ROWS, api_client

pytestmark = pytest.mark.django_db


def _cells(html: str, column: int = 0) -> list[str]:
    rows = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>", 1)[1].split("</tbody>", 1)[0], re.S)
    return [re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[column]).strip() for row in rows]


def test_the_home_page_shows_a_page_of_competitions_with_links_to_the_others(
    make_competition: Callable[..., Any], client: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("leaderboard.web.views.COMPETITIONS_PER_PAGE", 3)
    for n in range(7):
        make_competition(slug=f"c{n}", title=f"Contest {n}")
    pages = [client.get("/", {"page": number}).content.decode() for number in (1, 2, 3)]
    titles = [_cells(page) for page in pages]
    assert [len(t) for t in titles] == [3, 3, 1]
    assert sorted(title for page in titles for title in page) == [f"Contest {n}" for n in range(7)]  # each once
    assert 'href="?page=2" rel="next"' in pages[0] and 'rel="prev"' not in pages[0]
    assert 'href="?page=1" rel="prev"' in pages[1] and 'href="?page=3" rel="next"' in pages[1]
    assert "Page 3 of 3 (rows 7–7 of 7)" in pages[2] and 'rel="next"' not in pages[2]
    # Out of range or not a number: the nearest page, never an error.
    assert _cells(client.get("/", {"page": "99"}).content.decode()) == titles[2]
    assert _cells(client.get("/", {"page": "-1x"}).content.decode()) == titles[0]


def test_my_submissions_come_newest_first_a_page_at_a_time(
    competition: Any, participant: Any, submit: Callable[..., Any], client: Any, monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    monkeypatch.setattr("leaderboard.web.views.SUBMISSIONS_PER_PAGE", 4)
    competition.daily_limit = None
    competition.save(update_fields=["daily_limit"])
    made = [submit(competition, participant, [0.5] * N_ROWS).pk for _ in range(9)]
    client.force_login(participant)
    url = f"/c/{competition.slug}/submissions/"
    shown = [_cells(client.get(url, {"page": n}).content.decode()) for n in (1, 2, 3)]
    assert [len(s) for s in shown] == [4, 4, 1]
    assert [cell for page in shown for cell in page] == [f"#{pk}" for pk in reversed(made)]
    first = client.get(url).content.decode()
    assert "Page 1 of 3 (rows 1–4 of 9)" in first and 'href="?page=2" rel="next"' in first
    # Submissions still queued keep the page refreshing itself (counted over every page, not only this one).
    assert 'http-equiv="refresh"' in first


def test_a_board_page_continues_the_ranks_of_the_one_before(
    competition: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]], client: Any,
    monkeypatch: pytest.MonkeyPatch, hidden_labels: Any,
) -> None:
    from django.contrib.auth.models import User

    monkeypatch.setattr("leaderboard.web.views.BOARD_ROWS_PER_PAGE", 2)
    for n in range(5):
        user = User.objects.create_user(f"p{n}")
        submit(competition, user, [0.1 + 0.15 * n] * N_ROWS)
    score_all()
    url = f"/c/{competition.slug}/leaderboard/public/"
    ranks = [_cells(client.get(url, {"page": n}).content.decode()) for n in (1, 2, 3)]
    assert ranks == [["1", "2"], ["3", "4"], ["5"]]
    participants = [_cells(client.get(url, {"page": n}).content.decode(), 1) for n in (1, 2, 3)]
    assert sorted(name for page in participants for name in page) == [f"p{n}" for n in range(5)]


def test_the_api_lists_answer_a_bounded_page_with_links_to_the_others(
    make_competition: Callable[..., Any], participant: Any, competition: Any, submit: Callable[..., Any],
) -> None:
    for n in range(4):
        make_competition(slug=f"c{n}")
    anonymous = api_client(None)
    first = anonymous.get("/api/v1/competitions/", {"page_size": 2})
    assert first.status_code == 200 and first["X-Total-Count"] == "5" and len(first.json()) == 2
    assert '</api/v1/competitions/?page_size=2&page=2>; rel="next"' in first["Link"]
    assert '</api/v1/competitions/?page_size=2&page=3>; rel="last"' in first["Link"]
    assert 'rel="prev"' not in first["Link"]
    slugs = []
    for page in (1, 2, 3):
        slugs += [c["slug"] for c in anonymous.get("/api/v1/competitions/", {"page_size": 2, "page": page}).json()]
    assert slugs == [c["slug"] for c in anonymous.get("/api/v1/competitions/").json()] and len(set(slugs)) == 5
    assert anonymous.get("/api/v1/competitions/", {"page_size": 2, "page": 4}).json() == []
    # The default page is bounded; a hostile size is refused, naming the parameter.
    for query, message in (({"page_size": "501"}, "must be at most 500"), ({"page_size": "0"}, "at least 1"),
                           ({"page": "x"}, "must be a whole number, not 'x'")):
        answer = anonymous.get("/api/v1/competitions/", query)
        assert answer.status_code == 400 and message in answer.content.decode(), answer.content
    competition.daily_limit = None
    competition.save(update_fields=["daily_limit"])
    for _ in range(3):
        submit(competition, participant, [0.5] * N_ROWS)
    mine = api_client(participant).get(f"/api/v1/competitions/{competition.slug}/submissions/", {"page_size": 2})
    assert len(mine.json()) == 2 and mine["X-Total-Count"] == "3" and 'rel="next"' in mine["Link"]


@pytest.mark.django_db(transaction=True)
def test_the_client_walks_every_page_of_a_list_and_of_a_board(
    live_server: Any, make_competition: Callable[..., Any], monkeypatch: pytest.MonkeyPatch,
    submit: Callable[..., Any], score_all: Callable[[], list[str]],
) -> None:
    from django.contrib.auth.models import User

    from bot.client import LeaderboardClient

    monkeypatch.setattr("leaderboard.api.pagination.PAGE_SIZE", 2)
    made = [make_competition(slug=f"c{n}", daily_limit=None) for n in range(5)]
    for n in range(5):
        submit(made[0], User.objects.create_user(f"p{n}"), [0.1 + 0.15 * n] * N_ROWS)
    score_all()
    with LeaderboardClient(live_server.url) as client:
        listed = [c.slug for c in client.competitions()]
        assert sorted(listed) == sorted(c.slug for c in made) and len(listed) == 5
        assert client.stats.requests == 3  # pages of 2, 2 and 1, each asked once
        board = client.leaderboard(made[0].slug)
        assert [row.rank for row in board.rows] == [1, 2, 3, 4, 5]
        assert sorted(row.participant for row in board.rows) == [f"p{n}" for n in range(5)]
        assert client.stats.requests == 6
    one_page = api_client(None).get(f"/api/v1/competitions/{made[0].slug}/leaderboard/", {"page": 2})
    assert [row["rank"] for row in one_page.json()["rows"]] == [3, 4] and one_page["X-Total-Count"] == "5"
