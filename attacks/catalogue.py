"""The attack catalogue's types: what a board is known to be (:class:`BoardFacts`), what an attack declares about
itself (:class:`AttackSpec`), and its answer for a board (a :class:`Plan`, or a :class:`Refusal` saying why not).

Every attack registers an :class:`AttackSpec` beside its function (:func:`attacks.registry.register`); the
registry is the catalogue. ``auto`` asks every spec whether it fits the board and plays the best-ranked plan
(:func:`attacks.plan.choose`); the audit's battery, the attacks a
budget can cut short and the documentation's attack table are read off the same specs. Adding an attack is one
module: its function, its spec, and nothing else.

A plan's rank is ``(rank, cost)``: ``rank`` orders the kinds of evidence a board gives (an attack made for a
board's defense before a general one; an exact design before a likelihood decoder before a best guess), ``cost``
the expected queries (from the counting bound, or an attack's own plan), so that of two attacks made for the same
board the cheaper plays (paper 004's AUC + log-loss attacks against ``capacity``). After the first choice ``auto``
plays the failed plan's declared fallbacks, the rescue plans, the likelihood decoders and the best guess, each
read off the specs (:mod:`attacks.auto`).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from attacks.disclosure import Disclosure
from attacks.seen import Fingerprint

#: Observed spread of two identical probes → a Laplace scale with room to spare. For Laplace noise of scale
#: b the expected |X − Y| is 1.5·b; a factor 2 over the observed spread covers an unlucky small sample.
NOISE_SCALE_FACTOR = 2.0
#: The exact attacks' assumed bound on |released − true| as a multiple of that scale. Laplace tails fall as
#: e^(−t/b): at 10 × (≥ 2b) a query exceeds the bound with probability below e^-20, so a run of a few hundred
#: queries holds, while the lattice loses only ~1 bit per query (measured: Laplace 1e-3 on 171 rows, bound
#: 20b, 53 queries; robust_batched fails there). If the noise still breaks it, the attack fails loudly.
NOISE_BOUND_FACTOR = 10.0


def noise_bound(spread: float) -> float:
    """The exact attacks' bound on |released − true| for a noise spread (or a released half-unit) of ``spread``."""
    return NOISE_BOUND_FACTOR * NOISE_SCALE_FACTOR * spread


class Stage(enum.IntEnum):
    """Where an attack plays in ``auto``'s course: exact designs first, then the likelihood decoders that read
    noise no exact design carries, then the best guesses (the majority-class floor checks them all)."""

    EXACT = 0
    LIKELIHOOD = 1
    GUESS = 2


