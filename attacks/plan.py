"""Pick the strongest applicable attack for what the fingerprint saw, or the one the caller forced.

The order, strongest first (every pick states its reason in :attr:`Plan.reason`):

* probes refused or withheld (a probe detector, an exhausted privacy budget): on a float64 binary log-loss
  board that scores every row, ``camouflage`` (the exact design as moves of an honest-looking base, escalating
  its cover when a query is refused; if even that is refused, auto falls back to the best guess); else the best
  guess: ``boosting`` on a binary board (with ±0.25 vectors, which are not the 0/1 vectors a detector looks
  for), else ``majority``;
* a board that re-releases earlier scores (a Ladder): ``ladder`` (threshold questions on the fixed step's
  acceptance boundary, or ballast past the parameter-free test; :mod:`attacks.ladder`) continuing the account
  from the leader the fingerprint's edge probes left (``start``), else on a fresh account when the oracle has
  one, else ``boosting`` with ``accept="improvement"``;
* noisy releases that stop (a privacy budget): ``budgeted`` (the releases left spent a few rows each);
* rows that never move the score on a board without a private split (Thresholdout's secret reference side):
  ``thresholdout`` (:mod:`attacks.thresholdout`);
* binary log loss without noise, a fresh random subset scored per submission: ``subsetting`` (exact, the
  not-scored state modelled); the same row's label flipping between submissions (fresh randomized response):
  ``randomized_response`` (exact observations voted per row). ``auto`` also turns to both, in turn, when
  ``capacity`` fails on a board that looked plain (:func:`after_failure_plans`);
* binary log loss, float64, no noise, every row scored: ``capacity`` (ours, most labels per query), with
  the observed decimals — unless the board releases AUC beside the log loss and paper 004's
  ``auc_logloss_ranks`` (or ``auc_logloss``) plans fewer queries (:func:`auc_logloss_plan`: float64 at
  N = 2,201, 44 against 52); if it fails, ``capacity`` on the log loss alone;
* binary log loss, only the public split scored: ``capacity_split`` (tells "not public" from "label 0");
* binary log loss with noise: ``capacity`` (or ``capacity_split``) with a noise bound of ten times the scale
  estimated below, else ``robust_batched`` (paper 000, Algorithm 3) with a Laplace scale taken from
  the observed spread;
* binary log loss on an MPFR server: ``prime_batched`` (paper 000, Algorithm 1, batches from φ);
* multiclass log loss, float64: ``capacity`` (the K-ary construction) or, with a public split,
  ``capacity_split`` (``K + 1`` states a row), with the noise bound as above when noise is seen;
* ``kl`` plays as the log loss it is (binary or K-class: ``capacity``, ``capacity_split``);
* ``brier``, ``norm_like`` and ``itakura_saito`` with only the public split scored (disclosed or not):
  ``capacity_split`` on the metric's own row losses, with the noise bound as above when noise is seen;
* ``brier`` and ``norm_like`` without noise, every row scored: ``capacity`` on the metric's row losses when its
  lattice has room (:func:`capacity_beats_bregman`); else and under noise, and on ``itakura_saito``,
  ``bregman_powers`` (doubling its noise bound under noise);
* multiclass log loss on an MPFR server: ``prime_powers`` (paper 000, Theorem 8);
* anything else binary: ``boosting``; anything else: ``majority`` (the majority class, from the balance).

Attacks missing from the registry are skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import attacks.camouflage  # registers camouflage
import attacks.capacity  # registers capacity and capacity_split
import attacks.ladder  # noqa: F401  (registers ladder, ladder_fixed, ladder_free)
from attacks.balance import share_se
from attacks.fingerprint import Fingerprint
from attacks.oracle import Oracle
from attacks.registry import available

#: Observed spread of two identical probes → a Laplace scale with room to spare. For Laplace noise of scale
#: b the expected |X − Y| is 1.5·b; a factor 2 over the observed spread covers an unlucky small sample.
NOISE_SCALE_FACTOR = 2.0
#: The capacity attack's assumed bound on |released − true| as a multiple of that scale. Laplace tails fall as
#: e^(−t/b): at 10 × (≥ 2b) a query exceeds the bound with probability below e^-20, so a run of a few hundred
#: queries holds, while the lattice loses only ~1 bit per query (measured: Laplace 1e-3 on 171 rows, bound
#: 20b, 53 queries; robust_batched fails there). If the noise still breaks it, capacity fails loudly.
NOISE_BOUND_FACTOR = 10.0
#: Random vectors boosting plays when no budget is given.
BOOSTING_K = 100
#: Margin of boosting's vectors when the board refuses probes: ±0.25 around 1/2 is not a 0/1 vector.
CAMOUFLAGE_MARGIN = 0.25


def noise_bound(spread: float) -> float:
    """The exact attacks' bound on |released − true| for a noise spread (or a released half-unit) of ``spread``."""
    return NOISE_BOUND_FACTOR * NOISE_SCALE_FACTOR * spread


