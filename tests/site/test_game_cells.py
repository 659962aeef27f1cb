"""A live game's cells stay off the site's lists (reached by URL only), and ``clean_games`` (command and host
API) removes them with their submissions and the attacker accounts made for them, and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from tests.site.conftest import N_ROWS, api_client

pytestmark = pytest.mark.django_db

CELL = "game-0123456789abcdef0123"
OTHER_CELL = "game-fedcba9876543210fedc"


def _provisioned(host: Any, username: str) -> Any:
    from leaderboard.accounts.services import participant_provision

    user, _token, _created = participant_provision(username=username, host=host)
    return user


@pytest.fixture
def staff_host(host: Any) -> Any:
    host.is_staff = True
    host.save(update_fields=["is_staff"])
    return host


def test_an_unlisted_competition_is_off_the_home_page_and_the_api_list_but_reachable_by_url(
    make_competition: Callable[..., Any], client: Any,
) -> None:
    make_competition(slug="real-one", title="The real one")
    make_competition(slug=CELL, title="game quick: cell", listed=False)
    home = client.get("/").content.decode()
    assert "The real one" in home and CELL not in home and "game quick" not in home
    listed = api_client(None).get("/api/v1/competitions/").json()
    assert [c["slug"] for c in listed] == ["real-one"]
    assert client.get(f"/c/{CELL}/").status_code == 200
    assert api_client(None).get(f"/api/v1/competitions/{CELL}/").json()["slug"] == CELL


def test_a_host_unlists_and_lists_a_competition_through_the_api(
    make_competition: Callable[..., Any], staff_host: Any,
) -> None:
    make_competition(slug="rehearsal")
    host = api_client(staff_host)
    answer = host.patch("/api/v1/host/competitions/rehearsal/", {"listed": False}, format="json")
    assert answer.status_code == 200 and answer.json()["listed"] is False
    assert api_client(None).get("/api/v1/competitions/").json() == []
    host.patch("/api/v1/host/competitions/rehearsal/", {"listed": True}, format="json")
    assert [c["slug"] for c in api_client(None).get("/api/v1/competitions/").json()] == ["rehearsal"]


@pytest.fixture
def leftovers(make_competition: Callable[..., Any], submit: Callable[..., Any], staff_host: Any,
              participant: Any) -> dict[str, Any]:
    """Two game cells with an attacker each (one attacker also played a real competition), a real competition, a
    listed competition whose slug looks like a cell, and a participant who played a cell."""
    cell = make_competition(slug=CELL, title="game quick: a", listed=False, daily_limit=None)
    other = make_competition(slug=OTHER_CELL, title="game quick: b", listed=False, daily_limit=None)
    real = make_competition(slug="real-one", daily_limit=None)
    lookalike = make_competition(slug="game-aaaaaaaaaaaaaaaaaaaa", title="a host's own", daily_limit=None)
    attacker = _provisioned(staff_host, f"{CELL}-attacker-1234abcd")
    wanderer = _provisioned(staff_host, f"{OTHER_CELL}-attacker-99999999")
    for user, competition in ((attacker, cell), (attacker, cell), (wanderer, other), (wanderer, real),
                              (participant, cell)):
        submit(competition, user, [0.5] * N_ROWS)
    return {"attacker": attacker, "wanderer": wanderer, "real": real, "lookalike": lookalike}


def test_clean_games_removes_the_cells_their_submissions_and_their_attackers_only(
    leftovers: dict[str, Any], participant: Any,
) -> None:
    from django.contrib.auth.models import User

    from leaderboard.competitions.models import Competition
    from leaderboard.submissions.models import Submission

    dry = StringIO()
    call_command("clean_games", "--dry-run", stdout=dry)
    assert dry.getvalue().splitlines()[-1] == (
        "would remove 2 game competitions, 4 submissions and 1 game account"
    )
    assert Competition.objects.count() == 4 and Submission.objects.count() == 5
    out = StringIO()
    call_command("clean_games", stdout=out)
    assert out.getvalue().splitlines() == [
        f"  {CELL}", f"  {OTHER_CELL}", "removed 2 game competitions, 4 submissions and 1 game account",
    ]
    assert sorted(Competition.objects.values_list("slug", flat=True)) == ["game-aaaaaaaaaaaaaaaaaaaa", "real-one"]
    # The attacker went; the one who also played a real competition stays with that submission; so does a person.
    assert not User.objects.filter(pk=leftovers["attacker"].pk).exists()
    assert User.objects.filter(pk=leftovers["wanderer"].pk).exists()
    assert User.objects.filter(pk=participant.pk).exists()
    assert list(Submission.objects.values_list("competition__slug", flat=True)) == ["real-one"]


def test_the_host_api_cleans_only_the_asking_hosts_cells(
    leftovers: dict[str, Any], participant: Any, other_participant: Any,
) -> None:
    from leaderboard.competitions.models import Competition

    refused = api_client(participant).post("/api/v1/host/games/clean/", {}, format="json")
    assert refused.status_code == 403
    other_participant.is_staff = True
    other_participant.save(update_fields=["is_staff"])
    nothing = api_client(other_participant).post("/api/v1/host/games/clean/", {}, format="json").json()
    assert nothing["competitions"] == [] and Competition.objects.filter(listed=False).count() == 2
    host = api_client(Competition.objects.get(slug=CELL).host)
    dry = host.post("/api/v1/host/games/clean/", {"dry_run": True}, format="json").json()
    assert dry["competitions"] == [CELL, OTHER_CELL] and dry["dry_run"] is True
    assert Competition.objects.filter(listed=False).count() == 2
    done = host.post("/api/v1/host/games/clean/", {}, format="json").json()
    assert done == {"competitions": [CELL, OTHER_CELL], "submissions": 4,
                    "accounts": [f"{CELL}-attacker-1234abcd"], "dry_run": False,
                    "summary": "removed 2 game competitions, 4 submissions and 1 game account"}
    assert not Competition.objects.filter(listed=False).exists()
