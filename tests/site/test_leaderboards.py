"""Leaderboard selectors: direction from the metric, ties to the earlier submission, private board at the close."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from leaderboard.errors import BoardNotAvailable
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.selectors import leaderboard_csv, leaderboard_rows

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.get_current_timezone())


def scored(
    competition: Any, user: Any, public: float | None, private: float | None, minute: int, *, selected: bool = False
) -> Submission:
    """A scored row with the given released scores (5-decimal text), ``minute`` minutes after T0."""
    return Submission.objects.create(
        competition=competition,
        participant=user,
        status=Status.SCORED,
        upload=b"",
        public_score=public,
        public_score_text="" if public is None else f"{public:.5f}",
        private_score=private,
        private_score_text="" if private is None else f"{private:.5f}",
        raw_public=None if public is None else public + 1e-9,
        selected_for_final=selected,
        created_at=T0 + timedelta(minutes=minute),
    )


@pytest.fixture
def users(db: Any) -> list[User]:
    return [User.objects.create_user(name) for name in ("ann", "ben", "cat", "dan")]


def test_public_board_ranks_each_participants_best_lower_is_better(competition, users) -> None:
    ann, ben, cat, _ = users
    scored(competition, ann, 0.5, 0.4, 1)
    scored(competition, ann, 0.3, 0.9, 2)  # ann's best public
    scored(competition, ben, 0.4, 0.1, 3)
    scored(competition, cat, None, None, 4)  # nothing released: not on the board
    Submission.objects.create(competition=competition, participant=cat, status=Status.QUEUED, upload=b"")
    rows = leaderboard_rows(competition=competition, board="public")
    assert [(r.rank, r.participant, r.score_text, r.entries) for r in rows] == [
        (1, "ann", "0.30000", 2),
        (2, "ben", "0.40000", 1),
    ]


def test_higher_is_better_metrics_rank_descending(make_competition, users) -> None:
    competition = make_competition(metric="accuracy")
    ann, ben, *_ = users
    scored(competition, ann, 0.7, 0.7, 1)
    scored(competition, ben, 0.9, 0.6, 2)
    assert [r.participant for r in leaderboard_rows(competition=competition, board="public")] == ["ben", "ann"]


def test_ties_go_to_the_earlier_submission(competition, users) -> None:
    ann, ben, cat, _ = users
    scored(competition, cat, 0.25, 0.3, 9)
    scored(competition, ben, 0.25, 0.3, 5)
    scored(competition, ann, 0.25, 0.3, 7)
    scored(competition, ann, 0.25, 0.3, 3)  # ann's earliest tie counts as her best
    rows = leaderboard_rows(competition=competition, board="public")
    assert [r.participant for r in rows] == ["ann", "ben", "cat"]
    assert rows[0].submitted_at == T0 + timedelta(minutes=3)


def test_private_board_is_refused_before_the_close_except_for_hosts(competition, users) -> None:
    scored(competition, users[0], 0.3, 0.3, 1)
    with pytest.raises(BoardNotAvailable):
        leaderboard_rows(competition=competition, board="private")
    assert len(leaderboard_rows(competition=competition, board="private", allow_private_before_close=True)) == 1


def test_private_board_uses_selected_finals_or_else_the_two_best_public(make_competition, users) -> None:
    now = timezone.now()
    competition = make_competition(opens_at=now - timedelta(days=10), closes_at=now - timedelta(days=1))
    ann, ben, cat, dan = users
    # ann selected two finals: the best private among them counts, not her better unselected one.
    scored(competition, ann, 0.30, 0.50, 1, selected=True)
    scored(competition, ann, 0.35, 0.45, 2, selected=True)
    scored(competition, ann, 0.60, 0.01, 3)
    # ben selected nothing: his two best public (0.20, 0.25) are used; the third (private 0.02) is not.
    scored(competition, ben, 0.20, 0.48, 4)
    scored(competition, ben, 0.25, 0.44, 5)
    scored(competition, ben, 0.90, 0.02, 6)
    # cat selected one.
    scored(competition, cat, 0.10, 0.70, 7)
    scored(competition, cat, 0.50, 0.40, 8, selected=True)
    # dan: public only (nothing released on the private split): not on the private board.
    scored(competition, dan, 0.05, None, 9)
    rows = leaderboard_rows(competition=competition, board="private")
    assert [(r.participant, r.score_text) for r in rows] == [("cat", "0.40000"), ("ben", "0.44000"), ("ann", "0.45000")]
    public = leaderboard_rows(competition=competition, board="public")
    assert [r.participant for r in public] == ["dan", "cat", "ben", "ann"]


def test_csv_export_shows_released_text_only(competition, users) -> None:
    scored(competition, users[0], 0.123456789, 0.5, 1)
    text = leaderboard_csv(competition=competition, board="public")
    lines = text.splitlines()
    assert lines[0] == "rank,participant,score,entries,submitted_at"
    assert lines[1].startswith("1,ann,0.12346,1,2026-01-01T12:01:00Z")
    assert "0.123456789" not in text and "1e-09" not in text


def test_unknown_board_is_an_error(competition) -> None:
    with pytest.raises(ValueError, match="unknown board"):
        leaderboard_rows(competition=competition, board="secret")
