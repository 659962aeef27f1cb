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

import math
from typing import Any, cast

from attacks.capacity.attack import capacity_attack
from attacks.capacity.design import (
    conway_guy_per_query,
    counting_bound,
    powers_of_two_per_query,
)
from attacks.capacity.kary import lattice_room
from attacks.capacity.split import capacity_split_attack
from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.fallbacks import capacity_fallbacks, split_failure_plans
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


#: Ranks of the plans (:mod:`attacks.plan`): binary log loss, K-class log loss and kl, paper 001's other losses.
RANK_BINARY, RANK_LOG_LOSS, RANK_SPLIT_BREGMAN, RANK_BREGMAN = 70, 80, 110, 120
#: Paper 001's losses that ``capacity_split`` runs on with their own row losses (``kl`` plays as the log loss).
SPLIT_BREGMAN_METRICS = frozenset({"itakura_saito", "brier", "norm_like"})
#: … and those ``capacity`` runs on (every row scored).
CAPACITY_METRICS = frozenset({"binary_logloss", "multiclass_logloss", "kl", "brier", "norm_like", "itakura_saito"})


def expected_queries(facts: BoardFacts, noise_bound: float = 0.0) -> float:
    """Queries ``capacity`` is expected to need on a binary board: ``N`` over the counting bound (it measures
    91–109 % of it); unknown (infinite) on K classes."""
    if facts.n_classes != 2:
        return math.inf
    per_query = counting_bound(facts.n_rows, facts.decimals, eps=facts.eps, noise_bound=noise_bound)
    return float(math.ceil(facts.n_rows / max(per_query, 1)))


def capacity_beats_bregman(facts: BoardFacts) -> bool:
    """Whether ``capacity`` carries more labels per query than ``bregman_powers`` on this noise-free Bregman
    board: on Brier and the norm-like loss whenever its lattice has room (N = 2,201, 5 decimals: Brier 7.4
    labels per query against bregman_powers' 6 binary, 4.6 at K = 3, about 2 against 1 at K = 6; norm-like
    9.1 against 8 binary — ``benchmarks/capacity_multiclass --metrics``, the README's paper-001 table); never on
    Itakura–Saito, where float64 rounding caps both near the same count (42 against 43 binary)."""
    if facts.family not in ("brier", "norm_like"):
        return False
    return lattice_room(cast(Oracle, facts)) >= 2  # reads only the board's public facts


def _exact_gate(facts: BoardFacts) -> str | None:
    """Why the lattice designs cannot run here, or ``None``."""
    if not facts.open_release:
        return "needs every score released afresh over the same rows (refusals, a Ladder or a fresh subset seen)"
    if not facts.float64:
        return f"{facts.arithmetic} arithmetic: the lattice bounds float64 evaluation"
    return None


def _noted(facts: BoardFacts) -> str:
    return f" with noise bound {facts.noise_bound:.3g}" if facts.noise else ""


def capacity_fits(facts: BoardFacts) -> Plan | Refusal:
    """Every row scored, every score released: binary log loss (rank 70), K-class log loss and kl (80), Brier and
    the norm-like loss without noise where its lattice has room (120)."""
    gate = _exact_gate(facts)
    if gate is not None:
        return Refusal("capacity", gate)
    if facts.split:
        return Refusal("capacity", "only a public split is scored: capacity_split reads it")
    bound = facts.noise_bound
    if facts.binary_logloss:
        if facts.noise:
            return Plan("capacity", {"noise_bound": bound}, f"noise seen (spread {facts.seen_spread:.3g}): capacity "
                        f"with noise bound {bound:.3g}", rank=RANK_BINARY, cost=expected_queries(facts, bound))
        return Plan("capacity", {}, "no noise, every row scored: capacity-optimal construction", rank=RANK_BINARY,
                    cost=expected_queries(facts))
    if facts.metric in ("multiclass_logloss", "kl"):
        # kl of a one-hot label is the log loss (binary or K-class), so it plays the log-loss construction.
        loss = "multiclass log loss" if facts.metric == "multiclass_logloss" else "kl (the log loss)"
        return Plan("capacity", {"noise_bound": bound}, f"{loss} ({facts.n_classes} classes), every row scored: the "
                    f"K-ary capacity construction{_noted(facts)}", rank=RANK_LOG_LOSS,
                    cost=expected_queries(facts, bound))
    if facts.family in CAPACITY_METRICS and not facts.noise and capacity_beats_bregman(facts):
        return Plan("capacity", {}, f"{facts.metric} ({facts.n_classes} classes), every row scored, no noise: the "
                    "K-ary capacity lattice on the metric's own row losses (more labels per query than "
                    "bregman_powers here)", rank=RANK_BREGMAN, cost=expected_queries(facts))
    why = ("noise, or no room in the lattice, on this loss (bregman_powers reads it)"
           if facts.family in CAPACITY_METRICS else "not a metric it runs on")
    return Refusal("capacity", f"{facts.metric}: {why}")


