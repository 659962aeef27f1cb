"""Sizing helpers shared by the attacks' planners."""

from __future__ import annotations

from collections.abc import Callable


def largest_feasible(limit: int, feasible: Callable[[int], bool]) -> int:
    """The largest ``b ≤ limit`` with ``feasible(b)``, 0 if none; feasible sizes must form a prefix.

    Gallops up from 1 then bisects, so a small answer costs only a few small checks.

    >>> largest_feasible(100, lambda b: b <= 37), largest_feasible(100, lambda b: False)
    (37, 0)
    """
    if limit < 1 or not feasible(1):
        return 0
    good, bad = 1, limit + 1
    while good * 2 < bad:
        if feasible(good * 2):
            good *= 2
        else:
            bad = good * 2
            break
    while bad - good > 1:
        mid = (good + bad) // 2
        if feasible(mid):
            good = mid
        else:
            bad = mid
    return good
