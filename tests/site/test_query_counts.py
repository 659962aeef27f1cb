"""The database work of one submission does not grow with the test set: a fixed, small number of statements for
the upload (web worker) and for scoring it (Celery worker), counted with Django's ``CaptureQueriesContext``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.site.conftest import predictions_csv

pytestmark = pytest.mark.django_db

#: Statements of a participant's upload once their participation exists: the unlocked quota look, the row lock,
#: the locked quota count, the INSERT (array included) — plus SAVEPOINT/RELEASE, as the test runs in a
#: transaction (in production the block is the transaction itself: BEGIN and COMMIT are not statements Django
#: counts).
UPLOAD_STATEMENTS = 6
#: Statements of scoring it with no defense state: the claim (conditional UPDATE), the row with its competition,
#: the stored array, the result (conditional UPDATE) — plus SAVEPOINT/RELEASE.
SCORE_STATEMENTS = 6


def _statements(make_competition: Any, participant: Any, n_rows: int, capture: Any) -> tuple[int, int]:
    from leaderboard.competitions.selectors import competition_scoring_spec
    from leaderboard.submissions.services import submission_create, submission_score

    labels = np.random.default_rng(n_rows).integers(0, 2, n_rows)
    competition = make_competition(slug=f"rows-{n_rows}", labels=labels, daily_limit=None)
    competition_scoring_spec(competition=competition)  # a warm worker holds the competition
    data = predictions_csv(competition, np.random.default_rng(1).uniform(0.1, 0.9, n_rows))
    counts = []
    for _ in range(2):  # the second upload is the steady state (the participation exists)
        with CaptureQueriesContext(connection) as upload, capture(execute=False):
            submission = submission_create(competition=competition, participant=participant, data=data)
        with CaptureQueriesContext(connection) as score:
            assert submission_score(submission_id=submission.pk).action == "scored"
        counts = [len(upload.captured_queries), len(score.captured_queries)]
    return counts[0], counts[1]


def test_an_upload_and_its_scoring_take_the_same_few_statements_at_any_size(
    make_competition: Any, participant: Any, django_capture_on_commit_callbacks: Any
) -> None:
    small = _statements(make_competition, participant, 50, django_capture_on_commit_callbacks)
    large = _statements(make_competition, participant, 5_000, django_capture_on_commit_callbacks)
    assert small == large == (UPLOAD_STATEMENTS, SCORE_STATEMENTS)
