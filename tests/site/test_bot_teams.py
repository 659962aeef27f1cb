"""``leaderboard-bot --team NAME [--invite USER] [--team-only]`` against the real site (Django's live server):
create a team, invite, accept from a second account's command line, use the team again, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main


@pytest.mark.django_db(transaction=True)
def test_the_command_line_creates_invites_and_accepts(
    live_server: Any, make_competition: Any, participant: Any, other_participant: Any, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from django.contrib.auth.models import User

    from leaderboard.accounts.services import api_token_issue
    from leaderboard.submissions.models import Participation

    make_competition(slug="bot-teams", daily_limit=None)
    alice, bob = api_token_issue(user=participant), api_token_issue(user=other_participant)
    carol = api_token_issue(user=User.objects.create_user("carol"))
    base = ["--url", live_server.url, "--competition", "bot-teams", "--team-only", "--no-progress"]

    summary = tmp_path / "team.json"
    assert main([*base, "--token", alice, "--team", "Owls", "--invite", "bob", "--json", str(summary)]) == 0
    assert "team 'Owls' created (members: alice); invited: bob" in capsys.readouterr().err
    assert json.loads(summary.read_text())["team"]["action"] == "created"
    # Carol was not invited: the name is taken, and she is told how to get in.
    assert main([*base, "--token", carol, "--team", "owls"]) == 1
    assert "has not invited you" in capsys.readouterr().err
    assert main([*base, "--token", bob, "--team", "Owls"]) == 0
    assert "team 'Owls' joined (members: alice, bob)" in capsys.readouterr().err
    # Running it again finds the account in the team; inviting bob again is reported, not fatal.
    assert main([*base, "--token", alice, "--team", "Owls", "--invite", "bob"]) == 0
    err = capsys.readouterr().err
    assert "team 'Owls' member" in err and "bob (not invited: 'bob' is already in this team)" in err
    assert sorted(Participation.objects.filter(team__name="Owls").values_list("participant__username", flat=True)) \
        == ["alice", "bob"]
    # A second team for Bob is refused with the site's message.
    assert main([*base, "--token", bob, "--team", "Larks"]) == 1
    assert "already in team 'Owls'" in capsys.readouterr().err
    assert main(["--url", live_server.url, "--competition", "bot-teams", "--token", bob, "--invite", "x"]) == 2
