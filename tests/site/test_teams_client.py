"""The typed client's team calls against the real site (Django's live server): create, invite, accept, submit
by either member under one quota, the board by team, and the refusals as the client's error types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from bot.client import Conflict, LeaderboardClient, NotFound, QuotaExceeded, Team, TeamInvitation


@pytest.mark.django_db(transaction=True)
def test_the_team_journey_through_the_client(
    live_server: Any, make_competition: Any, participant: Any, other_participant: Any,
    score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.accounts.services import api_token_issue

    competition = make_competition(slug="client-teams", daily_limit=2)
    alice_token = api_token_issue(user=participant)
    bob_token = api_token_issue(user=other_participant)
    values = np.random.default_rng(3).uniform(0.1, 0.9, competition.n_rows)
    with LeaderboardClient(live_server.url, alice_token) as alice, LeaderboardClient(live_server.url, bob_token) as bob:
        team = alice.create_team("client-teams", "Owls")
        assert isinstance(team, Team) and team.members == ("alice",) and team.is_member
        with pytest.raises(Conflict, match="already exists"):
            bob.create_team("client-teams", "OWLS")
        invitation = alice.invite(team.id, "bob")
        assert isinstance(invitation, TeamInvitation) and invitation.status == "pending"
        assert [i.id for i in bob.invitations()] == [invitation.id]
        assert alice.invitations() == []
        with pytest.raises(NotFound):
            alice.accept_invitation(invitation.id)  # not hers
        joined = bob.accept_invitation(invitation.id)
        assert joined.members == ("alice", "bob")
        assert [t.name for t in bob.teams("client-teams")] == ["Owls"]
        alice.submit_json("client-teams", values.tolist(), on_quota="stop")
        bob.submit_json("client-teams", values[::-1].tolist(), on_quota="stop")
        with pytest.raises(QuotaExceeded):
            bob.submit_json("client-teams", values.tolist(), on_quota="stop")
        assert alice.quota("client-teams").used_today == 2
        assert score_all() == ["scored", "scored"]
        board = bob.leaderboard("client-teams")
        assert [(row.participant, row.entries) for row in board.rows] == [("Owls", 2)]
        with pytest.raises(Conflict, match="after its first submission"):
            bob.leave_team(team.id)
