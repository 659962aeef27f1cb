"""Pick the strongest applicable attack for what the fingerprint saw, or the one the caller forced.

The choice is data: every registered attack's spec says whether it fits the board (:class:`BoardFacts`) and
with which rank and expected cost (:mod:`attacks.catalogue`); :func:`choose` plays the best-ranked plan that
fits, and :func:`explain` lists every attack's answer — the plan it would play, or why it does not fit — so
that why a board got the attack it got reads off one table. The ranks, lowest first (each spec's ``fits`` beside
its function says when it applies):

==== ===================================================================================================
rank attacks
==== ===================================================================================================
10   ``budgeted`` — noisy releases that stop (a privacy budget), or a privacy budget and its noise disclosed
20   ``camouflage`` — probes refused or withheld, float64 binary log loss scoring every row
30   ``ladder`` — released scores stick (a Ladder), continuing the edge probes' leader or on a fresh account
40   ``thresholdout`` — rows that never move although none is private (a secret reference side)
50   ``subsetting``, ``randomized_response`` — rows or labels redrawn per submission, no noise
69   paper 004's ``auc_logloss_ranks``, ``auc_logloss`` — AUC released beside the log loss, when they plan
     fewer queries than ``capacity`` expects (ranked against it by cost)
70   ``capacity``, ``capacity_split``, ``prime_batched`` (MPFR), ``robust_batched`` (71) — binary log loss
80   ``capacity``, ``capacity_split`` — K-class log loss and ``kl``
90   ``logits_split``; 100 ``softmax_ce``, ``sigmoid_ce`` — losses on logits
110  ``capacity_split``; 120 ``capacity``; 130 ``bregman_powers`` — Brier, norm-like, Itakura–Saito
140  ``prime_powers`` — K-class log loss on an MPFR server
1000 ``boosting`` (binary), 1001 ``majority`` — the best guesses
==== ===================================================================================================

Exact designs need every score released afresh over the same rows (:attr:`BoardFacts.open_release`): behind
refusals, a Ladder or a fresh subset only the attacks made for them fit, else the best guess. When a plan fails,
``auto`` plays its spec's fallbacks (:mod:`attacks.fallbacks`).
"""

from __future__ import annotations

from typing import Any

from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.fingerprint import Fingerprint
from attacks.oracle import Oracle
from attacks.registry import available, catalogue, spec

#: Margin of boosting's vectors when the board refuses probes: ±0.25 around 1/2 is not a 0/1 vector.
CAMOUFLAGE_MARGIN = 0.25


def load_attacks() -> list[str]:
    """Every registered attack name."""
    return available()


def rescues(facts: BoardFacts) -> list[Plan]:
    """The plans for after every exact plan failed (``facts.exact_failed``), best-ranked first: the attacks that
    read what the failure suggests (a privacy budget's withheld releases, Thresholdout's reference side)."""
    return [answer for answer in explain(facts) if isinstance(answer, Plan) and answer.rescue]


def explain(facts: BoardFacts) -> list[Plan | Refusal]:
    """Every registered attack's answer for ``facts``: its plan (with rank and cost) or why it does not fit,
    the plans first, best-ranked first."""
    answers = [entry.plan_for(facts) for entry in catalogue()]
    plans = sorted((a for a in answers if isinstance(a, Plan)), key=lambda p: p.order)
    return [*plans, *(a for a in answers if isinstance(a, Refusal))]


def choose_for(facts: BoardFacts, *, forced: str | None = None, params: dict[str, Any] | None = None) -> Plan:
    """The best-ranked plan that fits ``facts`` (``forced`` wins, with ``params``; ``params`` override the
    chosen plan's). Only an attack whose spec declares a fit is ever chosen; ``majority`` fits every board."""
    names = set(available())
    params = dict(params or {})
    if forced is not None:
        if forced not in names:
            raise ValueError(f"unknown attack {forced!r}; available: {', '.join(sorted(names))}")
        return Plan(forced, params, "forced by the caller", forced=True, stage=spec(forced).stage)
    answers = explain(facts)
    plans = [answer for answer in answers if isinstance(answer, Plan) and not answer.rescue]
    if not plans:
        raise ValueError("no registered attack fits this board (is majority registered?)")
    best = plans[0]
    best.params = {**best.params, **params}
    close = dict.fromkeys(a.reason for a in answers if isinstance(a, Refusal) and a.close)
    if close:
        best.reason += "".join(f" ({reason})" for reason in close)
    return best


def choose(
    oracle: Oracle,
    report: Fingerprint,
    *,
    forced: str | None = None,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    query_budget: int | None = None,
) -> Plan:
    """The plan for ``oracle`` given its fingerprint (:func:`choose_for` on its :class:`BoardFacts`);
    ``query_budget`` is what is left for the attack (sizes the best guess's queries)."""
    return choose_for(BoardFacts.of(oracle, report, budget_left=query_budget, seed=seed), forced=forced,
                      params=params)


def best_guess(facts: BoardFacts, reason: str) -> Plan:
    """The best-ranked best guess for this board (``boosting`` on a binary board, else ``majority``), with
    ``reason``: what ``auto`` plays when every exact plan failed."""
    guesses = [answer for answer in explain(facts)
               if isinstance(answer, Plan) and answer.stage == Stage.GUESS and not answer.rescue]
    if not guesses:
        return Plan("majority", {"rates": None if facts.seen is None else facts.seen.balance}, reason,
                    stage=Stage.GUESS)
    chosen = guesses[0]
    chosen.reason = reason
    return chosen