def seen_noise_bound(report: Fingerprint) -> float:
    """:func:`noise_bound` of the noise the fingerprint saw (0 when it saw none)."""
    return noise_bound(max(report.noise_spread, report.tolerance)) if report.noise else 0.0


@dataclass
class Plan:
    """The attack to run, its parameters, and why it was chosen."""

    attack: str
    params: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    forced: bool = False

    @property
    def exact(self) -> bool:
        """Whether the planned attack vouches for its labels (not a best guess)."""
        return self.attack not in BEST_GUESS


#: Losses paper 001's constructions decode (``norm_like:α`` by its base name); binary log loss keeps ``capacity``.
BREGMAN_METRICS = frozenset({"kl", "itakura_saito", "brier", "norm_like", "multiclass_logloss"})

#: Paper 001's losses that ``capacity_split`` runs on with their own row losses (``kl`` plays as the log loss).
SPLIT_BREGMAN_METRICS = frozenset({"itakura_saito", "brier", "norm_like"})

#: Metrics on logits with an attack of their own name (paper 001 §4, App. D: through the inverse activation).
LOGIT_METRICS = frozenset({"softmax_ce", "sigmoid_ce"})

#: Attacks whose labels are a best guess, not exact.
BEST_GUESS = frozenset({"boosting", "majority"})


def capacity_beats_bregman(oracle: Oracle) -> bool:
    """Whether ``capacity`` carries more labels per query than ``bregman_powers`` on this noise-free Bregman
    board: on Brier and the norm-like loss whenever its lattice has room (N = 2,201, 5 decimals: Brier 7.4
    labels per query against bregman_powers' 6 binary, 4.6 at K = 3, about 2 against 1 at K = 6; norm-like
    9.1 against 8 binary — ``benchmarks/capacity_multiclass --metrics``, the README's paper-001 table); never on
    Itakura–Saito, where float64 rounding caps both near the same count (42 against 43 binary)."""
    from attacks.capacity.kary import lattice_room

    if oracle.metric.split(":")[0] not in ("brier", "norm_like"):
        return False
    return lattice_room(oracle) >= 2


def load_attacks() -> list[str]:
    """Every registered attack name."""
    return available()


def best_guess_plan(
    oracle: Oracle, report: Fingerprint, reason: str, *, seed: int = 0, query_budget: int | None = None,
    accept: str = "threshold", margin: float = 0.5,
) -> Plan:
    """The best guess for this board: ``boosting`` (binary) floored at the majority class, else ``majority``."""
    if oracle.n_classes == 2 and "boosting" in available():
        k = BOOSTING_K if query_budget is None else query_budget
        if k >= 1:
            params: dict[str, Any] = {"k": k, "seed": seed, "accept": accept, "margin": margin}
            noise = None if report.noise is None else (max(report.noise_spread, report.tolerance) if report.noise
                                                       else 0.0)
            if noise is not None:
                params["noise"] = noise
            if report.balance is not None:
                params["prior"] = report.balance[1]
                se = share_se(oracle.metric, oracle.eps, noise)
                if se is None or se > 0:
                    # One noisy release measured it: boosting re-measures while the majority class is in doubt.
                    params["prior_se"] = 0.5 if se is None else se
            return Plan("boosting", params, reason)
    return Plan("majority", {"rates": report.balance}, reason)


