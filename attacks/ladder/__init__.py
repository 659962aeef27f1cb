"""Attacks on the Ladder (Blum & Hardt, ICML 2015): ``ladder_fixed`` (threshold questions on the fixed step's
deterministic acceptance boundary, the weakness Hardt's 2017 Shaky Ladder removes), ``ladder_free`` (the
parameter-free Ladder's paired test, passed with ballast rows) and ``ladder`` (tells the two apart from the
first release and plays the right one). See :mod:`attacks.ladder.fixed` and :mod:`attacks.ladder.free`."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import expit

from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.ladder.common import release_tolerance, row_losses, submit
from attacks.ladder.fixed import DEFAULT_BLOCK, FixedLadderAttack, candidate_steps, ladder_fixed_attack
from attacks.ladder.free import FreeLadderAttack, ladder_free_attack
from attacks.ladder.resume import round_steps
from attacks.oracle import Oracle, left_of, limited
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

__all__ = ["ladder", "ladder_fixed", "ladder_fixed_attack", "ladder_free", "ladder_free_attack"]


@register("ladder_fixed", exact=False,
          paper="ours against Blum & Hardt's Ladder (ICML 2015, Algorithm 1), fixed step",
          board="binary log loss behind a fixed-step Ladder",
          queries="threshold questions, a few a label block",
          precision="releases on the Ladder's step η (given, a default, or identified): accept/reject read off")
def ladder_fixed(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """:func:`attacks.ladder.fixed.ladder_fixed_attack` (it checks itself: every answer must fit the model).
    ``budget``: the submissions to spend, every account's together; never more are sent.

    Paper: ours, against Blum & Hardt's fixed-step Ladder (ICML 2015, Algorithm 1; FIELD_NOTES). Queries: a
    fresh account's first score sets its height, then threshold questions on ``R − η``, a few a label block.
    Precision: the release is a multiple of ``η``; only accept/reject is read. Twenty rows, two accounts:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(20).random(20) < 0.4).astype(np.int64)
    >>> oracle = LocalOracle(y, defenses=[{"name": "ladder", "mode": "fixed"}], accounts=2)
    >>> result = run("ladder_fixed", oracle, budget=200)
    >>> bool((result.labels == y).all()), result.exact, result.queries <= 200
    (True, 20, True)
    """
    return ladder_fixed_attack(limited(oracle, budget), budget=budget, **params)


@register("ladder_free", exact=False,
          paper="ours against Blum & Hardt's parameter-free Ladder (ICML 2015; Ladder.jl)",
          board="binary log loss behind the parameter-free Ladder",
          queries="ballast past the paired test, a few a label block",
          precision="accepted scores as released (unrounded by the Ladder; the board's decimals)")
def ladder_free(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """:func:`attacks.ladder.free.ladder_free_attack` (it checks itself: every release must fit one labeling).
    ``budget``: the submissions to spend; never more are sent.

    Paper: ours, against Blum & Hardt's parameter-free Ladder (ICML 2015; its reference code Ladder.jl, as in
    FIELD_NOTES). Queries: about one a block of ~10 rows ("ballast" rows carry each past the paired test).
    Precision: each accepted score as released, at the board's decimals.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(20).random(20) < 0.4).astype(np.int64)
    >>> oracle = LocalOracle(y, defenses=[{"name": "ladder", "mode": "parameter_free"}])
    >>> result = run("ladder_free", oracle)
    >>> bool((result.labels == y).all()), result.exact, result.queries
    (True, 20, 2)
    """
    return ladder_free_attack(limited(oracle, budget), budget=budget, **params)


def ladder_fits(facts: BoardFacts) -> Plan | Refusal:
    """Released scores that stick (a Ladder) on binary log loss scoring every row, continuing the account the
    fingerprint's edge probes opened at a high leader, else on a fresh account: rank 30."""
    if not facts.sticky:
        return Refusal("ladder", "released scores do not stick (no Ladder seen)")
    if facts.refusing:
        return Refusal("ladder", "probes refused or withheld")
    if not facts.binary_logloss or facts.split:
        return Refusal("ladder", "binary log loss scoring every row only")
    common: dict[str, Any] = {"budget": facts.budget_left, "prior": facts.prior}
    if facts.told.ladder_step is not None:
        common["eta"] = facts.told.ladder_step  # disclosed: the resume path need not identify it
    start = None if facts.seen is None else facts.seen.ladder_start
    if start is not None:
        return Plan("ladder", {"start": start, **common}, "released scores stick (Ladder): threshold questions (fixed "
                    "step) or ballast past the test (parameter-free), continuing from the leader the edge probes left "
                    f"({start['leader']:.6g})", rank=30)
    fresh = facts.fresh_account
    if fresh is not None:
        # The fingerprint spent this account's first score (its height); a fresh account's is the attacker's.
        return Plan("ladder", {"first_account": fresh, **common}, "released scores stick (Ladder): threshold "
                    f"questions on a fresh account ({fresh}), whose first score the attack sets", rank=30)
    return Refusal("ladder", "the fingerprint spent the only account's first score, which the Ladder attacks need")


