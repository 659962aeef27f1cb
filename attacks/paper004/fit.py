"""When paper 004's AUC + log-loss attacks fit a board: it releases AUC beside a noise-free float64 binary log
loss that scores every row, and they plan fewer queries than ``capacity`` is expected to need on the log loss
alone (measured, float64, balanced labels, N = 2,201: ``auc_logloss_ranks`` 44 queries, ``capacity`` 52,
``auc_logloss`` 57; at 3 decimals capacity wins, 409 against 502). They cannot stop early, so a budget short
of their plan leaves the board to ``capacity``, which keeps what it decodes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

from attacks.capacity.design import counting_bound
from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.fallbacks import capacity_fallbacks
from attacks.oracle import Oracle
from attacks.paper004.server import ServerModel
from attacks.result import AttackFailed

Planned = Callable[[ServerModel, int], int]
#: The rank of the exact binary log-loss designs (``capacity``): these play beside them, ranked by cost.
RANK = 70


def capacity_queries(facts: BoardFacts) -> int:
    """``capacity``'s expected queries on the log loss alone: ``N`` over its counting bound."""
    return math.ceil(facts.n_rows / max(counting_bound(facts.n_rows, facts.decimals, eps=facts.eps), 1))


def auc_fits(name: str, planned: Planned, *, tiebreak: int = 0) -> Callable[[BoardFacts], Plan | Refusal]:
    """The ``fits`` of attack ``name``, whose query count on a board is ``planned(model, positives)``."""

    def fits(facts: BoardFacts) -> Plan | Refusal:
        if not (facts.open_release and facts.binary_logloss and facts.float64 and not facts.split
                and not facts.noise):
            return Refusal(name, "float64 binary log loss scoring every row, every score released, no noise, only")
        if "auc" not in facts.also_report:
            return Refusal(name, "the board releases no AUC beside the log loss")
        if not facts.reports_all:
            # The bot's checkpointed oracle records one released value per query, so it hides submit_all.
            return Refusal(name, "AUC is released too, but this oracle reads one score per submission", close=True)
        balance = None if facts.seen is None else facts.seen.balance
        positives = facts.n_rows // 2 if balance is None else round(balance[1] * facts.n_rows)
        try:
            model = ServerModel.of(cast(Oracle, facts))  # reads only the board's public facts
            queries = planned(model, positives)
        except AttackFailed as exc:
            return Refusal(name, f"no design fits the precision: {exc}")
        capacity = capacity_queries(facts)
        if queries >= capacity:
            return Refusal(name, f"AUC is released too: ~{capacity} queries for capacity against {queries} planned for "
                           f"{name}", close=True)
        if facts.budget_left is not None and queries > facts.budget_left:
            return Refusal(name, f"AUC is released too: {name} plans {queries} queries; the budget "
                           f"({facts.budget_left}) is short of them, and capacity keeps what it decodes", close=True)
        how = ("the log loss codes rows by powers of two, the AUC more rows by their ranks"
               if name == "auc_logloss_ranks" else "the log loss codes rows, the AUC splits its windows")
        return Plan(name, {}, f"the board releases AUC beside the log loss (paper 004 §3): {name} plans {queries} "
                    f"queries ({how}) against ~{capacity} for capacity on the log loss alone", rank=RANK,
                    cost=queries, tiebreak=tiebreak)

    return fits


def auc_fallbacks(facts: BoardFacts, failed: Plan) -> list[Plan]:
    """When the AUC + log-loss decoders refused (a score off the server model: noise below the resolution, rows or
    labels redrawn): ``capacity`` on the log loss alone, then what follows a capacity failure."""
    return [Plan("capacity", {}, f"{failed.attack} gave no labels: capacity on the log loss alone"),
            *capacity_fallbacks(facts, failed)]


def never_alone(facts: BoardFacts) -> bool:
    """Not in the audit's battery: ``auto`` plays them where they beat ``capacity``."""
    return False