@dataclass(frozen=True)
class BoardFacts:
    """Everything an attack may know about a board before it submits: what the competition page says (metric,
    classes, rows, released decimals, arithmetic, a disclosed split, the feedback kind, the accounts the attacker
    holds, what the host discloses of the chain) and what the fingerprint measured (``seen``; ``None`` when no
    probe was sent, e.g. for the audit's battery). Filled once by :meth:`of`.

    >>> from attacks.oracle import LocalOracle
    >>> facts = BoardFacts.of(LocalOracle([0, 1, 1], decimals=3, public_fraction=0.5))
    >>> facts.binary_logloss, facts.split, facts.decimals, facts.feedback
    (True, True, 3, 'score')
    """

    metric: str
    n_classes: int
    n_rows: int
    eps: float = 1e-15
    decimals: int | None = None
    arithmetic: str = "float64"
    public_fraction: float | None = None
    feedback: str = "score"
    accounts: int = 1
    account: int = 0
    also_report: tuple[str, ...] = ()
    reports_all: bool = False
    n_public: int | None = None
    disclosed: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    seen: Fingerprint | None = None
    budget_left: int | None = None
    seed: int = 0
    #: Learned by playing: every exact plan has failed on this board (the likelihood decoders then also read
    #: noise below the released resolution, and a public split).
    exact_failed: bool = False
    #: … the attack whose plan failed, and how many releases the board withheld while it played.
    failed: str | None = None
    withheld: int = 0

    @classmethod
    def of(cls, oracle: Any, seen: Fingerprint | None = None, *, budget_left: int | None = None,
           seed: int = 0) -> BoardFacts:
        """The facts of ``oracle`` (any :class:`~attacks.oracle.Oracle`; the optional members read with their
        defaults), with the fingerprint ``seen`` and the queries ``budget_left`` for the attack. This is the one
        place that reads an oracle's optional members; attacks read the facts."""
        if isinstance(oracle, BoardFacts):
            return replace(oracle, seen=seen if seen is not None else oracle.seen, budget_left=budget_left, seed=seed)
        feedback = getattr(oracle, "feedback", None)
        kind = str(feedback.get("kind", "score")) if isinstance(feedback, Mapping) else "score"
        disclosed = getattr(oracle, "disclosed", None)
        return cls(
            metric=str(oracle.metric), n_classes=int(oracle.n_classes), n_rows=int(oracle.n_rows),
            eps=float(getattr(oracle, "eps", 1e-15)), decimals=oracle.decimals,
            arithmetic=str(getattr(oracle, "arithmetic", "float64")),
            public_fraction=getattr(oracle, "public_fraction", None), feedback=kind,
            accounts=int(getattr(oracle, "accounts", 1) or 1), account=int(getattr(oracle, "account", 0) or 0),
            also_report=tuple(getattr(oracle, "also_report", ()) or ()),
            reports_all=hasattr(oracle, "submit_all"), n_public=getattr(oracle, "n_public", None),
            disclosed=MappingProxyType(dict(disclosed) if isinstance(disclosed, Mapping) else {}),
            seen=seen, budget_left=budget_left, seed=seed,
        )

    # What the page says.
    @property
    def family(self) -> str:
        """The metric's base name (``norm_like:2.5`` → ``norm_like``)."""
        return self.metric.split(":")[0]

    @property
    def binary(self) -> bool:
        return self.n_classes == 2

    @property
    def binary_logloss(self) -> bool:
        return self.metric == "binary_logloss" and self.n_classes == 2

    @property
    def float64(self) -> bool:
        return self.arithmetic == "float64"

    @property
    def hidden_split(self) -> bool:
        """Only a public split is scored, though the page does not say so (rows that never move)."""
        return self.public_fraction is None and bool(self.seen is not None and self.seen.only_public_moves)

    @property
    def stated_public_count(self) -> int | None:
        """The public rows: disclosed, or ``round(N·public_fraction)`` as the site draws the split
        (:func:`scoring.public_split_mask`); ``None`` when the page states no split."""
        if self.n_public is not None:
            return int(self.n_public)
        if self.public_fraction is None:
            return None
        n, fraction = self.n_rows, float(self.public_fraction)
        count = round(fraction * n)
        if 0.0 < fraction < 1.0 and n >= 2:
            count = min(max(count, 1), n - 1)
        return int(count)

    @property
    def split(self) -> bool:
        """Only a public split is scored (disclosed, or seen as rows that never move)."""
        return self.public_fraction is not None or self.hidden_split

    @property
    def told(self) -> Disclosure:
        """The chain parameters the host discloses (:mod:`attacks.disclosure`), less any the fingerprint found
        contradicted by a release (then measured instead)."""
        told = Disclosure.parse(self.disclosed)
        if self.seen is not None and self.seen.contradicted:
            return Disclosure()
        return told

    @property
    def told_budget_scale(self) -> float | None:
        """The Laplace scale on the released mean a disclosed privacy budget's noise has (binary log loss scoring
        every row), ``None`` unless both the budget and the per-release noise are disclosed (and not contradicted)."""
        told = self.told
        if not (told.privacy_budget and self.binary_logloss and self.public_fraction is None):
            return None
        return told.noise_scale_on(math.log1p(-self.eps) - math.log(self.eps), self.n_rows)

    @property
    def fresh_account(self) -> int | None:
        """An account after the current one that nothing was submitted from yet."""
        following = self.account + 1
        return following if following < self.accounts else None

    # What the fingerprint saw (all false when it sent nothing).
    @property
    def noise(self) -> bool:
        return bool(self.seen is not None and self.seen.noise)

    @property
    def seen_spread(self) -> float:
        """The spread of the fingerprint's repeated probes (0 when it sent none)."""
        return 0.0 if self.seen is None else float(self.seen.noise_spread)

    @property
    def spread(self) -> float:
        """The noise the probes showed, or half a released unit when larger (0 when nothing was seen)."""
        return 0.0 if self.seen is None else max(self.seen.noise_spread, self.seen.tolerance)

    @property
    def noise_bound(self) -> float:
        """The exact attacks' bound on the noise seen (0 when none was)."""
        return noise_bound(self.spread) if self.noise else 0.0

    @property
    def refusing(self) -> bool:
        """Probes were refused, or released nothing (a probe detector, an exhausted privacy budget)."""
        return bool(self.seen is not None and (self.seen.rejected or self.seen.released_nothing))

    @property
    def sticky(self) -> bool:
        """Released scores stick: only improvements are released (a Ladder)."""
        return bool(self.seen is not None and self.seen.ladder)

    @property
    def subsetting(self) -> bool:
        return bool(self.seen is not None and self.seen.subsetting)

    @property
    def open_release(self) -> bool:
        """Every submission's score is released afresh, over the same rows: what the exact designs need."""
        return not (self.refusing or self.sticky or self.subsetting)

    @property
    def quiet_binary(self) -> bool:
        """A float64 binary log-loss board whose probes were all released, without noise or a Ladder: where rows
        or labels redrawn per submission are the likely cause of an exact design's failure."""
        seen = self.seen
        return (seen is not None and self.binary_logloss and not seen.noise and not seen.ladder and not seen.rejected
                and not seen.released_nothing and self.float64)

    @property
    def fresh_release(self) -> bool:
        """A release the likelihood decoders model: a fresh score per submission over the same rows (no Ladder,
        no subset, nothing refused or withheld) in float64."""
        return self.open_release and self.float64

    @property
    def rounded(self) -> bool:
        """The fingerprint saw scores rounded to some decimals (noise below them would be rounded away)."""
        return bool(self.seen is not None and self.seen.decimals is not None and not self.seen.full_precision)

    @property
    def rescue_board(self) -> bool:
        """Every exact plan failed on a float64 binary log-loss board that scores every row, without a Ladder, and
        a couple of queries are left: where the rescue plans (a privacy budget, Thresholdout) apply."""
        seen = self.seen
        return (self.exact_failed and self.binary_logloss and seen is not None and not seen.ladder
                and seen.public_fraction is None and self.float64
                and (self.budget_left is None or self.budget_left >= 2))

    @property
    def prior(self) -> float | None:
        """The measured share of class 1 (binary boards), ``None`` when unmeasured."""
        balance = None if self.seen is None else self.seen.balance
        return None if balance is None or len(balance) < 2 else float(balance[1])


