"""A competition can release further metrics beside its primary one (``also_report``, paper 004 §3): each is
released through the same chain and precision, shown on the participant's own submission, private values only
after the close, and an impossible metric is refused when the competition is created."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.errors import CompetitionConfigError
from scoring import get_metric, release_text
from tests.site.conftest import api_client


@pytest.mark.django_db
def test_auc_is_released_beside_the_log_loss_at_the_same_precision(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any], score_all: Any
) -> None:
    competition = make_competition(daily_limit=None, also_report=["auc"])
    values = np.random.default_rng(11).random(competition.n_rows)
    submission = submit(competition, participant, values)
    assert score_all() == ["scored"]
    body = api_client(participant).get(f"/api/v1/submissions/{submission.pk}/").json()
    spec = competition_scoring_spec(competition=competition)
    rows = spec.split_rows["public"]
    auc = get_metric("auc").score(values[rows], spec.hidden.labels[rows], competition.eps)
    assert body["extra_scores"]["auc"]["public_score_text"] == release_text(auc, 5)[1]
    assert body["extra_scores"]["auc"]["private_score_text"] == ""  # not before the close
    detail = api_client(None).get(f"/api/v1/competitions/{competition.slug}/").json()
    assert detail["also_report"] == ["auc"]


@pytest.mark.django_db
def test_private_extra_scores_appear_after_the_close(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any], score_all: Any
) -> None:
    competition = make_competition(daily_limit=None, also_report=["accuracy"])
    submission = submit(competition, participant, np.random.default_rng(12).random(competition.n_rows))
    score_all()
    competition.closes_at = timezone.now() - timedelta(seconds=1)
    competition.opens_at = competition.closes_at - timedelta(days=1)
    competition.save()
    body = api_client(participant).get(f"/api/v1/submissions/{submission.pk}/").json()
    assert body["extra_scores"]["accuracy"]["private_score_text"] != ""


@pytest.mark.django_db
def test_an_undefined_extra_metric_releases_nothing_instead_of_failing(
    make_competition: Callable[..., Any], participant: Any, submit: Callable[..., Any], score_all: Any
) -> None:
    # Every public row has label 1, so the public AUC is undefined; the log loss is still released.
    labels = np.zeros(40, dtype=int)
    competition = make_competition(daily_limit=None, also_report=["auc"], labels=labels, public_fraction=0.5)
    submission = submit(competition, participant, np.random.default_rng(13).random(40))
    assert score_all() == ["scored"]
    body = api_client(participant).get(f"/api/v1/submissions/{submission.pk}/").json()
    assert body["public_score_text"] != ""
    assert body["extra_scores"]["auc"]["public_score_text"] == ""


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("also", "problem"),
    [(["rmse"], "unknown metric"), (["binary_logloss"], "already the primary metric"), ("auc", "JSON list")],
)
def test_an_impossible_extra_metric_is_refused(make_competition: Callable[..., Any], also: Any, problem: str) -> None:
    with pytest.raises(CompetitionConfigError, match=problem):
        make_competition(also_report=also)
