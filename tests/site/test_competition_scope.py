"""A competition-scoped Ladder through the site: one leader for the whole board, so a second participant's first
submission is compared with the first participant's best and released only if it beats it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.site.conftest import api_client

LADDER = [{"name": "ladder", "mode": "parameter_free", "scope": "competition"}]


@pytest.mark.django_db
def test_the_second_participants_worse_first_submission_is_not_released(
    make_competition: Callable[..., Any], hidden_labels: np.ndarray, participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Any,
) -> None:
    from leaderboard.submissions.models import CompetitionDefenseState, DefenseState

    competition = make_competition(daily_limit=None, defenses=LADDER)
    good = np.where(hidden_labels == 1, 0.8, 0.2)
    first = submit(competition, participant, good)
    worse = submit(competition, other_participant, np.full(competition.n_rows, 0.5))
    better = submit(competition, other_participant, np.where(hidden_labels == 1, 0.95, 0.05))
    assert score_all() == ["scored", "scored", "scored"]
    alice, bob = api_client(participant), api_client(other_participant)
    released = alice.get(f"/api/v1/submissions/{first.pk}/").json()
    withheld = bob.get(f"/api/v1/submissions/{worse.pk}/").json()
    climbed = bob.get(f"/api/v1/submissions/{better.pk}/").json()
    assert released["public_score"] is not None
    assert withheld["public_score"] is None and withheld["public_score_text"] == ""
    assert "did not beat the leaderboard's best" in withheld["public_message"]
    assert climbed["public_score"] is not None and climbed["public_score"] < released["public_score"]
    # The leader lives in the competition's row; the participants' own rows hold nothing of it.
    board = CompetitionDefenseState.objects.get(competition=competition, split="public")
    assert round(board.state[0]["best"], 5) == climbed["public_score"]
    own = DefenseState.objects.get(competition=competition, participant=other_participant, split="public")
    assert own.state == [{}]


@pytest.mark.django_db
def test_the_account_scope_keeps_every_first_release_and_no_competition_row(
    make_competition: Callable[..., Any], participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Any, hidden_labels: np.ndarray,
) -> None:
    from leaderboard.submissions.models import CompetitionDefenseState

    competition = make_competition(daily_limit=None, defenses=[{"name": "ladder", "mode": "parameter_free"}])
    submit(competition, participant, np.where(hidden_labels == 1, 0.8, 0.2))
    worse = submit(competition, other_participant, np.full(competition.n_rows, 0.5))
    assert score_all() == ["scored", "scored"]
    assert api_client(other_participant).get(f"/api/v1/submissions/{worse.pk}/").json()["public_score"] is not None
    assert not CompetitionDefenseState.objects.filter(competition=competition).exists()


@pytest.mark.django_db(transaction=True)
def test_parallel_workers_spend_one_competition_budget_one_release_at_a_time(enqueued: list[int]) -> None:
    """Eight participants' submissions scored by eight threads at once (each its own connection) on a board
    budget of three releases: exactly three are released. Without the competition row's lock, workers reading
    the budget at the same moment would each spend it and release more."""
    from django.contrib.auth.models import User

    from leaderboard.competitions.services import competition_create
    from leaderboard.submissions.models import Submission
    from leaderboard.submissions.services import submission_create, submission_score
    from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv
    from tests.site.races import race

    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    competition = competition_create(
        slug="shared-budget", labels_csv=labels_csv(labels), daily_limit=None,
        defenses=[{"name": "noise", "kind": "laplace", "epsilon": 1.0},
                  {"name": "privacy_budget", "epsilon": 3.0, "composition": "basic", "scope": "competition"}],
    )
    rng = np.random.default_rng(2)
    for i in range(8):
        user = User.objects.create_user(f"racer{i}")
        submission_create(competition=competition, participant=user,
                          data=predictions_csv(competition, rng.uniform(0.05, 0.95, N_ROWS)))
    ids = list(Submission.objects.filter(competition=competition).values_list("pk", flat=True))

    def score(pk: int) -> Callable[[], str]:
        return lambda: submission_score(submission_id=pk).action

    outcomes = race([score(pk) for pk in ids])
    assert outcomes == ["scored"] * len(ids)
    released = Submission.objects.filter(competition=competition, public_score__isnull=False).count()
    assert released == 3
