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


@pytest.mark.django_db(transaction=True)
def test_with_several_tokens_every_account_joins_the_team_or_nothing_changes(
    live_server: Any, make_competition: Any, participant: Any, other_participant: Any, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from django.contrib.auth.models import User

    from leaderboard.accounts.services import api_token_issue
    from leaderboard.competitions.services import competition_update
    from leaderboard.submissions.models import Participation, Team

    competition = make_competition(slug="bot-team-tokens", daily_limit=None)
    alice, bob = api_token_issue(user=participant), api_token_issue(user=other_participant)
    carol, dave = (api_token_issue(user=User.objects.create_user(name)) for name in ("carol", "dave"))
    base = ["--url", live_server.url, "--competition", "bot-team-tokens", "--team-only", "--no-progress"]

    def members(name: str) -> list[str]:
        return sorted(Participation.objects.filter(team__name=name).values_list("participant__username", flat=True))

    # Over the maximum team size: refused before any change, naming the limit.
    competition_update(competition=competition, max_team_size=2)
    assert main([*base, "--token", alice, "--token", bob, "--token", carol, "--team", "Owls"]) == 1
    assert "would make 3 members, over this competition's maximum team size of 2" in capsys.readouterr().err
    assert not Team.objects.exists()
    competition_update(competition=competition, max_team_size=None)
    # An account already in another team: refused before any change, naming its token.
    assert main([*base, "--token", dave, "--team", "Larks"]) == 0
    capsys.readouterr()
    assert main([*base, "--token", alice, "--token", bob, "--token", dave, "--team", "Owls"]) == 1
    assert "token number 3's account 'dave' is in team 'Larks'" in capsys.readouterr().err
    assert members("Owls") == [] and members("Larks") == ["dave"]

    # Three tokens from a file: the first creates the team, the others are invited and accept.
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{alice}\n# a comment\n{bob}\n{carol}\n")
    summary = tmp_path / "team.json"
    assert main([*base, "--token-file", str(tokens), "--team", "Owls", "--json", str(summary)]) == 0
    assert "accounts: alice: created, bob: joined, carol: joined" in capsys.readouterr().err
    assert members("Owls") == ["alice", "bob", "carol"]
    assert json.loads(summary.read_text())["team"]["accounts"] == ["alice: created", "bob: joined", "carol: joined"]
    # Repeating it changes nothing.
    assert main([*base, "--token-file", str(tokens), "--team", "Owls"]) == 0
    assert "accounts: alice: member, bob: member, carol: member" in capsys.readouterr().err
    assert members("Owls") == ["alice", "bob", "carol"]
