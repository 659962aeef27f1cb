"""``auto``: fingerprint the release, play the strongest applicable attack within a query budget, and never
fall below the majority class.

``attacks.run("auto", oracle, budget=Q)``:

1. **Fingerprint** (:mod:`attacks.fingerprint`, at most ``fingerprint_budget`` of the ``Q`` queries):
   released decimals, noise, sticky scores (Ladder), subsetting, a public split, refused probes, and the
   class balance of the scored rows.
2. **Plan** (:func:`attacks.plan.choose`): the best-ranked plan of the attack catalogue for what the page says
   and the fingerprint saw (every attack's spec declares when it fits, :mod:`attacks.catalogue`): an exact
   design where the board releases every score faithfully (noise with a bound), an attack made for the defense
   seen (a Ladder, fresh accounts, a privacy budget, refusals), else the best guess.
3. **Play**, every step asking the catalogue, on what is left of the budget:
   the exact plan, then its spec's declared fallbacks in order (:mod:`attacks.fallbacks`); when they all failed
   the rescue plans (:func:`attacks.plan.rescues`: ``budgeted`` on withheld releases, ``thresholdout``); then
   the best likelihood decoder that fits (``noisy``, ``noisy_split``, ``one_vs_rest``; also for the rows an
   exact design cut short under noise, or instead of a design that cannot carry the noise); then the best
   guess (:func:`attacks.plan.best_guess`). An exact attack that can stop early is cut by the budget and keeps
   the labels it decoded so far; one that completes is confirmed with one query (:mod:`attacks.confirm`) when
   the budget allows.
4. **Floor** (:mod:`attacks.floor`): a guessed row keeps a label other than the majority class only if its
   posterior says it is more likely right, the moved rows together promise a gain, and — when the budget kept
   the queries for it (``2 · floor.BANDS`` of it, not on a Ladder) — a held-out pair of check queries per band
   of moved rows measures the band's accuracy above 1/2; otherwise the band goes back to the majority class.
5. **Fill**: every row without an exact label gets the best guess — the best-guess attack's label, or the
   majority class of the rows not recovered (from the measured balance less the labels recovered exactly).

Result: ``labels`` (``-1`` only where no guess is possible: nothing was released to measure the balance
from), ``confidence`` per row (1.0 for an exact label, a posterior probability for a guess), and in
``details``: ``reasoning`` (what it detected, what it chose, why — human-readable lines), ``attack`` (the
attack played), ``fallback``, ``fingerprint``, ``plan``, ``exact``/``guessed`` counts, ``cut_by_budget``,
``fingerprint_queries``/``attack_queries``, ``balance``, ``floor`` (rows moved off the majority class before
and after the floor, its check queries) and the played attack's own details.

``reserve``: queries to leave unused for the caller (the bot's final submission). The best guess and the
confirmation stay clear of them; an exact attack cut by the budget may use them, since the caller then has an
unfinished attack to resume (the bot stops with a checkpoint) rather than a result to submit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from attacks.balance import majority_labels, majority_params
from attacks.capacity.design import counting_bound, max_weight_real, sum_resolution
from attacks.catalogue import BoardFacts, Plan, Stage
from attacks.confirm import MIN_STAKE, count_wrong, one_wrong, slack_from
from attacks.confirm import confirm as confirm_claims
from attacks.fingerprint import DEFAULT_BUDGET, Fingerprint, fingerprint
from attacks.floor import BANDS, apply_floor, check_reserve
from attacks.hard_label import is_hard_label
from attacks.hard_label_plan import play_hard_label
from attacks.mutnet.attack import takes_models
from attacks.noisy.attack import NOISY_PROBES, NOISY_SHARE
from attacks.noisy.calibration import temper
from attacks.noisy.shares import share_errors, share_posterior
from attacks.oracle import Oracle, Released, submit_many
from attacks.plan import best_guess, choose, explain, rescues
from attacks.registry import ATTACKS, confirmed, register, run, spec
from attacks.result import GUESS_CEILING, AttackFailed, AttackResult, Course, SubmissionRefused
from scoring.metrics import get_metric


def truncatable(name: str) -> bool:
    """Whether attack ``name`` takes a budget and returns what it decoded when it runs out (its spec says)."""
    return name in ATTACKS and spec(name).truncatable


class BudgetSpent(AttackFailed):
    """An attack inside ``auto`` asked for a query beyond the budget."""


class BudgetedView:
    """``oracle`` as ``auto``'s probes and attacks see it: at most ``limit`` queries (counted from now; then
    :class:`BudgetSpent`), the released precision as observed. Every other attribute is the oracle's."""

    def __init__(self, inner: Oracle, limit: int | None) -> None:
        self._inner = inner
        self.limit = limit
        self.n_rows = inner.n_rows
        self.n_classes = inner.n_classes
        self.metric = inner.metric
        self.eps = inner.eps
        self.decimals = inner.decimals
        self._start = inner.queries
        self.withheld = 0
        #: Every score released through this view, in order (a check query compares its release with them).
        self.released: list[float] = []

    @property
    def queries(self) -> int:
        return self._inner.queries

    @queries.setter
    def queries(self, value: int) -> None:
        self._inner.queries = value

    @property
    def account(self) -> int:
        """The account the next submission is made as (oracles with several accounts; else always 0)."""
        return int(getattr(self._inner, "account", 0))

    @account.setter
    def account(self, value: int) -> None:
        self._inner.account = value  # type: ignore[attr-defined]

    @property
    def used(self) -> int:
        return self._inner.queries - self._start

    @property
    def left(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)

    def _spend(self) -> None:
        if self.limit is not None and self.used >= self.limit:
            raise BudgetSpent(f"the budget of {self.limit} queries is spent")

    def submit(self, predictions: Any) -> Released:
        self._spend()
        value = self._inner.submit(predictions)
        if value is None:
            self.withheld += 1  # a budget or a detector withheld it: what the fallback looks at
        else:
            self.released.append(float(value))
        return value

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """Independent queries (:func:`attacks.oracle.submit_many`), within the budget: those past it are not
        sent, and :class:`BudgetSpent` is raised once the ones that fit are answered — as one ``submit`` after
        another would."""
        vectors = list(predictions)
        left = self.left
        fits = vectors if left is None else vectors[:left]
        values = submit_many(self._inner, fits) if fits else []
        self.withheld += sum(value is None for value in values)
        self.released.extend(float(value) for value in values if value is not None)
        if len(fits) < len(vectors):
            raise BudgetSpent(f"the budget of {self.limit} queries is spent")
        return values

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name == "submit_all":

            def submit_all(predictions: Any) -> Any:
                self._spend()
                return value(predictions)

            return submit_all
        return value


