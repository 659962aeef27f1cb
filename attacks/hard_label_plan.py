"""``auto`` on a board that releases only a hard label (:mod:`defenses.feedback`): no score probe can read it,
so the fingerprint is skipped and the label-only attacks play the whole budget.

* ``accept_reject`` (a Ladder's decision) and ``rank`` (an acceptance raises the bar): ``brep`` with
  ``N = 4`` sphere points — under the parameter-free Ladder's accept/reject it reaches ≈ 0.53 of the public
  rows where ``boosting`` stays at ≈ 0.51 (``benchmarks/hard_label.py``); a small ``N`` spends fewer queries per
  step than the paper's 32, which these boards reward.
* ``threshold`` (a badge or medal) and a board ``rank`` (rank 1 = ahead of every rival's best, a bar only the
  rivals move): ``boosting`` on a binary board (its accepted vectors are votes; ≈ 0.57
  against ``brep``'s ≈ 0.55 at 400 queries on 8,000 rows), ``brep`` on a multiclass one.

The class balance cannot be measured from hard labels, so there is no majority-class floor: when nothing is
accepted the rows stay unknown (``-1``) rather than get a guess with nothing behind it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.hard_label import feedback_of
from attacks.oracle import Oracle
from attacks.registry import run
from attacks.result import AttackFailed, AttackResult, Course

#: Queries the label-only attacks play when ``auto`` has no budget.
DEFAULT_HARD_LABEL_BUDGET = 1000
#: Sphere points per ``brep`` step on boards where an acceptance moves the bar (the best of the sweep).
BREP_SAMPLES = 4


def hard_label_plan(oracle: Oracle, left: int) -> tuple[str, dict[str, Any], str]:
    """(attack, parameters, reason) for a hard-label board with ``left`` queries to spend."""
    feedback = feedback_of(oracle)
    kind = str(feedback.get("kind"))
    if kind == "rank" and feedback.get("among") == "board" and oracle.n_classes == 2:
        return "boosting", {"budget": left}, (
            "a board rank of 1 says a submission beats every rival's best, a bar the attacker does not move, as a "
            "badge's: boosting keeps those vectors as votes")
    if kind == "threshold" and oracle.n_classes == 2:
        return "boosting", {"budget": left}, (
            "a badge releases only whether a submission beats its cut-off: boosting keeps the accepted random "
            "vectors as votes")
    return "brep", {"budget": left, "n_samples": BREP_SAMPLES}, (
        f"the board releases only a hard label ({kind}): boundary repulsion (paper 002) from the accepted point, "
        f"{BREP_SAMPLES} sphere points per step")


def play_hard_label(
    oracle: Oracle, *, budget: int | None, reserve: int, seed: int, forced: str | None,
    params: dict[str, Any] | None,
) -> AttackResult:
    """``auto``'s answer on a hard-label board (see the module docstring)."""
    n = oracle.n_rows
    begin = oracle.queries
    left = DEFAULT_HARD_LABEL_BUDGET if budget is None else max(0, budget - reserve)
    kind = str(feedback_of(oracle).get("kind"))
    reasoning = [f"feedback: the board releases only a hard label ({kind}); no score probe can read it, so no "
                 "fingerprint and no class balance (the rows get no majority-class floor)"]
    name, chosen, reason = hard_label_plan(oracle, left)
    if forced is not None:  # every attack takes the one budget keyword: the forced one plays within it too
        name, chosen, reason = forced, {"budget": left}, "forced by the caller"
    chosen.update(params or {})
    chosen.setdefault("seed", seed)
    reasoning.append(f"chose {name}: {reason}")
    labels = np.full(n, -1, dtype=np.int64)
    confidence = np.zeros(n)
    course = Course(attack=name, plan_attack=name, plan_params=dict(chosen), plan_reason=reason, reasoning=reasoning,
                    feedback=kind)
    if left < 1:
        reasoning.append("no query left for a label-only attack")
    else:
        start = oracle.queries
        try:
            played = run(name, oracle, **chosen)
        except AttackFailed as exc:
            reasoning.append(f"{name} gave nothing after {oracle.queries - start} queries: {exc}")
        else:
            labels = np.asarray(played.labels, dtype=np.int64).copy()
            confidence = played.fill_confidence().copy()
            course.attack_details = played.details
            reasoning.append(f"{name}: every row labelled from {oracle.queries - start} hard labels "
                             "(a guess: no label is vouched for)")
    known = int((labels >= 0).sum())
    spent = oracle.queries - begin
    course.guessed, course.attack_queries = known, spent
    reasoning.append(f"result: 0 exact label(s), {known} guessed, {n - known} unknown; {spent} queries")
    return AttackResult("auto", labels, details=course.as_dict(), confidence=confidence, course=course)