def _unstated(facts: BoardFacts) -> dict[str, bool]:
    """``stated_count=False`` where the fingerprint saw a fresh subset of the rows scored: the page's public count
    is then not the scored one, and a design on it would spend queries before the releases contradict it."""
    return {"stated_count": False} if facts.seen is not None and facts.seen.subsetting else {}


def capacity_split_fits(facts: BoardFacts) -> Plan | Refusal:
    """Only the public split scored (disclosed, or rows that never move): binary log loss (rank 70), K-class
    log loss and kl (80), Brier, norm-like and Itakura–Saito (110)."""
    gate = _exact_gate(facts)
    if gate is not None:
        return Refusal("capacity_split", gate)
    if not facts.split:
        return Refusal("capacity_split", "every row is scored: capacity reads it")
    bound = facts.noise_bound
    hidden = {"hidden_split": True} if facts.public_fraction is None else {}
    hidden.update(_unstated(facts))
    undisclosed = " (not disclosed: rows that never move)" if facts.public_fraction is None else ""
    if facts.binary_logloss:
        if facts.noise:
            params = {"noise_bound": bound, **_unstated(facts)}
            return Plan("capacity_split", params, f"noise seen (spread {facts.seen_spread:.3g}) and "
                        f"only the public split scored: split-aware capacity with noise bound {bound:.3g}",
                        rank=RANK_BINARY)
        return Plan("capacity_split", _unstated(facts), "only the public split moves the score: split-aware capacity",
                    rank=RANK_BINARY)
    if facts.metric in ("multiclass_logloss", "kl"):
        loss = "multiclass log loss" if facts.metric == "multiclass_logloss" else "kl (the log loss)"
        return Plan("capacity_split", {"noise_bound": bound, **hidden}, f"{loss} ({facts.n_classes} classes), only "
                    f"the public split scored{undisclosed}: split-aware capacity (K + 1 states a row, the public count "
                    f"measured){_noted(facts)}", rank=RANK_LOG_LOSS)
    if facts.family in SPLIT_BREGMAN_METRICS:
        # bregman_powers scores every row; only the split-aware construction tells "private" from a label here.
        return Plan("capacity_split", {"noise_bound": bound, **hidden}, f"{facts.metric} ({facts.n_classes} "
                    f"classes), only the public split scored{undisclosed}: split-aware capacity on the metric's own "
                    f"row losses (K + 1 states a row, the public count from reciprocal pairs){_noted(facts)}",
                    rank=RANK_SPLIT_BREGMAN)
    return Refusal("capacity_split", f"{facts.metric}: not a metric it runs on")


def _capacity_board(facts: BoardFacts) -> bool:
    return facts.family in CAPACITY_METRICS and facts.float64 and facts.public_fraction is None


def _capacity_split_board(facts: BoardFacts) -> bool:
    return facts.family in CAPACITY_METRICS and facts.float64 and facts.public_fraction is not None


