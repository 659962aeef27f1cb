"""Pluggable, composable leaderboard defenses (pure Python: no Django, no Celery).

``DefenseChain.from_json([...])`` builds a validated chain; ``available()`` lists the registered names,
``catalogue()`` describes each with its parameters.
Importing this package registers every built-in defense.
"""

from __future__ import annotations

# Importing a defense module registers the defenses it defines.
from defenses import feedback as _feedback  # noqa: F401
from defenses import ladder as _ladder  # noqa: F401
from defenses import noise as _noise  # noqa: F401
from defenses import privacy_budget as _privacy_budget  # noqa: F401
from defenses import probe_detector as _probe_detector  # noqa: F401
from defenses import randomized_response as _randomized_response  # noqa: F401
from defenses import rounding as _rounding  # noqa: F401
from defenses import subsetting as _subsetting  # noqa: F401
from defenses import thresholdout as _thresholdout  # noqa: F401
from defenses.base import (
    REGISTRY,
    Defense,
    DefenseConfigError,
    DefenseContext,
    MetricView,
    Param,
    ScoringView,
    Stage,
)
from defenses.chain import ChainOutcome, DefenseChain, derive_rng

__all__ = [
    "REGISTRY",
    "ChainOutcome",
    "Defense",
    "DefenseChain",
    "DefenseConfigError",
    "DefenseContext",
    "MetricView",
    "Param",
    "ScoringView",
    "Stage",
    "available",
    "catalogue",
    "derive_rng",
]


def available() -> list[str]:
    """Names of the registered defenses, sorted."""
    return sorted(REGISTRY)


def catalogue() -> list[dict[str, object]]:
    """Every registered defense as plain JSON, sorted by name: its name, stage, a one-line summary (the first
    paragraph of its docstring), citation and parameters (:class:`Param`), for a host choosing a chain."""
    out: list[dict[str, object]] = []
    for name in available():
        cls = REGISTRY[name]
        summary = (cls.__doc__ or "").strip().split("\n\n")[0].replace("``", "")
        out.append({
            "name": name, "stage": cls.stage.name.lower(), "summary": " ".join(summary.split()),
            "citation": cls.citation, "parameters": [param.to_json() for param in cls.parameters],
        })
    return out
