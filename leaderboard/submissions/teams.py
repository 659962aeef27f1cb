"""Teams as on Kaggle: create a team in a competition, invite, accept or decline, leave before the team's first
submission, and merge two teams before the host's merger deadline when their submissions so far fit one quota.

A participant without a team is a team of one (no row). Membership is :attr:`Participation.team`, so a user is
in at most one team per competition. A team's submissions are its members' (:func:`team_submissions`), which
the quota, the finals and the boards count as one.

Locks: :class:`Participation` rows first (the joining or leaving participant's, or every member's of two merging
teams, in id order), then the :class:`Team` rows in id order — the order an upload takes them
(``submission_create``), so the quota of a team is never checked against a membership that is changing under
it, and no two of these transactions wait on each other in a cycle.

Team-scoped defense state (``scope: "team"``) lives in :class:`TeamDefenseState`, one row per team and split (a
participant without a team owns their own rows: a team of one). Creating a team hands the creator's rows to it;
joining with submissions and merging merge the rows (:meth:`defenses.DefenseChain.merge_states`: the merged
state is never more lenient than either side's, so a merge gives no fresh budget and no free Ladder release).
The worker locks the submitter's :class:`Participation` (so the membership cannot change while it scores), then
the team's rows (:func:`team_states_lock`); the team services here lock the participations first too, then the
state rows, so neither waits on the other in a cycle.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.errors import TeamConflict, TeamError, TeamForbidden, TeamNotFound
from leaderboard.submissions.models import (
    Invitation,
    InvitationStatus,
    Participation,
    Status,
    Submission,
    Team,
    TeamDefenseState,
    TeamMergeRequest,
    UploadKind,
)
from leaderboard.submissions.selectors import utc_day_bounds

TEAM_NAME_MAX_LENGTH = 64
MAX_FINALS = 2


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- Reads ----------------------------------------------------------------------------------------------


def team_of(*, competition: Competition, participant: Any) -> Team | None:
    """The participant's team in ``competition`` (``None``: a team of one)."""
    if not getattr(participant, "is_authenticated", False):
        return None
    return Team.objects.filter(competition=competition, memberships__participant=participant).first()


def team_list(*, competition: Competition) -> QuerySet[Team]:
    """The competition's teams with their member count (names and members are public, as on Kaggle's board)."""
    return Team.objects.filter(competition=competition).annotate(member_count=Count("memberships")).order_by(
        "name", "id"
    )


def team_list_with_members(*, competition: Competition) -> list[tuple[Team, list[str]]]:
    """Every team of the competition with its member usernames (in joining order), in two queries."""
    members: dict[int, list[str]] = {}
    rows = (
        Participation.objects.filter(competition=competition, team__isnull=False)
        .order_by("joined_team_at", "id")
        .values_list("team_id", "participant__username")
    )
    for team_id, username in rows:
        members.setdefault(team_id, []).append(username)
    return [(team, members.get(team.pk, [])) for team in team_list(competition=competition)]


def team_get(*, team_id: int) -> Team:
    team = Team.objects.select_related("competition").filter(pk=team_id).first()
    if team is None:
        raise TeamNotFound(f"no team {team_id}")
    return team


def team_members(*, team: Team) -> list[str]:
    """Member usernames, in joining order."""
    return list(
        Participation.objects.filter(team=team)
        .order_by("joined_team_at", "id")
        .values_list("participant__username", flat=True)
    )