@register("ladder", exact=False, truncatable=True, fits=ladder_fits,
          paper="ours against Blum & Hardt's Ladder (ICML 2015): threshold questions, ballast past the paired test",
          board="binary log loss, every row scored, a fixed or parameter-free Ladder",
          queries="a few per label block; one account's first score",
          precision="the Ladder's releases: multiples of η (fixed) or the accepted scores (parameter-free)")
def ladder(
    oracle: Oracle, *, eta: float | None = None, budget: int | None = None, first_account: int | None = None,
    prior: float | None = None, start: dict[str, Any] | None = None,
) -> AttackResult:
    """Either Ladder, told apart by the first release of a fresh account: the parameter-free attack's opening
    (every row at the edge but one block) is released exactly by the parameter-free Ladder, which fits one
    (count of ones, block) pair; the fixed-step Ladder releases a multiple of its step, which does not, and the
    fixed-step attack takes the account over from there (the opening is its height).

    ``start`` (:attr:`attacks.fingerprint.Fingerprint.ladder_start`): the current account was opened by the
    fingerprint's edge probes; continue it instead. Releases that fit an exact count of ones and no default
    step go to the parameter-free attack (its first blocks go without ballast); if it gets no block accepted
    (a fixed step rejects them all) or its releases fit no labeling, the fixed-step attack takes over from the
    last release, identifying the step if it was not given.

    ``budget``: the submissions to spend, every account's together (default: each attack's own, ``2·N``); never
    more are sent (with none left before the first, :class:`AttackFailed`).

    Paper: ours, against both of Blum & Hardt's Ladders (ICML 2015). Queries: ``ladder_free``'s or
    ``ladder_fixed``'s, after one fresh account's first score. Precision: the Ladder's own releases.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(20).random(20) < 0.4).astype(np.int64)
    >>> for mode in ("fixed", "parameter_free"):
    ...     oracle = LocalOracle(y, defenses=[{"name": "ladder", "mode": mode}], accounts=2)
    ...     result = run("ladder", oracle, budget=200)
    ...     print(result.details["mode"], bool((result.labels == y).all()), result.exact)
    fixed True 20
    parameter_free True 20
    """
    oracle = limited(oracle, budget)
    if start is not None:
        return _resume(oracle, start, eta=eta, budget=budget, prior=prior)
    if first_account is not None:
        oracle.account = first_account  # type: ignore[attr-defined]
    try:
        free = FreeLadderAttack(oracle, budget=budget, block=None)
    except AttackFailed as exc:
        # Releases too coarse for the parameter-free attack's blocks (a fixed step's grid, read as the board's
        # decimals): only the fixed-step attack can read this board, and it opens the account itself.
        # Open the account with the edge probe, as the fingerprint does, and go on as from its leader: the
        # resume path identifies an undisclosed step (defaults and round values) before the fixed-step attack.
        opening = oracle.submit(np.full(oracle.n_rows, oracle.eps))
        if opening is None:
            raise AttackFailed("ladder: the fresh account's first submission released nothing") from exc
        start = {"leader": float(opening), "edge": 0, "fresh": [[0, float(opening)]], "stale": []}
        result = _resume(oracle, start, eta=eta, budget=left_of(budget, 1), prior=prior)
        result.details["told_apart"] = (f"the parameter-free attack cannot read these releases ({exc}); "
                                        + str(result.details.get("told_apart", "")))
        return result
    try:
        free.first()
        # An exact release fits some (count, block) pair by chance about as often as the block's sums are
        # dense; a multiple of the step (the defaults, or the given one) is the fixed Ladder's sign, and an
        # exact score lands on one with probability ~10^-decimals/step.
        assert free.released is not None
        on_step = any(abs(float(round(Fraction(free.released) / step) * step) - free.released)
                      <= release_tolerance(oracle.decimals) for step in candidate_steps(oracle.n_rows, eta))
        if on_step:
            raise AttackFailed("the first release is a multiple of the Ladder's step")
    except AttackFailed as exc:
        if free.opening is None:
            raise
        result = FixedLadderAttack(oracle, eta=eta, budget=budget, block=DEFAULT_BLOCK,
                                   first_account=BoardFacts.of(oracle).account, prior=prior).run(
            opening=free.opening)
        result.details["mode"] = "fixed"
        result.details["told_apart"] = f"first release not exact ({exc})"
        return result
    while free.step():
        pass
    result = free.result()
    result.details["mode"] = "parameter_free"
    result.details["told_apart"] = "first release exact: one (count, block) pair fits it"
    return result


