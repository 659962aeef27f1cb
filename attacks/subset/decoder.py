"""Exact decoding of one released binary log loss whose rows may or may not have been scored.

Every row ``i`` of a query's probe group contributes ``loss_i − ln 2`` to ``T = Σ_{scored} loss_i − m·ln 2``
(the rows outside the group sit at 1/2, whose loss is ``ln 2`` whatever the label, so they contribute 0 scored
or not). A :class:`RowCode` lists a row's possible contributions, one per *state*: not scored (0), scored with
label 0, scored with label 1 (randomized response without subsetting: only the last two). A release confines
``T`` to an interval ``[lo, hi]`` (rounding, the server's float error, an uncertain subset size);
:func:`consistent` enumerates **every** assignment of states whose sum lies in it — depth-first over the rows,
largest spread first, pruned with the least and most the remaining rows can add — so a label reported by
:func:`agreed_labels` (the same in every consistent assignment) is vouched for whatever the design, and the
design only decides how many labels come out unambiguous. :func:`brute_force` is the ``3^K`` check the tests
compare with.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

#: State label meaning "this row was not scored".
NOT_SCORED = -1


@dataclass(frozen=True)
class RowCode:
    """One probed row: its possible contributions to ``T`` and, for each, the label it implies
    (:data:`NOT_SCORED` when the row was left out)."""

    row: int
    values: tuple[float, ...]
    states: tuple[int, ...]

    @property
    def spread(self) -> float:
        return max(self.values) - min(self.values)


def row_code(row: int, p: float, eps: float, *, subset: bool = True) -> RowCode:
    """The code of a row submitted at ``p``: contributions ``loss − ln 2`` computed as the server computes the
    loss (``-log p`` for label 1, ``-log1p(-p)`` for label 0, after clipping to ``[eps, 1 − eps]``)."""
    q = float(np.clip(p, eps, 1.0 - eps))
    ln2 = float(np.log(0.5)) * -1.0
    c0 = float(-np.log1p(-q)) - ln2
    c1 = float(-np.log(q)) - ln2
    if subset:
        return RowCode(row, (0.0, c0, c1), (NOT_SCORED, 0, 1))
    return RowCode(row, (c0, c1), (0, 1))


def consistent(codes: list[RowCode], lo: float, hi: float, *, limit: int = 4096) -> list[tuple[int, ...]] | None:
    """Every assignment (one state index per code, in ``codes`` order) whose contributions sum into
    ``[lo, hi]``; ``None`` if there are more than ``limit`` (too ambiguous to be worth enumerating)."""
    order = sorted(range(len(codes)), key=lambda i: -codes[i].spread)
    k = len(order)
    mins = [min(codes[i].values) for i in order]
    maxs = [max(codes[i].values) for i in order]
    # Least and most the rows from position j on can still add.
    low_rest = [0.0] * (k + 1)
    high_rest = [0.0] * (k + 1)
    for j in range(k - 1, -1, -1):
        low_rest[j] = low_rest[j + 1] + mins[j]
        high_rest[j] = high_rest[j + 1] + maxs[j]
    found: list[tuple[int, ...]] = []
    chosen = [0] * k

    def walk(j: int, total: float) -> bool:
        if j == k:
            found.append(tuple(chosen))
            return len(found) <= limit
        code = codes[order[j]]
        for s, v in enumerate(code.values):
            t = total + v
            if t + low_rest[j + 1] > hi or t + high_rest[j + 1] < lo:
                continue
            chosen[j] = s
            if not walk(j + 1, t):
                return False
        return True

    if not walk(0, 0.0):
        return None
    out = []
    for a in found:
        states = [0] * k
        for j, i in enumerate(order):
            states[i] = a[j]
        out.append(tuple(states))
    return out


def agreed_labels(codes: list[RowCode], assignments: list[tuple[int, ...]]) -> dict[int, int]:
    """Rows whose label is the same in every assignment (and that were scored in every one): ``{row: label}``."""
    known: dict[int, int] = {}
    if not assignments:
        return known
    for i, code in enumerate(codes):
        labels = {code.states[a[i]] for a in assignments}
        if len(labels) == 1:
            (label,) = labels
            if label != NOT_SCORED:
                known[code.row] = label
    return known


def assignment_sum(codes: list[RowCode], assignment: tuple[int, ...]) -> float:
    """``T`` under one assignment."""
    return float(sum(code.values[s] for code, s in zip(codes, assignment, strict=True)))


def brute_force(codes: list[RowCode], lo: float, hi: float) -> list[tuple[int, ...]]:
    """:func:`consistent` by trying every assignment (small groups only; for the tests)."""
    ranges = [range(len(code.values)) for code in codes]
    return [a for a in itertools.product(*ranges) if lo <= assignment_sum(codes, a) <= hi]
