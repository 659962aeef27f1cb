"""The boosting attack of Blum & Hardt (ICML 2015, Section 3.1): overfit a leaderboard with random vectors,
with the majority class as its floor.

It needs no number theory and no precision: only whether a random guess scored better than chance. Its votes
are weak evidence about each row, so they are weighed against the class balance (:mod:`attacks.balance`) and
a row leaves the majority class only when its votes outweigh the prior; the result never falls below the
majority labeling on purpose.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attacks.balance import repeat_share, share_se
from attacks.catalogue import BoardFacts, Plan, Refusal, Stage, why_guess
from attacks.hard_label import Acceptance, chance_score, is_hard_label
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult, SubmissionRefused
from defenses.feedback import HARD_LABEL_KINDS
from scoring import get_metric

ACCEPT_RULES = ("threshold", "improvement")
#: "Confidently better than the majority labeling": the posterior's expected gain in accuracy over the majority
#: labeling must exceed this many standard deviations of that gain, else the majority labeling is returned.
FLOOR_SIGMAS = 2.0
#: Consecutive re-released scores after which the attack stops: the board has stopped scoring its vectors (a
#: Ladder keeps releasing its leader). Each further query would be one more stale release; the records of
#: i.i.d. scores make a new acceptance after ``i`` queries come once in about ``i`` more, worth one weak vote.
STALE_STOP = 1000
#: The random vectors submitted when no budget is given: the attack has no end of its own (one query each).
DEFAULT_BUDGET = 100


def row_gap(metric: str, eps: float, margin: float) -> float:
    """How much one row moves the score between right and wrong at ``margin`` (the sum over rows of a mean
    metric: log loss ``ln((0.5+m)/(0.5-m))`` clipped at ``eps``, accuracy 1); AUC: 2 (a rough scale).

    >>> row_gap("accuracy", 1e-15, 0.5), round(row_gap("binary_logloss", 1e-15, 0.25), 4)
    (1.0, 1.0986)
    """
    rows = get_metric(metric).row_values
    if rows is None:
        return 2.0
    values = rows(np.array([0.5 + margin, 0.5 + margin]), np.array([1, 0]), eps)
    return float(abs(values[0] - values[1]))


def vote_evidence(n_scored: int, scored_share: float, gap: float, noise: float) -> float:
    """The log-likelihood ratio one kept vote carries about a row's label.

    A random vector agrees with the labels on ``X`` of the scored rows, ``X - 1/2 ~ N(0, 1/(4 n))``; the
    release moves by ``gap·(X - 1/2)`` plus noise of standard deviation ``noise``; a vector is kept when that
    is positive. Then ``E[X - 1/2 | kept] = √(2/π) · gap·V / √(gap²·V + noise²)`` with ``V = 1/(4 n)`` (a
    bivariate normal), the row agrees with probability ``1/2 + δ`` (``δ`` that excess times the share of
    rows scored), and a vote weighs ``ln((1/2 + δ)/(1/2 - δ))``. The "improvement" rule of a Ladder keeps
    stricter vectors, so this is a lower bound there: the floor errs towards the prior.

    >>> round(vote_evidence(4000, 1.0, 1.0, 0.0), 4)  # 4·δ with δ = 1/√(2π·4000)
    0.0252
    """
    variance = 1.0 / (4.0 * max(n_scored, 1))
    excess = math.sqrt(2.0 / math.pi) * gap * variance / math.sqrt(gap**2 * variance + noise**2)
    delta = min(scored_share * excess, 0.49)
    return math.log((0.5 + delta) / (0.5 - delta))


def floored_labels(
    prior_one: float | None, llr_votes: np.ndarray, ties: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[str, float | bool | None]]:
    """Posterior labels and confidences from per-row vote evidence and the share of ones, floored at the
    majority labeling: if the posterior's expected gain over the majority labeling is not above
    :data:`FLOOR_SIGMAS` standard deviations, every row gets the majority class (confidence: its share).

    >>> labels, confidence, info = floored_labels(0.7, np.array([0.1, -1.0, -3.0]), np.zeros(3, dtype=np.int64))
    >>> labels.tolist(), info["floored"]
    ([1, 1, 1], True)
    """
    if prior_one is None:
        prior_llr = 0.0
    else:
        p = min(max(prior_one, 1e-6), 1 - 1e-6)
        prior_llr = math.log(p / (1 - p))
    llr = prior_llr + llr_votes
    labels = np.where(llr > 0, 1, np.where(llr < 0, 0, ties)).astype(np.int64)
    confidence = 1.0 / (1.0 + np.exp(-np.abs(llr)))
    info: dict[str, float | bool | None] = {"prior_one": prior_one, "floored": False}
    if prior_one is None:
        return labels, confidence, info
    majority = 1 if prior_one >= 0.5 else 0
    moved = labels != majority
    # On a moved row the posterior labeling is right with probability c and the majority labeling with 1 - c.
    c = confidence[moved]
    gain = float((2 * c - 1).sum()) / len(labels)
    spread = math.sqrt(float((1 - (2 * c - 1) ** 2).sum())) / len(labels)
    info.update(moved=int(moved.sum()), expected_gain=gain, gain_sd=spread)
    if moved.any() and gain <= FLOOR_SIGMAS * spread:
        info["floored"] = True
        share = max(prior_one, 1 - prior_one)
        return np.full(len(labels), majority, dtype=np.int64), np.full(len(labels), share), info
    return labels, confidence, info


#: Random vectors boosting plays when no budget is given.
BOOSTING_K = 100
#: Margin of boosting's vectors when the board refuses probes: ±0.25 around 1/2 is not a 0/1 vector.
CAMOUFLAGE_MARGIN = 0.25


def boosting_fits(facts: BoardFacts) -> Plan | Refusal:
    """The best guess on a binary board (rank 1000), floored at the majority class: against a Ladder it keeps
    only released improvements, behind refusals it plays ±0.25 vectors (not the 0/1 vectors a detector looks
    for)."""
    if not facts.binary:
        return Refusal("boosting", "a binary board only")
    budget = BOOSTING_K if facts.budget_left is None else facts.budget_left
    if budget < 1:
        return Refusal("boosting", "no query left")
    params: dict[str, object] = {"budget": budget, "seed": facts.seed,
                                 "accept": "improvement" if facts.sticky else "threshold",
                                 "margin": CAMOUFLAGE_MARGIN if facts.refusing else 0.5}
    seen = facts.seen
    noise = None if seen is None or seen.noise is None else (facts.spread if seen.noise else 0.0)
    if noise is not None:
        params["noise"] = noise
    if seen is not None and seen.balance is not None:
        params["prior"] = seen.balance[1]
        se = share_se(facts.metric, facts.eps, noise)
        if se is None or se > 0:
            # One noisy release measured it: boosting re-measures while the majority class is in doubt.
            params["prior_se"] = 0.5 if se is None else se
    return Plan("boosting", params, why_guess(facts), rank=1000)


def _score_binary(facts: BoardFacts) -> bool:
    return facts.binary and facts.feedback not in HARD_LABEL_KINDS


@register("boosting", exact=False, truncatable=True, spends_budget=True, stage=Stage.GUESS, fits=boosting_fits,
          applies=_score_binary,
          paper="Blum & Hardt, The Ladder (ICML 2015) §3.1: the boosting attack",
          board="any binary board (a best guess)",
          queries="the budget: one random vector each",
          precision="any: one comparison a query (a released score, or a hard label)")
def boosting(
    oracle: Oracle,
    *,
    budget: int | None = None,
    seed: int = 0,
    accept: str = "threshold",
    margin: float = 0.5,
    prior: float | Sequence[float] | None = None,
    prior_se: float = 0.0,
    noise: float | None = None,
    floor: bool = True,
    stale_stop: int | None = STALE_STOP,
) -> AttackResult:
    """Submit random 0/1 vectors, keep those that beat chance, weigh their votes against the class balance.

    Blum & Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning Competitions", ICML 2015,
    Section 3.1 (the boosting attack). Each query is a vector of ``0.5 ± margin`` (``margin = 0.5``: the
    0/1 vectors of the paper); a vector is kept when its released score beats a vector that is right on half
    of the rows (``accept = "threshold"``: 0/1 loss below 0.5, accuracy above 0.5) or, against a board that
    only releases improvements such as the Ladder, when the released score also improved on every earlier
    one (``accept = "improvement"``: the Ladder accepted it). The coordinate-wise majority of the kept
    vectors agrees with the hidden labels on about ``1/2 + Θ(sqrt(k / n))`` of the rows (``k`` vectors): the
    public score improves while the labels stay essentially unknown (fresh-data loss stays ~0.5).

    The floor (``floor=True``, default): the kept votes are weak evidence (:func:`vote_evidence`, with the
    release ``noise`` standard deviation), so each row's label is the posterior one given the share of ones
    ``prior`` (the class-1 share, or the class shares, ± ``prior_se``). When the prior is not given, or is
    too uncertain to name the majority class, the first of the ``budget`` queries measure it with constant
    predictions (:func:`attacks.balance.repeat_share`: two when the board is exact, more while a noisy board
    leaves the majority in doubt, at most ``budget/4``), which also estimate ``noise`` when it is not given. If the
    posterior labeling is not confidently better than the majority labeling (:func:`floored_labels`), or no
    vector was kept, the majority labeling is returned. ``confidence`` is each row's posterior probability of
    its label. ``floor=False`` is the paper's algorithm as published (ties broken by a seeded coin).

    On a hard-label board (``oracle.feedback``: a threshold badge, a Ladder's accept/reject, a rank;
    :mod:`attacks.hard_label`) a vector is kept when its label is "accepted" (badge 1, accepted, rank 1),
    whatever ``accept`` says; the class balance cannot be measured there, so the floor needs ``prior``.

    ``stale_stop``: stop after this many consecutive releases equal to the one before (the board has stopped
    scoring these vectors, as a Ladder does once its leader is hard to beat; ``None``: never), and say so in
    ``details["stopped_early"]``.

    Queries: ``budget``, one random vector each (the balance probes included; fewer only when the board goes
    stale); ``None``: :data:`DEFAULT_BUDGET`. Time: O(budget·n). Precision: whatever the board shows (one
    comparison per query).
    Claims every row (its guess); raises :class:`AttackFailed` for a multiclass board, a budget of 0, or when no
    query beat chance and the class balance is unknown. Binary boards only.

    A best guess on 40 rows (30 % ones) in 100 queries, two of them measuring the balance; it beats the
    majority class (0.675):

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> hidden = (np.random.default_rng(80).random(40) < 0.3).astype(np.int64)
    >>> result = run("boosting", LocalOracle(hidden, decimals=5), budget=100, seed=1)
    >>> result.queries, result.details["balance_queries"], result.accuracy(hidden)
    (100, 2, 0.875)
    """
    if oracle.n_classes != 2:
        raise AttackFailed("the boosting attack handles binary competitions only")
    k = DEFAULT_BUDGET if budget is None else int(budget)
    if k < 0:
        raise ValueError(f"budget must be at least 0, got {budget}")
    if k == 0:
        raise AttackFailed("boosting submits at least one vector; the budget is 0")
    if accept not in ACCEPT_RULES:
        raise ValueError(f"accept must be one of {', '.join(ACCEPT_RULES)}, got {accept!r}")
    if not 0.0 < margin <= 0.5:
        raise ValueError(f"margin must lie in (0, 0.5], got {margin}")
    n = oracle.n_rows
    prior_one = _prior_one(prior)
    balance_queries = 0
    # A hard-label board (defenses.feedback) says "accepted" itself: keep the accepted vectors; its labels carry
    # no class balance and repeat themselves by nature, so there is no balance probe and no staleness test.
    hard = Acceptance.of(oracle) if is_hard_label(oracle) else None
    doubtful = prior_one is None or (prior_se > 0 and abs(prior_one - 0.5) <= 3 * prior_se)
    if floor and doubtful and k >= 2 and hard is None:
        cap = 1 if (prior_one is None and noise == 0) else max(2, min(50, k // 4))
        measured = repeat_share(oracle, budget=min(cap, k - 1), prior=prior_one, prior_se=prior_se, noise=noise)
        balance_queries = measured.queries
        prior_one = measured.share
        if noise is None:
            noise = measured.noise
    higher_is_better = get_metric(oracle.metric).higher_is_better
    sign = 1.0 if higher_is_better else -1.0  # compare scores as "bigger is better"
    threshold = sign * chance_score(oracle.metric, oracle.eps, margin)
    rng = np.random.default_rng(seed)
    votes = np.zeros(n, dtype=np.int64)
    kept = 0
    best = -np.inf
    previous: float | None = None
    stale = streak = 0
    stopped_early = False
    for _ in range(k - balance_queries):
        if stale_stop is not None and streak >= stale_stop:
            stopped_early = True
            break
        guess = rng.integers(0, 2, n)
        try:
            released = oracle.submit(0.5 + margin * (2.0 * guess - 1.0))
        except SubmissionRefused:
            released = None
        if hard is not None:
            if hard.accepts(released):
                votes += 2 * guess - 1
                kept += 1
            continue
        if released is None:
            continue
        value = sign * float(released)
        # A release equal to the one before is most likely the board re-releasing an earlier score (a Ladder
        # keeps its leader): it says nothing about this vector, and voting on it would count noise as signal.
        # Two random vectors scoring the same released text on an honest board costs one vote, no more.
        repeated = previous is not None and value == previous
        previous = value
        if repeated:
            stale += 1
            streak += 1
            continue
        streak = 0
        if value > threshold and (accept == "threshold" or value > best):
            votes += 2 * guess - 1
            kept += 1
        best = max(best, value)
    details: dict[str, object] = {"kept": kept, "stale": stale, "threshold": sign * threshold,
                                  "accept": accept if hard is None else hard.kind,
                                  "margin": margin, "stopped_early": stopped_early}
    ties = rng.integers(0, 2, n)  # an even vote is a coin flip, drawn from the seeded generator
    if not floor:
        if kept == 0:
            raise AttackFailed(f"none of the {k} random vectors beat chance on the released scores")
        labels = np.where(votes > 0, 1, np.where(votes < 0, 0, ties)).astype(np.int64)
        return AttackResult("boosting", labels, details=details, confidence=np.full(n, 0.5))
    if kept == 0 and prior_one is None:
        raise AttackFailed(f"none of the {k} random vectors beat chance and the class balance is unknown")
    public_fraction = BoardFacts.of(oracle).public_fraction
    share = 1.0 if public_fraction is None else float(public_fraction)
    gap = row_gap(oracle.metric, oracle.eps, margin)
    weight = vote_evidence(max(1, round(n * share)), share, gap, noise or 0.0)
    labels, confidence, info = floored_labels(prior_one, weight * votes, ties)
    details.update(info, vote_weight=weight, balance_queries=balance_queries, noise=noise or 0.0)
    return AttackResult("boosting", labels, details=details, confidence=confidence)


def _prior_one(prior: float | Sequence[float] | None) -> float | None:
    """The share of class 1 from ``prior`` (a number, or the class shares)."""
    if prior is None:
        return None
    if isinstance(prior, int | float):
        return float(prior)
    shares = list(prior)
    return float(shares[1]) if len(shares) >= 2 else None
