"""Pluggable, composable leaderboard defenses (pure Python: no Django, no Celery).

``DefenseChain.from_json([...])`` builds a validated chain; ``available()`` lists the registered names.
Importing this package registers every built-in defense.
"""

from __future__ import annotations

from defenses import rounding as _rounding  # noqa: F401  (registers the built-in defenses)
from defenses.base import REGISTRY, Defense, DefenseConfigError, DefenseContext, MetricView, ScoringView, Stage
from defenses.chain import ChainOutcome, DefenseChain, derive_rng

__all__ = [
    "REGISTRY",
    "ChainOutcome",
    "Defense",
    "DefenseChain",
    "DefenseConfigError",
    "DefenseContext",
    "MetricView",
    "ScoringView",
    "Stage",
    "available",
    "derive_rng",
]


def available() -> list[str]:
    """Names of the registered defenses, sorted."""
    return sorted(REGISTRY)
