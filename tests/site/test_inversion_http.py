"""BREP-MI over HTTP against a live site (Django's live server): the bot's oracle reads the challenge's terms,
spends exactly its budget through the label-only endpoint, gets the same labels the local oracle would, and its
reconstructions are scored by the evaluator."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from attacks.inversion import BudgetExhausted, LocalLabelOracle, PcaGenerator, brep_mi
from bot.client import LeaderboardClient
from bot.inversion import HttpLabelOracle
from leaderboard.inversion.models import PredictionBudget
from leaderboard.inversion.services import inversion_challenge_create
from scoring.inversion import InversionTask, MlpClassifier


@pytest.mark.django_db(transaction=True)
def test_brep_mi_over_http_spends_its_budget_and_is_scored(
    live_server: Any, participant: Any, score_all: Callable[[], list[str]]
) -> None:
    from leaderboard.accounts.services import api_token_issue

    # A small two-layer target on 4×4 images (the digits bundle's build costs seconds; the HTTP path is the same).
    rng = np.random.default_rng(5)
    task = InversionTask(n_features=16, n_classes=5, image_shape=(4, 4), low=0.0, high=16.0, max_batch=64)
    target = MlpClassifier((rng.normal(size=(16, 12)), rng.normal(size=(12, 5))), (np.zeros(12), np.zeros(5)), 16.0)
    evaluator = MlpClassifier((rng.normal(size=(16, 5)),), (np.zeros(5),), 16.0)
    challenge = inversion_challenge_create(slug="invert-digits", target=target, evaluator=evaluator, task=task,
                                           query_budget=600, daily_limit=None, release_per_class=True)
    generator = PcaGenerator.fit(rng.uniform(0, 16, (200, 16)), n_latent=6)
    token = api_token_issue(user=participant)
    with LeaderboardClient(live_server.url, token) as client:
        oracle = HttpLabelOracle(client, "invert-digits")
        assert oracle.task == task and oracle.queries_left == 600
        result = brep_mi(oracle, generator, seed=0)
        assert result.queries == oracle.queries == 600 - oracle.queries_left
        # Same seed, same code in process: the same answers, hence the same reconstructions.
        local = brep_mi(LocalLabelOracle(target, task, budget=600), generator, seed=0)
        assert np.allclose(local.reconstructions, result.reconstructions)
        if oracle.queries_left:
            with pytest.raises(BudgetExhausted):
                oracle.predict(np.zeros((oracle.queries_left + 1, 16)))
        upload = client.submit_json("invert-digits",
                                    json.dumps({"reconstructions": result.reconstructions.tolist()}).encode())
        assert score_all() == ["scored"]
        scored = client.submission(upload.id)
    hits = [bool(h) for h in evaluator.predict(result.reconstructions) == np.arange(5)]
    assert scored.data["per_class"] == hits and scored.public_score == pytest.approx(np.mean(hits))
    assert PredictionBudget.objects.get(challenge=challenge, participant=participant).used == result.queries
