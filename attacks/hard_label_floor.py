"""The majority-class floor on boards that release only a hard label (:mod:`defenses.feedback`): read the
majority class with constant vectors, then let a label-only attack's labels stand only where check queries show
them doing better than the majority class.

**Reading the majority.** Before the attack, one constant vector per class — every row that class at the
clipping edge — is submitted, in class order:

* ``accept_reject`` (a Ladder's decision): an account's first submission is always accepted, each later one only
  if it beats the best so far by the Ladder's margin; the last constant accepted is the majority class of the
  scored rows (on two classes: class 1 if the second constant is accepted, else class 0, which then has at least
  the other's share less the margin). Two queries on a binary board.
* ``rank`` among the participant's own submissions: a release of 1 means better than every earlier one (a tie
  goes to the earlier): the last constant ranked 1 is the majority class, exactly.
* a badge (``threshold``) or a board rank: no state moves, so the constants' releases are compared with each
  other — the one constant that earns a strictly better release than every other is the majority class; when
  the best release is shared (all beat the cut-off, or none), the board does not tell, and nothing is floored.

At the edge a constant's loss is the edge loss times the share of the rows not of its class (accuracy: the
share of its class), so its release orders the classes by their share on the scored rows; the attack that
follows starts far below it (a vector near 1/2 loses ``ln 2`` a row, the edge constant ``33.96`` a wrong row), so
a Ladder's leader set by a constant does not stop it.

**The check** (after the attack, its queries kept from the budget up front, :func:`check_queries`):

* On a Ladder or own-rank board the attack's labels are those of its last accepted vector ``p*`` (``brep``'s are),
  the board's best. The rows off the majority class, in up to :data:`BANDS` bands by ``p*``'s confidence (highest
  first), are each *sharpened*: the band's rows raised towards their labels to one level ``c`` (the others'
  predictions scaled down), every other row as the board's best. A right row then gains ``ln(c/q)``, a wrong one
  costs ``ln((1−q)/(1−c))``; ``c`` is chosen (:func:`sharpening_level`) so that the least cost is at least the
  largest gain, so the sharpened vector beats the board's best (accepted, rank 1) only if the band has more rows
  right than wrong — more than the majority class has there — and, on a Ladder, significantly. Accepted: the band
  stands (and the sharpened vector is the next band's base). Not: back to the majority class. The test is strict
  by construction: near ``q = 1/2`` it asks for more right than wrong, but a band the attack leans on harder must be
  right more often than ``q`` (the cost-to-gain ratio tends to ``q/(1−q)``), so a confident decode right no more
  often than it claims goes back too. When the attack's labels are not those of a vector the board accepted after
  the constants, nothing vouches for them: the majority class. On a metric that scores the labels alone
  (accuracy, :func:`labels_only`) no check is needed: the board took ``p*`` as better than its best after the
  constants, the majority constant among them.
* With a spare account (one that has not submitted), the constants and the check go there instead, leaving the
  attack's account alone: that account's best is the majority constant, so each band of moved rows (most confident
  first) is submitted at the edge on top of the best so far — the labels there, the best elsewhere — and stands
  only if the board takes it as a better best: more rows right than the majority class has there (on a Ladder,
  significantly). Any attack's labels can be checked so, not only those of a vector the board accepted.
* On a badge or a board rank the attack's labels are submitted at the edge, as the constants were: a strictly
  better release than the majority constant's keeps them, a worse one sends them back. An equal one (both beat the
  cut-off) is resolved by shifting both vectors alike: the rows both label the majority class are flipped to
  another class, the first ``j`` of them (row order) in both, and a bisection over ``j`` finds where the majority's
  vector just loses its release (``j − 1`` flips keep it). The labels' vector with the same ``j`` flips differs
  from it only on the moved rows, so it keeps the release only if the labels are right on more of them than the
  majority class is: kept; else back (at most one row's worth of gain given up). No such ``j``: back.

On a public split only the scored rows are compared (``auto`` plays no label-only attack there,
:mod:`attacks.hard_label_plan`); the reasoning says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.floor import edge
from attacks.hard_label import feedback_of
from attacks.oracle import Oracle, ReducedOracle, Released
from attacks.result import AttackFailed, SubmissionRefused
from scoring import get_metric

#: The largest logit a constant carries on a metric on logits (its sigmoid is 1 − 2⁻⁴⁹·…, the edge).
EDGE_LOGIT = 30.0
#: The least log-odds a sharpened band's most confident row rises by (a band of one confidence must still change).
SHARPEN_STEP = 0.05
#: Bands of moved rows (by the leader's confidence) checked one query each on a Ladder or own-rank board.
BANDS = 4


def check_queries(oracle: Oracle, *, spare: bool = False) -> int:
    """The most queries the check takes after the attack: a band each on a Ladder or own-rank board (none on a
    metric that scores the labels alone, unless the check goes to a ``spare`` account); on a badge or board rank the
    labels' vector, the bisection over the shared rows (and its two ends) and the shifted pair.

    >>> from attacks.oracle import LocalOracle
    >>> check_queries(LocalOracle([0, 1] * 50, defenses=[{"name": "threshold", "t": 0.5}]))
    10
    """
    if stateful_kind(oracle):
        return 0 if labels_only(oracle) and not spare else BANDS
    return 3 + max(1, int(oracle.n_rows).bit_length())
#: Metrics whose score is a mean over rows of a loss fixed by the row's label and prediction: a constant's
#: release orders the classes by share. (AUC ranks rows: every constant scores one half.)
UNREADABLE = ("auc",)


class Recorder(ReducedOracle):
    """``oracle`` with every submission's predictions and release remembered (the last one the board released
    as a 1, for the check). Every other attribute is the oracle's."""

    def __init__(self, inner: Oracle) -> None:
        super().__init__(inner)
        self.n_classes, self.metric, self.eps = inner.n_classes, inner.metric, inner.eps
        self.last_one: np.ndarray | None = None
        self.last_one_index = -1
        self.count = 0

    def submit(self, predictions: Any) -> Released:
        value = self.inner.submit(predictions)
        self.count += 1
        if value is not None and float(value) == 1.0:
            self.last_one = np.array(predictions, dtype=np.float64, copy=True)
            self.last_one_index = self.count
        return value

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet: no inner oracle to ask
            raise AttributeError(name)
        if name == "submit_many":  # one at a time, so that every release is recorded
            return lambda predictions: [self.submit(p) for p in predictions]
        return getattr(self.inner, name)