def fresh_account(oracle: Oracle) -> int | None:
    """An account after the current one that nothing was submitted from yet (oracles with several accounts)."""
    accounts = int(getattr(oracle, "accounts", 1) or 1)
    following = int(getattr(oracle, "account", 0)) + 1
    return following if following < accounts else None


def _plain_binary(oracle: Oracle, report: Fingerprint) -> bool:
    """A float64 binary log-loss board that released every probe, without noise or a Ladder."""
    return (oracle.metric == "binary_logloss" and oracle.n_classes == 2 and not report.noise and not report.ladder
            and not report.rejected and not report.released_nothing
            and str(getattr(oracle, "arithmetic", "float64")) == "float64")


def label_side_plan(oracle: Oracle, report: Fingerprint, names: set[str] | None = None) -> Plan | None:
    """The attack of :mod:`attacks.subset` for a binary log-loss board whose rows or labels are redrawn per
    submission without noise: ``subsetting`` when a fresh subset is seen, ``randomized_response`` when fresh
    flips are (:func:`after_failure_plans` when the fingerprint saw neither and an exact attack failed)."""
    names = set(load_attacks()) if names is None else names
    if not _plain_binary(oracle, report):
        return None
    if report.subsetting and "subsetting" in names:
        return Plan("subsetting", {}, "a fresh random subset of rows is scored per submission: exact decoding "
                    "with the not-scored state modelled (ternary and heavy rows, every outcome enumerated)")
    if report.fresh_flips and "randomized_response" in names:
        return Plan("randomized_response", {}, "the same row's label flipped between submissions (fresh randomized "
                    "response): exact per-query observations voted by a sequential likelihood-ratio test")
    return None


def after_failure_plans(oracle: Oracle, report: Fingerprint, names: set[str] | None = None) -> list[Plan]:
    """What to try, in order, when an exact attack's labels did not hold on a board that looked plain (no
    noise, every row public): rows or labels redrawn per submission that the fingerprint's few probes missed —
    a 90 % subset keeps a probed row in both of two submissions 81 % of the time, and fresh flips at p = 0.05
    rarely flip a probed row. Subsetting goes first when a row moved the mean as if fewer rows were scored.
    Last, on a rounded board, noise below the released resolution that the repeated probes rounded away.
    None on other boards (noise, a Ladder, refusals, a public split) — but on a Brier, norm-like or
    Itakura–Saito board, where ``capacity`` was chosen for a noise-free look, paper 001's powers construction with
    its noise bound found by doubling (§7): noise below the resolution breaks the lattice, not the doubling."""
    names = set(load_attacks()) if names is None else names
    if (oracle.metric.split(":")[0] in BREGMAN_METRICS and oracle.metric not in ("multiclass_logloss", "kl")
            and "bregman_powers" in names and report.public_fraction is None and not report.only_public_moves):
        return [Plan("bregman_powers", {"doubling": True}, f"capacity's labels did not hold on {oracle.metric}: noise "
                     "below the released resolution is likely; the powers construction doubles its noise bound")]
    if not _plain_binary(oracle, report) or report.public_fraction is not None:
        return []
    names = set(load_attacks()) if names is None else names
    plans = []
    if "randomized_response" in names:
        plans.append(Plan("randomized_response", {}, "an exact attack's labels did not hold on a board without "
                          "noise: fresh randomized response is a likely cause (the attack measures the flip rate)"))
    if "subsetting" in names:
        plans.append(Plan("subsetting", {}, "an exact attack's labels did not hold on a board without noise: a "
                          "fresh random subset per submission is a likely cause (the attack measures its size)"))
    estimate = report.scored_rows_estimate
    if estimate is not None and estimate < oracle.n_rows:
        plans.reverse()
    if "capacity" in names and report.decimals is not None and not report.full_precision:
        # Noise below the released resolution: two probes that round to the same text say "no noise", yet a
        # draw near a rounding edge moves a release by a unit (Laplace 1e-5 at 5 decimals). The exact design with
        # a bound of a few units decodes through it (paper 001 §7's doubling trick, started at the resolution).
        bound = noise_bound(report.tolerance)
        plans.append(Plan("capacity", {"noise_bound": bound}, "an exact attack's labels did not hold on a board "
                          f"without visible noise: noise below the released resolution; capacity with noise bound "
                          f"{bound:.3g}"))
    return plans