@dataclass
class Plan:
    """The attack to run, its parameters, and why it was chosen; ``rank`` and ``cost`` order plans that fit the
    same board (lower first), ``stage`` is where it plays in ``auto``'s course."""

    attack: str
    params: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    forced: bool = False
    rank: float = math.inf
    cost: float = math.inf
    stage: Stage = Stage.EXACT
    tiebreak: int = 0
    #: A plan only for after the exact plans failed (``auto``'s rescue stage), never a first choice.
    rescue: bool = False

    @property
    def exact(self) -> bool:
        """Whether the planned attack vouches for its labels (not a best guess)."""
        return self.stage != Stage.GUESS

    @property
    def order(self) -> tuple[float, float, int]:
        return (self.rank, self.cost, self.tiebreak)


@dataclass(frozen=True)
class Refusal:
    """Why an attack does not fit a board; ``close``: the board is of its kind and one detail ruled it out (the
    chosen plan's reason says so, e.g. paper 004's AUC attacks planning more queries than ``capacity``)."""

    attack: str
    reason: str
    close: bool = False


Fits = Callable[[BoardFacts], "Plan | Refusal"]
Fallbacks = Callable[[BoardFacts, Plan], list[Plan]]


def why_guess(facts: BoardFacts) -> str:
    """Why a board gets a best guess rather than an exact design: what the fingerprint saw that stops them."""
    seen = facts.seen
    if facts.refusing and seen is not None:
        return (f"{seen.rejected} probe(s) refused and some released nothing: the exact attacks need every score "
                "released")
    if facts.sticky:
        return "released scores stick (Ladder/threshold): only improvements are seen" + (
            "" if facts.fresh_account is not None else "; the fingerprint spent the only account's first score, "
            "which the Ladder attacks need (give accounts >= 2)")
    if facts.subsetting:
        return "a fresh random subset of rows is scored per submission: no exact attack applies"
    return f"no exact attack applies to {facts.metric} with {facts.n_classes} classes" + (
        " under noise" if facts.noise else "")


@dataclass(frozen=True)
class AttackSpec:
    """What an attack declares about itself, registered beside its function.

    ``exact``: it vouches for every label it claims (``attacks.run`` confirms them with one query).
    ``truncatable``: a budget cuts it short and it keeps the labels decoded so far (else it refuses a budget it
    cannot finish within, or fails when the budget runs out). ``spends_budget``: a best guess or decoder that
    uses every query it is given, so whoever plays it sizes its budget. ``stage``: where it plays in ``auto``.
    ``fits``: with which parameters it applies to a board (a :class:`Plan` with its rank and cost), or why
    not. ``fallbacks``: what to play, in order, when its plan failed. ``applies``: the boards it runs on at all,
    whatever the fingerprint sees (the audit's battery). ``paper``, ``board``, ``queries``, ``precision`` (what the
    attack assumes of the released scores): the documentation's attack table.
    """

    name: str
    fn: Callable[..., Any]
    exact: bool = True
    truncatable: bool = False
    spends_budget: bool = False
    stage: Stage = Stage.EXACT
    fits: Fits | None = None
    fallbacks: Fallbacks | None = None
    applies: Callable[[BoardFacts], bool] | None = None
    paper: str = ""
    board: str = ""
    queries: str = ""
    precision: str = ""

    def plan_for(self, facts: BoardFacts) -> Plan | Refusal:
        """This attack's plan for ``facts``, or why it does not fit; the plan's name and stage are the spec's."""
        if self.fits is None:
            return Refusal(self.name, "declares no fit: played only when named")
        answer = self.fits(facts)
        if isinstance(answer, Refusal):
            return Refusal(self.name, answer.reason, answer.close)
        answer.attack = answer.attack or self.name
        answer.stage = self.stage
        return answer

    def fallbacks_for(self, facts: BoardFacts, failed: Plan) -> list[Plan]:
        return [] if self.fallbacks is None else self.fallbacks(facts, failed)

    @property
    def summary(self) -> str:
        """The first line of the attack function's docstring."""
        doc = (self.fn.__doc__ or "").strip()
        return doc.split("\n\n")[0].replace("\n", " ").strip() if doc else ""
