"""``fresh_accounts``: ``auto`` played one submission per fresh account, on boards that keep their state per
account — a Ladder releases every account's first submission unconditionally (the parameter-free Ladder at the
board's precision, the fixed-step one rounded to its step η), so an attacker with ``k`` accounts holds ``k``
releases no Ladder filters. Seen through :class:`FreshAccounts`, such a board is a plain one: the inner ``auto``
fingerprints it, plays the exact design (``capacity``, ``capacity_split`` on a public split, the likelihood decoders
under noise) and vouches only for what that design vouches for.

Measured (``benchmarks/fresh_accounts.py``): 306 rows, 30 % public, 5 decimals, parameter-free Ladder: every public
label with 30 accounts (one query each, the inner fingerprint's included).

The fixed step is read, not assumed: the fingerprint's releases on the first account (the edge probes' leader and
their accepted releases) sit on the step's grid, and the coarsest step among the powers of ten below the board's
precision and the defense's defaults (:func:`attacks.ladder.fixed.candidate_steps`) that every one of them fits
sets the precision the inner attack assumes (a step of ``10^-k`` or finer: ``k`` decimals). Assuming a coarser
grid than the board's is always safe (each release is still within half a unit of the truth), so a chance fit
costs accounts, never a false label.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from attacks.capacity import CAPACITY_METRICS
from attacks.capacity.design import counting_bound
from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.ladder.fixed import candidate_steps
from attacks.oracle import Oracle, ReducedOracle, Released
from attacks.registry import register, run
from attacks.result import AttackFailed, AttackResult
from attacks.seen import Fingerprint

#: Probes of the inner fingerprint, an account each: the released precision, noise (two identical probes) and
#: the class balance; the outer fingerprint saw the rest (a Ladder).
FINGERPRINT = 4
#: … when the outer fingerprint measured the class balance: the two ½ probes (precision and noise) only.
FINGERPRINT_KNOWN_BALANCE = 2
#: Accounts held back beyond the inner design's expected queries before this plan is preferred to one account's
#: Ladder attack: the fingerprint's probes, the confirmation, and slack for a count measured on a split.
SLACK = FINGERPRINT + 6
#: Rank: ahead of the one-account Ladder attack (30) when the accounts suffice.
RANK = 29


class FreshAccounts(ReducedOracle):
    """``inner`` with every submission made as the next account nothing was submitted from: a board whose
    per-account state never builds up. ``decimals`` is the precision a first release carries (the board's, or
    the Ladder step's when coarser); past the last account a submission raises :class:`AttackFailed`."""

    def __init__(self, inner: Oracle, first: int, decimals: int | None) -> None:
        super().__init__(inner)
        facts = BoardFacts.of(inner)
        self.n_classes, self.metric, self.eps = inner.n_classes, inner.metric, inner.eps
        self.public_fraction = facts.public_fraction
        self.arithmetic = facts.arithmetic
        self.feedback = {"kind": "score"}
        self.next_account = first
        self.last_account = facts.accounts - 1
        self._decimals = decimals
        self.accounts_used = 0

    @property
    def decimals(self) -> int | None:
        return self._decimals

    @property
    def accounts_left(self) -> int:
        return max(0, self.last_account - self.next_account + 1)

    def submit(self, predictions: Any) -> Released:
        if self.next_account > self.last_account:
            raise AttackFailed(f"every fresh account is spent ({self.accounts_used} used)")
        self.inner.account = self.next_account  # type: ignore[attr-defined]
        self.next_account += 1
        self.accounts_used += 1
        return self.inner.submit(predictions)


def ladder_releases(seen: Fingerprint | None) -> list[float]:
    """The released scores the fingerprint's Ladder probes recorded (its leader and each accepted edge release)."""
    start = None if seen is None else seen.ladder_start
    if not start:
        return []
    values = [float(start["leader"])] if start.get("leader") is not None else []
    values += [float(pair[1]) for pair in start.get("fresh", []) if len(pair) > 1 and pair[1] is not None]
    return values


def release_step(values: Sequence[float], decimals: int | None, n_scored: int) -> Fraction | None:
    """The coarsest step every value sits on (within half a released unit) among the powers of ten coarser than
    ``decimals`` and the fixed Ladder's default steps for ``n_scored`` rows; ``None`` when none is coarser than
    the board's own precision or nothing was released.

    >>> release_step([0.69, 0.31], 5, 100)
    Fraction(1, 100)
    >>> release_step([0.69315], 5, 100) is None
    True
    """
    if not values or decimals is None:
        return None
    slack = 0.5 * 10.0 ** (-decimals) + 1e-12
    candidates = [Fraction(1, 10**k) for k in range(1, decimals)] + list(candidate_steps(max(n_scored, 1), None))
    fitting = [step for step in candidates if step > Fraction(1, 10**decimals) and all(
        abs(v - round(v / float(step)) * float(step)) <= slack for v in values)]
    return max(fitting) if fitting else None


def step_decimals(step: Fraction | None, decimals: int | None) -> int | None:
    """The precision a first release carries: ``decimals``, or ``k`` for a step of at most ``10^-k`` (rounding to
    the step moves a score by at most half of it, within half a unit of ``k`` decimals)."""
    if step is None:
        return decimals
    k = max(0, math.floor(-math.log10(float(step)) + 1e-12))
    return k if decimals is None else min(k, decimals)


#: The exact design's queries through fresh accounts over the counting bound's ``N / labels a query``, measured
#: (``benchmarks/fresh_accounts.py``): 0.9–1.2 where every row is scored (breast cancer at 2 decimals 143 against
#: 153 expected, 300 rows 70 against 60), 3.6–4.8 on a 30 % split (the public count and the third state: 306 rows
#: at 2 decimals 80 against 22, 1,796 rows 570 against 118).
REALIZED = {"every_row": 1.3, "split": 5.0}
#: Fresh accounts below which a split board is left to the one-account plans (the inner fingerprint and a few
#: design queries).
MIN_FRESH = FINGERPRINT + 2


def expected_accounts(facts: BoardFacts, decimals: int | None) -> float:
    """Accounts the inner ``auto`` is expected to need: its fingerprint and confirmation, and the exact design's
    queries (``N`` scored rows over the counting bound, times ``log2 K`` for K classes, times what the design
    realises of that bound, :data:`REALIZED`)."""
    rows = facts.n_rows if facts.public_fraction is None else max(1, round(facts.n_rows * facts.public_fraction))
    per_query = counting_bound(rows, decimals, eps=facts.eps)
    if per_query < 1:
        return math.inf
    factor = REALIZED["every_row" if facts.public_fraction is None else "split"]
    return math.ceil(factor * rows * math.log2(max(facts.n_classes, 2)) / per_query) + SLACK


def fresh_accounts_fits(facts: BoardFacts) -> Plan | Refusal:
    """A Ladder seen (per-account state, first release unconditional) on a float64 board of a metric the exact
    designs read, with enough fresh accounts for the inner design: rank 29, ahead of one account's Ladder
    attack."""
    if not facts.sticky or facts.refusing:
        return Refusal("fresh_accounts", "no per-account Ladder seen (or probes refused)")
    if facts.told.ladder_scope == "competition":
        return Refusal("fresh_accounts", "the host discloses one Ladder for the whole competition: a fresh account's "
                       "first submission meets the board's best, it is not released for free")
    if facts.family not in CAPACITY_METRICS or not facts.float64 or facts.feedback != "score":
        return Refusal("fresh_accounts", "a float64 score board of a metric capacity reads only")
    scored = facts.n_rows if facts.public_fraction is None else round(facts.n_rows * facts.public_fraction)
    step = release_step(ladder_releases(facts.seen), facts.decimals, scored)
    decimals = step_decimals(step, facts.decimals)
    need = expected_accounts(facts, decimals)
    fresh = facts.fresh_account
    if fresh is None:
        return Refusal("fresh_accounts", f"fresh_accounts: one account; ~{need:.0f} would read the board, a first "
                       "release each", close=True)
    left = facts.accounts - fresh
    # Where one account's Ladder attack reads the board alone (binary log loss, every row scored), fresh accounts
    # play only when they suffice; elsewhere the one-account plans guess, and the labels a few fresh accounts
    # decode exactly are a gain over a guess: with k accounts never worse than with one.
    alone = facts.binary_logloss and not facts.split
    if alone and facts.exact_failed and facts.failed == "ladder" and left >= MIN_FRESH:
        # The one-account Ladder attack failed (noise or flips behind the Ladder): what fresh accounts read is a
        # gain over the guess that is left, however few they are.
        # An exact design inside would fail as the Ladder attack did (and spend the few accounts): the block reads
        # model noise and fresh flips and read a few rows a submission.
        return Plan("fresh_accounts", {"first_account": fresh, "decimals": decimals, "budget": facts.budget_left,
                                       "seed": facts.seed, "attack": "blocks", "balance": _balance(facts)},
                    f"the one-account Ladder attack failed (noise or flips behind the Ladder); {left} fresh accounts, "
                    "one submission each, read what they can in blocks (noise and flips measured inside)",
                    rank=RANK, cost=need, rescue=True)
    if left < (need if alone else MIN_FRESH):
        return Refusal("fresh_accounts", f"fresh_accounts: {left} fresh account(s), ~{need:.0f} would read the "
                       "board, a first release each", close=True)
    if alone and facts.budget_left is not None and facts.budget_left < need:
        return Refusal("fresh_accounts", f"the budget ({facts.budget_left}) is short of the ~{need:.0f} accounts' "
                       "submissions")
    grid = "at the board's precision" if step is None else f"on the Ladder's step {float(step):.6g}"
    return Plan("fresh_accounts", {"first_account": fresh, "decimals": decimals, "budget": facts.budget_left,
                                   "seed": facts.seed, "balance": _balance(facts)},
                f"released scores stick (a Ladder), but each account's first submission is released {grid}: "
                f"{left} fresh accounts, one submission each, read the board as a plain one (~{need:.0f} needed "
                "without noise" + (")" if left >= need else "; fewer decode what they can, the rest is guessed)"),
                rank=RANK, cost=need)


def _balance(facts: BoardFacts) -> list[float] | None:
    """The class shares the outer fingerprint measured (its edge probes), which the inner one then need not."""
    return None if facts.seen is None or facts.seen.balance is None else [float(b) for b in facts.seen.balance]


@register("fresh_accounts", exact=False, truncatable=True, fits=fresh_accounts_fits,
          paper="ours (Kaggle's commonest abuse: one person, many accounts, each first release unconditional)",
          board="a Ladder (any per-account state) on a float64 score board capacity reads; an account a query",
          queries="the inner auto's: its fingerprint, the exact design, the confirmation — one account each",
          precision="a first release at the board's decimals, or rounded to the fixed Ladder's step (read off "
          "the fingerprint's releases)")
def fresh_accounts(
    oracle: Oracle, *, budget: int | None = None, first_account: int | None = None, decimals: int | None = None,
    attack: str | None = None, seed: int = 0, params: dict[str, Any] | None = None,
    balance: list[float] | None = None,
) -> AttackResult:
    """``auto`` (or ``attack``, forced inside it) played through :class:`FreshAccounts`: one submission per account
    from ``first_account`` (default: the one after the current), within ``budget`` submissions; ``decimals``:
    the precision a first release carries (default: the board's). The labels are the inner ``auto``'s: exact where
    its design vouched for them (confirmed by a query on a further fresh account), else its posterior guess.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(0).integers(0, 2, 40)
    >>> board = LocalOracle(labels, defenses=[{"name": "ladder", "mode": "parameter_free"}], accounts=20)
    >>> result = run("fresh_accounts", board, first_account=1)
    >>> bool((result.labels == labels).all()), board.queries_by_account[1:4], board.queries <= 20
    (True, [1, 1, 1], True)
    """
    facts = BoardFacts.of(oracle)
    first = facts.account + 1 if first_account is None else first_account
    carrier = FreshAccounts(oracle, first, facts.decimals if decimals is None else decimals)
    if carrier.accounts_left < 1:
        raise AttackFailed("no fresh account left")
    limit = carrier.accounts_left if budget is None else min(carrier.accounts_left, budget)
    # With the balance measured outside, the inner probes go to the precision and the noise (two ½ probes).
    probes = FINGERPRINT if balance is None else FINGERPRINT_KNOWN_BALANCE
    inner = run("auto", carrier, budget=limit, fingerprint_budget=probes, seed=seed, attack=attack,
                params=params, balance=balance)
    inner.details["accounts_used"] = carrier.accounts_used
    inner.details["first_account"] = first
    lines = inner.course.reasoning if inner.course is not None else inner.details.setdefault("reasoning", [])
    lines.insert(0, f"fresh_accounts: one submission per account from account {first} "
                    f"({carrier.accounts_used} used), each first release unconditional")
    if inner.course is not None and inner.course.cut_by_budget and (budget is None or budget > carrier.accounts_left
                                                                     + carrier.accounts_used):
        # The accounts ran out, not the budget: a larger budget would not finish the design, more accounts would.
        inner.course.cut_by_budget = False
        lines.append(f"the fresh accounts ran out ({carrier.accounts_used} used) before the design finished")
    labels = np.asarray(inner.labels, dtype=np.int64)
    return AttackResult("fresh_accounts", labels, details=inner.details, confidence=inner.fill_confidence(),
                        course=inner.course)
