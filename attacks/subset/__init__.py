"""Attacks that model randomized *label-side* releases (issue 10, item 1): ``subsetting`` (a fresh random subset
of rows scored per submission, exact) and ``randomized_response`` (labels flipped afresh per submission, decoded
exactly per query and voted with a sequential likelihood-ratio test). Importing the package registers them.

Measured (``benchmarks/subset_rr_attacks.py``, 5 decimals; ratio = submissions / the information bound's fewest):
every label recovered on breast cancer (171 rows), 2,201 and 25,000 seeded rows; subsetting 0.9 at 3.1–3.2×
(171), 4.1× (2,201), 6.2× (25,000); subsetting 0.5 at 3.1–3.5×, 4.7–4.8×, 6.5×; fresh flips p = 0.05 at 5.9×,
7.6×, 14× and p = 0.2 at 7.1×, 10.6×. Why not 3×: a probe group's release separates at most ~``K·A/W``
outcomes and every row has a state within ``ln 2`` of "not scored", so only ``log3(ln 2/W)`` rows decode fully
(none at 25,000 rows) — the bound ``f × log2(A·10^d)`` assumes every release value is usable, which no
single-group design reaches even without a defense (``capacity`` on the same boards: 1.5–2.3×). Under fresh
flips each row must be seen ``≈ ln(N/target)/((1−2p)·ln((1−p)/p))`` times to be vouched for (Wald), a
reliability cost the entropy bound ``(1−2p)²·C`` does not count (see :mod:`attacks.subset.response`)."""

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
