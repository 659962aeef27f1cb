"""What ``auto`` plays when a plan failed: the fallbacks the exact attacks' specs declare (``capacity``,
``capacity_split`` and paper 004's AUC + log-loss attacks), each a list of plans tried in order."""

from __future__ import annotations

from attacks.catalogue import BoardFacts, Plan, noise_bound
from attacks.paper001.attacks import BREGMAN_METRICS
from attacks.registry import available


def after_failure_plans(facts: BoardFacts) -> list[Plan]:
    """What to try, in order, when an exact attack's labels did not hold on a board that looked plain (no
    noise, every row public): rows or labels redrawn per submission that the fingerprint's few probes missed —
    a 90 % subset keeps a probed row in both of two submissions 81 % of the time, and fresh flips at p = 0.05
    rarely flip a probed row. Subsetting goes first when a row moved the mean as if fewer rows were scored.
    Last, on a rounded board, noise below the released resolution that the repeated probes rounded away.
    None on other boards (noise, a Ladder, refusals, a public split) — but on a Brier, norm-like or
    Itakura–Saito board, where ``capacity`` was chosen for a noise-free look, paper 001's powers construction with
    its noise bound found by doubling (§7): noise below the resolution breaks the lattice, not the doubling."""
    names = set(available())
    report = facts.seen
    if report is None:
        return []
    if (facts.family in BREGMAN_METRICS and facts.metric not in ("multiclass_logloss", "kl")
            and "bregman_powers" in names and report.public_fraction is None and not report.only_public_moves):
        return [Plan("bregman_powers", {"doubling": True}, f"capacity's labels did not hold on {facts.metric}: noise "
                     "below the released resolution is likely; the powers construction doubles its noise bound")]
    if not facts.quiet_binary or report.public_fraction is not None:
        return []
    plans = []
    if "randomized_response" in names:
        plans.append(Plan("randomized_response", {}, "an exact attack's labels did not hold on a board without "
                          "noise: fresh randomized response is a likely cause (the attack measures the flip rate)"))
    if "subsetting" in names:
        plans.append(Plan("subsetting", {}, "an exact attack's labels did not hold on a board without noise: a "
                          "fresh random subset per submission is a likely cause (the attack measures its size)"))
    estimate = report.scored_rows_estimate
    if estimate is not None and estimate < facts.n_rows:
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


def split_failure_plans(facts: BoardFacts, failed: Plan) -> list[Plan]:
    """What to try when ``capacity_split`` failed on a rounded float64 board that scores only a public split
    (any metric it runs on): noise the fingerprint did not see (a defense that draws the same noise for the same
    vector looks noise-free to repeated probes) or more than it saw. Paper 001's doubling trick (§7) on the split
    design: the noise bound starts at a few released units (or the bound that failed) and grows
    :data:`SPLIT_BOUND_GROWTH`-fold until the decoding is consistent and the claims hold. Where noise was seen, the
    public count is first measured at its own smaller bound (``count_bound``, climbing from the probes' spread) and
    the labels at :data:`SPLIT_DECODE_FACTOR` times it. Empty elsewhere."""
    report = facts.seen
    if (report is None or failed.attack != "capacity_split" or "capacity_split" not in available()
            or report.decimals is None or not facts.float64):
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


def cross_entropy_plans(facts: BoardFacts) -> list[Plan]:
    """What to try when ``capacity`` gave no labels on a K-class cross-entropy board (multiclass log loss, KL)
    under noise that scores every row: paper 001's doubling trick (§7), which needs no bound from the fingerprint —
    Construction 1 (``bregman_powers``, base-K digits) first, then Theorem 3 (``ce_robust``), whose rows carry
    fewer labels but are the paper's own τ-robust design. Empty on other boards."""
    if facts.metric not in ("multiclass_logloss", "kl") or not facts.noise or facts.split or not facts.float64:
        return []
    names = set(available())
    return [Plan(name, {"doubling": True}, f"capacity gave no labels under noise on {facts.metric}: {what}, its "
                 "noise bound found by doubling (paper 001 §7)")
            for name, what in (("bregman_powers", "paper 001's powers construction (base-K digits)"),
                               ("ce_robust", "Theorem 3's τ-robust cross-entropy rows")) if name in names]


def capacity_fallbacks(facts: BoardFacts, failed: Plan) -> list[Plan]:
    """``capacity``'s fallbacks: the board's rows or labels redrawn, or noise below the resolution
    (:func:`after_failure_plans`), then paper 001's doubling on K-class cross entropy (:func:`cross_entropy_plans`).
    The two never both apply."""
    return [*after_failure_plans(facts), *cross_entropy_plans(facts)]
