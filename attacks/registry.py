"""Attack registry: ``available()`` lists names, ``run(name, oracle, **params)`` runs one and times it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from attacks.oracle import Oracle
from attacks.result import AttackResult

AttackFn = Callable[..., np.ndarray | AttackResult]
ATTACKS: dict[str, AttackFn] = {}


def register(name: str) -> Callable[[AttackFn], AttackFn]:
    """Decorator: make ``fn(oracle, **params)`` available as attack ``name``.

    ``fn`` returns the recovered labels (or an :class:`AttackResult` carrying details); ``run`` fills in the
    query count and wall time from the oracle and the clock.
    """

    def decorate(fn: AttackFn) -> AttackFn:
        if name in ATTACKS and ATTACKS[name] is not fn:
            raise ValueError(f"two attacks are named {name!r}")
        ATTACKS[name] = fn
        return fn

    return decorate


def available() -> list[str]:
    return sorted(ATTACKS)


def run(name: str, oracle: Oracle, **params: Any) -> AttackResult:
    try:
        fn = ATTACKS[name]
    except KeyError:
        raise ValueError(f"unknown attack {name!r}; available: {', '.join(available())}") from None
    queries_before = oracle.queries
    started = time.perf_counter()
    out = fn(oracle, **params)
    seconds = time.perf_counter() - started
    queries = oracle.queries - queries_before
    if isinstance(out, AttackResult):
        out.attack, out.queries, out.seconds = name, queries, seconds
        return out
    return AttackResult(attack=name, labels=np.asarray(out, dtype=np.int64), queries=queries, seconds=seconds)
