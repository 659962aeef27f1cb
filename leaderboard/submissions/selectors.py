"""Reads on submissions: a participant's own rows, quotas, host views and the two leaderboards.

Participant-facing readers return released values only; host readers are named ``*_for_host``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from leaderboard.competitions.models import Competition
from leaderboard.csv_cells import SafeCsvWriter
from leaderboard.errors import BoardNotAvailable
from leaderboard.submissions.models import Participation, Status, Submission, UploadKind
from scoring.board import BOARDS, BoardEntry, board_standings

# Columns a participant-facing list may load (never the raw scores, notes or the upload itself).
_RELEASED_FIELDS = (
    "id",
    "competition_id",
    "participant_id",
    "status",
    "public_score",
    "public_score_text",
    "private_score",
    "private_score_text",
    "error",
    "public_message",
    "selected_for_final",
    "created_at",
    "finished_at",
    "upload_name",
    "upload_kind",
)


@dataclass(frozen=True)
class QuotaStatus:
    daily_limit: int | None
    used_today: int
    remaining_today: int | None
    total_limit: int | None
    used_total: int
    remaining_total: int | None
    resets_at: datetime  # the next UTC midnight, when the daily counter starts again
    # The participant is in a team (the counts are the team's); read only when the quota is exhausted, for the
    # refusal's wording ("your team has used 5 of 5 submissions today").
    in_team: bool = False

    @property
    def exhausted(self) -> bool:
        return self.remaining_today == 0 or self.remaining_total == 0


def utc_day_bounds(now: datetime) -> tuple[datetime, datetime]:
    """The start of ``now``'s UTC day and the start of the next one."""
    start = datetime.combine(now.astimezone(UTC).date(), time.min, tzinfo=UTC)
    return start, start + timedelta(days=1)


def team_members_of(*, competition: Competition, participant: Any) -> QuerySet[Participation]:
    """The participations of the participant's team in ``competition`` (none when the participant is a team of
    one), as a subquery-ready queryset."""
    team = Participation.objects.filter(competition=competition, participant=participant, team__isnull=False)
    return Participation.objects.filter(team__in=team.values("team"))


def team_submissions(*, competition: Competition, participant: Any) -> QuerySet[Submission]:
    """Every submission of the participant's team in ``competition`` (the participant's own when they have no
    team), in one query: what the quota counts and the finals are chosen from."""
    members = team_members_of(competition=competition, participant=participant).values("participant")
    return Submission.objects.filter(competition=competition).filter(
        Q(participant=participant) | Q(participant__in=members)
    )


def quota_status(*, competition: Competition, participant: Any, now: datetime | None = None) -> QuotaStatus:
    """What the participant has used and has left. Failed submissions do not count, except a model that failed
    to run (its failure is a function of the hidden features, so free failures would be free queries on them)
    and a submission a defense rejected (``charged``: a rejection is an answer, so a free one is a free query);
    rejected uploads never exist."""
    now = now or timezone.now()
    day_start, next_day = utc_day_bounds(now)
    # One query for both counts: the quota is read up to three times per upload.
    used = (
        team_submissions(competition=competition, participant=participant)
        .exclude(Q(status=Status.FAILED) & ~Q(upload_kind=UploadKind.ONNX) & Q(charged=False))
        .aggregate(total=Count("id"), today=Count("id", filter=Q(created_at__gte=day_start)))
    )
    used_total, used_today = int(used["total"]), int(used["today"])
    daily, total = competition.daily_limit, competition.total_limit
    exhausted = (daily is not None and used_today >= daily) or (total is not None and used_total >= total)
    return QuotaStatus(
        in_team=exhausted and team_members_of(competition=competition, participant=participant).exists(),
        daily_limit=daily,
        used_today=used_today,
        remaining_today=None if daily is None else max(daily - used_today, 0),
        total_limit=total,
        used_total=used_total,
        remaining_total=None if total is None else max(total - used_total, 0),
        resets_at=next_day,
    )


#: The sybil screen's hold (``leaderboard.screening``) as its submitter sees it: ``held`` (the host has not decided;
#: scored, nothing released), ``releasing`` (the host let it go; the worker is releasing it), ``withheld`` (the host
#: disqualified the account: never released). Empty for a submission the screen never held, or once released.
REVIEW_HELD, REVIEW_RELEASING, REVIEW_WITHHELD = "held", "releasing", "withheld"
_REVIEW_OF_HOLD = {"held": REVIEW_HELD, "releasing": REVIEW_RELEASING, "withheld": REVIEW_WITHHELD}


def submission_review(submission: Submission) -> str:
    """The screen's hold of ``submission`` as its submitter may see it (:data:`REVIEW_HELD`, ...; ``""`` for none).
    Decided from uploads and sign-ups alone, so it says nothing about the hidden labels. Reads the ``review_state``
    the participant selectors annotate, else the hold row."""
    state = getattr(submission, "review_state", ...)
    if state is ...:
        try:
            state = submission.screen_hold.state  # type: ignore[attr-defined]
        except ObjectDoesNotExist:
            state = None
    review = _REVIEW_OF_HOLD.get(str(state), "")
    # A release whose scoring failed is a failed submission, not one still under review.
    return "" if review == REVIEW_RELEASING and submission.status == Status.FAILED else review


def submission_get_for_participant(*, submission_id: int, participant: Any) -> Submission:
    """The caller's own submission; someone else's raises ``DoesNotExist`` exactly like a missing one."""
    return (
        Submission.objects.select_related("competition")
        .only(*_RELEASED_FIELDS, "competition__slug", "competition__closes_at")
        .annotate(review_state=F("screen_hold__state"))
        .get(pk=submission_id, participant=participant)
    )