def _through_models(
    oracle: Oracle, *, budget: int | None, reserve: int, fingerprint_budget: int, seed: int, attack: str | None,
    params: dict[str, Any] | None,
) -> AttackResult:
    """``auto`` on a model competition is ``mutnet``: the board wrapped in a ModelOracle (an honest base under the
    Mutator Network head), then fingerprint, plan and play as on a file board. ``params`` ``key`` and ``buckets``
    choose the head's key (:mod:`attacks.mutnet.attack`); the rest go to the attack played."""
    from attacks.mutnet.attack import play

    inner = dict(params or {})
    carried = {name: inner.pop(name) for name in ("key", "buckets") if name in inner}

    def play_inner(carrier: Any) -> AttackResult:
        # The budget is the whole run's: a refused first rank-head model has already spent one of it.
        left = None if budget is None else max(budget - (oracle.queries - start), 0)
        return run("auto", carrier, budget=left, reserve=reserve, fingerprint_budget=fingerprint_budget,
                   seed=seed, attack=None if attack == "mutnet" else attack, params=inner or None)

    start = oracle.queries
    return play(oracle, play_inner, seed=seed, **carried)


@register("auto", exact=False,
          paper="ours: the fingerprint, the catalogue's best plan, its fallbacks, the floor",
          board="every board",
          queries="the budget it is given: the fingerprint's probes (8 by default), then the plan's",
          precision="whatever the fingerprint measures (decimals, arithmetic, noise); the chosen attack's")
