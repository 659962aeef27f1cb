"""How many queries paper 004's AUC + log-loss attacks will make on a board, computed from public facts only
(``N``, decimals, eps, and the number of positives) without sending one: ``auto`` compares them with
``capacity`` on the log loss alone before choosing (their specs' ``fits``, :mod:`attacks.paper004.fit`).

Both layouts depend on the labels only through how many rows are decoded and how many are positive, so the
count is exact for a given ``P`` (``auc_logloss_ranks`` at N = 2,201, float64, balanced: 44 planned, 44 sent).
"""

from __future__ import annotations

from attacks.oracle import Oracle
from attacks.paper004.auc import window_queries
from attacks.paper004.auc_ranks import ranks_queries
from attacks.paper004.server import ServerModel
from attacks.result import AttackFailed


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