def team_is_member(*, team: Team, user: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    return Participation.objects.filter(team=team, participant=user).exists()


def team_invitations(*, team: Team, viewer: Any) -> QuerySet[Invitation]:
    """The team's pending invitations, for its members only (anyone else gets none)."""
    if not team_is_member(team=team, user=viewer):
        return Invitation.objects.none()
    return Invitation.objects.filter(team=team, status=InvitationStatus.PENDING).select_related("invitee", "team")


def invitations_for(*, user: Any, competition: Competition | None = None) -> QuerySet[Invitation]:
    """The user's own pending invitations (optionally in one competition)."""
    found = Invitation.objects.filter(invitee=user, status=InvitationStatus.PENDING).select_related(
        "team", "team__competition", "invitee"
    )
    return found.filter(team__competition=competition) if competition is not None else found


def teammate_submissions(*, competition: Competition, participant: Any) -> list[dict[str, Any]]:
    """The participant's teammates' submissions (not their own), newest first, for the submissions page: who made
    each, its number, time, status and the *released* public score text (and the defense's participant-safe reason
    when nothing was released) — nothing a defense keeps from its submitter. Empty without a team."""
    team = team_of(competition=competition, participant=participant)
    if team is None:
        return []
    return list(
        Submission.objects.filter(competition=competition, participant__participations__team=team)
        .exclude(participant=participant)
        .order_by("-created_at", "-id")
        .values("id", "participant__username", "created_at", "status", "public_score_text", "public_message")
    )


def merge_requests_for(*, team: Team) -> tuple[list[Team], list[Team]]:
    """(teams this team asked to merge with, teams that asked to merge with this team), each by name."""
    asked = [r.target for r in TeamMergeRequest.objects.filter(team=team).select_related("target").order_by("id")]
    offers = [r.team for r in TeamMergeRequest.objects.filter(target=team).select_related("team").order_by("id")]
    return asked, offers


@dataclass(frozen=True)
class TeamUsage:
    total: int
    today: int


def _usage(competition: Competition, participant_ids: list[int], now: datetime) -> TeamUsage:
    """What these participants' submissions count against a quota (as ``quota_status`` counts them)."""
    day_start, _ = utc_day_bounds(now)
    used = (
        Submission.objects.filter(competition=competition, participant_id__in=participant_ids)
        .exclude(Q(status=Status.FAILED) & ~Q(upload_kind=UploadKind.ONNX) & Q(charged=False))
        .aggregate(total=Count("id"), today=Count("id", filter=Q(created_at__gte=day_start)))
    )
    return TeamUsage(total=int(used["total"]), today=int(used["today"]))


def _member_ids(team: Team) -> list[int]:
    return list(Participation.objects.filter(team=team).values_list("participant_id", flat=True))


def _has_submissions(competition: Competition, participant_ids: list[int]) -> bool:
    return Submission.objects.filter(competition=competition, participant_id__in=participant_ids).exists()


# --- Rules ----------------------------------------------------------------------------------------------


def _clean_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TeamError("the team name must be a string")
    cleaned = unicodedata.normalize("NFKC", name).strip()
    if not cleaned:
        raise TeamError("the team name must not be empty")
    if len(cleaned) > TEAM_NAME_MAX_LENGTH:
        raise TeamError(f"the team name is longer than {TEAM_NAME_MAX_LENGTH} characters")
    if any(unicodedata.category(ch).startswith("C") for ch in cleaned):
        raise TeamError("the team name must not contain control characters")
    return cleaned


def _check_open(competition: Competition, now: datetime) -> None:
    if competition.is_closed(now):
        raise TeamForbidden("the competition has closed; teams can no longer change")


def _check_merger_deadline(competition: Competition, now: datetime, action: str) -> None:
    _check_open(competition, now)
    deadline = competition.team_merger_deadline
    if deadline is not None and now >= deadline:
        raise TeamForbidden(f"the team merger deadline passed at {_utc(deadline)}; {action} is no longer possible")


def _check_team_size(competition: Competition, size: int, what: str) -> None:
    """Refuse a join or merge that would make a team larger than the host's maximum team size."""
    limit = competition.max_team_size
    if limit is not None and size > limit:
        raise TeamConflict(
            f"{what} is refused: the team would have {size} members, over this competition's maximum team size "
            f"of {limit}"
        )


def _check_fits_quota(competition: Competition, groups: list[list[int]], now: datetime, what: str) -> None:
    """Refuse a merge whose submissions so far exceed the merged team's daily or total limit."""
    usages = [_usage(competition, ids, now) for ids in groups]
    total = sum(u.total for u in usages)
    today = sum(u.today for u in usages)
    if competition.total_limit is not None and total > competition.total_limit:
        raise TeamConflict(
            f"{what} is refused: together you have made {total} submissions, over this competition's total limit "
            f"of {competition.total_limit} for one team"
        )
    if competition.daily_limit is not None and today > competition.daily_limit:
        raise TeamConflict(
            f"{what} is refused: together you have made {today} submissions today, over the daily limit of "
            f"{competition.daily_limit} for one team; try again after the daily reset"
        )


def _lock_participation(competition: Competition, user: Any) -> Participation:
    Participation.objects.get_or_create(competition=competition, participant=user)
    return Participation.objects.select_for_update().get(competition=competition, participant=user)


def _lock_teams(*team_ids: int) -> dict[int, Team]:
    locked = Team.objects.select_for_update().filter(pk__in=team_ids).order_by("pk")
    return {team.pk: team for team in locked}


def _trim_finals(competition: Competition, incoming_ids: list[int], kept_ids: list[int]) -> None:
    """One set of finals per team: when joining teams would hold more than two, the incoming side's are unselected."""
    kept = Submission.objects.filter(competition=competition, participant_id__in=kept_ids, selected_for_final=True)
    incoming = Submission.objects.filter(
        competition=competition, participant_id__in=incoming_ids, selected_for_final=True
    )
    if kept.count() + incoming.count() > MAX_FINALS:
        incoming.update(selected_for_final=False)


# --- Team-scoped defense state ------------------------------------------------------------------------


def team_states_lock(*, competition: Competition, participant_id: int, keys: tuple[str, ...]) -> dict[str, Any]:
    """The submitter's team's defense-state rows (``scope: "team"``), one per key, created fresh when missing and
    locked (``SELECT … FOR UPDATE``), so two members' submissions are scored one at a time. The submitter's
    :class:`Participation` is locked first, so their membership cannot change under the worker (joining, creating
    and merging lock it too); without a team the rows are the participant's own (a team of one)."""
    team_id = (
        Participation.objects.select_for_update().filter(competition=competition, participant_id=participant_id)
        .values_list("team_id", flat=True).first()
    )
    owner = Q(team_id=team_id) if team_id is not None else Q(participant_id=participant_id, team__isnull=True)
    for key in keys:
        if team_id is not None:
            TeamDefenseState.objects.get_or_create(competition=competition, split=key, team_id=team_id)
        else:
            TeamDefenseState.objects.get_or_create(competition=competition, split=key, participant_id=participant_id)
    locked = TeamDefenseState.objects.select_for_update().filter(
        owner, competition=competition, split__in=keys
    ).order_by("split")
    return {row.split: row for row in locked}


def team_states_merge(*, competition: Competition, team: Team, incoming: Q) -> None:
    """Merge the team-state rows matched by ``incoming`` (a joining participant's own, or a merged-away team's)
    into ``team``'s, then delete them. Call it holding the participations' locks (a worker scoring one of the
    members holds one, so it finishes first)."""
    rows = list(
        TeamDefenseState.objects.select_for_update().filter(incoming, competition=competition).order_by("split")
    )
    if not rows:
        return
    spec = competition_scoring_spec(competition=competition)
    kept = {
        row.split: row
        for row in TeamDefenseState.objects.select_for_update().filter(team=team).order_by("split")
    }
    for row in rows:
        metric = row.split.partition("@")[2]
        higher = spec.metric_specs.get(metric or spec.metric_name, spec).metric.higher_is_better
        target = kept.get(row.split)
        merged = spec.chain.merge_states(
            target.state if target is not None else None, row.state, higher_is_better=higher
        )
        if target is None:
            TeamDefenseState.objects.create(competition=competition, team=team, split=row.split, state=merged)
        else:
            target.state = merged
            target.save(update_fields=["state", "updated_at"])
    TeamDefenseState.objects.filter(pk__in=[row.pk for row in rows]).delete()


# --- Writes ---------------------------------------------------------------------------------------------


def team_create(*, competition: Competition, user: Any, name: Any, now: datetime | None = None) -> Team:
    """Create a team with ``user`` as its first member. A participant with submissions may create one (their
    submissions become the team's); one already in a team may not."""
    now = now or timezone.now()
    cleaned = _clean_name(name)
    _check_open(competition, now)
    with transaction.atomic():
        participation = _lock_participation(competition, user)
        if participation.team_id is not None:
            current = Team.objects.get(pk=participation.team_id)
            raise TeamConflict(f"you are already in team {current.name!r} in this competition; leave it first")
        if Team.objects.filter(competition=competition, name__iexact=cleaned).exists():
            raise TeamConflict(f"a team named {cleaned!r} already exists in this competition")
        try:
            with transaction.atomic():
                team = Team.objects.create(competition=competition, name=cleaned, created_by=user, created_at=now)
        except IntegrityError:
            raise TeamConflict(f"a team named {cleaned!r} already exists in this competition") from None
        Participation.objects.filter(pk=participation.pk).update(team=team, joined_team_at=now)
        # The creator's team-of-one defense state becomes the team's (a new team is no fresh Ladder or budget).
        TeamDefenseState.objects.filter(competition=competition, participant=user).update(participant=None, team=team)
    return team


def team_invite(*, team: Team, inviter: Any, username: Any, now: datetime | None = None) -> Invitation:
    """Invite a user by username (members only). Refused for a user already in a team of this competition (two
    teams combine by a merge) or already invited."""
    now = now or timezone.now()
    if not isinstance(username, str) or not username.strip():
        raise TeamError("give the username to invite")
    competition = team.competition
    if not team_is_member(team=team, user=inviter):
        raise TeamForbidden("only a member of the team can invite")
    _check_open(competition, now)
    invitee = get_user_model().objects.filter(username=username.strip(), is_active=True).first()
    if invitee is None:
        raise TeamNotFound(f"no user named {username.strip()!r}")
    if invitee.pk == inviter.pk:
        raise TeamConflict("you are already in this team")
    membership = Participation.objects.filter(competition=competition, participant=invitee).first()
    if membership is not None and membership.team_id is not None:
        if membership.team_id == team.pk:
            raise TeamConflict(f"{invitee.get_username()!r} is already in this team")
        raise TeamConflict(
            f"{invitee.get_username()!r} is already in another team in this competition; two teams combine by a merge"
        )
    try:
        with transaction.atomic():
            return Invitation.objects.create(team=team, invitee=invitee, invited_by=inviter, created_at=now)
    except IntegrityError:
        raise TeamConflict(f"{invitee.get_username()!r} already has a pending invitation from this team") from None


def _invitation_for_invitee(invitation_id: int, user: Any) -> Invitation:
    invitation = (
        Invitation.objects.select_related("team", "team__competition")
        .filter(pk=invitation_id, invitee_id=getattr(user, "pk", None))
        .first()
    )
    if invitation is None:  # someone else's invitation is answered like a missing one
        raise TeamNotFound(f"no invitation {invitation_id} for you")
    if invitation.status != InvitationStatus.PENDING:
        raise TeamConflict(f"this invitation was already {invitation.status}")
    return invitation


def invitation_accept(*, invitation_id: int, user: Any, now: datetime | None = None) -> Team:
    """Join the inviting team (invitee only), before the merger deadline. An invitee with submissions in the
    competition joins only as a merge: allowed when their submissions and the team's fit one team's quota."""
    now = now or timezone.now()
    invitation = _invitation_for_invitee(invitation_id, user)
    team = invitation.team
    competition = team.competition
    _check_merger_deadline(competition, now, "joining a team")
    with transaction.atomic():
        participation = _lock_participation(competition, user)
        _lock_teams(team.pk)
        invitation = _invitation_for_invitee(invitation_id, user)  # re-read under the locks
        if participation.team_id is not None:
            raise TeamConflict(
                "you are already in a team in this competition; leave it first (before its first submission) "
                "or merge the two teams"
            )
        _check_team_size(competition, len(_member_ids(team)) + 1, "joining this team")
        if _has_submissions(competition, [user.pk]):
            _check_fits_quota(
                competition,
                [[user.pk], _member_ids(team)],
                now,
                "joining this team (you already have submissions here, so it counts as a merge)",
            )
            _trim_finals(competition, [user.pk], _member_ids(team))
        team_states_merge(competition=competition, team=team, incoming=Q(participant=user))
        Participation.objects.filter(pk=participation.pk).update(team=team, joined_team_at=now)
        Invitation.objects.filter(pk=invitation.pk).update(status=InvitationStatus.ACCEPTED, answered_at=now)
        # The user's other pending invitations in this competition can no longer be accepted.
        Invitation.objects.filter(
            invitee=user, team__competition=competition, status=InvitationStatus.PENDING
        ).update(status=InvitationStatus.CANCELLED, answered_at=now)
    return team


def invitation_decline(*, invitation_id: int, user: Any, now: datetime | None = None) -> Invitation:
    now = now or timezone.now()
    invitation = _invitation_for_invitee(invitation_id, user)
    Invitation.objects.filter(pk=invitation.pk, status=InvitationStatus.PENDING).update(
        status=InvitationStatus.DECLINED, answered_at=now
    )
    invitation.refresh_from_db()
    return invitation


def team_leave(*, team: Team, user: Any, now: datetime | None = None) -> None:
    """Leave a team before its first submission; the last member leaving deletes it."""
    now = now or timezone.now()
    competition = team.competition
    _check_open(competition, now)
    with transaction.atomic():
        participation = _lock_participation(competition, user)
        _lock_teams(team.pk)
        if participation.team_id != team.pk:
            raise TeamForbidden("you are not a member of this team")
        members = _member_ids(team)
        if _has_submissions(competition, members):
            raise TeamConflict("you cannot leave the team after its first submission")
        Participation.objects.filter(pk=participation.pk).update(team=None, joined_team_at=None)
        if len(members) <= 1:
            team.delete()


@dataclass(frozen=True)
class MergeResult:
    merged: bool
    team: Team  # the surviving team when merged; else the team whose merge was requested


def team_merge(*, team: Team, other_id: Any, user: Any, now: datetime | None = None) -> MergeResult:
    """``user`` (a member of ``team``) asks to merge ``team`` into the team ``other_id`` (recorded; answers
    ``merged=False``). When a member of the other team had asked the reverse, this is the agreement and the merge
    happens now: the other team's members join ``team``, whose name is kept, and the other team is deleted.
    Refused after the merger deadline and when the two teams' submissions so far exceed one team's daily or
    total limit (checked on the request and again on the agreement)."""
    now = now or timezone.now()
    if isinstance(other_id, bool) or not isinstance(other_id, int):
        raise TeamError("give the id of the other team as 'team' (an integer)")
    competition = team.competition
    if not team_is_member(team=team, user=user):
        raise TeamForbidden("only a member of the team can ask for a merge")
    other = Team.objects.filter(pk=other_id, competition=competition).first()
    if other is None:
        raise TeamNotFound(f"no team {other_id} in this competition")
    if other.pk == team.pk:
        raise TeamConflict("a team cannot merge with itself")
    _check_merger_deadline(competition, now, "merging teams")
    with transaction.atomic():
        # The members' participations first (in id order), then the teams: the order an upload takes them, so a
        # member's upload during the merge waits instead of deadlocking with it.
        list(
            Participation.objects.select_for_update().filter(team__in=[team.pk, other.pk])
            .order_by("pk").values_list("pk", flat=True)
        )
        locked = _lock_teams(team.pk, other.pk)
        if len(locked) != 2:
            raise TeamNotFound("one of the teams no longer exists")
        mine, theirs = _member_ids(team), _member_ids(other)
        _check_team_size(competition, len(mine) + len(theirs), "this merge")
        _check_fits_quota(competition, [mine, theirs], now, "this merge")
        if not TeamMergeRequest.objects.filter(team=other, target=team).exists():
            TeamMergeRequest.objects.get_or_create(team=team, target=other, defaults={"requested_by": user})
            return MergeResult(merged=False, team=team)
        # The other team asked first to merge into this one, and a member of this one agrees: the other team's
        # members join this team, whose name is kept.
        _trim_finals(competition, theirs, mine)
        team_states_merge(competition=competition, team=team, incoming=Q(team=other))
        Participation.objects.filter(team=other).update(team=team, joined_team_at=now)
        Invitation.objects.filter(team=other, status=InvitationStatus.PENDING).update(
            status=InvitationStatus.CANCELLED, answered_at=now
        )
        other.delete()
    team.refresh_from_db()
    return MergeResult(merged=True, team=team)
