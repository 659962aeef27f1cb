"""Attack registry: ``available()`` lists names, ``run(name, oracle, **params)`` runs one and times it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from attacks.catalogue import AttackSpec, BoardFacts, Fallbacks, Fits, Stage
from attacks.confirm import confirm as confirm_claims
from attacks.confirm import slack_from
from attacks.oracle import Oracle
from attacks.result import GUESS_CEILING, AttackResult

AttackFn = Callable[..., np.ndarray | AttackResult]
#: The functions by name (tests register toy attacks here directly; those get a default spec).
ATTACKS: dict[str, AttackFn] = {}
#: The catalogue: each registered attack's spec (:class:`attacks.catalogue.AttackSpec`).
CATALOGUE: dict[str, AttackSpec] = {}


def register(
    name: str,
    *,
    exact: bool = True,
    truncatable: bool = False,
    spends_budget: bool = False,
    stage: Stage = Stage.EXACT,
    fits: Fits | None = None,
    fallbacks: Fallbacks | None = None,
    applies: Callable[[BoardFacts], bool] | None = None,
    paper: str = "",
    board: str = "",
    queries: str = "",
    precision: str = "",
) -> Callable[[AttackFn], AttackFn]:
    """Decorator: make ``fn(oracle, **params)`` available as attack ``name``, with its spec in the catalogue.

    ``fn`` returns the recovered labels (or an :class:`AttackResult` carrying details); ``run`` fills in the
    query count and wall time from the oracle and the clock. ``exact`` attacks vouch for every label they
    claim, so ``run`` confirms their claims with one query; a best-guess attack (boosting) or one that checks
    itself registers with ``exact=False``. The other keywords are the spec's (:class:`AttackSpec`): what the
    attack fits and with which parameters, its fallbacks, and what the documentation says of it.
    """

    def decorate(fn: AttackFn) -> AttackFn:
        if name in ATTACKS and ATTACKS[name] is not fn:
            raise ValueError(f"two attacks are named {name!r}")
        ATTACKS[name] = fn
        CATALOGUE[name] = AttackSpec(
            name, fn, exact=exact, truncatable=truncatable, spends_budget=spends_budget, stage=stage, fits=fits,
            fallbacks=fallbacks, applies=applies, paper=paper, board=board, queries=queries,
            precision=precision)
        return fn

    return decorate


def spec(name: str) -> AttackSpec:
    """The spec of attack ``name``: the registered one, or a default (exact: no, fits: none) for a function put
    in :data:`ATTACKS` directly."""
    fn = ATTACKS[name]
    registered = CATALOGUE.get(name)
    if registered is not None and registered.fn is fn:
        return registered
    return AttackSpec(name, fn, exact=False)


def catalogue() -> list[AttackSpec]:
    """Every registered attack's spec, by name."""
    return [spec(name) for name in available()]


def confirmed(name: str) -> bool:
    """Whether ``run`` confirms attack ``name``'s claims by default (it vouches for them)."""
    return name in ATTACKS and spec(name).exact


def available() -> list[str]:
    return sorted(ATTACKS)


def run(name: str, oracle: Oracle, *, confirm: bool | None = None, **params: Any) -> AttackResult:
    """Run attack ``name`` against ``oracle``; the result's queries and seconds include the confirmation.

    ``confirm`` (default: on for exact attacks) spends one more query checking the claimed labels against the
    leaderboard and raises :class:`~attacks.result.AttackFailed` if they disagree. The result's ``confidence``
    is the attack's own, else 1.0 on every labeled row (an attack that sets none vouches for its labels).

    ``budget`` (passed on to the attack, as every registered attack takes it: its submissions, every account's
    together; ``None``: no limit) covers the confirmation too: when the attack has spent it all, the claims are
    not confirmed — ``details["confirmed"]`` says so — rather than one query spent past the budget.
    """
    try:
        fn = ATTACKS[name]
    except KeyError:
        raise ValueError(f"unknown attack {name!r}; available: {', '.join(available())}") from None
    queries_before = oracle.queries
    budget = params.get("budget")
    started = time.perf_counter()
    out = fn(oracle, **params)
    result = out if isinstance(out, AttackResult) else AttackResult(name, np.asarray(out, dtype=np.int64))
    if (confirmed(name) if confirm is None else confirm) and result.recovered:
        if budget is not None and oracle.queries - queries_before >= budget:
            result.details["confirmed"] = f"not checked (the budget of {budget} submissions is spent)"
        else:
            confirm_claims(oracle, result, slack=slack_from(params))
    if result.confidence is None and name in CATALOGUE and spec(name).stage != Stage.EXACT:
        # A likelihood decoder or a best guess never vouches for a label, even one that returned no posteriors
        # (one_vs_rest once did: 5,000 labels read as exact on a board where 1,300 were wrong).
        result.confidence = np.where(result.labels >= 0, GUESS_CEILING, 0.0)
    result.fill_confidence()
    note = majority_floor_note(name, result)
    if note is not None:
        result.details.setdefault("majority_floor", note)
    result.attack = name
    result.queries = oracle.queries - queries_before
    result.seconds = time.perf_counter() - started
    return result


def majority_floor_note(name: str, result: AttackResult) -> str | None:
    """What a named attack's result says of the majority-class floor, for its guessed labels (confidence below
    1): ``auto`` floors its own (``None`` here); an attack that weighed its guess against a measured class balance
    (``boosting``, ``budgeted``: ``details["floored"]`` with a ``prior_one``) says so; any other guess was not
    checked against a constant guess, and the note says that it may be below one. ``None`` when no row is guessed.

    >>> note = majority_floor_note("brep", AttackResult("brep", np.array([0, 1]), confidence=np.array([0.5, 0.5])))
    >>> note.startswith("not checked: 2 guessed label(s)")
    True
    """
    if name == "auto" or result.confidence is None:
        return None
    guessed = int(((np.asarray(result.labels) >= 0) & (np.asarray(result.confidence) < 1.0)).sum())
    if guessed == 0:
        return None
    if "floored" in result.details and result.details.get("prior_one") is not None:
        verdict = "the majority labeling kept" if result.details["floored"] else "the guess kept"
        return f"checked by {name} against the majority class of its measured class balance: {verdict}"
    return (f"not checked: {guessed} guessed label(s) not compared with the majority class, which may do better; "
            "auto reads the majority class and floors to it")