def _logits(oracle: Oracle) -> bool:
    return bool(get_metric(oracle.metric).logits)


def labels_vector(oracle: Oracle, labels: np.ndarray) -> np.ndarray:
    """Predictions putting every row at the clipping edge towards its label (a metric on logits: ±30).

    >>> from attacks.oracle import LocalOracle
    >>> labels_vector(LocalOracle([0, 1]), np.array([1, 0])).tolist() == [1 - 2.0**-49, 2.0**-49]
    True
    """
    labels = np.asarray(labels, dtype=np.int64)
    k = oracle.n_classes
    if _logits(oracle):
        if k == 2:
            return np.where(labels == 1, EDGE_LOGIT, -EDGE_LOGIT).astype(np.float64)
        return np.where(np.eye(k, dtype=bool)[labels], EDGE_LOGIT, 0.0)
    e = edge(oracle.eps)
    if k == 2:
        return np.where(labels == 1, 1.0 - e, e).astype(np.float64)
    low = e / (k - 1)
    return np.where(np.eye(k, dtype=bool)[labels], 1.0 - e, low)


def _confidence(oracle: Oracle, predictions: np.ndarray, rows: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """How far ``predictions`` lean to ``labels`` on ``rows`` (binary: the distance from 1/2 or from a zero logit;
    else the margin of the label's prediction over the next largest)."""
    p = np.asarray(predictions, dtype=np.float64)[rows]
    if p.ndim == 2:
        top = np.take_along_axis(p, labels[rows][:, None], axis=1)[:, 0]
        rest = p.copy()
        rest[np.arange(len(rows)), labels[rows]] = -np.inf
        return top - rest.max(axis=1)
    return np.abs(p - (0.0 if _logits(oracle) else 0.5))


def labels_of(oracle: Oracle, predictions: np.ndarray) -> np.ndarray:
    """The labels a prediction vector implies (binary: above 1/2, or a positive logit; else the largest)."""
    p = np.asarray(predictions, dtype=np.float64)
    if p.ndim == 2:
        return np.argmax(p, axis=1).astype(np.int64)
    return (p > (0.0 if _logits(oracle) else 0.5)).astype(np.int64)


def _label_probability(oracle: Oracle, predictions: np.ndarray, rows: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The probability ``predictions`` give each of ``rows`` its label (a metric on logits: their sigmoid or
    softmax)."""
    p = np.asarray(predictions, dtype=np.float64)[rows]
    if p.ndim == 2:
        if _logits(oracle):
            p = np.exp(p - p.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
        return np.take_along_axis(p, labels[rows][:, None], axis=1)[:, 0]
    if _logits(oracle):
        p = 0.5 * (1.0 + np.tanh(0.5 * p))
    return np.where(labels[rows] == 1, p, 1.0 - p)


def sharpening_level(q: np.ndarray) -> float:
    """The level ``c`` that :func:`sharpened` raises rows whose labels have probabilities ``q`` (each above 1/2) to:
    the least ``c > max q`` (at least :data:`SHARPEN_STEP` more log-odds) at which a wrong row costs at least what
    any right row gains, ``ln((1 − q_w)/(1 − c)) >= ln(c / q_r)`` for every pair: ``c(1 − c) <= min q · (1 − max q)``.

    >>> round(sharpening_level(np.array([0.6, 0.9])), 4)  # c(1 - c) = 0.06
    0.9359
    """
    low, high = float(np.min(q)), float(np.max(q))
    root = 0.5 * (1.0 + np.sqrt(max(0.0, 1.0 - 4.0 * low * (1.0 - high))))
    step = 1.0 / (1.0 + (1.0 - high) / high * math.exp(-SHARPEN_STEP))  # max q a little sharper: never no change
    return float(min(max(root, step), 1.0 - 1e-12))


def sharpened(oracle: Oracle, predictions: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``predictions`` with ``rows`` raised towards their labels to one level (:func:`sharpening_level`): the other
    classes' predictions scaled down in proportion; every other row unchanged.

    >>> from attacks.oracle import LocalOracle
    >>> [round(v, 4) for v in sharpened(LocalOracle([0, 1, 1]), np.array([0.4, 0.9, 0.8]), np.array([0, 1, 1]),
    ...                                 np.array([0, 2])).tolist()]
    [0.1394, 0.9, 0.8606]
    """
    p = np.array(predictions, dtype=np.float64, copy=True)
    q = _label_probability(oracle, p, rows, labels)
    c = sharpening_level(q)
    lab = labels[rows]
    if p.ndim == 2:
        if _logits(oracle):
            # Softmax logits: the label's logit raised so that its probability is c, the others kept (their
            # probabilities shrink in proportion).
            p[rows, lab] += np.log(c / (1.0 - c)) - np.log(q / (1.0 - q))
        else:
            scale = (1.0 - c) / np.clip(1.0 - q, 1e-300, None)
            p[rows] *= scale[:, None]
            p[rows, lab] = c
    elif _logits(oracle):
        p[rows] = np.where(lab == 1, 1.0, -1.0) * np.log(c / (1.0 - c))
    else:
        p[rows] = np.where(lab == 1, c, 1.0 - c)
    return p


@dataclass
class MajorityReading:
    """What the constants showed: the majority class (``None``: the board did not tell), the constants'
    releases in class order, the queries spent, and whether the board's releases move with the queries."""

    majority: int | None
    releases: list[Released] = field(default_factory=list)
    queries: int = 0
    stateful: bool = False
    reason: str = ""


def stateful_kind(oracle: Oracle) -> bool:
    """A Ladder's accept/reject or a rank among the participant's own submissions: a release of 1 means better
    than the best so far."""
    feedback = feedback_of(oracle)
    kind = feedback.get("kind")
    return kind == "accept_reject" or (kind == "rank" and feedback.get("among", "own") != "board")


def labels_only(oracle: Oracle) -> bool:
    """Whether the metric scores a vector by its labels alone (accuracy): a vector leaning 0.6 and one leaning 0.9
    the same way score alike.

    >>> from attacks.oracle import LocalOracle
    >>> labels_only(LocalOracle([0, 1], metric="accuracy")), labels_only(LocalOracle([0, 1]))
    (True, False)
    """
    if _logits(oracle) or oracle.metric in UNREADABLE:
        return False
    metric = get_metric(oracle.metric)
    truth = np.array([1, 0, 1, 0])
    if oracle.n_classes == 2:
        soft, hard = np.array([0.6, 0.4, 0.4, 0.6]), np.array([0.9, 0.1, 0.1, 0.9])
    else:
        k = oracle.n_classes
        soft = np.full((4, k), 0.4 / (k - 1))
        hard = np.full((4, k), 0.1 / (k - 1))
        for row, label in enumerate((1, 0, 0, 1)):
            soft[row, label], hard[row, label] = 0.6, 0.9
    return bool(metric.score(soft, truth, oracle.eps) == metric.score(hard, truth, oracle.eps))


def readable(oracle: Oracle) -> bool:
    """Whether constants can read this board's majority class (a row-wise metric)."""
    return oracle.metric not in UNREADABLE


def _better(a: float, b: float, higher: bool) -> bool:
    return a > b if higher else a < b


def read_majority(oracle: Recorder) -> MajorityReading:
    """Submit one edge constant per class and read the majority class (module docstring)."""
    k = oracle.n_classes
    feedback = feedback_of(oracle)
    kind = str(feedback.get("kind"))
    stateful = stateful_kind(oracle)
    releases: list[Released] = []
    start = oracle.queries
    for cls in range(k):
        try:
            releases.append(oracle.submit(labels_vector(oracle, np.full(oracle.n_rows, cls))))
        except (SubmissionRefused, AttackFailed):  # refused, or past a budget: not released
            releases.append(None)
    spent = oracle.queries - start
    if any(value is None for value in releases):
        return MajorityReading(None, releases, spent, stateful, "a constant was refused or withheld")
    values = [float(value) for value in releases if value is not None]
    if stateful:
        if values[0] != 1.0:
            return MajorityReading(None, releases, spent, stateful,
                                   "the first constant was not accepted: the account has an earlier best")
        accepted = [cls for cls, value in enumerate(values) if value == 1.0]
        if kind == "rank":
            reason = "the last constant ranked first: its share of the scored rows is the largest"
        else:
            later = [cls for cls in range(accepted[-1] + 1, k)]
            reason = ("the last constant the Ladder took as its best; " + (
                f"class(es) {', '.join(map(str, later))} did not beat it by the Ladder's margin, so its share is "
                "at least theirs less that margin (about one standard error)" if later else
                "it beat the earlier ones by the Ladder's margin"))
        return MajorityReading(accepted[-1], releases, spent, stateful, reason)
    higher = kind == "threshold"  # a badge: cut-offs beaten (more is better); a board rank: a place (1 is best)
    best = max(values) if higher else min(values)
    winners = [cls for cls, value in enumerate(values) if value == best]
    if len(winners) != 1:
        return MajorityReading(None, releases, spent, stateful,
                               f"the constants' releases {values} do not single one class out")
    others = [value for cls, value in enumerate(values) if cls != winners[0]]
    assert all(_better(best, value, higher) for value in others)
    return MajorityReading(winners[0], releases, spent, stateful, "the one constant with the best release")


@dataclass
class CheckOutcome:
    """The floor's verdict: ``kept`` (the labels stand), ``reverted`` (rows moved back), ``unvouched`` (the board
    could not tell; the attack's labels stand on its own guard), the rows moved off the majority class before and
    after, the check queries, and a line for the reasoning."""

    verdict: str
    moved_before: int
    moved_after: int
    queries: int
    line: str


def check_labels(
    oracle: Recorder, labels: np.ndarray, reading: MajorityReading, *, after: int, split: bool,
    fresh: bool = False, confidence: np.ndarray | None = None,
) -> CheckOutcome:
    """Check the attack's ``labels`` against the majority class (module docstring); ``after``: the recorder's
    submission count when the attack began (a vector accepted before it is a constant); ``split``: only a public
    split is scored; ``fresh``: the constants were read on an account of their own, which the attack did not use
    (its best is the majority constant); ``confidence``: the attack's, to order the bands there. Returns the
    verdict and moves the rows that go back to the majority class in ``labels``."""
    assert reading.majority is not None
    m = reading.majority
    moved = int((labels != m).sum())
    scored = " on the scored (public) rows" if split else ""
    if moved == 0:
        return CheckOutcome("kept", 0, 0, 0, f"floor: every row is the majority class {m} already")
    start = oracle.queries
    if reading.stateful and fresh:
        rows = np.flatnonzero(labels != m)
        leader = oracle.last_one
        if leader is not None and oracle.last_one_index > after and np.array_equal(labels_of(oracle, leader), labels):
            strength = _confidence(oracle, leader, rows, labels)  # the attack's best vector: how far it leans
        else:
            strength = np.zeros(len(rows)) if confidence is None else np.asarray(confidence, dtype=np.float64)[rows]
        order = rows[np.argsort(-strength, kind="stable")]
        bands = [band for band in np.array_split(order, min(BANDS, len(order))) if len(band)]
        best = np.full(len(labels), m, dtype=np.int64)  # the account's best: the majority constant
        notes: list[str] = []
        for i, band in enumerate(bands):
            candidate = best.copy()
            candidate[band] = labels[band]
            try:
                value = oracle.submit(labels_vector(oracle, candidate))
            except (SubmissionRefused, AttackFailed):  # refused, or past a budget: not released
                value = None
            if value is not None and float(value) == 1.0:
                best = candidate
                notes.append(f"band {i + 1} ({len(band)} rows): beats the best so far, kept")
            else:
                labels[band] = m
                notes.append(f"band {i + 1} ({len(band)} rows): " + (
                    "not released" if value is None else "does not beat the best so far") + ", back")
        spent = oracle.queries - start
        kept_rows = int((best != m).sum())
        return CheckOutcome("kept" if kept_rows else "reverted", moved, kept_rows, spent,
                            f"floor: on the constants' own account, the labels at the edge band by band on top of "
                            f"the majority constant (a band stands only if the board takes it as a better "
                            f"best){scored}: " + "; ".join(notes))
    if reading.stateful:
        leader = oracle.last_one
        if leader is None or oracle.last_one_index <= after or not np.array_equal(labels_of(oracle, leader), labels):
            return CheckOutcome("reverted", moved, 0, 0,
                                f"floor: no vector the board accepted after the constants carries these labels, so "
                                f"nothing vouches for the {moved} row(s) off class {m}: back to the majority class")
        if labels_only(oracle):
            # The score is the labels' own (accuracy): the board took a vector with these labels as better than
            # its best after the constants, the majority constant among them.
            return CheckOutcome("kept", moved, moved, 0,
                                f"floor: {oracle.metric} scores the labels alone and the board took a vector with "
                                f"these labels as better than the majority constant{scored}: they stand")
        rows = np.flatnonzero(labels != m)
        strength = _confidence(oracle, leader, rows, labels)
        order = rows[np.argsort(-strength, kind="stable")]
        bands = [band for band in np.array_split(order, min(BANDS, len(order))) if len(band)]
        kept: list[str] = []
        reverted = 0
        for i, band in enumerate(bands):
            current = oracle.last_one if oracle.last_one is not None else leader
            try:
                value = oracle.submit(sharpened(oracle, current, labels, band))
            except (SubmissionRefused, AttackFailed):  # refused, or past a budget: not released
                value = None
            if value is not None and float(value) == 1.0:
                kept.append(f"band {i + 1} ({len(band)} rows): sharpened, it beats the board's best, kept")
            else:
                labels[band] = m  # the caller reads the moved rows off ``labels``
                reverted += len(band)
                kept.append(f"band {i + 1} ({len(band)} rows): " + (
                    "not released" if value is None else "sharpened, it does not beat the board's best") + ", back")
        spent = oracle.queries - start
        verdict = "reverted" if reverted == moved else "kept"
        return CheckOutcome(verdict, moved, moved - reverted, spent,
                            f"floor: the board's best vector sharpened towards the labels, band by band of the "
                            f"{moved} row(s) off class {m} (by its confidence){scored}: " + "; ".join(kept))
    kind = str(feedback_of(oracle).get("kind"))
    higher = kind == "threshold"
    try:
        value = oracle.submit(labels_vector(oracle, labels))
    except (SubmissionRefused, AttackFailed):  # refused, or past a budget: not released
        value = None
    spent = oracle.queries - start
    constant = reading.releases[m]
    if value is None or constant is None:
        return CheckOutcome("reverted", moved, 0, spent,
                            f"floor: the check was not released: the {moved} row(s) off class {m} go back")
    ours, theirs = float(value), float(constant)
    if _better(ours, theirs, higher):
        return CheckOutcome("kept", moved, moved, spent,
                            f"floor: the labels at the edge earn a better release ({ours:g}) than the majority "
                            f"constant ({theirs:g}){scored}: they stand")
    if _better(theirs, ours, higher):
        return CheckOutcome("reverted", moved, 0, spent,
                            f"floor: the labels at the edge earn a worse release ({ours:g}) than the majority "
                            f"constant ({theirs:g}){scored}: all back to class {m}")
    # The same release: both beat the bar. Shift both by the same amount — flip rows the two agree on (labelled the
    # majority class by both) to another class, one by one — until the majority's vector just loses the release;
    # the labels' vector, the same flips on top, keeps it only if the labels are right on more moved rows.
    shifted = _straddle(oracle, labels, m, theirs, higher)
    spent = oracle.queries - start
    if shifted is None:
        return CheckOutcome("reverted", moved, 0, spent,
                            f"floor: the labels at the edge and the majority constant earn the same release "
                            f"({ours:g}) and no shift of the rows they share brings the majority's below it: "
                            f"nothing vouches for the {moved} row(s) off class {m}, all back to class {m}")
    flips, lost, kept_release = shifted
    line = (f"floor: the labels at the edge and the majority constant earn the same release ({ours:g}); with "
            f"{flips} shared row(s) flipped the majority's vector drops to {lost:g} and the labels' vector earns "
            f"{kept_release:g}{scored}")
    if kept_release is not None and _better(kept_release, lost, higher):
        return CheckOutcome("kept", moved, moved, spent, line + ": the labels are right on more moved rows, they stand")
    return CheckOutcome("reverted", moved, 0, spent,
                        line + f": the labels are right on no more moved rows than the majority class (within one "
                        f"row), all back to class {m}")


def _straddle(
    oracle: Recorder, labels: np.ndarray, m: int, top: float, higher: bool
) -> tuple[int, float, float | None] | None:
    """Flip the first ``j`` rows labelled ``m`` (row order) to another class in the majority constant and find,
    by bisection, a ``j`` whose vector earns a worse release than ``top`` while ``j − 1`` flips do not; then submit
    the labels with the same ``j`` flips. (flips, the majority vector's release there, the labels vector's), or
    ``None`` when even every shared row flipped keeps the release (or a release is withheld)."""
    shared = np.flatnonzero(labels == m)
    other = (m + 1) % oracle.n_classes
    constant = np.full(oracle.n_rows, m, dtype=np.int64)

    def release(base: np.ndarray, j: int) -> float | None:
        vector = base.copy()
        vector[shared[:j]] = other
        try:
            value = oracle.submit(labels_vector(oracle, vector))
        except (SubmissionRefused, AttackFailed):  # refused, or past a budget: not released
            return None
        return None if value is None else float(value)

    lo, hi = 0, len(shared)
    if hi == 0:
        return None
    low_release = release(constant, hi)
    if low_release is None or not _better(top, low_release, higher):
        return None
    while hi - lo > 1:  # invariant: lo flips keep the release, hi flips lose it
        mid = (lo + hi) // 2
        value = release(constant, mid)
        if value is None:
            return None
        if _better(top, value, higher):
            hi, low_release = mid, value
        else:
            lo = mid
    return hi, low_release, release(labels, hi)