#: ``capacity_split`` retried after a failure with its noise bound this many times larger each time …
SPLIT_BOUND_GROWTH = 4.0
#: … at most this many times (a failure is cheap: the decoder meets an inconsistent score within a few queries).
SPLIT_RETRIES = 4
#: Under seen noise, first the public count at the probes' spread times 1, 2, 4, 8 …
SPLIT_COUNT_STEPS = 4
#: … and the labels at this many times the count's bound.
SPLIT_DECODE_FACTOR = 4.0


def split_failure_plans(oracle: Oracle, report: Fingerprint, failed: Plan,
                        names: set[str] | None = None) -> list[Plan]:
    """What to try when ``capacity_split`` failed on a rounded float64 board that scores only a public split
    (any metric it runs on): noise the fingerprint did not see (a defense that draws the same noise for the same
    vector looks noise-free to repeated probes) or more than it saw. Paper 001's doubling trick (§7) on the split
    design: the noise bound starts at a few released units (or the bound that failed) and grows
    :data:`SPLIT_BOUND_GROWTH`-fold until the decoding is consistent and the claims hold. Where noise was seen, the
    public count is first measured at its own smaller bound (``count_bound``, climbing from the probes' spread) and
    the labels at :data:`SPLIT_DECODE_FACTOR` times it. Empty elsewhere."""
    names = set(load_attacks()) if names is None else names
    if (failed.attack != "capacity_split" or "capacity_split" not in names or report.decimals is None
            or str(getattr(oracle, "arithmetic", "float64")) != "float64"):
        return []
    bound = max(float(failed.params.get("noise_bound", 0.0)), noise_bound(report.tolerance))
    plans: list[Plan] = []
    spread = float(getattr(report, "noise_spread", 0.0) or 0.0)
    if report.noise and spread > 0 and "count_bound" not in failed.params:
        # The public count first, at bounds climbing from the probes' spread: its calibration pairs are decided
        # by interval intersection, which stays open when the bound is many noise scales (Brier, K = 3, Laplace
        # 1e-4: pinned at 4e-4 in 8 of 8 seeds, open at 8e-4 after 80 queries) and goes wrong when a tail draw
        # passes it (then the decoding fails loudly and the next count bound is tried). The labels at
        # SPLIT_DECODE_FACTOR times the count's bound: the lattice needs room for the tails of many queries.
        for step in range(SPLIT_COUNT_STEPS):
            count = spread * 2.0**step
            plans.append(Plan("capacity_split", {**failed.params, "noise_bound": SPLIT_DECODE_FACTOR * count,
                                                 "count_bound": count},
                              f"capacity_split's scores were inconsistent or its public count stayed open: the count "
                              f"with noise bound {count:.3g}, the labels with {SPLIT_DECODE_FACTOR * count:.3g}"))
    counted = len(plans)
    for _ in range(SPLIT_RETRIES):
        bound *= SPLIT_BOUND_GROWTH if len(plans) > counted or failed.params.get("noise_bound") else 1.0
        params = {**failed.params, "noise_bound": bound}
        plans.append(Plan("capacity_split", params, f"capacity_split's scores were inconsistent: noise the probes "
                          f"did not show (or more than they showed); the split design again with noise bound "
                          f"{bound:.3g} (paper 001 §7's doubling, {SPLIT_BOUND_GROWTH:.0f}-fold)"))
    return plans


