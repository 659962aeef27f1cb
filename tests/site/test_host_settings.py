"""Host settings that passed validation but broke scoring or misled people (issue 9, item 8): the released text
carries exactly the released precision, noise parameters outside the working range are refused when the
competition is made, and a noisy score is never released outside its metric's range. (A φ-bit text longer
than 400 characters on PostgreSQL: ``tests/site/test_recovery_integration.py``.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from leaderboard.errors import CompetitionConfigError
from leaderboard.submissions.models import Submission
from tests.site.conftest import api_client
from tests.site.factories import N_ROWS

pytestmark = pytest.mark.django_db


def test_a_coarser_rounding_stage_sets_the_released_text_not_a_padded_one(
    make_competition: Callable[..., Any], participant: Any, submit: Any, score_all: Any
) -> None:
    # Today: "0.69300" — five places shown, the last two always 0, misleading people and the bot.
    competition = make_competition(score_decimals=5, defenses=[{"name": "rounding", "decimals": 3}])
    submission = submit(competition, participant, np.full(N_ROWS, 0.5))
    assert score_all() == ["scored"]
    scored = Submission.objects.get(pk=submission.pk)
    assert scored.public_score_text == "0.693" and scored.private_score_text == "0.693"
    body = api_client(participant).get(f"/api/v1/submissions/{submission.pk}/").json()
    meta = api_client(participant).get(f"/api/v1/competitions/{competition.slug}/").json()
    assert meta["released_decimals"] == 3
    assert len(str(body["public_score_text"]).split(".")[1]) == meta["released_decimals"]


@pytest.mark.parametrize("noise", [
    {"kind": "laplace", "scale": 1e308},
    {"kind": "laplace", "epsilon": 1e-300},
    {"kind": "gaussian", "epsilon": 1e-300},
])
def test_noise_that_would_fail_every_submission_is_refused_at_creation(
    make_competition: Callable[..., Any], noise: dict[str, Any]
) -> None:
    with pytest.raises(CompetitionConfigError, match="must be at"):
        make_competition(defenses=[{"name": "noise", **noise}])


def test_a_noisy_log_loss_is_never_released_below_zero(
    make_competition: Callable[..., Any], participant: Any, submit: Any, score_all: Any, hidden_labels: np.ndarray
) -> None:
    # A near-perfect model (log loss ~1e-6) under noise of scale 1e-3: today about half of its releases were
    # negative ("-0.00007" on the board).
    competition = make_competition(
        daily_limit=None, secret=20261123, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}],
    )
    perfect = np.where(hidden_labels == 1, 1 - 1e-6, 1e-6)
    ids = [submit(competition, participant, perfect).pk for _ in range(12)]
    assert score_all() == ["scored"] * 12
    released = [s.public_score for s in Submission.objects.filter(pk__in=ids)]
    assert all(value is not None and value >= 0 for value in released), released
    assert any(value == 0 for value in released) and any(value > 0 for value in released)
