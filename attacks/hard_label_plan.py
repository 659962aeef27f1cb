"""``auto`` on a board that releases only a hard label (:mod:`defenses.feedback`): no score probe can read it,
so the fingerprint is skipped and the label-only attacks play the whole budget.

* ``accept_reject`` (a Ladder's decision) and ``rank`` (an acceptance raises the bar): ``brep`` with
  ``N = 4`` sphere points — under the parameter-free Ladder's accept/reject it reaches ≈ 0.53 of the public
  rows where ``boosting`` stays at ≈ 0.51 (``benchmarks/hard_label.py``); a small ``N`` spends fewer queries per
  step than the paper's 32, which these boards reward.
* ``threshold`` (a badge or medal) and a board ``rank`` (rank 1 = ahead of every rival's best, a bar only the
  rivals move): ``boosting`` on a binary board (its accepted vectors are votes; ≈ 0.57
  against ``brep``'s ≈ 0.55 at 400 queries on 8,000 rows), ``brep`` on a multiclass one.

Before the attack, one constant vector per class reads the majority class (two queries on a binary board), and
after it a few check queries decide which of the attack's labels stand and which go back to the majority class
(:mod:`attacks.hard_label_floor`): these queries are kept from the attack's budget up front. On a board that
scores a public split it does not reveal, no label-only attack is played: its guesses on the private rows would
have nothing behind them, below the majority class there, and the constants' majority class is the answer. A board whose
majority the constants cannot read (a badge every constant earns, AUC) is not floored, and says so; when nothing
is accepted there the rows stay unknown (``-1``) rather than get a guess with nothing behind it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.hard_label import feedback_of
from attacks.hard_label_floor import (
    MajorityReading,
    Recorder,
    check_labels,
    check_queries,
    read_majority,
    readable,
    stateful_kind,
)
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
    n, k = oracle.n_rows, oracle.n_classes
    begin = oracle.queries
    left = DEFAULT_HARD_LABEL_BUDGET if budget is None else max(0, budget - reserve)
    kind = str(feedback_of(oracle).get("kind"))
    reasoning = [f"feedback: the board releases only a hard label ({kind}); no score probe can read it, so no "
                 "fingerprint"]
    recorder = Recorder(oracle)
    own = int(getattr(oracle, "account", 0) or 0)
    spare = _fresh_account(oracle, own) if stateful_kind(oracle) else None
    # The floor's queries, kept up front: one constant per class before the attack, the check after it.
    floor_queries = k + check_queries(oracle, spare=spare is not None) if readable(oracle) and left >= k else 0
    attack_left = max(0, left - floor_queries)
    name, chosen, reason = hard_label_plan(oracle, attack_left)
    if forced is not None:  # every attack takes the one budget keyword: the forced one plays within it too
        name, chosen, reason = forced, {"budget": attack_left}, "forced by the caller"
    chosen.update(params or {})
    chosen.setdefault("seed", seed)
    labels = np.full(n, -1, dtype=np.int64)
    confidence = np.zeros(n)
    course = Course(attack=name, plan_attack=name, plan_params=dict(chosen), plan_reason=reason, reasoning=reasoning,
                    feedback=kind)
    reading: MajorityReading | None = None
    if floor_queries:
        if spare is not None:
            oracle.account = spare  # type: ignore[attr-defined]
        try:
            reading = read_majority(recorder)
        finally:
            if spare is not None:
                oracle.account = own  # type: ignore[attr-defined]
        if spare is not None:
            reasoning.append(f"the constants and the check go to account {spare}, which the attack does not use: its "
                             "best stays the majority constant for the check")
        if reading.majority is None:
            reasoning.append(f"majority class: not read from {reading.queries} constant vector(s) ({reading.reason}); "
                             "the labels get no majority-class floor")
        else:
            reasoning.append(f"majority class: {reading.majority}, read from {reading.queries} constant vector(s) "
                             f"at the edge ({reading.reason})")
    elif not readable(oracle):
        reasoning.append(f"majority class: constant vectors cannot read it on {oracle.metric} (every constant "
                         "scores alike); the labels get no majority-class floor")
    else:
        reasoning.append(f"majority class: not read ({left} queries, fewer than the {k} constants it takes)")
    if reading is not None and reading.majority is None and forced is None and "budget" not in (params or {}):
        # Nothing to check against: the check's queries go back to the attack.
        attack_left = max(0, left - reading.queries)
        chosen["budget"] = attack_left
        course.plan_params = dict(chosen)
    attack_budget = int(chosen.get("budget", attack_left))
    after = recorder.count
    split = getattr(oracle, "public_fraction", None) is not None
    floored = reading is not None and reading.majority is not None
    if floored and split and forced is None:
        # Which rows the board scores is not released, and a label-only attack's guesses on the others see no
        # release: a private row moved off the majority class is right at 1 − share, below the majority's share.
        reasoning.append("the board scores a public split it does not reveal: a label-only attack's labels on the "
                         "private rows would be guesses with nothing behind them, below the majority class there; "
                         "no attack is played")
        course.attack = "majority"
    elif floored and (attack_left < 1 or attack_budget < 1):
        reasoning.append("no query left for a label-only attack after the constants")
        course.attack = "majority"
    elif attack_left < 1:
        reasoning.append("no query left for a label-only attack")
    else:
        reasoning.append(f"chose {name}: {reason}")
        start = oracle.queries
        try:
            played = run(name, recorder, **chosen)
        except AttackFailed as exc:
            reasoning.append(f"{name} gave nothing after {oracle.queries - start} queries: {exc}")
        else:
            labels = np.asarray(played.labels, dtype=np.int64).copy()
            confidence = played.fill_confidence().copy()
            course.attack_details = played.details
            reasoning.append(f"{name}: every row labelled from {oracle.queries - start} hard labels "
                             "(a guess: no label is vouched for)")
    if reading is not None and reading.majority is not None:
        m = reading.majority
        floor_share = 1.0 / k  # the majority's share is at least 1/K; the board shows no more of it
        if (labels < 0).all():
            labels[:], confidence[:] = m, floor_share
            reasoning.append(f"floor: no labels from an attack: every row the majority class {m}")
            course.floor = {"moved_before": 0, "moved_after": 0, "check_queries": 0}
        else:
            labels[labels < 0] = m
            before = labels.copy()
            if spare is not None:
                oracle.account = spare  # type: ignore[attr-defined]
            try:
                outcome = check_labels(recorder, labels, reading, after=after, split=split, fresh=spare is not None,
                                       confidence=confidence)
            finally:
                if spare is not None:
                    oracle.account = own  # type: ignore[attr-defined]
            reasoning.append(outcome.line)
            if outcome.verdict == "reverted":
                labels[:] = m
            if split and outcome.moved_after:
                labels[:] = m  # the private rows' guesses: see above (a forced attack's labels, checked on the public)
                outcome.moved_after = 0
                reasoning.append("floor: the board scores a public split it does not reveal: the moved rows' "
                                 "private guesses are below the majority class there, all back to class "
                                 f"{m}")
            back = labels != before
            confidence[back] = floor_share
            course.floor = {"moved_before": outcome.moved_before, "moved_after": outcome.moved_after,
                            "check_queries": outcome.queries}
            course.attack_details = {**course.attack_details, "floor_verdict": outcome.verdict}
    known = int((labels >= 0).sum())
    spent = oracle.queries - begin
    course.guessed, course.attack_queries = known, spent
    reasoning.append(f"result: 0 exact label(s), {known} guessed, {n - known} unknown; {spent} queries")
    return AttackResult("auto", labels, details=course.as_dict(), confidence=confidence, course=course)


def _fresh_account(oracle: Oracle, own: int) -> int | None:
    """An account other than ``own`` that has not submitted (the oracle counts each account's submissions), else
    ``None``: the floor's constants and check then go there, leaving the attack's board state alone."""
    accounts = int(getattr(oracle, "accounts", 1) or 1)
    counts = getattr(oracle, "queries_by_account", None)
    for account in range(accounts):
        if account != own and (counts is None or (account < len(counts) and counts[account] == 0)):
            return account
    return None

