"""The release model: every reported metric through the chain, with one seeding-key scheme and its own state."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from defenses import DefenseChain
from defenses.base import Defense, DefenseContext, Score, ScoringView, Stage
from scoring import (
    ConfigurationError,
    HiddenTestSet,
    NonFiniteScoreError,
    ParsedPredictions,
    ScoringSpec,
    evaluate,
    public_split_mask,
    release_keys,
    release_submission,
)
from scoring.metrics import get_metric

NOISE = [{"name": "noise", "kind": "laplace", "scale": 1e-3}]


def _spec(labels: np.ndarray | None = None, **kwargs: Any) -> ScoringSpec:
    labels = np.random.default_rng(5).integers(0, 2, 120) if labels is None else labels
    n = len(labels)
    hidden = HiddenTestSet(tuple(f"r{i}" for i in range(n)), labels, 2, public_split_mask(n, 0.5, seed=3))
    return ScoringSpec(hidden, **kwargs)


def _predictions(n: int, seed: int = 8) -> ParsedPredictions:
    return ParsedPredictions(np.random.default_rng(seed).random(n))


def _offset(result: Any) -> float:
    return float(result.released) - float(result.raw)


def test_the_primary_metric_is_released_exactly_as_evaluate_releases_it() -> None:
    spec = _spec(decimals=None, chain=DefenseChain.from_json(NOISE), also_report=("brier",))
    parsed = _predictions(spec.hidden.n_rows)
    release = release_submission(spec, parsed, submission_id=17)
    alone = evaluate(replace(spec, also_report=()), parsed, submission_id=17)
    assert release.metrics == ("binary_logloss", "brier")
    assert release.primary == alone.results
    assert release.states["binary_logloss"] == alone.states


def test_each_extra_metric_is_keyed_by_the_submission_and_its_name() -> None:
    # The key "submission:<id>:<metric>" is what the site used for also_report metrics before the release
    # model existed: its stored randomness must not move.
    spec = _spec(decimals=None, chain=DefenseChain.from_json(NOISE), also_report=("brier",))
    parsed = _predictions(spec.hidden.n_rows)
    release = release_submission(spec, parsed, submission_id=17)
    brier = evaluate(replace(spec, metric_name="brier", also_report=()), parsed, submission_id="17:brier")
    assert release.results["brier"] == brier.results
    assert release_keys(spec, parsed, 17) == {"binary_logloss": "submission:17", "brier": "submission:17:brier"}


def test_every_reported_metric_draws_its_own_noise() -> None:
    spec = _spec(decimals=None, chain=DefenseChain.from_json(NOISE), also_report=("brier", "accuracy"))
    release = release_submission(spec, _predictions(spec.hidden.n_rows), submission_id=4)
    offsets = {name: _offset(release.results[name]["public"]) for name in release.metrics}
    assert len(set(offsets.values())) == 3


def test_the_same_file_gets_the_same_release_on_every_metric_when_the_host_asks() -> None:
    spec = _spec(
        decimals=None, chain=DefenseChain.from_json(NOISE), also_report=("brier",), same_file_same_score=True
    )
    parsed = _predictions(spec.hidden.n_rows)
    first = release_submission(spec, parsed, submission_id=1)
    second = release_submission(spec, parsed, submission_id=2)
    assert first.results == second.results
    keys = release_keys(spec, parsed, 1)
    assert keys["binary_logloss"].startswith("content:") and keys["brier"] == keys["binary_logloss"] + ":brier"
    assert _offset(first.results["brier"]["public"]) != _offset(first.results["binary_logloss"]["public"])


def test_an_undefined_extra_metric_releases_nothing_and_the_submission_is_still_scored() -> None:
    labels = np.zeros(40, dtype=np.int64)  # a single class: AUC is undefined on every split
    spec = _spec(labels, decimals=5, also_report=("auc",))
    release = release_submission(spec, _predictions(40), submission_id=1)
    assert release.reject is None
    assert "auc" in release.withheld
    assert release.released_text("auc", "public") is None
    assert release.released_text("binary_logloss", "public") is not None


def test_a_non_finite_primary_score_fails_the_release() -> None:
    labels = np.zeros(40, dtype=np.int64)
    spec = _spec(labels, metric_name="auc", also_report=("binary_logloss",))
    with pytest.raises(NonFiniteScoreError):
        release_submission(spec, _predictions(40), submission_id=1)


class _Count(Defense):
    """Counts its calls in its state; rejects the release once the count reaches ``limit``."""

    name = "test_release_count"
    stage = Stage.RELEASE

    def __init__(self, limit: int = 10**9) -> None:
        self.limit = limit

    def initial_state(self) -> dict[str, Any]:
        return {"calls": 0}

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        ctx.state["calls"] += 1
        if ctx.state["calls"] >= self.limit:
            ctx.reject = "too many submissions"
        return score


def test_each_metric_keeps_its_own_state_per_split() -> None:
    spec = _spec(chain=DefenseChain([_Count()]), also_report=("brier",))
    parsed = _predictions(spec.hidden.n_rows)
    first = release_submission(spec, parsed, submission_id=1)
    second = release_submission(spec, parsed, submission_id=2, states=first.states)
    for name in ("binary_logloss", "brier"):
        assert second.states[name]["public"] == [{"calls": 2}]
        assert second.states[name]["private"] == [{"calls": 2}]
    only_primary = {"binary_logloss": second.states["binary_logloss"]}
    fresh_brier = release_submission(spec, parsed, submission_id=3, states=only_primary)
    assert fresh_brier.states["brier"]["public"] == [{"calls": 1}]  # a missing state starts fresh


def test_a_rejection_by_the_primary_chain_rejects_the_whole_submission() -> None:
    spec = _spec(chain=DefenseChain([_Count(limit=2)]), also_report=("brier",))
    parsed = _predictions(spec.hidden.n_rows)
    first = release_submission(spec, parsed, submission_id=1, splits=("public",))
    second = release_submission(spec, parsed, submission_id=2, states=first.states, splits=("public",))
    assert second.reject == "too many submissions"
    assert "brier" not in second.results  # nothing else was scored
    assert second.states == first.states  # and no state moved
    assert second.released_text("binary_logloss", "public") is None


def test_reported_metrics_drop_duplicates_and_the_primary_and_are_validated() -> None:
    spec = _spec(also_report=("auc", "binary_logloss", "auc"))
    assert spec.reported_metrics == ("binary_logloss", "auc")
    assert [s.metric_name for s in spec.metric_specs.values()] == ["binary_logloss", "auc"]
    assert spec.metric_specs["auc"].metric is get_metric("auc")
    hidden = HiddenTestSet(("a", "b", "c"), np.array([0, 1, 2]), 3, np.ones(3, bool))
    multiclass = ScoringSpec(hidden, metric_name="multiclass_logloss", also_report=("auc",))
    with pytest.raises(ConfigurationError, match="does not support multiclass"):
        release_submission(multiclass, ParsedPredictions(np.full((3, 3), 1 / 3)), submission_id=1, splits=("all",))
