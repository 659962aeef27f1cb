"""Attack registry: ``available()`` lists names, ``run(name, oracle, **params)`` runs one and times it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from attacks.confirm import confirm as confirm_claims
from attacks.confirm import slack_from
from attacks.oracle import Oracle
from attacks.result import AttackResult

AttackFn = Callable[..., np.ndarray | AttackResult]
ATTACKS: dict[str, AttackFn] = {}
# Attacks whose claimed labels ``run`` confirms with one more query by default (see attacks.confirm).
CONFIRMED: set[str] = set()


def register(name: str, *, exact: bool = True) -> Callable[[AttackFn], AttackFn]:
    """Decorator: make ``fn(oracle, **params)`` available as attack ``name``.

    ``fn`` returns the recovered labels (or an :class:`AttackResult` carrying details); ``run`` fills in the
    query count and wall time from the oracle and the clock. ``exact`` attacks vouch for every label they
    claim, so ``run`` confirms their claims with one query; a best-guess attack (boosting) or one that checks
    itself registers with ``exact=False``.
    """

    def decorate(fn: AttackFn) -> AttackFn:
        if name in ATTACKS and ATTACKS[name] is not fn:
            raise ValueError(f"two attacks are named {name!r}")
        ATTACKS[name] = fn
        if exact:
            CONFIRMED.add(name)
        return fn

    return decorate


def available() -> list[str]:
    return sorted(ATTACKS)


def run(name: str, oracle: Oracle, *, confirm: bool | None = None, **params: Any) -> AttackResult:
    """Run attack ``name`` against ``oracle``; the result's queries and seconds include the confirmation.

    ``confirm`` (default: on for exact attacks) spends one more query checking the claimed labels against the
    leaderboard and raises :class:`~attacks.result.AttackFailed` if they disagree. The result's ``confidence``
    is the attack's own, else 1.0 on every labeled row (an attack that sets none vouches for its labels).
    """
    try:
        fn = ATTACKS[name]
    except KeyError:
        raise ValueError(f"unknown attack {name!r}; available: {', '.join(available())}") from None
    queries_before = oracle.queries
    started = time.perf_counter()
    out = fn(oracle, **params)
    result = out if isinstance(out, AttackResult) else AttackResult(name, np.asarray(out, dtype=np.int64))
    if (name in CONFIRMED if confirm is None else confirm) and result.recovered:
        confirm_claims(oracle, result, slack=slack_from(params))
    result.fill_confidence()
    result.attack = name
    result.queries = oracle.queries - queries_before
    result.seconds = time.perf_counter() - started
    return result
