"""The φ-bit work limit on the site: the host sees it when creating a competition, and a submission to a
competition over it (made before the limit) fails with a message that depends on nothing hidden."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.competitions.models import Competition
from leaderboard.competitions.services import competition_create
from leaderboard.errors import CompetitionConfigError
from leaderboard.submissions import services
from leaderboard.submissions.models import Status
from tests.site.factories import labels_csv

pytestmark = pytest.mark.django_db


def test_the_host_is_told_at_creation(host) -> None:
    labels = labels_csv(np.random.default_rng(0).integers(0, 2, 400))
    with pytest.raises(CompetitionConfigError) as info:
        competition_create(slug="million", host=host, labels_csv=labels, arithmetic="mpfr:1000000")
    assert "400 rows × 1 column" in str(info.value) and "at most mpfr:" in str(info.value)
    assert competition_create(slug="fine", host=host, labels_csv=labels, arithmetic="mpfr:2000").arithmetic


def test_a_competition_over_the_limit_fails_a_submission_from_its_shape(host, participant, submit) -> None:
    errors = set()
    for seed in range(2):
        labels = np.random.default_rng(seed).integers(0, 2, 400)
        competition = competition_create(slug=f"old-{seed}", host=host, labels_csv=labels_csv(labels),
                                         arithmetic="mpfr:2000", daily_limit=None)
        # Created before the limit existed: the stored setting bypasses the check a host now meets.
        Competition.objects.filter(pk=competition.pk).update(arithmetic="mpfr:1000000")
        competition.refresh_from_db()
        submission = submit(competition, participant, np.full(400, 0.5))
        assert services.submission_score(submission_id=submission.pk).action == "failed"
        submission.refresh_from_db()
        assert submission.status == Status.FAILED and not submission.charged
        errors.add(submission.error)
    (error,) = errors  # the same text whatever the labels
    assert error.startswith("this submission was not scored: mpfr:1000000 arithmetic on 400 values")