# Both are exact: ``attacks.run`` confirms their claims with one query (:mod:`attacks.confirm`), so through the
# registry the attack's own final check (``check``, on for direct calls) is off unless asked for.
@register("capacity", truncatable=True, fits=capacity_fits, fallbacks=capacity_fallbacks,
          applies=_capacity_board, paper="ours (FIELD_NOTES' counting bound; paper 001 §3 for its losses)",
          board="binary or K-class log loss, kl, Brier, norm-like, Itakura–Saito; float64; every row scored",
          queries="N / (log2 W + 2.5) binary: 90–93 % of the counting bound at 5 or 8 decimals",
          precision="any released decimals; float64 arithmetic; noise up to its noise_bound")
def capacity(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """Recover every label (binary or multiclass log loss, ``kl``, ``brier``, ``norm_like``, ``itakura_saito``;
    every row scored; a public fraction of 1 is every row). ``budget``: the submissions to spend; a run it cuts
    keeps the labels decoded so far (the rest ``-1``). Params: ``noise_bound`` (assumed max
    |released - true|, default 0), ``check`` (final verification query, default off here, sent only within the
    budget), and binary design knobs ``top_mode``
    (``"subset"``/``"count"``), ``top`` (top-digit rows), ``extra`` (subset top: rows beyond log2 V).

    Paper: ours — mixed-radix lattice weights against FIELD_NOTES' counting bound; paper 001 §3 (App. C) for the
    Bregman losses it also reads. Queries: about ``N / (log2 W + 2.5)`` on binary boards (``W`` the weight
    range the released window leaves), 90–93 % of the counting bound. Precision: any released decimals, a
    float64 server, noise up to ``noise_bound``.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(0).integers(0, 2, 40)
    >>> result = run("capacity", LocalOracle(labels, decimals=5))
    >>> bool((result.labels == labels).all()), result.queries
    (True, 3)
    >>> classes = np.random.default_rng(0).integers(0, 3, 30)
    >>> result = run("capacity", LocalOracle(classes, metric="multiclass_logloss", decimals=5))
    >>> bool((result.labels == classes).all()), result.queries
    (True, 4)
    """
    params.setdefault("check", False)
    return capacity_attack(oracle, budget=budget, **params)


@register("capacity_split", truncatable=True, fits=capacity_split_fits, fallbacks=split_failure_plans,
          applies=_capacity_split_board, paper="ours (the capacity design with a third state a row: not scored)",
          board="the metrics capacity runs on; float64; only a public split scored (disclosed or not)",
          queries="the public count (reciprocal pairs), then the K + 1-state design",
          precision="any released decimals; float64 arithmetic; noise up to its noise_bound")
def capacity_split(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """Public labels and the public mask from public-split scores (binary or multiclass log loss). ``budget``:
    the submissions to spend (a cut run keeps what it decoded, except a float64 release's mirrored design, which
    fails rather than exceed it); params ``noise_bound``, ``top``, ``n_public`` (default: measured with
    reciprocal pairs), ``check``, ``hidden_split`` (the board scores fewer rows than it says: measure the count
    anyway).

    Paper: ours (capacity's design with a third state a row, "not scored"). Queries: the ``K + 1``-state design; the
    public count is read from the stated fraction (``round(fraction·N)``, as the site draws the split), measured by
    reciprocal pairs only where the page states none or the releases contradict it. Precision: any released
    decimals, a float64 server, noise up to ``noise_bound``. Forty rows, half of them public: the public labels,
    ``-1`` on the private rows:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(0).integers(0, 2, 40)
    >>> oracle = LocalOracle(labels, decimals=5, public_fraction=0.5)
    >>> public = oracle.spec.split_rows["public"]  # the host's secret, for the check
    >>> result = run("capacity_split", oracle)
    >>> expected = np.full(40, -1)
    >>> expected[public] = labels[public]
    >>> result.labels.tolist() == expected.tolist(), result.details["n_public"], result.queries
    (True, 20, 4)
    """
    params.setdefault("check", False)
    return capacity_split_attack(oracle, budget=budget, **params)
