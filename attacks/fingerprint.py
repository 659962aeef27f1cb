"""Fingerprint a leaderboard from what a participant can observe, within a stated query budget.

Every probe is built so that its *undefended* released score is known in advance whatever the hidden labels
are, or tells the class balance; a defense shows up as a departure from the known value. For a binary
log-loss board, in this order:

1. **edge low** — every row at the clipping edge ``eps``: a one's loss is ``A = −ln eps`` (34.54 at 1e-15), a
   zero's ~1e-15, so the score is ``π·A``: the share ``π`` of ones among the scored rows, exact at any usual
   precision (one count of ones is ``A/N`` apart, 0.2 at 171 rows). It goes first because a board that releases
   only improvements (the Ladder, Thresholdout-like mechanisms) always releases a participant's first score —
   and on a Ladder this high first score is the leader the Ladder attacks need (their "height", ≈ ``R/η``
   acceptances to spend; a ½ probe would have dropped it to ``ln 2``).
2. **edge high** — every row at ``1 − eps``: ``(1 − π)·A``. Each row contributes ``A`` to the two scores
   together whatever its label, so the pair must sum to ``A`` (up to rounding). A Ladder rejects the higher
   of the two and re-releases the first: the pair breaks its sum with the second equal to the first (sticky).
3. **edge low again** (only when the second scored lower, ``π > ½``) — every row at ``eps/2``, clipped back
   to ``eps`` by the server: the first probe's score exactly, from another file. A Ladder accepted the second
   probe, and now re-releases *its* score instead of the first's (sticky).
   **Tie-break** (only when the pair released one value, which exactly half ones and a Ladder both give): row 0
   moved to the other edge must move a plain board's score by ``±A/N``; a Ladder re-releases its leader (or, for
   an improvement beyond its step, a value off both). Where one row's move is below the released precision,
   half the rows are moved and then mirrored (every row at ``1 − eps``, that half at ``eps``): a plain board
   releases ``r ± c``, mirror images; a Ladder re-releases its leader for whichever is no improvement.
   On a sticky board nothing more is sent: every further probe would score below the leader and be
   accepted. :attr:`Fingerprint.ladder_start` says what the leader is (the released best and which edge made
   it) and the Ladder attacks continue from it (:mod:`attacks.ladder`).
4. **baseline** — every row at 1/2: the loss is ``ln 2`` on every row, so on any scored subset.
   The released text's digits give the decimals; a value off ``ln 2`` beyond rounding means noise or a
   transformed score.
5. **repeat** — the baseline with one row nudged by one ulp (not byte-identical, so a same-file-same-score
   cache cannot answer it, yet the score is the same to ~1e-16): a different released value means noise.
   (The noise is measured on these ½ probes only: an edge probe's score moves with a random subset.)
6. **row probes** — the baseline with one row at 0.99: if the row is scored, the score moves by
   ``(loss - ln 2) / n_scored`` (down if its label is 1, up if 0), which also estimates how many rows are
   scored; if it is not scored (private split, or left out by subsetting), nothing moves. A row that moved
   probed again (and one that did not, when the budget allows) moving differently means a fresh random
   subset per submission (subsetting).

**What the host discloses** (:mod:`attacks.disclosure`, through :attr:`BoardFacts.told`) is read, not measured, as
far as the releases agree with it: a disclosed privacy budget over disclosed noise gets the edge probe alone (the
class balance; every release spends the budget), a disclosed noise scale stands in for the repeat probe, a
disclosed Ladder step must fit the leader the edge probes left. A release that contradicts a disclosed value
(:attr:`Fingerprint.contradicted`) drops the disclosure, and the usual probes measure.

Queries: at most ``budget`` (default 8: 2 or 3 edge probes + 1 + 1 + the rest on rows). Other metrics get the
baseline (every row at 1/2 or 1/K; AUC: a second constant as the repeat) and repeat (decimals and noise), then,
on a metric with per-row values and no noise, up to three row probes that each move three rows at once (a move
none of the all-scored labelings gives means a hidden split; at least one even at K = 10), then the class balance
from constant predictions (one query, ``K - 1`` for K classes, as many as the budget leaves). The fingerprint
never uses a label it learns on the way (the AUC balance probe learns one, kept in ``balance["exact"]``): it only
describes the board.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal

import numpy as np

from attacks.balance import Balance, measure_balance, rates_from_shares
from attacks.catalogue import BoardFacts
from attacks.disclosure import Disclosure
from attacks.oracle import Oracle, Released
from attacks.result import SubmissionRefused
from attacks.seen import Fingerprint
from scoring.metrics import binary_logloss_rows, get_metric

LN2 = math.log(2.0)
ROW_PROBE = 0.99
#: A row's loss at the clipping edge when wrong (``−ln 1e-15``): the scale of an edge probe's release.
A_EDGE = -math.log(1e-15)
DEFAULT_BUDGET = 8


def released_digits(text: str) -> int:
    """Digits after the decimal point of a released text (``"0.69315"`` → 5, ``"1e-05"`` → 5).

    >>> released_digits("0.69315"), released_digits("1"), released_digits("6.931471805599453e-01")
    (5, 0, 16)
    """
    value = Decimal(text.strip())
    exponent = value.as_tuple().exponent
    return max(-int(exponent), 0) if isinstance(exponent, int) else 0


class _Prober:
    """Sends probes within the budget and keeps the released texts."""

    def __init__(self, oracle: Oracle, budget: int, report: Fingerprint) -> None:
        self.oracle = oracle
        self.budget = budget
        self.report = report
        self.texts: list[str] = []
        #: Every released value, in order.
        self.released: list[float] = []
        #: How far the edge probes miss what a plain board releases (the pair's sum, the first probe again).
        self.edge_gap: float | None = None

    @property
    def left(self) -> int:
        return self.budget - self.report.probes

    def send(self, predictions: np.ndarray) -> Released:
        self.report.probes += 1
        try:
            value = self.oracle.submit(predictions)
        except SubmissionRefused as exc:
            self.report.rejected += 1
            self.report.notes.append(f"a probe was refused by the board: {exc.message}")
            return None
        if value is None:
            self.report.released_nothing = True
            return None
        text = getattr(self.oracle, "last_released_text", None) or (
            repr(value) if isinstance(value, float) else str(value)
        )
        self.texts.append(text)
        self.released.append(float(value))
        return value


def fingerprint(
    oracle: Oracle, *, budget: int = DEFAULT_BUDGET, seed: int = 0, balance: Sequence[float] | None = None,
    spare: int = 0,
) -> Fingerprint:
    """Probe ``oracle`` with at most ``budget`` queries; see the module docstring for the probes.

    ``balance``: the class shares an outer fingerprint measured on a board whose every submission here comes from a
    fresh account (``fresh_accounts``): no Ladder state builds up there, so the edge probes (the balance and the
    Ladder test) are skipped and the probes go to the precision and the noise. ``spare``: queries beyond ``budget``
    the fingerprint may spend on a probe only a misread board needs (a binary log-loss board whose edge probes
    broke a plain board's sums for no reason the other probes saw: the class balance read again)."""
    report = Fingerprint(
        metadata_decimals=oracle.decimals,
        public_fraction=BoardFacts.of(oracle).public_fraction,
    )
    if budget <= 0:
        report.decimals = oracle.decimals
        report.notes.append("no fingerprint budget: trusting the metadata")
        return report
    prober = _Prober(oracle, budget, report)
    n, k = oracle.n_rows, oracle.n_classes
    binary = oracle.metric == "binary_logloss" and k == 2
    facts = BoardFacts.of(oracle)
    budget_scale = facts.told_budget_scale
    if budget_scale is not None and _budget_probe(prober, report, n, oracle.eps, budget_scale, facts.told):
        return report
    if (budget_scale is None and binary and facts.told.privacy_budget and facts.public_fraction is None
            and prober.left >= 3 and _budget_noise_probes(prober, report, n, oracle.eps, facts.told)):
        return report
    if binary and balance is not None:
        report.balance = [float(share) for share in balance]
        report.ladder = False
        report.notes.append("class balance from the outer fingerprint; every probe from a fresh account (no Ladder "
                            "state builds up)")
    elif binary:
        _edge_probes(prober, report, n, oracle.eps)
        _check_ladder(report, facts.told)
        if report.ladder:
            # Every later probe would score far below the leader (ln 2 against π·A) and be accepted: the
            # leader, the Ladder attack's height, would be gone. The attack takes over from here.
            _read_decimals(prober, report)
            report.notes.append("no further probes on a Ladder-like board (a lower score would become its leader)")
            return report
    base: Released = None
    repeat: Released = None
    told_scale = _told_noise(facts) if binary and not report.contradicted else None
    if prober.left > 0:
        baseline = np.full(n, 0.5) if k == 2 else np.full((n, k), 1.0 / k)
        base = prober.send(baseline)
        if prober.left > 0 and told_scale is None:
            nudged: np.ndarray
            if oracle.metric == "auc":
                nudged = np.full(n, 0.25)  # another file, the same ranking: AUC 1/2 again
            else:
                nudged = baseline.copy()
                flat = nudged.reshape(n, -1)
                flat[0, 0] = np.nextafter(flat[0, 0], 1.0)
            repeat = prober.send(nudged)
    _read_decimals(prober, report)
    tol = report.tolerance
    if base is not None and repeat is not None:
        report.noise_spread = abs(float(base) - float(repeat))
        report.noise = report.noise_spread > 2 * tol
    if told_scale is not None and base is not None:
        # The disclosed noise stands in for the repeat probe, as far as the ½ probe (ln 2 plus one noise draw)
        # agrees with it; a draw beyond BELIEVED scales contradicts it, and the repeat probe measures instead.
        draw = abs(float(base) - LN2)
        if draw <= BELIEVED * told_scale + 2 * tol:
            report.told.append(f"noise scale {told_scale:.3g} on the mean")
            report.noise_spread = max(told_scale, draw)
            report.noise = report.noise_spread > 2 * tol
            repeat = base  # the row probes compare with this one release
        else:
            report.contradicted.append(f"the ½ probe released {float(base):.6g}, {draw / told_scale:.0f} disclosed "
                                       "noise scales off ln 2")
            if prober.left > 0:
                nudged = np.full(n, 0.5)
                nudged[0] = np.nextafter(0.5, 1.0)
                repeat = prober.send(nudged)
                if repeat is not None:
                    report.noise_spread = abs(float(base) - float(repeat))
                    report.noise = report.noise_spread > 2 * tol
    if not binary:
        row_metric = oracle.metric.partition(":")[0] in CLASS_ROW_METRICS
        rows_probes = 0
        if row_metric and base is not None and not report.noise and prober.left >= 2:
            # Row probes, as many as the balance's K - 1 constant probes leave (at most CLASS_ROW_PROBES), yet
            # always one while a constant probe stays: each moves a few rows at once, so the hidden-split test
            # fits even at K = 10 (the balance then measures the classes its probes leave room for).
            rows_probes = max(1, min(CLASS_ROW_PROBES, prober.left - (1 if k == 2 else k - 1)))
        if prober.left > 0:
            # The balance first, as the binary edge probes read it first: a board that releases only a few
            # scores (a privacy budget) then spends them on what the majority-class floor needs, not on the
            # hidden-split test (seen: 4 releases spent on the ½ and row probes, the constants withheld, no row
            # given a label).
            held = prober.budget
            prober.budget -= rows_probes
            _measure_balance(prober, report, oracle)
            prober.budget = held
        if rows_probes and base is not None and prober.left > 0 and not report.ladder:
            _class_row_probes(prober, report, oracle, float(base), min(rows_probes, prober.left), seed)
        report.notes.append(f"structure probes need binary log loss; {oracle.metric} got decimals, noise"
                            + (", the class balance and row probes (a hidden split)" if row_metric else
                               " and the class balance only"))
        return report
    if base is not None:
        report.baseline_offset = float(base) - LN2
        if report.noise and repeat is not None:
            # The all-1/2 probe scores ln 2 whatever the labels and rows, so each release minus ln 2 is one
            # draw of the noise itself; two draws' difference alone can come out unluckily small.
            report.noise_spread = max(report.noise_spread, abs(report.baseline_offset), abs(float(repeat) - LN2))
    if abs(report.baseline_offset) > tol and not report.ladder and not report.noise:
        # Off ln 2 yet repeatable and not sticky: a score transformed or noised with a fixed seed per content.
        report.noise = True
        report.noise_spread = max(report.noise_spread, abs(report.baseline_offset))
        report.notes.append("the all-1/2 probe did not release ln 2: noise or a transformed score")
    spread = report.noise_spread
    reference = float(base) if base is not None else LN2
    if report.noise and base is not None and repeat is not None and (
            (abs(float(base) - LN2) <= tol) != (abs(float(repeat) - LN2) <= tol)):
        # One of the two ½ probes released ln 2 exactly, the other did not: no continuous noise does that
        # (a draw inside the rounding is rare), a mechanism that only sometimes adds noise does (Thresholdout's
        # noisy holdout value, once its threshold is crossed). The row probes read moves against ln 2 itself,
        # unwidened, so the rows that never move (its secret reference side) still show.
        report.notes.append("noise that comes and goes: one ½ probe released ln 2 exactly, the other did not")
        spread, reference = 0.0, LN2
    if prober.left >= 1 and base is not None:
        previous = next(float(v) for v in (repeat, base) if v is not None)
        _row_probes(prober, report, n, reference, previous, seed, spread)
    explained = bool(report.ladder or report.noise or report.released_nothing or report.rejected
                     or report.subsetting or report.fresh_flips or report.only_public_moves)
    if prober.edge_gap is not None and prober.edge_gap > 4 * tol + 1e-4 * A_EDGE and balance is None and not explained:
        # The edge pair must sum to A and the first edge probe sent again must repeat itself; they missed, on a
        # board whose ½ probes showed no noise and whose row probes saw neither a subset nor flips: the edge
        # releases are not the mean of every row. Thresholdout does that: edge predictions make its two sides
        # differ beyond its threshold, so they come back as noisy holdout values (a 30 % board read as 49 %),
        # where a 0.7 constant moves the sides too little and is released from the reference side.
        prober.budget += min(spare, 1)
        if prober.left > 0:
            edge_balance = report.balance
            _measure_balance(prober, report, oracle)
            report.notes.append(
                f"the edge probes missed a plain board's releases by {prober.edge_gap:.3g} (the ½ probes: no noise): "
                "the class balance read from a 0.7 constant instead"
                + ("" if edge_balance is None else f" (the edge probes said {edge_balance[1]:.3f} ones)"))
    return report


#: A disclosed noise scale is believed while every release it explains stays within this many scales of its
#: value (a Laplace draw beyond 25 scales has probability e^-25).
BELIEVED = 25.0


def _told_noise(facts: BoardFacts) -> float | None:
    """The disclosed Laplace scale on the released mean of a binary log-loss board (``None``: not disclosed)."""
    n_scored = facts.n_public if facts.public_fraction is not None and facts.n_public else facts.n_rows
    scale = facts.told.noise_scale_on(math.log1p(-facts.eps) - math.log(facts.eps), int(n_scored))
    return scale if scale is not None and scale > 0 else None


def _check_ladder(report: Fingerprint, told: Disclosure) -> None:
    """A disclosed Ladder step against the edge probes: the leader a fixed-step Ladder released is a multiple of
    its step, and a disclosed Ladder must show as sticky scores. A step the leader contradicts is dropped (the
    Ladder attack identifies the step itself)."""
    if told.ladder_mode is None and told.ladder_step is None:
        return
    if report.ladder is False:
        report.contradicted.append("a Ladder was disclosed, but the edge probes were both released as a plain board "
                                   "releases them")
        return
    start = report.ladder_start
    if not report.ladder or start is None or told.ladder_step is None:
        if report.ladder:
            report.told.append(f"Ladder ({told.ladder_mode})")
        return
    leader, step = float(start["leader"]), told.ladder_step
    if abs(leader - round(leader / step) * step) > 2 * report.tolerance + 1e-9 * leader:
        report.contradicted.append(f"the Ladder's leader {leader:.6g} is no multiple of the disclosed step {step:g}")
        return
    report.told.append(f"Ladder step {step:g}")


def _budget_probe(
    prober: _Prober, report: Fingerprint, n: int, eps: float, scale: float, told: Disclosure
) -> bool:
    """A disclosed privacy budget over disclosed noise: every release spends the budget, so the fingerprint sends
    only the edge probe (every row at ``eps``: the class balance, which the floor and the decoder's prior need, at
    ``1/(N·ε)`` of a share) and takes the noise and the budget from the disclosure. Whether the board is read
    this way (``True``), or the release contradicts the disclosure and the usual probes measure (``False``)."""
    low = prober.send(np.full(n, eps))
    _read_decimals(prober, report)
    told_text = [f"privacy budget ε {told.budget_epsilon:g}",
                 f"Laplace noise of scale {scale:.3g} on the mean (ε {told.noise_epsilon:g} a release)"
                 if told.noise_epsilon is not None else f"Laplace noise of scale {scale:.3g}"]
    if low is None:
        report.told.extend(told_text)
        report.noise, report.noise_spread = True, scale
        report.notes.append("the edge probe was withheld: this account's budget is spent already")
        return True
    one_low, zero_low, _, _ = edge_losses(eps)
    span = one_low - zero_low
    value = float(low)
    slack = BELIEVED * scale + 2 * report.tolerance
    if not zero_low - slack <= value <= one_low + slack:
        report.contradicted.append(f"the edge probe released {value:.6g}, outside [0, {span:.4g}] by more than "
                                   f"{BELIEVED:g} disclosed noise scales")
        return False
    report.told.extend(told_text)
    report.noise, report.noise_spread = True, scale
    report.balance = _rates([edge_share(eps, 0, value)])
    report.ladder_start = None
    report.notes.append("no further probes: each release spends the disclosed privacy budget")
    return True


def _budget_noise_probes(prober: _Prober, report: Fingerprint, n: int, eps: float, told: Disclosure) -> bool:
    """A disclosed privacy budget whose noise is not disclosed: the edge probe (the balance) and two ½ probes (each
    ``ln 2`` plus one noise draw: the Laplace scale's estimate, :attr:`Fingerprint.noise_scale`, which the attack
    refits to its own releases), then no more. ``False`` (the usual probes go on) when the ½ probes show no noise."""
    low = prober.send(np.full(n, eps))
    half = np.full(n, 0.5)
    nudged = half.copy()
    nudged[0] = np.nextafter(0.5, 1.0)
    base, repeat = prober.send(half), prober.send(nudged)
    _read_decimals(prober, report)
    tol = report.tolerance
    if low is None or base is None or repeat is None:
        report.released_nothing = True
        return False
    draws = [float(base) - LN2, float(repeat) - LN2]
    if max(abs(d) for d in draws) <= 2 * tol:
        return False
    report.told.append(f"privacy budget ε {told.budget_epsilon:g}")
    report.noise = True
    report.noise_spread = max(abs(draws[0]), abs(draws[1]), abs(draws[0] - draws[1]))
    report.noise_scale = max(float(np.mean(np.abs(draws))), tol)
    report.baseline_offset = draws[0]
    report.balance = _rates([edge_share(eps, 0, float(low))])
    report.notes.append(f"noise measured by two ½ probes (Laplace scale ~{report.noise_scale:.3g}); no further probes: "
                        "each release spends the disclosed privacy budget")
    return True


def _measure_balance(prober: _Prober, report: Fingerprint, oracle: Oracle) -> None:
    """The class shares from constant predictions (:func:`attacks.balance.measure_balance`) within budget.

    Binary boards: a constant probe that released exactly a score released before (the ½ probe's) may be a
    re-released earlier score (a Ladder keeps its leader for a submission that does not improve on it) rather
    than its own — read as a share, the leader's ``ln 2`` says 60 % ones of a board with 30 %. The mirror constant
    (``1 − 0.7``) settles it: on a plain board the pair sums to ``v_1(0.7) + v_0(0.7)`` whatever the shares; a
    broken sum means the board re-releases its best, and the release that is no earlier score gives the share."""
    earlier = [float(v) for v in prober.released]
    measured: Balance = measure_balance(oracle, budget=prober.left, send=prober.send)
    k = oracle.n_classes
    tol = report.tolerance
    first = measured.released[0] if measured.released else None
    if (k == 2 and oracle.metric != "auc" and first is not None and earlier and not _constant_like_half(oracle)
            and any(abs(first - v) <= 2 * tol for v in earlier)):
        _mirror_balance(prober, report, oracle, measured, earlier)
    elif k > 2 and oracle.metric != "auc":
        _drop_re_released(report, oracle, measured, earlier)
    if measured.rates is not None:
        report.balance = [float(r) for r in measured.rates]
        report.balance_exact = dict(measured.exact)
    report.notes.extend(measured.notes)


def _drop_re_released(report: Fingerprint, oracle: Oracle, measured: Balance, earlier: list[float]) -> None:
    """K classes: a constant probe that released exactly a score released before (the ``1/K`` probe's, or an
    earlier constant's) is read as no share at all — a Ladder re-releases its leader for a probe that does not
    improve on it (seen: softmax CE on a 60/30/10 board read as 50/50/0, every row guessed a 30 % class) — and the
    classes so dropped share what the others leave."""
    from attacks.balance import share_from_constant

    tol = report.tolerance
    seen = list(earlier)
    shares: list[float | None] = []
    dropped: list[int] = []
    for j, value in enumerate(measured.released):
        if value is None:
            shares.append(None)
            continue
        if any(abs(value - v) <= 2 * tol for v in seen):
            shares.append(None)
            dropped.append(j)
        else:
            shares.append(share_from_constant(oracle.metric, oracle.eps, oracle.n_classes, j, value))
        seen.append(value)
    if not dropped:
        return
    measured.rates = rates_from_shares(shares, oracle.n_classes)
    measured.notes.append(f"constant probe(s) for class(es) {', '.join(map(str, dropped))} released exactly an "
                          "earlier score (a re-released leader, or a coincidence): their shares read as unmeasured")


def _constant_like_half(oracle: Oracle) -> bool:
    """Whether the metric scores the 0.7 constant as it scores the ½ probe whatever the labels (accuracy: both
    predict class 1), so that the two releasing one value says nothing of a re-released score."""
    from attacks.balance import constant_probe

    rows = get_metric(oracle.metric).row_values
    if rows is None:
        return True
    labels = np.array([1, 0])
    with np.errstate(all="ignore"):
        probe = rows(constant_probe(2, 2, 1), labels, oracle.eps)
        half = rows(np.full(2, 0.5), labels, oracle.eps)
    return bool(np.allclose(probe, half, rtol=0.0, atol=1e-12))


def _mirror_balance(
    prober: _Prober, report: Fingerprint, oracle: Oracle, measured: Balance, earlier: list[float]
) -> None:
    """The mirror constant probe after a binary constant probe released an earlier score (:func:`_measure_balance`);
    updates ``measured`` (its rates, its notes) and, on a broken pair, marks the board as re-releasing its best."""
    from attacks.balance import constant_probe, share_from_constant

    tol = report.tolerance
    first = measured.released[0] if measured.released else None
    assert first is not None
    if prober.left <= 0:
        measured.rates = None
        measured.notes.append(f"the constant probe re-released an earlier score ({first:.6g}) and no query is left "
                              "for its mirror: class balance unknown")
        return
    value = prober.send(constant_probe(oracle.n_rows, 2, 0))
    if value is None:
        return
    second = float(value)
    rows = get_metric(oracle.metric).row_values
    assert rows is not None
    on, off = (float(v) for v in rows(constant_probe(2, 2, 1), np.array([1, 0]), oracle.eps))
    if abs(first + second - (on + off)) <= 4 * tol:
        share_one = share_from_constant(oracle.metric, oracle.eps, 2, 1, first)
        share_zero = share_from_constant(oracle.metric, oracle.eps, 2, 0, second)
        known = [s for s in (share_one, None if share_zero is None else 1.0 - share_zero) if s is not None]
        if known:
            measured.rates = rates_from_shares([float(np.mean(known))], 2)
        return
    stale_second = any(abs(second - v) <= 2 * tol for v in earlier)
    report.ladder = True
    report.notes.append(f"the constant probe and its mirror released {first:.6g} and {second:.6g}, which must sum to "
                        f"{on + off:.6g}: the board re-releases an earlier score (Ladder or threshold behaviour)")
    if report.only_public_moves and report.public_fraction is None:
        # The row probes' unmoved score was the same re-released score, not rows outside a split.
        report.only_public_moves = False
        report.notes.append("the row probes' unmoved score was a re-released one: no hidden split shown")
    if stale_second:
        measured.rates = None
        measured.notes.append("both constant probes re-released earlier scores: class balance unknown")
        return
    share_zero = share_from_constant(oracle.metric, oracle.eps, 2, 0, second)
    measured.rates = None if share_zero is None else rates_from_shares([1.0 - share_zero], 2)


def _read_decimals(prober: _Prober, report: Fingerprint) -> None:
    if not prober.texts:
        report.decimals = report.metadata_decimals
        report.notes.append("nothing released: decimals taken from the metadata")
        return
    digits = max(released_digits(t) for t in prober.texts)
    if digits >= 12:
        report.full_precision = True
        report.decimals = None
    else:
        report.decimals = digits
    if report.metadata_decimals is not None and digits < report.metadata_decimals:
        # A trailing zero is dropped by some formatters: never claim fewer digits than the site shows.
        report.notes.append(f"released texts show {digits} decimals, the metadata says {report.metadata_decimals}")
        report.decimals = report.metadata_decimals
    if report.metadata_decimals is not None and digits > report.metadata_decimals:
        report.notes.append(
            f"released texts show {digits} decimals, more than the metadata's {report.metadata_decimals}"
        )


def _release_tol(prober: _Prober) -> float:
    """Half a unit of the precision the texts released so far show (the metadata's before any)."""
    digits = max((released_digits(t) for t in prober.texts), default=prober.report.metadata_decimals)
    return 1e-9 if digits is None or digits >= 12 else 0.5 * 10.0 ** (-digits) + 1e-12


def edge_losses(eps: float) -> tuple[float, float, float, float]:
    """The server's row losses at the clipping edges: (label 1 at ``eps``, label 0 at ``eps``, label 1 at
    ``1 − eps``, label 0 at ``1 − eps``)."""
    p = np.array([eps, eps, 1 - eps, 1 - eps])
    y = np.array([1, 0, 1, 0])
    one_low, zero_low, one_high, zero_high = (float(v) for v in binary_logloss_rows(p, y, eps))
    return one_low, zero_low, one_high, zero_high


def edge_share(eps: float, edge: int, released: float) -> float:
    """The share of ones that makes every row at the ``edge`` (0: ``eps``, 1: ``1 − eps``) score ``released``."""
    one_low, zero_low, one_high, zero_high = edge_losses(eps)
    on, off = (one_low, zero_low) if edge == 0 else (one_high, zero_high)
    return float(np.clip((float(released) - off) / (on - off), 0.0, 1.0))


def _edge_probes(prober: _Prober, report: Fingerprint, n: int, eps: float) -> None:
    """The edge pair and the first edge again: the class balance, and whether the board re-releases earlier
    scores (see the module docstring)."""
    low = prober.send(np.full(n, eps))
    high = prober.send(np.full(n, 1 - eps)) if prober.left > 0 and low is not None else None
    # Every row below the edge, clipped back to it: the first probe's score exactly, from another file. Only
    # needed when the second scored lower (a Ladder accepted it, so the first again re-releases the second's);
    # a second scoring higher is re-released as the first's on a Ladder, which the pair's sum already shows.
    lower = high is not None and low is not None and float(high) < float(low) - 2 * _release_tol(prober)
    again = prober.send(np.full(n, eps / 2)) if prober.left > 0 and lower else None
    if low is None:
        return
    _read_decimals(prober, report)
    tol = report.tolerance
    r1 = float(low)
    shares: list[float | None] = [edge_share(eps, 0, r1)]
    fresh: list[tuple[int, float]] = [(0, r1)]
    leader = (0, r1)
    if high is not None:
        r2 = float(high)
        one_low, zero_low, one_high, zero_high = edge_losses(eps)
        pair_sum = (one_low + one_high + zero_low + zero_high) / 2
        # One row contributes one_low + one_high (a one) or zero_low + zero_high (a zero) to the two scores:
        # both are A up to ~1e-15, so the pair sums to A whatever the labels.
        residual = abs(r1 + r2 - pair_sum)
        # Less what the labels themselves move the sum by (1 − eps is not exact in float64: a zero there loses
        # 34.434, a one at eps 34.539), so that only a miss no labeling explains counts.
        label_part = abs((one_low + one_high) - (zero_low + zero_high)) / 2
        prober.edge_gap = max(residual - label_part, 0.0 if again is None else abs(float(again) - r1))
        stale_high = abs(r2 - r1) <= 2 * tol and residual > 4 * tol
        stale_again = again is not None and abs(float(again) - r2) <= 2 * tol and abs(float(again) - r1) > 4 * tol
        report.ladder = stale_high or stale_again
        if not report.ladder and abs(r2 - r1) <= 2 * tol and prober.left > 0:
            report.ladder = _tie_break(prober, report, n, eps, r1, tol)
        if report.ladder:
            if not (stale_high or stale_again):
                pass  # found by the tie-break, which says how
            elif stale_high:
                report.notes.append(f"every row at 1 − eps re-released the edge score {r1:.6g} although the pair "
                                    f"must sum to {pair_sum:.6g}: the board re-releases an earlier score (Ladder)")
            else:
                report.notes.append(f"the first probe sent again re-released the second's score {r2:.6g}, not its "
                                    f"own {r1:.6g}: the board re-releases its best (Ladder)")
                fresh.append((1, r2))
                leader = (1, r2)
                shares.append(edge_share(eps, 1, r2))
        else:
            shares.append(edge_share(eps, 1, r2))
    if report.ladder and not report.ladder_accepted_off_edge:
        report.ladder_start = {"leader": leader[1], "edge": leader[0], "fresh": [list(f) for f in fresh],
                               "stale": [] if len(fresh) > 1 else [1]}
    report.balance = _rates(shares)


def _tie_break(prober: _Prober, report: Fingerprint, n: int, eps: float, r1: float, tol: float) -> bool:
    """The edge pair released one value: exactly half the rows are ones (the pair's sum holds) or a Ladder
    re-released the first score. One row moved to the other edge tells them apart on a plain board, where the
    score must move by ``±A/n``; a Ladder re-releases the first score unless the move is an improvement of
    more than its step (a one at that row), which then shows as a release off both ``r1 ± A/n``."""
    one_low, zero_low, one_high, zero_high = edge_losses(eps)
    up, down = (zero_high - zero_low) / n, (one_high - one_low) / n
    if min(abs(up), abs(down)) <= 4 * tol:
        return _tie_break_by_halves(prober, report, n, eps, r1, tol)
    probe = np.full(n, eps)
    probe[0] = 1 - eps
    value = prober.send(probe)
    if value is None:
        return False
    r3 = float(value)
    if abs(r3 - r1) <= 2 * tol:
        report.notes.append(f"one row moved to the other edge re-released the edge score {r1:.6g} (a plain board "
                            f"moves by ±{abs(up):.3g}): the board re-releases an earlier score (Ladder)")
        return True
    if min(abs(r3 - r1 - up), abs(r3 - r1 - down)) <= 2 * tol:
        return False
    report.notes.append(f"one row moved to the other edge released {r3:.6g}, neither the edge score nor a row's "
                        "move away from it: an improvement re-rounded by a Ladder")
    report.ladder_accepted_off_edge = True
    return True


def _tie_break_by_halves(prober: _Prober, report: Fingerprint, n: int, eps: float, r1: float, tol: float) -> bool:
    """The tie-break when one row's move is below the released precision: half the rows (a seeded draw) moved
    to the other edge, then the mirror file (every row at 1 − eps, that half at eps). A plain board releases
    ``r1 + c`` and ``r1 − c`` (``c``, the half's ones less its zeros times ``A/n``, is about ``A/√(2n)``, far above
    the precision); a Ladder re-releases its leader for whichever of the two is no improvement."""
    if prober.left < 2:
        return False
    half = np.random.default_rng(n).permutation(n)[: n // 2]
    first = np.full(n, eps)
    first[half] = 1 - eps
    second = np.full(n, 1 - eps)
    second[half] = eps
    v1, v2 = prober.send(first), prober.send(second)
    if v1 is None or v2 is None:
        return False
    a, b = float(v1), float(v2)
    if abs(a + b - 2 * r1) <= 4 * tol and abs(a - r1) > 2 * tol:
        return False  # both moves shown, mirror images of each other: a plain board
    if abs(a - r1) <= 2 * tol and abs(b - r1) <= 2 * tol:
        return False  # the half holds as many ones as zeros (rare): nothing moved, nothing learned
    report.notes.append(f"half the rows moved to the other edge and back released {a:.6g} and {b:.6g}, not mirror "
                        f"images around {r1:.6g}: the board re-releases its best (Ladder)")
    if abs(a - r1) > 2 * tol or abs(b - r1) > 2 * tol:
        report.ladder_accepted_off_edge = True  # a half-probe became the leader: no edge file
    return True


#: Metrics whose K-class (or binary, beside log loss) boards get row probes: a row's loss is known for each label.
CLASS_ROW_METRICS = frozenset({"multiclass_logloss", "kl", "brier", "norm_like", "itakura_saito"})
#: Row probes on such boards at most, and rows each moves (fewer where the precision cannot tell them apart).
CLASS_ROW_PROBES = 3
#: Probabilities on class 0 (binary: on class 0 too, P(class 1) = 1 − q) a probed row may take, the others
#: spread evenly; each board takes those whose labelings keep every sum of moves farthest from zero.
CLASS_ROW_STRENGTHS = (0.9, 0.99, 0.999, 0.6, 0.3, 0.05, 0.01)


def class_row_probe(n: int, k: int, rows: dict[int, float]) -> np.ndarray:
    """Every row at ``1/K`` (P(class 1) = 1/2 on a binary board) but ``rows`` (row → ``q``), each at ``q`` on
    class 0 and the rest spread evenly: its loss differs from a ``1/K`` row's under every label.

    >>> class_row_probe(3, 3, {1: 0.9}).round(3).tolist()
    [[0.333, 0.333, 0.333], [0.9, 0.05, 0.05], [0.333, 0.333, 0.333]]
    """
    if k == 2:
        probe = np.full(n, 0.5)
        for row, q in rows.items():
            probe[row] = 1.0 - q
        return probe
    probe = np.full((n, k), 1.0 / k)
    for row, q in rows.items():
        probe[row] = (1.0 - q) / (k - 1)
        probe[row, 0] = q
    return probe


def row_moves(metric: str, k: int, eps: float, strength: float) -> tuple[float, float]:
    """The summed-loss move of one row at ``strength`` (:func:`class_row_probe`) against a ``1/K`` row, for label 0
    and for any other label (the others are symmetric)."""
    from scoring.metrics import get_metric

    rows_fn = get_metric(metric).row_values
    assert rows_fn is not None
    labels = np.array([0, 1])
    probed = rows_fn(class_row_probe(2, k, {0: strength, 1: strength}), labels, eps)
    free = rows_fn(class_row_probe(2, k, {}), labels, eps)
    return float(probed[0] - free[0]), float(probed[1] - free[1])


def all_scored_moves(moves: list[tuple[float, float]]) -> np.ndarray:
    """Every summed move the probed rows can make when all of them are scored (one per labeling class-0-or-not).

    >>> all_scored_moves([(-1.0, 2.0), (0.5, 3.0)]).tolist()
    [-0.5, 2.0, 2.5, 5.0]
    """
    sums = np.zeros(1)
    for zero, other in moves:
        sums = np.concatenate([sums + zero, sums + other])
    return np.sort(sums)


def row_probe_design(metric: str, k: int, eps: float, n: int, tol: float) -> tuple[float, ...]:
    """Strengths for the combined row probe: the most rows (at most :data:`CLASS_ROW_PROBES`) whose every all-scored
    move stays more than ``3·tol`` (in released units) from zero — the move of rows none of which is scored — with
    that margin as large as the candidates allow; empty when not even one row can (a blind precision)."""
    from itertools import combinations

    moves = {q: row_moves(metric, k, eps, q) for q in CLASS_ROW_STRENGTHS}
    for count in range(CLASS_ROW_PROBES, 0, -1):
        best: tuple[float, tuple[float, ...]] = (0.0, ())
        for strengths in combinations(CLASS_ROW_STRENGTHS, count):
            margin = float(np.abs(all_scored_moves([moves[q] for q in strengths])).min())
            if margin > best[0]:
                best = (margin, strengths)
        if best[0] / n > 3 * tol:
            return best[1]
    return ()


def _class_row_probes(
    prober: _Prober, report: Fingerprint, oracle: Oracle, base: float, count: int, seed: int
) -> None:
    """Up to ``count`` row probes on a K-class (or non-log-loss) board, each one query moving a few random rows at
    their own strengths (:func:`row_probe_design`). With every row scored, as the metadata says, a probe moves the
    score by one of the all-scored sums over ``n`` (:func:`all_scored_moves`); a move that matches none — a probed
    row that does not move, or a mean over fewer rows (a public row of a split moves it ``n / n_public`` times
    more) — means a hidden public split, and the probing stops. A 30 % split escapes one three-row probe when all
    three rows are public (2.7 %) and the scaled move lands on an all-scored sum. Sets ``rows_probed``,
    ``rows_moved`` (rows of the probes consistent with every row scored) and ``only_public_moves``."""
    from scoring.metrics import get_metric

    n, k = oracle.n_rows, oracle.n_classes
    if get_metric(oracle.metric).row_values is None:
        return
    tol = report.tolerance
    strengths = row_probe_design(oracle.metric, k, oracle.eps, n, tol)
    if not strengths:
        report.notes.append("one row cannot move the released score at this precision: row probes are blind")
        return
    moves = all_scored_moves([row_moves(oracle.metric, k, oracle.eps, q) for q in strengths]) / n
    size = len(strengths)
    order = np.random.default_rng(seed).permutation(n)[: count * size].tolist()
    for start in range(0, len(order) - size + 1, size):
        rows = order[start : start + size]
        value = prober.send(class_row_probe(n, k, dict(zip(rows, strengths, strict=True))))
        if value is None:
            continue
        # The move is a difference of two rounded releases (each within tol), and float64 adds a little.
        every_row_scored = bool((np.abs(moves - (float(value) - base)) <= 2 * tol + 1e-12).any())
        report.rows_probed += size
        report.rows_moved += size if every_row_scored else 0
        report.only_public_moves = not every_row_scored
        if not every_row_scored:
            break
    if report.public_fraction is None and report.only_public_moves:
        report.notes.append("probed rows moved the score by none of the amounts every row scored allows: some rows "
                            "never move it although the metadata says every row is public")


def _rates(shares: list[float | None]) -> list[float] | None:
    rates = rates_from_shares(shares, 2)
    return None if rates is None else [float(r) for r in rates]


def _row_probes(
    prober: _Prober, report: Fingerprint, n: int, base: float, previous: float, seed: int, spread: float
) -> None:
    rng = np.random.default_rng(seed)
    # Keep one probe (two when the budget is roomy) to probe a row again: the subsetting test.
    count = prober.left - 2 if prober.left > 5 else (max(prober.left - 1, 1) if prober.left > 2 else prober.left)
    rows = rng.choice(n, size=min(count, n), replace=False).tolist()
    moves: list[float] = []
    values: list[float] = []
    tol = report.tolerance + 3 * spread
    for row in rows:
        probe = np.full(n, 0.5)
        probe[row] = ROW_PROBE
        value = prober.send(probe)
        if value is None:
            continue
        values.append(float(value))
        moves.append(float(value) - base)
    if not moves:
        return
    if len(values) >= 2 and all(abs(v - previous) <= 2 * report.tolerance for v in values) and (
        abs(previous - LN2) > tol
    ):
        # Every row probe (≈ ln 2, each moved by its own row) released the previous probe's score exactly:
        # the board re-releases an earlier score unless a submission improves on it (Ladder, threshold).
        report.ladder = True
        report.notes.append(f"{len(values)} row probes re-released the previous score {previous:.6g} instead of "
                            "≈ ln 2: the board releases only improvements (Ladder or threshold behaviour)")
        return
    report.rows_probed = len(moves)
    moved = [m for m in moves if abs(m) > tol]
    report.rows_moved = len(moved)
    estimates = [((-math.log(ROW_PROBE) if m < 0 else -math.log(1 - ROW_PROBE)) - LN2) / m for m in moved]
    if estimates:
        report.scored_rows_estimate = float(np.median(estimates))
    if min(LN2 - (-math.log(ROW_PROBE)), -math.log(1 - ROW_PROBE) - LN2) / n < tol:
        report.notes.append("one row cannot move the released score at this precision: row probes are blind")
        return
    report.only_public_moves = report.rows_moved < report.rows_probed
    if report.noise:
        # Two noisy moves of one row differ by two noise draws, whose spread two probes cannot pin down: the
        # subsetting test would fire on noise alone. An exact attack under a noise bound fails loudly instead.
        report.notes.append("subsetting not tested: the releases are noisy")
    elif prober.left >= 1 and moved:
        # Probe a row that moved once more (and, budget permitting, one that did not): a different move means a
        # fresh random subset per submission.
        probed = [(row, move) for row, move in zip(rows, moves, strict=False)]
        again_rows = [next((r, m) for r, m in probed if abs(m) > tol)]
        still = [(r, m) for r, m in probed if abs(m) <= tol]
        if prober.left >= 2 and still:
            again_rows.append(still[0])
        report.subsetting = False
        for again_row, first in again_rows:
            probe = np.full(n, 0.5)
            probe[again_row] = ROW_PROBE
            value = prober.send(probe)
            if value is None:
                continue
            # Subsetting drops the row from some submissions' subsets: its move vanishes or changes wholesale.
            # Noise only jitters the move, so "different" must mean more than half the first move (and more
            # than the noise-widened tolerance), not merely beyond the spread of two noisy releases.
            again = float(value) - base
            if abs(first) <= tol:
                report.subsetting = report.subsetting or abs(again) > tol
                continue
            changed = abs(again) <= tol or abs(again - first) > max(2 * tol, abs(first) / 2)
            # Both moves exactly a label's value with every row scored, one of each label: the label flipped.
            full = [(loss - LN2) / n for loss in (-math.log(ROW_PROBE), -math.log(1 - ROW_PROBE))]
            # Each move is a difference of two rounded releases: within two tolerances of its exact value.
            if changed and all(min(abs(m - v) for v in full) <= 2 * tol for m in (again, first)) and (
                    again * first < 0):
                report.fresh_flips = True
            else:
                report.subsetting = report.subsetting or changed
        if report.fresh_flips:
            report.subsetting = False
    if (not report.subsetting and not report.noise and report.public_fraction is None and moved
            and report.scored_rows_estimate is not None):
        # Every row is public, yet one row moves the mean as if fewer rows were scored: a subset is drawn. (The
        # estimate's error is the rounding over the move, relative.)
        error = tol / min(abs(m) for m in moved)
        if report.scored_rows_estimate < n * (1 - 3 * error - 0.01):
            report.subsetting = True
            report.notes.append(f"a row moved the mean as if ~{report.scored_rows_estimate:.0f} of {n} rows were "
                                "scored: rows are subsampled per submission")
    if report.public_fraction is None and report.only_public_moves and not report.subsetting:
        report.notes.append("some rows never move the score although the metadata says every row is public")
    if report.subsetting and not any("subsampled" in note for note in report.notes):
        report.notes.append("the same row moved the score differently twice: rows are subsampled per submission")
