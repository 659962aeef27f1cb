"""How many queries paper 004's AUC + log-loss attacks will make on a board, computed from public facts only
(``N``, decimals, eps, and the number of positives) without sending one: ``auto`` compares them with
``capacity`` on the log loss alone before choosing (:func:`attacks.plan.auc_logloss_plan`).

Both layouts depend on the labels only through how many rows are decoded and how many are positive, so the
count is exact for a given ``P`` (``auc_logloss_ranks`` at N = 2,201, float64, balanced: 44 planned, 44 sent).
"""

from __future__ import annotations

import math

from attacks.oracle import Oracle
from attacks.paper004 import auc, auc_ranks
from attacks.paper004.server import ServerModel
from attacks.result import AttackFailed


def window_queries(model: ServerModel, positives: int) -> int:
    """Queries of ``auc_logloss``: the positive-counting probe, then one per batch of its design's size."""
    n = model.n_rows
    if positives in (0, n):
        return 1
    size = auc.plan(model, positives, n).size
    return 1 + math.ceil(n / size)


def ranks_queries(model: ServerModel, positives: int) -> int:
    """Queries of ``auc_logloss_ranks``: the positive-counting probe, then its queries as
    :func:`attacks.paper004.auc_ranks.build_query` lays them out (the pooled or the extreme layout, whichever
    carries more rows), each decoding ``a + b`` rows."""
    n = model.n_rows
    if positives in (0, n):
        return 1
    known, queries = 0, 1
    while known < n:
        layouts = [auc_ranks.plan(model, positives, unknown=n - known, known=known, pooled=p) for p in (False, True)]
        known += max(layout.a + len(layout.positions) for layout in layouts)
        queries += 1
    return queries


def planned_queries(oracle: Oracle, attack: str, positives: int) -> int | None:
    """Queries ``attack`` (``auc_logloss`` or ``auc_logloss_ranks``) will make on ``oracle`` with ``positives``
    ones among its rows; ``None`` where it would refuse (not float64, no row fits the precision)."""
    try:
        model = ServerModel.of(oracle)
        if not model.is_float64:
            return None
        return ranks_queries(model, positives) if attack == "auc_logloss_ranks" else window_queries(model, positives)
    except AttackFailed:
        return None
