"""The quota under concurrency on the session's own database: 20 threads, each with its own connection,
upload at once against a daily limit of 5; exactly 5 submissions exist afterwards.

(The PostgreSQL and SQLite cases with a real worker are in ``test_integration.py``; this one runs on whatever
``DATABASE_URL`` the test session uses.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from django.contrib.auth.models import User

from leaderboard.competitions.services import competition_create
from leaderboard.errors import QuotaExceeded
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import submission_create
from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv
from tests.site.races import race


@pytest.mark.django_db(transaction=True)
def test_twenty_parallel_uploads_against_a_limit_of_five_create_exactly_five(enqueued: list[int]) -> None:
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    competition = competition_create(slug="race", labels_csv=labels_csv(labels), daily_limit=5)
    racer = User.objects.create_user("racer")
    rng = np.random.default_rng(1)
    files = [predictions_csv(competition, rng.uniform(0.05, 0.95, N_ROWS)) for _ in range(20)]

    def upload(data: bytes) -> Callable[[], str]:
        return lambda: (submission_create(competition=competition, participant=racer, data=data), "created")[1]

    outcomes = race([upload(data) for data in files], outcomes={QuotaExceeded: "quota"})
    assert sorted(outcomes) == ["created"] * 5 + ["quota"] * 15
    assert Submission.objects.filter(participant=racer).count() == 5
    assert sorted(enqueued) == sorted(Submission.objects.values_list("pk", flat=True))