def _tell_apart(oracle: Oracle, free: FreeLadderAttack, steps: list[Fraction]) -> float | None:
    """Releases that fit both an exact count of ones and some step's grid: one constant prediction near the
    leader's edge, scoring (exactly, the count being known) below the best by more than every such step and
    off every such step's grid. Both Ladders accept it (the parameter-free test passes when at least two rows
    improve alike); the parameter-free one releases the score itself, a fixed step a multiple of itself.
    Returns ``None`` if the parameter-free Ladder answered (the attack's leader is now that constant), else the
    fixed Ladder's release."""
    assert free.count is not None and free.released is not None
    n, c, eps = oracle.n_rows, free.count, oracle.eps
    rtol = release_tolerance(oracle.decimals)
    improving = c if free.edge == 0 else n - c
    if improving < 2 or free.used >= free.budget:
        raise AttackFailed("the releases fit both Ladders and no probe can tell them apart (fewer than two rows "
                           "can improve)")
    coarsest = float(max(steps))
    p_edge = free.edge_p
    candidates: list[float] = []
    if free.edge == 0:
        a = free.A
        # drops of 1.5 to ~25 coarsest steps, spaced by an irrational fraction so that some fall off every grid
        candidates = [float(expit(-a + coarsest * (1.5 + 0.6180339887 * i) * n / c)) for i in range(40)]
    else:
        p = p_edge
        for _ in range(4000):
            p = float(np.nextafter(p, 0.0))
            candidates.append(p)
    for p in candidates:
        l1, l0 = (float(v) for v in row_losses(np.array([p, p]), np.array([1, 0]), eps))
        predicted = (c * l1 + (n - c) * l0) / n
        if predicted >= free.released - coarsest - 1e-9:
            continue
        if any(abs(float(round(Fraction(predicted) / step) * step) - predicted) <= 3 * rtol for step in steps):
            continue
        value = submit(oracle, np.full(n, p))
        free.used += 1
        free.last_release = value
        if abs(value - predicted) <= rtol:
            free.lead_with_constant(p, value)
            return None
        return value
    raise AttackFailed("no constant prediction tells the two Ladders apart")


def _resume(
    oracle: Oracle, start: dict[str, Any], *, eta: float | None, budget: int | None, prior: float | None
) -> AttackResult:
    """:func:`ladder` on an account the fingerprint opened (see there)."""
    rtol = release_tolerance(oracle.decimals)
    values = [float(start["leader"]), *(float(v) for _, v in start.get("fresh", []))]
    on_step = any(all(abs(float(round(Fraction(v) / step) * step) - v) <= rtol for v in values)
                  for step in candidate_steps(oracle.n_rows, eta))
    spent = 0
    told = "releases on a default step" if on_step else ""
    if not on_step and eta is None:
        try:
            free = FreeLadderAttack(oracle, budget=budget, block=None, start=start)
        except AttackFailed as exc:
            told = f"releases fit no exact count of ones ({exc})"
        else:
            # Round steps whose grid the releases also sit on (a fixed step's releases can fit a count by chance).
            steps = [step for step in round_steps(oracle.decimals)
                     if all(abs(float(round(Fraction(v) / step) * step) - v) <= rtol for v in values)]
            try:
                fixed_release = _tell_apart(oracle, free, steps) if steps else None
            except AttackFailed as exc:
                # Every constant lands on some step's grid: the releases are as coarse as a round step (2
                # decimals, a fixed η = 0.01 read as the board's precision). A parameter-free Ladder rounding
                # to so few decimals is unusual; the fixed-step attack checks every answer against its model
                # and fails loudly if the guess was wrong.
                fixed_release = float(start["leader"])
                told = f"{exc}: the releases sit on a round step's grid, so the fixed step is assumed"
            if fixed_release is None:
                try:
                    while free.step():
                        pass
                except AttackFailed as exc:
                    free.notes.append(f"stopped: {exc}")
                    if (free.labels >= 0).any():
                        raise
                result = free.result()
                result.details["mode"] = "parameter_free"
                result.details["told_apart"] = "releases exact: one count of ones fits them" + (
                    "; a constant below every step's grid was released exactly" if steps else "")
                return result
            spent = free.used
            told = told or "releases fit a count and a step's grid: a constant below the grid was released on it"
            start = {**start, "leader": fixed_release}
    result = FixedLadderAttack(oracle, eta=eta, budget=left_of(budget, spent), block=DEFAULT_BLOCK,
                               first_account=BoardFacts.of(oracle).account, prior=prior).run(start=start)
    result.details["mode"] = "fixed"
    result.details["told_apart"] = told
    result.details["queries"] = int(result.details.get("queries", 0)) + spent
    return result