def auto(
    oracle: Oracle,
    *,
    budget: int | None = None,
    reserve: int = 0,
    fingerprint_budget: int = DEFAULT_BUDGET,
    seed: int = 0,
    attack: str | None = None,
    params: dict[str, Any] | None = None,
    balance: list[float] | None = None,
) -> AttackResult:
    """Fingerprint the release and play the strongest applicable attack within ``budget`` queries (``None``:
    no limit); see the module docstring. ``attack`` forces the attack (after the fingerprint), ``params``
    override the chosen attack's parameters, ``seed`` seeds every random choice. ``balance``: class shares
    already measured, on a board whose every submission comes from a fresh account (``fresh_accounts``; the
    fingerprint then skips its edge probes).

    Paper: ours (the catalogue's plans; each attack cites its own paper). Queries: at most ``budget``, the
    fingerprint's ``fingerprint_budget`` probes first. Precision: none assumed — the fingerprint measures the
    released decimals, the arithmetic and the noise, and the plan is chosen for what it saw.

    A 40-row board at 5 decimals: the fingerprint's probes, then ``capacity`` and its check, within the budget:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(3).integers(0, 2, 40)
    >>> result = run("auto", LocalOracle(labels, decimals=5), budget=50)
    >>> result.details["attack"], bool((result.labels == labels).all()), result.queries <= 50
    ('capacity', True, True)
    """
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be non-negative, got {budget}")
    if reserve < 0:
        raise ValueError(f"reserve must be non-negative, got {reserve}")
    if attack == "auto":
        attack = None  # "auto" names the default choice, not an attack to nest
    if takes_models(oracle):  # a model competition: the same course, every query a MutNet model
        return _through_models(oracle, budget=budget, reserve=reserve, fingerprint_budget=fingerprint_budget,
                               seed=seed, attack=attack, params=params)
    view = BudgetedView(oracle, budget)
    if is_hard_label(view):
        return _failed_if_empty(
            play_hard_label(view, budget=budget, reserve=reserve, seed=seed, forced=attack, params=params), view)
    n = oracle.n_rows
    reasoning: list[str] = []
    probe_budget = fingerprint_budget if budget is None else max(0, min(fingerprint_budget, budget - reserve))
    spare = 0 if budget is None else max(0, min(1, budget - reserve - probe_budget))
    report = fingerprint(view, budget=probe_budget, seed=seed, balance=balance, spare=spare)
    reasoning.extend(report.describe())
    if report.full_precision:
        view.decimals = None
    elif report.decimals is not None:
        view.decimals = report.decimals

    # Queries the majority-class floor keeps for its check pairs (attacks.floor): the guesses leave them unused.
    floor_reserve = check_reserve(_guess_budget(view, reserve), ladder=bool(report.ladder)) if (
        view.metric == "binary_logloss" and view.n_classes == 2) else 0
    outer_reserve, reserve = reserve, reserve + floor_reserve
    plan = choose(view, report, forced=attack, params=params, seed=seed, query_budget=_guess_budget(view, reserve))
    reasoning.append(f"chose {plan.attack}: {plan.reason}")
    labels = np.full(n, -1, dtype=np.int64)
    confidence = np.zeros(n)
    course = Course(attack=plan.attack, plan_attack=plan.attack, plan_params=plan.params, plan_reason=plan.reason,
                    reasoning=reasoning, fingerprint=report.as_dict(), fingerprint_queries=report.probes)
    played: AttackResult | None = None
    guess_plan: Plan | None = plan if not plan.exact else None
    hopeless = _likelihood_plan(view, report, reserve, seed) if plan.exact and _cannot_carry(view, plan) else None
    if hopeless is not None:
        # Not one label a query fits the counting bound at this noise: the exact design would spend the budget
        # on releases it cannot decode (seen: 2 of 200 labels in 3,993 queries), the likelihood decoder reads them.
        reasoning.append(f"{plan.attack} skipped: at noise bound {plan.params.get('noise_bound', 0):.3g} the "
                         f"counting bound leaves less than one label a query")
        guess_plan = hopeless
        course.attack = course.fallback = hopeless.attack
        reasoning.append(f"chose {hopeless.attack}: {hopeless.reason}")
    elif plan.exact:
        played, plan, rest = _exact_stage(view, plan, report, reserve, outer_reserve, seed, reasoning, course)
        if rest is not None:
            guess_plan = rest
        if played is None and getattr(view, "exact_only", False):
            # A MutNet hash carrier with hash seeds left: a broken decoding means two public rows share a
            # fingerprint, and another seed does better than a best guess (attacks.mutnet.attack).
            raise AttackFailed(f"{plan.attack} gave no labels; the oracle asks for exact labels only")
        if played is None:
            guess_plan = _likelihood_plan(view, report, reserve, seed, exact_failed=True) or best_guess(
                BoardFacts.of(view, report, budget_left=_guess_budget(view, reserve), seed=seed),
                f"{plan.attack} gave no labels")
            if params and attack is None:
                guess_plan.params.update({k: v for k, v in params.items() if k in ("budget", "margin", "accept")})
            course.fallback = guess_plan.attack
            reasoning.append(f"falling back to the best guess, {guess_plan.attack}, with "
                             f"{_left_text(view, reserve)}")
        else:
            if confirmed(plan.attack) and played.recovered:
                reasoning.append("note: exact labels are the labels the board scores against; a fixed randomized "
                                 "response (which no score can tell from true labels) would make them its flipped "
                                 "labels, right at 1 − p against the true ones: the ceiling that defense promises")
            exact = played.labels >= 0
            labels[exact] = played.labels[exact]
            confidence[exact] = played.fill_confidence()[exact]
            course.attack_details = played.details
    if guess_plan is not None:
        guessed = _play_guess(view, guess_plan, report, reasoning)
        if guessed is None and played is None and view.withheld:
            # The guess stopped on withheld releases (a privacy budget): spend what is left of them, and any
            # fresh account's, on rows and on the balance (measured at the clipping edge, far finer than a
            # noisy 0.7 probe's).
            guessed = _rescue(view, plan, report, reserve, seed, reasoning)
            if guessed is not None:
                course.fallback = guessed.attack
        if guessed is not None:
            course.attack_details = _with_public_rows(course.attack_details, guessed.details) or guessed.details
            open_rows = labels < 0
            labels[open_rows] = guessed.labels[open_rows]
            # A guess is never exact, whatever it reports (a decoder that sets no confidence reads as 1.0):
            # 1.0 marks the labels an exact attack vouches for, guaranteed at its noise bound or confirmed.
            confidence[open_rows] = np.minimum(guessed.fill_confidence()[open_rows], GUESS_CEILING)
    _check_guesses(view, labels, confidence, report, outer_reserve, reasoning)
    _class_floor(view, labels, confidence, report, reasoning)
    _floor(view, labels, confidence, report, played, outer_reserve, reasoning, course)
    _fill_majority(labels, confidence, report, played, reasoning, view,
                   split_decoded="public_mask" in (course.attack_details or {}))
    n_exact = int(((labels >= 0) & (confidence >= 1.0)).sum())
    n_guessed = int(((labels >= 0) & (confidence < 1.0)).sum())
    course.exact, course.guessed, course.balance = n_exact, n_guessed, report.balance
    course.attack_queries = view.used - report.probes
    budget_text = "no budget" if budget is None else f"a budget of {budget}" + (
        f" ({outer_reserve} kept for the caller)" if outer_reserve else "")
    if n and n_exact + n_guessed == 0:
        # Not one row can be answered honestly (nothing released to read a label or the class balance from): the
        # result says it failed and why, rather than labels (every row stays -1).
        why = _why_failed(view)
        reasoning.append(f"result: failed ({why}); {view.used} queries ({report.probes} fingerprint) of "
                         f"{budget_text}")
        details = course.as_dict()
        details["failed"] = why
        return AttackResult("auto", labels, details=details, confidence=confidence, course=course)
    reasoning.append(f"result: {n_exact} exact label(s), {n_guessed} guessed, {n - n_exact - n_guessed} unknown; "
                     f"{view.used} queries ({report.probes} fingerprint) of {budget_text}")
    return AttackResult("auto", labels, details=course.as_dict(), confidence=confidence, course=course)


def _why_failed(view: BudgetedView) -> str:
    """Why ``auto`` answers no row: what the board released (``details["failed"]``)."""
    if view.used == 0:
        return "no query in the budget: nothing was released to read a label or the class balance from"
    if not view.released:
        return "nothing was released to read a label or the class balance from"
    return "no release told a label or the class balance"


def _failed_if_empty(result: AttackResult, view: BudgetedView) -> AttackResult:
    """A hard-label board's result that answers no row says it failed and why, as a file board's does."""
    if view.n_rows == 0 or result.recovered:
        return result
    why = _why_failed(view)
    result.details["failed"] = why
    reasoning = result.details.get("reasoning")
    if isinstance(reasoning, list):
        line = f"result: failed ({why}); {view.used} queries"
        if reasoning and str(reasoning[-1]).startswith("result:"):
            reasoning[-1] = line
        else:
            reasoning.append(line)
    return result


