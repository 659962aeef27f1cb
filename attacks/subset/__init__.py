"""Attacks that model randomized *label-side* releases (issue 10, item 1): ``subsetting`` (a fresh random subset
of rows scored per submission, exact) and ``randomized_response`` (labels flipped afresh per submission, decoded
exactly per query and voted with a sequential likelihood-ratio test). Importing the package registers them."""

from __future__ import annotations

from typing import Any

from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackResult
from attacks.subset.attack import subsetting_attack
from attacks.subset.response import randomized_response_attack

__all__ = ["randomized_response_attack", "subsetting_attack"]


# Both check themselves (every label comes out of an exhaustive decode of its own release); a confirmation query
# as ``attacks.run`` adds for exact attacks would see another subset / other flips and prove nothing.
@register("subsetting", exact=False)
def subsetting(oracle: Oracle, **params: Any) -> AttackResult:
    """Exact labels through fresh random subsets. Params: ``subset_size`` or ``fraction`` (disclosed),
    ``max_queries``, ``margin``."""
    return subsetting_attack(oracle, **params)


@register("randomized_response", exact=False)
def randomized_response(oracle: Oracle, **params: Any) -> AttackResult:
    """Labels through fresh randomized response, each with its posterior. Params: ``p`` (disclosed flip rate),
    ``max_queries``, ``target``, ``margin``."""
    return randomized_response_attack(oracle, **params)