def submission_list_for_participant(*, competition: Competition, participant: Any) -> QuerySet[Submission]:
    return (
        Submission.objects.filter(competition=competition, participant=participant)
        .select_related("competition")
        .only(*_RELEASED_FIELDS, "competition__slug", "competition__closes_at")
        .annotate(review_state=F("screen_hold__state"))
        .order_by("-created_at", "-id")
    )


def submission_list_for_host(*, competition: Competition) -> QuerySet[Submission]:
    """Every submission with raw and released scores (host-only)."""
    return (
        Submission.objects.filter(competition=competition)
        .select_related("participant", "competition")
        .defer("upload", "predictions_npy")
        .order_by("-created_at", "-id")
    )


@dataclass(frozen=True)
class ParticipantLeakage:
    """Host-only, per participant: how far released scores sit from raw ones (what the defenses cost/hide)."""

    participant: str
    submissions: int
    scored: int
    failed: int
    mean_abs_public_error: float | None
    max_abs_public_error: float | None
    mean_abs_private_error: float | None


def submission_leakage_for_host(*, competition: Competition) -> list[ParticipantLeakage]:
    rows = Submission.objects.filter(competition=competition).values(
        "participant__username", "status", "raw_public", "public_score", "raw_private", "private_score"
    )
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["participant__username"], []).append(row)

    def errors(entries: list[dict[str, Any]], split: str) -> list[float]:
        return [
            abs(r[f"{split}_score"] - r[f"raw_{split}"])
            for r in entries
            if r[f"{split}_score"] is not None and r[f"raw_{split}"] is not None
        ]

    result = []
    for name, entries in sorted(grouped.items()):
        public, private = errors(entries, "public"), errors(entries, "private")
        result.append(
            ParticipantLeakage(
                participant=name,
                submissions=len(entries),
                scored=sum(r["status"] == Status.SCORED for r in entries),
                failed=sum(r["status"] == Status.FAILED for r in entries),
                mean_abs_public_error=sum(public) / len(public) if public else None,
                max_abs_public_error=max(public) if public else None,
                mean_abs_private_error=sum(private) / len(private) if private else None,
            )
        )
    return result


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    participant: str
    score: float
    score_text: str
    entries: int
    submitted_at: datetime
    submission_id: int  # for host pages; the participant API does not show it


def leaderboard_rows(
    *, competition: Competition, board: str, now: datetime | None = None, allow_private_before_close: bool = False
) -> list[LeaderboardRow]:
    """The public board (each team's best released public score; a participant without a team is a team of
    one) or, after the close, the private board (best released private score among the team's selected finals,
    or among its two best public ones if none were selected). Ties go to the earlier submission. Raises
    :class:`BoardNotAvailable` for the private board before the close unless ``allow_private_before_close``
    (hosts). The policy is the core's (:func:`scoring.board.board_standings`)."""
    if board not in BOARDS:
        raise ValueError(f"unknown board {board!r}; use 'public' or 'private'")
    if board == "private" and not allow_private_before_close and not competition.is_closed(now):
        raise BoardNotAvailable("the private leaderboard is shown after the competition closes")
    # Participants a host disqualified through the sybil screen (leaderboard.screening) are off the boards.
    scored = Submission.objects.filter(competition=competition, status=Status.SCORED).exclude(
        participant__screen_exclusions__competition=competition
    )
    rows = {
        row["id"]: row
        for row in scored.values(
            "id",
            "participant_id",
            "participant__username",
            "public_score",
            "public_score_text",
            "private_score",
            "private_score_text",
            "selected_for_final",
            "created_at",
        )
    }
    # One row per team: a member's submissions count as the team's, shown under the team's name.
    teams = {
        member["participant_id"]: (member["team_id"], member["team__name"])
        for member in Participation.objects.filter(competition=competition, team__isnull=False).values(
            "participant_id", "team_id", "team__name"
        )
    }

    def board_key(participant_id: int) -> tuple[str, int]:
        team = teams.get(participant_id)
        return ("team", team[0]) if team else ("user", participant_id)

    def board_name(row: dict[str, Any]) -> str:
        team = teams.get(row["participant_id"])
        return team[1] if team else str(row["participant__username"])

    entries = [
        BoardEntry(
            submission_id=row["id"],
            participant=board_key(row["participant_id"]),
            submitted_at=row["created_at"],
            public=row["public_score"],
            private=row["private_score"],
            selected_for_final=row["selected_for_final"],
        )
        for row in rows.values()
    ]
    standings = board_standings(entries, board, higher_is_better=competition.board_higher_is_better)
    return [
        LeaderboardRow(
            rank=standing.rank,
            participant=board_name(row),
            score=standing.score,
            score_text=row[f"{board}_score_text"],
            entries=standing.entries,
            submitted_at=row["created_at"],
            submission_id=row["id"],
        )
        for standing in standings
        for row in (rows[standing.entry.submission_id],)
    ]


def leaderboard_csv(
    *, competition: Competition, board: str, now: datetime | None = None, allow_private_before_close: bool = False
) -> str:
    """The released board as CSV: rank, participant, score (exact released text), entries, submitted_at (UTC).

    Participant and team names are spreadsheet-safe (:mod:`leaderboard.csv_cells`): ``=1+1`` exports as ``'=1+1``.
    """
    out = io.StringIO()
    writer = SafeCsvWriter(out)
    writer.writerow(["rank", "participant", "score", "entries", "submitted_at"])
    rows = leaderboard_rows(
        competition=competition, board=board, now=now, allow_private_before_close=allow_private_before_close
    )
    for row in rows:
        submitted = row.submitted_at.isoformat().replace("+00:00", "Z")
        writer.writerow([row.rank, row.participant, row.score_text, row.entries, submitted])
    return out.getvalue()