#: Paper 004 §3's attacks on a board that releases AUC beside the binary log loss.
AUC_LOGLOSS = ("auc_logloss_ranks", "auc_logloss")


def _auc_logloss_counts(
    oracle: Oracle, report: Fingerprint, names: set[str]
) -> tuple[int, dict[str, int]] | None:
    """(``capacity``'s expected queries on the log loss alone, ``{attack: planned queries}`` of the paper-004
    attacks that would run) on a noise-free float64 binary log-loss board that also releases AUC; ``None``
    elsewhere. Capacity's count is ``N`` over its counting bound (it measures 91–109 % of the bound); the
    paper-004 counts are exact for the number of positives the fingerprint measured
    (:mod:`attacks.paper004.queries`)."""
    if "auc" not in tuple(getattr(oracle, "also_report", ()) or ()) or not hasattr(oracle, "submit_all"):
        return None
    from attacks.capacity.design import counting_bound
    from attacks.paper004.queries import planned_queries

    n = oracle.n_rows
    positives = n // 2 if report.balance is None else round(report.balance[1] * n)
    capacity_queries = math.ceil(n / max(counting_bound(n, oracle.decimals, eps=oracle.eps), 1))
    counts = {name: planned_queries(oracle, name, positives) for name in AUC_LOGLOSS if name in names}
    return capacity_queries, {name: q for name, q in counts.items() if q is not None}


def auc_logloss_plan(
    oracle: Oracle, report: Fingerprint, names: set[str], query_budget: int | None = None
) -> tuple[Plan | None, str]:
    """(paper 004 §3's strongest attack on a board releasing AUC beside the log loss, when it plans fewer queries
    than ``capacity`` is expected to need on the log loss alone and fits ``query_budget`` — they cannot stop
    early, ``capacity`` keeps what it decoded; else ``None`` and a note for capacity's reason, empty on other
    boards). Measured (float64, balanced labels, N = 2,201): ``auc_logloss_ranks`` 44 queries, ``capacity`` 52,
    ``auc_logloss`` 57; at 3 decimals capacity wins, 409 against 502."""
    if "auc" in tuple(getattr(oracle, "also_report", ()) or ()) and not hasattr(oracle, "submit_all"):
        # The bot's checkpointed oracle records one released value per query, so it hides submit_all.
        return None, " (AUC is released too, but this oracle reads one score per submission)"
    counted = _auc_logloss_counts(oracle, report, names)
    if counted is None or not counted[1]:
        return None, ""
    capacity_queries, counts = counted
    attack = min(counts, key=lambda name: (counts[name], AUC_LOGLOSS.index(name)))
    queries = counts[attack]
    if queries >= capacity_queries or (query_budget is not None and queries > query_budget):
        planned = ", ".join(f"{name} {q}" for name, q in counts.items())
        short = "" if queries >= capacity_queries else (
            f"; the budget ({query_budget}) is short of them, and capacity keeps what it decodes")
        return None, (f" (AUC is released too: ~{capacity_queries} queries for capacity against {planned} planned "
                      f"for paper 004's AUC + log-loss attacks{short})")
    others = ", ".join(f"{name} {q}" for name, q in counts.items() if name != attack)
    how = ("the log loss codes rows by powers of two, the AUC more rows by their ranks"
           if attack == "auc_logloss_ranks" else "the log loss codes rows, the AUC splits its windows")
    return Plan(attack, {}, f"the board releases AUC beside the log loss (paper 004 §3): {attack} plans "
                f"{queries} queries ({how}) against ~{capacity_queries} for capacity on the log loss alone"
                + (f" and {others}" if others else "")), ""


