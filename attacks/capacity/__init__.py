"""``capacity``: our capacity-oriented label-inference attack on log-loss leaderboards (binary and K classes).

Construction (ours; see :mod:`attacks.capacity.attack`): mixed-radix digits on an integer lattice of label
differences ``d = k·u`` — ``u`` just above the summed-loss window a release leaves (``N·10^-decimals`` plus
noise and a rigorous float64 error bound), every row's weight at most ``W = floor(A/u)``,
``A = ln((1-eps)/eps)`` — with a *top digit* whose span costs no weight: a subset-sum digit of heavy fresh
rows (non-distinct sums, small collision sets) or a count digit. Every ambiguity a query leaves is carried
and resolved by later queries, so every labeling is recovered exactly, adversarial ones included.
``capacity_split`` is the split-aware variant for a leaderboard that releases only the public-split score
(:mod:`attacks.capacity.split`; with rounded releases, single three-state queries decoded by exact
enumeration, :mod:`attacks.capacity.ternary`).

On a multiclass log-loss board both run the K-ary construction (:mod:`attacks.capacity.kary`: a weight per
row and class on the same lattice; measured 90–115 % of the K-ary bound ``K^m <= m·M + 1`` at 5 decimals for
K = 3, 6, 10, ``benchmarks/capacity_multiclass.py``) and, with a split, ``K + 1`` states a row. Without
``n_public``, ``capacity_split`` measures the number of public rows (:mod:`attacks.capacity.public_count`).
Every refusal (another metric, an MPFR server, a split given to ``capacity``) is an :class:`AttackFailed`
with the reason.

Paper 001's losses: ``kl`` is the log loss (binary or K-class) and plays exactly as it; ``brier``,
``norm_like`` and ``itakura_saito`` (binary and K-class, every row scored) run the K-ary lattice on the
metric's own row losses (:mod:`attacks.capacity.row_loss`: a row designed for chosen label offsets, its exact
losses and the server's rounding of its formula). Brier and the norm-like loss reach 93 % of their bound on
binary boards but lose ground with K (a probability row cannot spread its K label losses over the whole
spread); Itakura–Saito is capped by float64 rounding (≈ 42 binary labels a query against a bound of 61).

Queries (binary): about ``N / (log2 W + 2.5)`` — measured (``benchmarks/capacity_table.py``) 90–93 % of the counting
bound ``2^m <= m·M + 1`` of FIELD_NOTES with 5 or 8 decimals (e.g. 9.3 labels/query at N = 25,000 and
5 decimals, bound 10; 15.3 at N = 306, bound 17) and 39.7–43.8 with the float64 value (bound 43).
Time: O(N) float work per query plus a few 128-bit logarithms and a ``2^18``-entry table lookup; the weight
search for carried digits is a fast exact replica of the seeded search (:mod:`attacks.capacity.search`, same
queries) — about 3.4x less of the attacker's own CPU than the code as first written at N = 25,000
(``benchmarks/attacker_speed.py``; ``reference=True`` runs the code as first written).
Precision: any released precision (``decimals`` or float64), with an optional assumed noise bound; the
decoder bounds the server's float64 evaluation error rigorously, raises :class:`AttackFailed` when the
observations contradict the model, and never reports a label that some labeling consistent with
every released score contradicts.
"""

from __future__ import annotations

from typing import Any

from attacks.capacity.attack import capacity_attack
from attacks.capacity.design import (
    conway_guy_per_query,
    counting_bound,
    powers_of_two_per_query,
)
from attacks.capacity.split import capacity_split_attack
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackResult

__all__ = [
    "capacity",
    "capacity_attack",
    "capacity_split",
    "capacity_split_attack",
    "conway_guy_per_query",
    "counting_bound",
    "powers_of_two_per_query",
]


# Both are exact: ``attacks.run`` confirms their claims with one query (:mod:`attacks.confirm`), so through the
# registry the attack's own final check (``check``, on for direct calls) is off unless asked for.
@register("capacity")
def capacity(oracle: Oracle, **params: Any) -> AttackResult:
    """Recover every label (binary or multiclass log loss, ``kl``, ``brier``, ``norm_like``, ``itakura_saito``;
    every row scored; a public fraction of 1 is every row). Params: ``noise_bound`` (assumed max
    |released - true|, default 0), ``check`` (final verification query, default True), ``max_queries``, and
    binary design knobs ``top_mode``
    (``"subset"``/``"count"``), ``top`` (top-digit rows), ``extra`` (subset top: rows beyond log2 V)."""
    params.setdefault("check", False)
    return capacity_attack(oracle, **params)


@register("capacity_split")
def capacity_split(oracle: Oracle, **params: Any) -> AttackResult:
    """Public labels and the public mask from public-split scores (binary or multiclass log loss); params
    ``noise_bound``, ``top``, ``n_public`` (default: measured with reciprocal pairs), ``check``,
    ``max_queries``, ``hidden_split`` (the board scores fewer rows than it says: measure the count anyway)."""
    params.setdefault("check", False)
    return capacity_split_attack(oracle, **params)
