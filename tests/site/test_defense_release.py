"""Defense chains through the site: a withheld score tells the participant why, and a chain that cannot work
with the competition's metric is refused when it is set."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from leaderboard.errors import CompetitionConfigError
from tests.site.conftest import api_client


@pytest.mark.django_db
def test_a_spent_privacy_budget_withholds_the_score_and_says_why(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any], score_all: Any
) -> None:
    competition = make_competition(
        daily_limit=None,
        defenses=[
            {"name": "noise", "kind": "laplace", "epsilon": 1.0},
            {"name": "privacy_budget", "epsilon": 1.5, "composition": "basic"},
        ],
    )
    rng = np.random.default_rng(3)
    first = submit(competition, participant, rng.random(competition.n_rows))
    second = submit(competition, participant, rng.random(competition.n_rows))
    assert score_all() == ["scored", "scored"]
    client = api_client(participant)
    released = client.get(f"/api/v1/submissions/{first.pk}/").json()
    withheld = client.get(f"/api/v1/submissions/{second.pk}/").json()
    assert released["public_score"] is not None and released["public_message"] == ""
    assert withheld["public_score"] is None and withheld["public_score_text"] == ""
    assert "budget" in withheld["public_message"].lower()


@pytest.mark.django_db
def test_a_chain_that_needs_per_row_losses_is_refused_for_auc(make_competition: Callable[..., Any]) -> None:
    with pytest.raises(CompetitionConfigError, match="defense #1"):
        make_competition(metric="auc", defenses=[{"name": "ladder", "mode": "parameter_free"}])


@pytest.mark.django_db
def test_setting_a_chain_checks_it_against_the_competitions_metric(make_competition: Callable[..., Any]) -> None:
    from leaderboard.competitions.services import competition_set_defenses

    competition = make_competition(metric="auc")
    with pytest.raises(CompetitionConfigError, match="defense #1"):
        competition_set_defenses(competition=competition, defenses=[{"name": "ladder", "mode": "parameter_free"}])
    competition_set_defenses(competition=competition, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}])
    assert competition.defenses == [{"name": "ladder", "mode": "fixed", "eta": 0.01}]
