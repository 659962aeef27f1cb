"""Helpers for the defense tests: views over real metrics, a scripted metric, and one-call releases."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from defenses import DefenseChain, MetricView, ScoringView
from defenses.base import DefenseContext
from defenses.chain import derive_rng
from scoring.pipeline import metric_view as pipeline_metric_view

SECRET = 20261121


def metric_view(name: str = "binary_logloss", eps: float = 1e-15) -> MetricView:
    """The scoring core's metric, seen as the pipeline shows it to defenses."""
    return pipeline_metric_view(name, eps)


def scripted_metric(higher_is_better: bool = False) -> MetricView:
    """A metric whose per-row value is the prediction itself: a constant vector ``c`` scores exactly ``c``."""
    return MetricView(
        name="scripted",
        higher_is_better=higher_is_better,
        score=lambda p, y: float(np.mean(p)),
        row_values=lambda p, y: np.asarray(p, dtype=np.float64),
        eps=1e-15,
    )


def view(
    predictions: Any, labels: Any, metric: MetricView | None = None, n_classes: int = 2, split: str = "public"
) -> ScoringView:
    return ScoringView(
        predictions=np.asarray(predictions, dtype=np.float64),
        labels=np.asarray(labels, dtype=np.int64),
        n_classes=n_classes,
        metric=metric or metric_view(),
        split=split,
    )


def context(key: str = "submission:1", state: dict[str, Any] | None = None, position: int = 0,
            name: str = "", split: str = "public") -> DefenseContext:
    """A context derived exactly as ``DefenseChain`` derives it for ``position``."""
    return DefenseContext(
        rng=derive_rng(SECRET, key, split, position),
        state=state if state is not None else {},
        submission_key=key,
        competition_rng=derive_rng(SECRET, "competition", split, position, name),
    )


class Participant:
    """One participant's in-memory chain state; ``persist`` round-trips it through JSON after every call,
    as the site does when it stores the state and a restarted worker loads it back."""

    def __init__(self, chain: Any, *, persist: bool = False) -> None:
        self.chain = chain if isinstance(chain, DefenseChain) else DefenseChain.from_json(chain)
        self.states: list[dict[str, Any]] | None = None
        self.persist = persist
        self.count = 0

    def submit(self, v: ScoringView, key: str | None = None) -> Any:
        self.count += 1
        outcome = self.chain.release(
            v, states=self.states, secret=SECRET, submission_key=key or f"submission:{self.count}"
        )
        self.states = json.loads(json.dumps(outcome.states)) if self.persist else outcome.states
        return outcome