def _with_public_rows(details: dict[str, Any] | None, guessed: dict[str, Any]) -> dict[str, Any] | None:
    """The exact attack's details with the public rows the guess found beside its own: a split design cut short
    names few public rows, and the reader that took the rows it left open names more (the floor's check measures
    a band of known public rows in full, not at the split's share)."""
    if details is None or "public_mask" not in guessed:
        return details
    found = np.asarray(guessed["public_mask"], dtype=bool)
    mine = details.get("public_mask")
    merged = dict(details)
    merged["public_mask"] = found if mine is None or len(mine) != len(found) else (
        np.asarray(mine, dtype=bool) | found)
    counts = [c for c in (details.get("n_public"), guessed.get("n_public")) if c is not None]
    if counts:
        merged["n_public"] = max(int(c) for c in counts)
    return merged


#: Likelihood decoders that read a few rows a query and keep whatever the budget leaves them: under noise an exact
#: design cut short before them gets a tenth of the budget (its labels most often fail their confirmation).
BLOCK_READERS = frozenset({"blocks", "blocks_split"})
#: The share of the counting bound's labels per query an exact design is assumed to realise under noise.
EXACT_REALIZED = 0.6


def _exact_stage(
    view: BudgetedView, plan: Plan, report: Fingerprint, reserve: int, outer_reserve: int, seed: int,
    reasoning: list[str], course: Course,
) -> tuple[AttackResult | None, Plan, Plan | None]:
    """The exact plan, then its spec's declared fallbacks in order (rows or labels redrawn per submission on a board
    that looked plain, noise below the resolution, paper 001's doubling on K-class cross entropy, the split design
    with growing noise bounds, the log loss alone after paper 004's AUC decoders), then the catalogue's rescues.
    (the result, or ``None`` when all failed; the last plan tried; the likelihood decoder for the rows an exact
    design capped under noise left open, if any)."""
    capped = _cap_for_noise(view, plan, report, reserve, seed, reasoning)
    played, cut = _play_exact(view, plan, outer_reserve, reasoning, noisy=bool(report.noise))
    reader = _likelihood_plan(view, report, reserve, seed) if capped and played is None else None
    if reader is not None and reader.attack in BLOCK_READERS:
        # Retries with wider noise bounds would each spend what the block reads need (seen: 260 of 440 accounts on a
        # split behind fresh flips); the reads model the noise the design could not bound.
        reasoning.append(f"{plan.attack}'s retries skipped: {reader.attack} reads the rest under the noise")
    elif played is None:
        facts = BoardFacts.of(view, report, seed=seed)
        for second in spec(plan.attack).fallbacks_for(facts, plan):
            reasoning.append(f"chose {second.attack}: {second.reason}")
            course.attack = second.attack
            plan = second
            played, cut = _play_exact(view, second, outer_reserve, reasoning, noisy=bool(report.noise))
            if played is not None:
                break
    course.cut_by_budget = cut
    rest = None
    if played is not None and cut and capped:
        # The exact design did not finish within its share: the likelihood decoder takes the other rows.
        rest = _likelihood_plan(view, report, reserve, seed)
        if rest is not None:
            course.fallback = rest.attack
            reasoning.append(f"the rows {plan.attack} left open go to noisy, with {_left_text(view, reserve)}")
    if played is None:
        played = _rescue(view, plan, report, reserve, seed, reasoning)
        if played is not None:
            course.fallback = played.attack  # its labels are taken below, as the exact attack's are
    return played, plan, rest


def _likelihood_plan(
    view: BudgetedView, report: Fingerprint, reserve: int, seed: int, *, exact_failed: bool = False
) -> Plan | None:
    """The catalogue's best likelihood decoder for this board with what the budget leaves (``noisy``,
    ``noisy_split``, ``one_vs_rest``: the specs that spend every query given), or ``None`` when none fits.

    ``exact_failed``: every exact attack has failed. On a rounded board that ``one_vs_rest`` reduces, noise below
    the released resolution is then the likely cause even though repeated probes rounded it away (Brier, 10
    classes, Laplace 1e-5 at 5 decimals), and the likelihood decoder models the rounding as noise. On a board
    that scores a public split only ``noisy_split`` applies, once every exact attack failed."""
    facts = replace(BoardFacts.of(view, report, budget_left=_guess_budget(view, reserve), seed=seed),
                    exact_failed=exact_failed)
    plans = [answer for answer in explain(facts) if isinstance(answer, Plan) and answer.stage == Stage.LIKELIHOOD
             and spec(answer.attack).spends_budget]
    return plans[0] if plans else None


def _cannot_carry(view: BudgetedView, plan: Plan) -> bool:
    """Whether a K-class exact design under a noise bound carries less than one label a query by the K-ary
    counting bound (``K^m <= m·M + 1`` has no ``m >= 1``, :func:`attacks.capacity.counting_bound` reports 1 at
    least): no design can, whatever its decoder."""
    bound = plan.params.get("noise_bound")
    if view.n_classes < 3 or not isinstance(bound, int | float) or bound <= 0 or plan.attack != "capacity":
        return False
    # One row's K losses span at most A and must sit a resolution apart: A / resolution >= K − 1.
    return max_weight_real(view.eps) / sum_resolution(view.n_rows, view.decimals, float(bound)) < view.n_classes - 1