def cross_entropy_plans(oracle: Oracle, report: Fingerprint, names: set[str] | None = None) -> list[Plan]:
    """What to try when ``capacity`` gave no labels on a K-class cross-entropy board (multiclass log loss, KL)
    under noise that scores every row: paper 001's doubling trick (§7), which needs no bound from the fingerprint —
    Construction 1 (``bregman_powers``, base-K digits) first, then Theorem 3 (``ce_robust``), whose rows carry
    fewer labels but are the paper's own τ-robust design. Empty on other boards."""
    split = getattr(oracle, "public_fraction", None) is not None or bool(report.only_public_moves)
    if (oracle.metric not in ("multiclass_logloss", "kl") or not report.noise or split
            or str(getattr(oracle, "arithmetic", "float64")) != "float64"):
        return []
    names = set(load_attacks()) if names is None else names
    return [Plan(name, {"doubling": True}, f"capacity gave no labels under noise on {oracle.metric}: {what}, its "
                 "noise bound found by doubling (paper 001 §7)")
            for name, what in (("bregman_powers", "paper 001's powers construction (base-K digits)"),
                               ("ce_robust", "Theorem 3's τ-robust cross-entropy rows")) if name in names]


def choose(
    oracle: Oracle,
    report: Fingerprint,
    *,
    forced: str | None = None,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    query_budget: int | None = None,
) -> Plan:
    """The plan for ``oracle`` given its fingerprint; ``forced`` wins, with ``params``. ``query_budget`` is what
    is left for the attack (sizes the best guess's queries)."""
    names = set(load_attacks())
    params = dict(params or {})
    if forced is not None:
        if forced not in names:
            raise ValueError(f"unknown attack {forced!r}; available: {', '.join(sorted(names))}")
        return Plan(forced, params, "forced by the caller", forced=True)
    binary = oracle.n_classes == 2
    arithmetic = str(getattr(oracle, "arithmetic", "float64"))
    split = getattr(oracle, "public_fraction", None) is not None or bool(report.only_public_moves)

    def plan(name: str, reason: str, **defaults: Any) -> Plan:
        return Plan(name, {**defaults, **params}, reason)

    def guess(reason: str, **options: Any) -> Plan:
        chosen = best_guess_plan(oracle, report, reason, seed=seed, query_budget=query_budget, **options)
        chosen.params.update(params)
        return chosen

    if (report.released_nothing and report.noise and not report.rejected and oracle.metric == "binary_logloss"
            and binary and not split and "budgeted" in names):
        # Noisy releases that stop: a privacy budget. What counts is releases, not submissions.
        fresh = fresh_account(oracle)
        scale = max(report.noise_spread, report.tolerance)
        return plan("budgeted", f"noisy releases that stop (a privacy budget): each remaining release spent on a "
                    f"few rows, decoded by their posterior (noise ~{scale:.3g})", scale=scale,
                    prior=None if report.balance is None else report.balance[1], max_queries=query_budget,
                    first_account=fresh)
    if report.rejected or report.released_nothing:
        if (oracle.metric == "binary_logloss" and binary and arithmetic == "float64" and not split
                and not report.ladder and not report.subsetting and "camouflage" in names):
            bound = seen_noise_bound(report)
            return plan("camouflage", "probes refused or withheld: camouflaged exact design (an "
                        "honest-looking base, the code in moves of a few rows; more cover when a query is refused)",
                        noise_bound=bound, seed=seed)
        return guess(f"{report.rejected} probe(s) refused and some released nothing: the exact attacks need every "
                     "score released", margin=CAMOUFLAGE_MARGIN)
    if report.ladder:
        fresh = fresh_account(oracle)
        if (oracle.metric == "binary_logloss" and binary and not split and "ladder" in names
                and report.ladder_start is not None):
            # The fingerprint's edge probes opened this account at a high leader: the attack continues it.
            return plan("ladder", "released scores stick (Ladder): threshold questions (fixed step) or ballast past "
                        "the test (parameter-free), continuing from the leader the edge probes left "
                        f"({report.ladder_start['leader']:.6g})", start=report.ladder_start,
                        max_queries=query_budget, prior=None if report.balance is None else report.balance[1])
        if oracle.metric == "binary_logloss" and binary and not split and "ladder" in names and fresh is not None:
            # The fingerprint spent this account's first score (its height); a fresh account's is the attacker's.
            return plan("ladder", f"released scores stick (Ladder): threshold questions on a fresh account "
                        f"({fresh}), whose first score the attack sets", first_account=fresh,
                        max_queries=query_budget, prior=None if report.balance is None else report.balance[1])
        return guess("released scores stick (Ladder/threshold): only improvements are seen"
                     + ("" if fresh is not None else "; the fingerprint spent the only account's first score, "
                        "which the Ladder attacks need (give accounts >= 2)"), accept="improvement")
    if (report.only_public_moves and getattr(oracle, "public_fraction", None) is None and not report.subsetting
            and oracle.metric == "binary_logloss" and binary and "thresholdout" in names):
        # Every row is scored per the metadata, yet some never move the score: a secret reference side, as
        # Thresholdout keeps; its reference mean is released exactly.
        return plan("thresholdout", "some rows never move the score although none is private: a secret reference "
                    "side (Thresholdout); three states a row (holdout, reference 0, reference 1) decoded by blocks",
                    max_queries=query_budget, prior=None if report.balance is None else report.balance[1])
    label_side = label_side_plan(oracle, report, names)
    if label_side is not None:
        return Plan(label_side.attack, {**label_side.params, **params}, label_side.reason)
    if report.subsetting:
        return guess("a fresh random subset of rows is scored per submission: no exact attack applies")
    if oracle.metric == "binary_logloss" and binary:
        if report.noise:
            scale = max(report.noise_spread, report.tolerance) * NOISE_SCALE_FACTOR
            bound = noise_bound(max(report.noise_spread, report.tolerance))
            if split and "capacity_split" in names and arithmetic == "float64":
                return plan("capacity_split", f"noise seen (spread {report.noise_spread:.3g}) and only the public "
                            f"split scored: split-aware capacity with noise bound {bound:.3g}", noise_bound=bound)
            if not split and "capacity" in names and arithmetic == "float64":
                return plan("capacity", f"noise seen (spread {report.noise_spread:.3g}): capacity with noise bound "
                            f"{bound:.3g}", noise_bound=bound)
            if "robust_batched" in names:
                return plan("robust_batched", f"noise seen (spread {report.noise_spread:.3g}): τ-robust batches",
                            noise="laplace", scale=scale)
        elif arithmetic != "float64":
            if "prime_batched" in names:
                return plan("prime_batched", f"{arithmetic} arithmetic: prime batches sized from φ")
        elif split:
            if "capacity_split" in names:
                return plan("capacity_split", "only the public split moves the score: split-aware capacity")
        elif "capacity" in names:
            both, note = auc_logloss_plan(oracle, report, names, query_budget)
            if both is not None:
                return Plan(both.attack, {**both.params, **params}, both.reason)
            return plan("capacity", "no noise, every row scored: capacity-optimal construction" + note)
    if oracle.metric in ("multiclass_logloss", "kl") and arithmetic == "float64":
        # kl of a one-hot label is the log loss (binary or K-class), so it plays the log-loss attacks.
        k = oracle.n_classes
        bound = seen_noise_bound(report)
        noted = f" with noise bound {bound:.3g}" if report.noise else ""
        loss = "multiclass log loss" if oracle.metric == "multiclass_logloss" else "kl (the log loss)"
        if split and "capacity_split" in names:
            hidden = getattr(oracle, "public_fraction", None) is None
            return plan("capacity_split", f"{loss} ({k} classes), only the public split scored"
                        + (" (not disclosed: rows that never move)" if hidden else "")
                        + f": split-aware capacity (K + 1 states a row, the public count measured){noted}",
                        noise_bound=bound, **({"hidden_split": True} if hidden else {}))
        if not split and "capacity" in names:
            return plan("capacity", f"{loss} ({k} classes), every row scored: the K-ary capacity "
                        f"construction{noted}", noise_bound=bound)
    logit_metric = oracle.metric.split(":")[0]
    if logit_metric in LOGIT_METRICS and split and arithmetic == "float64" and "logits_split" in names:
        bound = seen_noise_bound(report)
        noted = f" with noise bound {bound:.3g}" if report.noise else ""
        hidden = getattr(oracle, "public_fraction", None) is None
        return plan("logits_split", f"{oracle.metric} on logits, only the public split scored: split-aware capacity "
                    f"through the logits (ln q / log-odds of the log-loss design){noted}", noise_bound=bound,
                    **({"hidden_split": True} if hidden else {}))
    if logit_metric in LOGIT_METRICS and not split and arithmetic == "float64" and logit_metric in names:
        activation = "sigmoid" if oracle.n_classes == 2 else "softmax"
        if report.noise:
            return plan(logit_metric, f"noise seen (spread {report.noise_spread:.3g}) on {oracle.metric} (logits): "
                        f"paper 001's powers construction through the inverse {activation} (§4, App. D), its noise "
                        "bound found by doubling (§7)", doubling=True)
        return plan(logit_metric, f"{oracle.metric} on logits, every row scored: paper 001's powers construction "
                    f"through the inverse {activation} (§4, App. D)")
    if oracle.metric.split(":")[0] in SPLIT_BREGMAN_METRICS and split and arithmetic == "float64" and (
            "capacity_split" in names):
        # bregman_powers scores every row; only the split-aware construction tells "private" from a label here.
        bound = seen_noise_bound(report)
        noted = f" with noise bound {bound:.3g}" if report.noise else ""
        hidden = getattr(oracle, "public_fraction", None) is None
        return plan("capacity_split", f"{oracle.metric} ({oracle.n_classes} classes), only the public split scored"
                    + (" (not disclosed: rows that never move)" if hidden else "")
                    + ": split-aware capacity on the metric's own row losses (K + 1 states a row, the public count "
                    f"from reciprocal pairs){noted}", noise_bound=bound, **({"hidden_split": True} if hidden else {}))
    if (oracle.metric.split(":")[0] in BREGMAN_METRICS and not split and arithmetic == "float64"
            and not report.noise and "capacity" in names and capacity_beats_bregman(oracle)):
        return plan("capacity", f"{oracle.metric} ({oracle.n_classes} classes), every row scored, no noise: the "
                    "K-ary capacity lattice on the metric's own row losses (more labels per query than "
                    "bregman_powers here)")
    if (oracle.metric.split(":")[0] in BREGMAN_METRICS and not split and arithmetic == "float64"
            and "bregman_powers" in names):
        if report.noise:
            return plan("bregman_powers", f"noise seen (spread {report.noise_spread:.3g}) on {oracle.metric}: paper "
                        "001's powers construction, its noise bound found by doubling (§7)", doubling=True)
        return plan("bregman_powers", f"{oracle.metric}, every row scored: paper 001's powers construction "
                    "(Theorem 1; base-K digits for K classes)")
    if oracle.metric == "multiclass_logloss" and "prime_powers" in names and not report.noise and not split:
        return plan("prime_powers", "multiclass log loss: prime powers")
    return guess(f"no exact attack applies to {oracle.metric} with {oracle.n_classes} classes"
                 + (" under noise" if report.noise else ""))
