"""The bot's team steps (``leaderboard-bot --team NAME [--invite USER ...] [--team-only]``), through the typed
client's team calls: be in team ``NAME`` of the competition (create it, or accept its pending invitation, or find
the account already in it), then invite users to it.

Nothing is retried blindly (as the client's team calls): a refusal raises the client's error with the site's
message (a name taken by a team that did not invite you, already in another team, the merger deadline, the
maximum team size).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.client import ClientError, Conflict, LeaderboardClient, Team


@dataclass
class TeamSteps:
    """What the team steps did: the team, how the account came to be in it, and who was invited."""

    team: Team
    action: str  # "created", "joined" (an invitation accepted) or "member" (already in it)
    invited: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        return {"id": self.team.id, "name": self.team.name, "members": list(self.team.members),
                "action": self.action, "invited": self.invited}


def _named(client: LeaderboardClient, slug: str, name: str) -> Team | None:
    wanted = name.strip().casefold()
    return next((team for team in client.teams(slug) if team.name.casefold() == wanted), None)


def join_team(client: LeaderboardClient, slug: str, name: str) -> TeamSteps:
    """Be in team ``name`` of competition ``slug``: already a member, accept its pending invitation, or create it
    when no team has that name. A team of that name that did not invite you raises :class:`Conflict`."""
    existing = _named(client, slug, name)
    if existing is None:
        return TeamSteps(client.create_team(slug, name), "created")
    team = client.team(existing.id)
    if team.is_member:
        return TeamSteps(team, "member")
    invitation = next((i for i in client.invitations() if i.team == existing.id), None)
    if invitation is None:
        raise Conflict(
            f"team {existing.name!r} already exists in {slug!r} and has not invited you; ask a member "
            "(leaderboard-bot --team NAME --invite YOUR_USERNAME) or choose another name",
            status=409,
        )
    return TeamSteps(client.accept_invitation(invitation.id), "joined")


def team_steps(client: LeaderboardClient, slug: str, name: str, invite: list[str]) -> TeamSteps:
    """:func:`join_team`, then invite each user of ``invite`` (one already invited or in the team is reported,
    not fatal: the run can be repeated)."""
    steps = join_team(client, slug, name)
    for username in invite:
        try:
            client.invite(steps.team.id, username)
        except Conflict as exc:
            steps.invited.append(f"{username} (not invited: {exc.detail})")
            continue
        steps.invited.append(username)
    return steps


__all__ = ["ClientError", "TeamSteps", "join_team", "team_steps"]
