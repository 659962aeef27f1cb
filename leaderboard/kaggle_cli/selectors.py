"""Reads for the ``kaggle`` command line: the descriptions of a participant's submissions, and what its list of
competitions says of each board."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_list
from leaderboard.kaggle_cli.models import CliUpload
from leaderboard.submissions.models import Participation
from leaderboard.submissions.selectors import leaderboard_rows, team_submissions


def cli_descriptions(submission_ids: Iterable[int]) -> dict[int, str]:
    """Submission id → the description its upload gave (only submissions made through the command line)."""
    rows = CliUpload.objects.filter(submission_id__in=list(submission_ids)).values_list("submission_id", "description")
    return {int(pk): text for pk, text in rows if pk is not None}


@dataclass(frozen=True)
class BoardStanding:
    """What the competitions list says of a competition's public board: its rows, and the caller's."""

    team_count: int
    user_rank: int | None
    entered: bool


def board_standing(*, competition: Competition, user: Any) -> BoardStanding:
    """Rows of the public board (teams and participants on their own, as the board shows them), the rank of the
    caller's row on it and whether the caller has entered (made a submission or joined a team)."""
    rows = leaderboard_rows(competition=competition, board="public")
    if not getattr(user, "is_authenticated", False):
        return BoardStanding(len(rows), None, False)
    mine = set(team_submissions(competition=competition, participant=user).values_list("pk", flat=True))
    rank = next((row.rank for row in rows if row.submission_id in mine), None)
    entered = bool(mine) or Participation.objects.filter(competition=competition, participant=user).exists()
    return BoardStanding(len(rows), rank, entered)


def competitions_entered(*, user: Any) -> QuerySet[Competition]:
    """The listed competitions the user has entered, in the list's order."""
    return competition_list().filter(participations__participant=user).distinct()
