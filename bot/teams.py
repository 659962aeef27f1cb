"""The bot's team steps (``leaderboard-bot --team NAME [--invite USER ...] [--team-only]``), through the typed
client's team calls: be in team ``NAME`` of the competition (create it, or accept its pending invitation, or find
the account already in it), then invite users to it. With several tokens every token's account ends in the team
(:func:`team_steps_for_tokens`): the first creates or joins it, each other one is invited by the first and accepts;
what the site would refuse for sure (the maximum team size, an account already in another team, one account behind
two tokens) is refused before anything changes.

Nothing is retried blindly (as the client's team calls): a refusal raises the client's error with the site's
message (a name taken by a team that did not invite you, already in another team, the merger deadline, the
maximum team size).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.client import ClientError, Conflict, LeaderboardClient, Team


@dataclass
class TeamSteps:
    """What the team steps did: the team, how the account came to be in it, and who was invited."""

    team: Team
    action: str  # "created", "joined" (an invitation accepted) or "member" (already in it)
    invited: list[str] = field(default_factory=list)
    #: With several tokens: each token's account and what it did, in token order ("alice: created", ...).
    accounts: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        found: dict[str, object] = {"id": self.team.id, "name": self.team.name, "members": list(self.team.members),
                                    "action": self.action, "invited": self.invited}
        if self.accounts:
            found["accounts"] = self.accounts
        return found


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


def _refuse_before_any_change(client: LeaderboardClient, slug: str, name: str, usernames: list[str]) -> None:
    """Refuse, before any team call, what the site would refuse part-way: one account behind two tokens, an account
    already in another team of the competition, more accounts than the competition's maximum team size."""
    first_token: dict[str, int] = {}
    for position, username in enumerate(usernames, start=1):
        if username in first_token:
            raise Conflict(f"tokens number {first_token[username]} and {position} are both {username!r}'s: one "
                           "account cannot be two members", status=409)
        first_token[username] = position
    wanted = name.strip().casefold()
    teams = client.teams(slug)
    target = next((team for team in teams if team.name.casefold() == wanted), None)
    for team in teams:
        if team is target:
            continue
        for position, username in enumerate(usernames, start=1):
            if username in team.members:
                raise Conflict(f"token number {position}'s account {username!r} is in team {team.name!r} of {slug!r}; "
                               f"an account is in one team only, so it cannot join {name!r} (nothing was changed)",
                               status=409)
    limit = client.competition(slug).data.get("max_team_size")
    members = set(usernames) | set(target.members if target is not None else ())
    if limit is not None and len(members) > int(limit):
        raise Conflict(f"{len(usernames)} tokens' accounts in team {name!r} would make {len(members)} members, over "
                       f"this competition's maximum team size of {int(limit)}; pass at most {int(limit)} tokens or "
                       "leave out --team (nothing was changed)", status=409)


def team_steps_for_tokens(
    clients: Sequence[LeaderboardClient], slug: str, name: str, invite: list[str]
) -> TeamSteps:
    """Every client's account in team ``name``: the first is in it as :func:`team_steps` makes it (and invites
    ``invite``); each other one is invited by the first (unless already invited or a member) and accepts. What the
    site would refuse for sure is refused before anything changes (:func:`_refuse_before_any_change`); a refusal
    part-way (the merger deadline, an account whose submissions do not fit the team's quota) raises
    :class:`Conflict` naming the token, the site's message and the accounts already in the team. Repeating the
    call after fixing the cause completes the team."""
    if len(clients) == 1:
        return team_steps(clients[0], slug, name, invite)
    usernames = [client.whoami() for client in clients]
    _refuse_before_any_change(clients[0], slug, name, usernames)
    steps = team_steps(clients[0], slug, name, invite)
    steps.accounts = [f"{usernames[0]}: {steps.action}"]
    for position, (client, username) in enumerate(zip(clients[1:], usernames[1:], strict=True), start=2):
        try:
            if username not in steps.team.members:
                # Already invited (a repeated run): the pending invitation is accepted below.
                with contextlib.suppress(Conflict):
                    clients[0].invite(steps.team.id, username)
            joined = join_team(client, slug, name)
        except ClientError as exc:
            raise Conflict(
                f"token number {position}'s account {username!r} could not join team {steps.team.name!r}: "
                f"{exc.detail} (in the team now: {', '.join(steps.team.members)})", status=exc.status,
            ) from exc
        steps.team = joined.team
        steps.accounts.append(f"{username}: {joined.action}")
    return steps


__all__ = ["ClientError", "TeamSteps", "join_team", "team_steps", "team_steps_for_tokens"]
