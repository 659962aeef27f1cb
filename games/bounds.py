"""The information bound beside each cell of a game report: the most labels a chain's releases could tell an
attacker with a given budget and account count (:func:`attacks.information.transcript_bits`), to read beside what
the library's attacks actually read there.

The bound is in bits; :func:`attacks.information.labels_worth` turns it into labels at the class balance of the
rows the released score depends on (naming ``m`` labels exactly takes ``m·H`` bits under that prior). It is an
upper bound for every attacker, adaptive or not, with those submissions and accounts; a measured cell is a lower
bound (what our attacks found). Between the two lies what nobody has shown yet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attacks.information import labels_worth, transcript_bits
from defenses import DefenseChain

if TYPE_CHECKING:
    from games.gamefile import GameSpec


@dataclass(frozen=True)
class Bound:
    """``bits`` the releases can carry at most; ``labels``: the most labels that is (at most ``scored_rows``,
    the rows the released score depends on, of ``n_rows`` hidden ones)."""

    bits: float
    labels: int
    scored_rows: int
    n_rows: int

    @property
    def every_label(self) -> bool:
        return self.labels >= self.scored_rows

    def text(self) -> str:
        """What the releases allow, in words (the public rows named when the score depends on them only).

        >>> Bound(10.0, 10, 40, 40).text(), Bound(1e4, 40, 40, 40).text()
        ('≤ 10 of 40 labels', 'every label')
        >>> Bound(1e4, 12, 12, 40).text(), Bound(5.0, 5, 12, 40).text()
        ('every public label (12 of 40)', '≤ 5 of the 12 public labels (of 40)')
        """
        if self.scored_rows >= self.n_rows:
            return "every label" if self.every_label else f"≤ {self.labels:,} of {self.scored_rows:,} labels"
        if self.every_label:
            return f"every public label ({self.scored_rows:,} of {self.n_rows:,})"
        return f"≤ {self.labels:,} of the {self.scored_rows:,} public labels (of {self.n_rows:,})"

    def as_dict(self) -> dict[str, Any]:
        return {"bits": round(self.bits, 3), "labels": self.labels, "scored_rows": self.scored_rows,
                "n_rows": self.n_rows}


def information_bound(
    spec: GameSpec, chain: list[dict[str, Any]], *, scored_classes: Sequence[int], budget: int | None, accounts: int,
    n_rows: int | None = None,
) -> Bound | None:
    """The most labels ``budget`` submissions over ``accounts`` accounts could read through ``chain`` on the
    game's board (its metric, released precision and clipping), whose released score depends on rows of class
    counts ``scored_classes`` (of ``n_rows`` hidden rows, default: those); ``None`` without a budget (nothing
    bounds an uncapped attacker), without the counts, or where :mod:`attacks.information` has no model of the
    chain or metric.

    >>> from games.gamefile import GameSpec
    >>> game = GameSpec("g", [0], [], [], [])
    >>> bound = information_bound(game, [{"name": "rounding", "decimals": 5}], scored_classes=[50, 50], budget=1,
    ...                           accounts=1)
    >>> 20 < bound.labels < 30, bound.scored_rows
    (True, 100)
    """
    rows = int(sum(scored_classes))
    if budget is None or rows == 0:
        return None
    decimals = DefenseChain.from_json(chain).released_decimals(spec.decimals)
    bits = transcript_bits(chain, metric=spec.metric, n_rows=rows, decimals=decimals, accounts=accounts,
                           queries=budget, eps=spec.eps, n_classes=max(2, len(scored_classes)))
    if bits is None:
        return None
    labels = min(rows, math.floor(labels_worth(bits, list(scored_classes)) + 1e-9))
    return Bound(bits, labels, rows, rows if n_rows is None else max(n_rows, rows))


def widest_bound(
    spec: GameSpec, chain: list[dict[str, Any]], *, scored_classes: Sequence[Sequence[int]], budget: int | None,
    accounts: int, n_rows: int | None = None,
) -> Bound | None:
    """The loosest of the bounds of several cells (seeds draw different public splits): what holds for each."""
    bounds = [information_bound(spec, chain, scored_classes=counts, budget=budget, accounts=accounts, n_rows=n_rows)
              for counts in {tuple(c) for c in scored_classes}]
    if not bounds or any(b is None for b in bounds):
        return None
    return max((b for b in bounds if b is not None), key=lambda b: (b.labels / b.scored_rows, b.bits))