def _cap_for_noise(
    view: BudgetedView, plan: Plan, report: Fingerprint, reserve: int, seed: int, reasoning: list[str]
) -> bool:
    """Under noise, cap a budget-cut exact design at what ``noisy`` leaves of the budget, so that if the design
    does not finish, the likelihood decoder still fits (an exact design's queries grow fast with the noise and
    the rows; the decoder's stay near 0.45·N)."""
    if not truncatable(plan.attack) or "budget" in plan.params or view.left is None:
        return False
    likely = _likelihood_plan(view, report, reserve, seed)
    if likely is None or likely.attack == plan.attack:
        return False
    left = _guess_budget(view, reserve) or 0
    bound = plan.params.get("noise_bound", 0.0)
    per_query = counting_bound(view.n_rows, view.decimals, eps=view.eps, noise_bound=float(bound or 0.0))
    expected = view.n_rows / max(EXACT_REALIZED * per_query, 0.5)
    if likely.attack in BLOCK_READERS:
        if expected + likely.cost <= left:
            return False  # room for both: the exact design first (its labels are vouched for), the reads after
        # The block reads decode whatever the budget leaves them, a few rows a query, where an exact design under
        # noise the probes cannot bound (fresh flips, Laplace tails) most often fails its confirmation and leaves
        # nothing: it gets what the reads do not need, at least a tenth.
        cap = max(10, left // 10, math.floor(left - likely.cost))
    elif expected <= left:
        return False  # the exact design should finish within the budget: let it (its labels are vouched for)
    else:
        # All the slack the decoder leaves, less the query that confirms the design's labels if it is cut short.
        cap = left - math.ceil(NOISY_SHARE * view.n_rows + NOISY_PROBES) - int(confirmed(plan.attack))
    if cap < 10 or cap >= left:
        return False
    plan.params["budget"] = cap
    reasoning.append(f"noise seen: {plan.attack} gets {cap} queries; if it has not finished, the likelihood decoder "
                     f"({likely.attack}) decodes the rest within the budget")
    return True


def _rescue(
    view: BudgetedView, plan: Plan, report: Fingerprint, reserve: int, seed: int, reasoning: list[str]
) -> AttackResult | None:
    """After every exact plan failed: the catalogue's rescue plans (:func:`attacks.plan.rescues` — a privacy
    budget's withheld releases for ``budgeted``, Thresholdout's signs for ``thresholdout``), best-ranked first, each
    sized to what is then left of the budget; the first that gives labels, else ``None``."""
    tried: set[str] = set()
    while True:
        facts = replace(BoardFacts.of(view, report, budget_left=_guess_budget(view, reserve), seed=seed),
                        exact_failed=True, failed=plan.attack, withheld=view.withheld)
        options = [option for option in rescues(facts) if option.attack not in tried]
        if not options:
            return None
        option = options[0]
        tried.add(option.attack)
        before = view.used
        try:
            result = run(option.attack, view, **option.params)
        except AttackFailed as exc:
            reasoning.append(f"{option.attack} (fallback) gave nothing after {view.used - before} queries: {exc}")
            continue
        decoded = int((result.fill_confidence() >= 0.99).sum())
        reasoning.append(f"{option.attack} (fallback): {decoded} row(s) decoded with confidence >= 0.99 in "
                         f"{view.used - before} queries")
        return result


def _guess_budget(view: BudgetedView, reserve: int) -> int | None:
    left = view.left
    return None if left is None else max(0, left - reserve)


def _left_text(view: BudgetedView, reserve: int) -> str:
    left = _guess_budget(view, reserve)
    return "no budget limit" if left is None else f"{left} queries left"


#: Attacks that check themselves only against the defense they assume (subsetting's exhaustive decode of each
#: release), which ``auto`` confirms with one query as ``attacks.run`` does an exact attack's: a labeling staked
#: in full scores ≈ 0 whatever subset is drawn, so the query holds for right labels, and a board misread as
#: subsetting fails it (a fixed Ladder at full precision: 15 wrong labels of 40 had been vouched for; fresh
#: randomized response beside AUC: 12 of 200).
CONFIRMED_BY_AUTO = frozenset({"subsetting"})


def _play_exact(
    view: BudgetedView, plan: Plan, reserve: int, reasoning: list[str], *, noisy: bool = False
) -> tuple[AttackResult | None, bool]:
    """Run an exact attack within the budget; (its result, or ``None`` if it failed; whether it was cut).

    ``noisy``: the board showed noise. A design cut short there vouches for nothing by itself — the probes cannot
    see a label-side randomization (fresh randomized response leaves the label-free probes alone), so its bound
    may not hold — and keeps one query to confirm the labels it decoded; unconfirmed, they are dropped (the
    likelihood decoder or the best guess takes those rows), never called exact."""
    params = dict(plan.params)
    left = view.left
    if left is not None and left <= 0:
        reasoning.append(f"no query left for {plan.attack}")
        return None, False
    vouch = noisy and confirmed(plan.attack) and truncatable(plan.attack)
    if truncatable(plan.attack) and left is not None and "budget" not in params:
        params["budget"] = left - 1 if vouch and left >= 2 else left
    before = view.used
    started = time.perf_counter()
    while True:
        try:
            result = run(plan.attack, view, confirm=False, **params)
            break
        except (AttackFailed, SubmissionRefused) as exc:
            spent = view.used - before
            reasoning.append(f"{plan.attack} failed after {spent} queries: {exc}")
            bound = params.get("noise_bound")
            if (spent == 0 and isinstance(bound, int | float) and bound > plan.params.get("noise_bound", 0) / 4
                    and view.n_classes == 2):
                # The design did not fit the noise bound (nothing was spent): the bound is 20× the largest noise
                # draw seen, generous on purpose; halve it (down to a quarter) before giving up. Not on K classes:
                # there a halved bound lets the design run and spend the budget on releases it cannot decode,
                # where paper 001's doubling attacks and one_vs_rest's likelihood decoder read the labels.
                params["noise_bound"] = bound / 2
                reasoning.append(f"retrying {plan.attack} with noise bound {bound / 2:.3g} (Laplace tails: a draw "
                                 "beyond it is still rare; if one comes, the decoder or the confirmation fails loudly)")
                continue
            return None, False
    spent = view.used - before
    limit = params.get("budget")
    cut = limit is not None and spent >= limit and result.recovered < view.n_rows
    if result.course is not None and result.course.cut_by_budget:
        cut = True  # a composite attack (fresh_accounts) whose inner design the budget cut: labels guessed, not read
    if result.course is not None:
        # A composite attack (auto played through another view of the board): its own course, indented.
        reasoning.extend(f"  {plan.attack} | {line}" for line in result.course.reasoning)
        reasoning.append(f"{plan.attack}: {result.exact} exact label(s) and {result.recovered - result.exact} "
                         f"guessed in {spent} queries ({time.perf_counter() - started:.2f} s)")
    else:
        reasoning.append(f"{plan.attack} decoded {result.recovered}/{view.n_rows} labels in {spent} queries "
                         f"({time.perf_counter() - started:.2f} s)")
    if cut and vouch and result.recovered:
        reasoning.append(f"cut by the budget after {spent} queries under noise: {result.recovered} labels decoded, "
                         "to be confirmed")
        if view.left == 0:
            reasoning.append(f"{plan.attack}'s labels dropped: no query left to confirm them under noise")
            return None, False
        if not _confirmed(view, plan, result, params, reasoning):
            return None, False
        if result.details.get("confirmed") != "passed":
            reasoning.append(f"{plan.attack}'s labels dropped: the confirmation cannot vouch for them")
            return None, False
    elif cut:
        how = ("decoded exactly, not confirmed (no query left)" if confirmed(plan.attack) else
               "decided by the likelihood decoder at its error target")
        reasoning.append(f"cut by the budget after {spent} queries: {result.recovered} labels {how}; "
                         "a larger budget finishes the attack")
    elif result.recovered and (confirmed(plan.attack) or plan.attack in CONFIRMED_BY_AUTO):
        left = view.left
        if left is None or left > reserve:
            if not _confirmed(view, plan, result, params, reasoning):
                return None, False
        else:
            reasoning.append("not confirmed: no query left in the budget")
    return result, cut


def _confirmed(
    view: BudgetedView, plan: Plan, result: AttackResult, params: dict[str, Any], reasoning: list[str]
) -> bool:
    """One query checking ``result``'s claims (:mod:`attacks.confirm`, widened by the plan's noise bound); whether
    the board did not contradict them (``result.details["confirmed"]`` says how it went)."""
    try:
        confirm_claims(view, result, slack=slack_from(params))
    except (AttackFailed, SubmissionRefused) as exc:
        reasoning.append(f"{plan.attack}'s labels failed their confirmation: {exc}")
        return False
    reasoning.append(f"confirmation query: {result.details.get('confirmed')}")
    return True


def _check_guesses(
    view: BudgetedView, labels: np.ndarray, confidence: np.ndarray, report: Fingerprint, reserve: int,
    reasoning: list[str],
) -> None:
    """One query staking the guesses at confidence 1/2 or more in full (:func:`attacks.confirm.count_wrong`): the
    release counts their wrong labels, and where it counts more than their posteriors expect (beyond its noise)
    their log-odds are tempered until the two agree (:func:`attacks.noisy.calibration.temper`); where it cannot
    count (a Ladder re-released its best score, nothing released) the posteriors are not vouched for and fall to
    their class's measured share. Boards of K classes and binary boards other than the log loss, every row scored
    (binary log loss has the floor's check pairs). A likelihood decoder reads releases as noisy sums of its labels:
    behind a Ladder the probes did not see, or near its threshold, it claimed 1.0 on rows right 37 % of the time."""
    staked = (labels >= 0) & (confidence < 1.0) & (confidence >= 0.5)
    left = _guess_budget(view, reserve)
    if (not staked.any() or view.metric == "binary_logloss" or (left is not None and left < 1)
            or report.public_fraction is not None or report.only_public_moves
            or getattr(view, "public_fraction", None) is not None):
        return
    earlier = list(view.released)
    try:
        wrong = count_wrong(view, labels, staked, earlier=earlier)
    except (AttackFailed, SubmissionRefused):
        wrong = None
    sure = confidence[staked]
    expected = float(np.sum(1.0 - sure))
    if wrong is None:
        shares = np.full(view.n_classes, 1.0 / view.n_classes) if report.balance is None else _class_shares(
            report, view)
        capped = np.minimum(sure, shares[np.clip(labels[staked], 0, len(shares) - 1)])
        confidence[staked] = capped
        reasoning.append(f"check query: the board did not score the {int(staked.sum())} surest guesses as staked "
                         "(a re-released score, or none): they are not vouched for, each at its class's share")
        if report.balance is not None:
            # Worth no more than their classes' shares, guesses off the majority class are worth less than it: the
            # majority class there (seen: a Ladder's one_vs_rest guessing a 30 % class on every row, 12 of 40).
            majority, share = int(np.argmax(shares)), float(np.max(shares))
            moved = staked & (labels != majority) & (confidence < share)
            if moved.any():
                labels[moved] = majority
                confidence[moved] = min(share, GUESS_CEILING)
                reasoning.append(f"floor: {int(moved.sum())} unvouched guess(es) off the majority class back to class "
                                 f"{majority} (share {share:.3f})")
        return
    metric = get_metric(view.metric)
    stake = max(float(view.eps), MIN_STAKE)
    unit = 10.0 ** -view.decimals if view.decimals is not None else 0.0
    # What the release's noise and rounding can move the count by (three times the probes' largest draw).
    slack = (3.0 * report.noise_spread + unit) * view.n_rows / one_wrong(metric, view.n_classes, view.eps, stake)
    spread = math.sqrt(float(np.sum(sure * (1.0 - sure))))
    if wrong > expected + 2.0 * spread + slack:
        confidence[staked] = np.minimum(temper(sure, wrong), GUESS_CEILING)
        reasoning.append(f"check query: {wrong:.1f} of the {int(staked.sum())} surest guesses are wrong, their "
                         f"posteriors expected {expected:.1f}: tempered to agree")
    else:
        reasoning.append(f"check query: {wrong:.1f} of the {int(staked.sum())} surest guesses are wrong, their "
                         f"posteriors expected {expected:.1f}")
    _below_majority(labels, confidence, staked, wrong, slack, report, reasoning)


def _decoded_shares(labels: np.ndarray, confidence: np.ndarray, open_rows: np.ndarray, k: int) -> np.ndarray:
    """The chance that a row left open is of each class, from the decoded rows (exchangeable with it): each counts
    its class at its confidence and the others at what it leaves, with one row of each class beside them (Laplace's
    rule of succession: the posterior mean of the shares under a flat prior).

    >>> _decoded_shares(np.array([0, 0, 0, -1]), np.array([1.0, 1.0, 1.0, 0.0]), np.array([False] * 3 + [True]), 2)
    array([0.8, 0.2])
    """
    decoded = ~open_rows
    sure = np.clip(confidence[decoded], 0.0, 1.0)
    other = (1.0 - sure) / max(k - 1, 1)  # a row's doubt, shared by the other classes
    counts = np.asarray(np.bincount(labels[decoded], weights=sure - other, minlength=k)[:k], dtype=np.float64)
    counts = counts + float(np.sum(other))
    return np.asarray((counts + 1.0) / (float(decoded.sum()) + k))


def _class_shares(report: Fingerprint, view: Oracle) -> np.ndarray:
    """The chance that a row is of each class given the balance the fingerprint read: the shares themselves on a
    quiet board, under noise their posterior given the readings (:func:`attacks.noisy.shares.share_posterior`) — a
    4-class softmax CE board under noise 0.43 read [0, 0, 1, 0] and the floor put every guess on class 2 at 1.0,
    2 of 60 rows right; the posterior is 0.29."""
    rates = np.asarray(report.balance, dtype=np.float64)
    spread = majority_params(report).get("spread")
    if not spread:
        return rates
    return np.minimum(rates, share_posterior(rates, share_errors(view.metric, view.eps, len(rates), spread)))


def _class_floor(
    view: BudgetedView, labels: np.ndarray, confidence: np.ndarray, report: Fingerprint, reasoning: list[str]
) -> None:
    """The posterior rule of the majority-class floor on K classes (binary boards: :mod:`attacks.floor`): a guessed
    row keeps a class other than the majority only where its posterior is at least the majority's share — a guess
    less likely right than the constant guess's prior is not kept (seen: one_vs_rest behind a Ladder, every row a
    30 % class at posterior 0.33 on a 60 % majority board, 12 of 40 where the majority has 24)."""
    if view.n_classes < 3 or report.balance is None:
        return
    rates = _class_shares(report, view)
    majority, share = int(np.argmax(rates)), float(np.max(rates))
    weak = (labels >= 0) & (confidence < 1.0) & (labels != majority) & (confidence < share)
    if not weak.any():
        return
    labels[weak] = majority
    confidence[weak] = min(share, GUESS_CEILING)
    reasoning.append(f"floor: {int(weak.sum())} guessed row(s) off the majority class with a posterior below its "
                     f"share {share:.3f}: back to class {majority}")


def _below_majority(
    labels: np.ndarray, confidence: np.ndarray, staked: np.ndarray, wrong: float, slack: float,
    report: Fingerprint, reasoning: list[str],
) -> None:
    """The majority-class floor on what the check query measured: where the staked guesses got fewer rows right
    than the majority class's share of them (the constant guess's expected count, beyond what the release's noise
    and rounding can move the count by), the staked rows off the majority class go back to it — a guess the board's
    own release scores below the constant is not kept, whichever attack or fallback made it."""
    if report.balance is None:
        return
    rates = np.asarray(report.balance, dtype=np.float64)
    majority, share = int(np.argmax(rates)), float(np.max(rates))
    size = int(staked.sum())
    right = size - wrong
    moved = staked & (labels != majority)
    if not moved.any() or right + slack >= share * size:
        return
    labels[moved] = majority
    confidence[moved] = min(share, GUESS_CEILING)
    reasoning.append(f"floor: the check scored {right:.1f} of the {size} surest guesses right, the majority class "
                     f"{majority} would get ~{share * size:.1f}: {int(moved.sum())} row(s) back to class {majority}")


def _play_guess(
    view: BudgetedView, plan: Plan, report: Fingerprint, reasoning: list[str]
) -> AttackResult | None:
    """Run the best-guess attack; ``None`` (the majority fill takes over) if it cannot run."""
    if plan.attack == "majority":
        if report.balance is None:
            return None  # the fill measures nothing more: it needs the balance
        plan = Plan("majority", majority_params(report), plan.reason)
    if plan.attack == "boosting" and int(plan.params.get("budget", 1)) < 1:
        reasoning.append("no query left for boosting")
        return None
    before = view.used
    try:
        result = run(plan.attack, view, **plan.params)
    except AttackFailed as exc:
        reasoning.append(f"{plan.attack} gave no guess after {view.used - before} queries: {exc}")
        return None
    info = result.details
    if plan.attack == "boosting":
        verdict = ("not confidently better than the majority class: kept the majority labeling"
                   if info.get("floored") else
                   f"{info.get('moved', 0)} row(s) voted away from the majority class "
                   f"(expected gain {info.get('expected_gain', 0.0):.3f} ± {info.get('gain_sd', 0.0):.3f})")
        stopped = (f" (stopped after {info.get('stale')} re-released scores: the board no longer scores them)"
                   if info.get("stopped_early") else "")
        reasoning.append(f"boosting: {view.used - before} random vectors{stopped}, {info.get('kept')} kept; {verdict}")
    elif plan.attack == "majority":
        reasoning.append("majority: every row the majority class")
    else:
        sure = int((result.fill_confidence() >= 0.99).sum())
        reasoning.append(f"{plan.attack}: {sure} row(s) with a posterior >= 0.99 in {view.used - before} queries")
    return result


def _floor(
    view: BudgetedView, labels: np.ndarray, confidence: np.ndarray, report: Fingerprint,
    played: AttackResult | None, reserve: int, reasoning: list[str], course: Course,
) -> None:
    """The majority-class floor on the guessed rows (:mod:`attacks.floor`), with what is left of the budget
    (less the caller's ``reserve``) for its check queries."""
    if view.n_classes != 2:
        return
    guessed = (labels >= 0) & (confidence < 1.0)
    if not guessed.any():
        return
    rates = _open_rates(labels, ~guessed & (labels >= 0), report, played)
    left = _guess_budget(view, reserve)
    # No check query where the played attack spent every release the board would give (a privacy budget on every
    # account): withheld checks measure nothing, and the posteriors' own promise decides, over all moved rows.
    spent = played is not None and played.details.get("releases_left") is False
    check_budget = 0 if view.metric != "binary_logloss" or report.ladder or spent else (
        2 * BANDS if left is None else left)
    # The rows the played attack (or the guess) found public: the check pairs are scored on those alone.
    mask = (course.attack_details or {}).get("public_mask")
    known_public = np.asarray(mask, dtype=bool) if mask is not None and len(mask) == len(labels) else None
    # A reader that read only some rows (blocks_split with few accounts) found only some of the public rows; its
    # estimate of how many there are, when it gives one, is the board's scored count.
    n_public = (course.attack_details or {}).get("n_public")
    outcome = apply_floor(view, labels, confidence, report, rates, check_budget=check_budget,
                          known_public=known_public, n_public=None if n_public is None else int(n_public))
    reasoning.extend(outcome.lines or [])
    course.floor = {"moved_before": outcome.moved_before, "moved_after": outcome.moved_after,
                        "check_queries": outcome.checks}


def _open_rates(
    labels: np.ndarray, known: np.ndarray, report: Fingerprint, played: AttackResult | None
) -> np.ndarray | None:
    """The class shares of the rows outside ``known`` (the exact ones): the measured balance less the exact
    labels when every row is scored, else the balance as measured (``None`` if unmeasured)."""
    if report.balance is None:
        return None
    n = len(labels)
    k = max(len(report.balance), int(labels.max(initial=0)) + 1)
    rates = np.asarray(report.balance, dtype=np.float64)
    every_row_scored = played is not None and "public_mask" not in played.details and (
        report.public_fraction is None and not report.only_public_moves)
    if every_row_scored and known.any():
        counts = np.clip(rates * n - np.bincount(labels[known], minlength=k)[:k], 0.0, None)
        if counts.sum() > 0:
            rates = counts / counts.sum()
    return rates


def _fill_majority(
    labels: np.ndarray, confidence: np.ndarray, report: Fingerprint, played: AttackResult | None,
    reasoning: list[str], view: Oracle | None = None, split_decoded: bool = False,
) -> None:
    """Rows still without a label get the majority class of the rows not recovered (under noise, at most the
    class's posterior given the balance readings, :func:`attacks.noisy.shares.share_posterior`; after a split
    decoded, ``split_decoded``, the class its public rows make most likely, :func:`_decoded_shares`)."""
    open_rows = labels < 0
    if not open_rows.any():
        return
    n = len(labels)
    k = max(len(report.balance) if report.balance is not None else 2, int(labels.max(initial=0)) + 1)
    rates: np.ndarray | None = None
    # A split decoded through noise: its public rows' labels say more of the private rows' classes (the split is
    # drawn at random) than a balance read through that noise (seen: 4 classes under noise 0.5, readings garbled to
    # one class, the private rows claimed at 0.50 and right 17 % of the time).
    from_split = (split_decoded or (played is not None and "public_mask" in played.details)) and (~open_rows).any()
    if from_split:
        rates = _decoded_shares(labels, confidence, open_rows, k)
        reasoning.append(f"class balance of the rows left: the {int((~open_rows).sum())} decoded public row(s)' "
                         "(a row of each class counted beside them)")
    elif report.balance is not None:
        rates = np.asarray(report.balance, dtype=np.float64)
        every_row_scored = played is not None and "public_mask" not in played.details and (
            report.public_fraction is None and not report.only_public_moves)
        if every_row_scored and (~open_rows).any():
            # The balance counts every row: what the exact labels leave is the balance of the open rows.
            counts = rates * n - np.bincount(labels[~open_rows], minlength=k)[:k]
            counts = np.clip(counts, 0.0, None)
            if counts.sum() > 0:
                rates = counts / counts.sum()
    elif (~open_rows).any():
        rates = np.bincount(labels[~open_rows], minlength=k) / float((~open_rows).sum())
        reasoning.append("class balance unmeasured: the labels recovered stand in for it")
    if rates is None:
        reasoning.append(f"{int(open_rows.sum())} row(s) left unknown: nothing was released to guess from")
        return
    guess, share = majority_labels(int(open_rows.sum()), rates)
    labels[open_rows] = guess
    # A guess, never an exact label, even where every scored row showed one class (share 1.0: 8 public rows of
    # class 1 say nothing of the private ones); 1.0 marks the labels an exact attack vouches for.
    spread = majority_params(report).get("spread")
    if spread and report.balance is not None and view is not None and not from_split:
        # A balance read through noise is a posterior, not a certainty (attacks.noisy.shares).
        errors = share_errors(view.metric, view.eps, len(report.balance), spread)
        share = np.minimum(share, share_posterior(report.balance, errors)[min(int(guess[0]), len(report.balance) - 1)])
    confidence[open_rows] = np.minimum(share, GUESS_CEILING)
    reasoning.append(f"{int(open_rows.sum())} row(s) without an exact label: class {int(guess[0])}, the majority "
                     f"of the rows left (share {float(share[0]):.3f})")
