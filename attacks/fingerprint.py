"""Fingerprint a leaderboard from what a participant can observe, within a stated query budget.

Every probe is built so that its *undefended* released score is known in advance whatever the hidden labels
are, or tells the class balance; a defense shows up as a departure from the known value. For a binary
log-loss board, in this order:

1. **high** — every row at 0.7: scores ``-(π ln 0.7 + (1-π) ln 0.3)``, so it gives the share ``π`` of ones
   among the scored rows (:mod:`attacks.balance`). It goes first because a board that releases only
   improvements (the Ladder, Thresholdout-like mechanisms) always releases a participant's first score.
2. **baseline** — every row at 1/2: the loss is ``ln 2`` on every row, so on any scored subset.
   The released text's digits give the decimals; a value off ``ln 2`` beyond rounding means noise, a
   transformed score, or a board that re-released the earlier score (Ladder).
3. **repeat** — the baseline with one row nudged by one ulp (not byte-identical, so a same-file-same-score
   cache cannot answer it, yet the score is the same to ~1e-16): a different released value means noise.
4. **low** — every row at 0.3. Each row contributes ``-ln 0.7 - ln 0.3`` to the high and low losses
   together, whatever its label, so the two released scores must sum to ``1.5606…``. A board that keeps
   showing an earlier score (the Ladder, threshold mechanisms) breaks the sum, typically by re-releasing an
   earlier value. Low also measures ``π`` again (averaged with high's).
5. **row probes** — the baseline with one row at 0.99: if the row is scored, the score moves by
   ``(loss - ln 2) / n_scored`` (down if its label is 1, up if 0), which also estimates how many rows are
   scored; if it is not scored (private split, or left out by subsetting), nothing moves. The same row
   probed twice moving differently means a fresh random subset per submission (subsetting).

Queries: at most ``budget`` (default 8: 1 + 1 + 1 + 1 + 4). Other metrics get the baseline (every row at 1/2
or 1/K; AUC: a second constant as the repeat) and repeat (decimals and noise), then the class balance from
constant predictions (one query, ``K - 1`` for K classes). The fingerprint never uses a label it learns on
the way (the AUC balance probe learns one, kept in ``balance["exact"]``): it only describes the board.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from attacks.balance import Balance, measure_balance, rates_from_shares, share_from_constant
from attacks.oracle import Oracle, Released
from attacks.result import SubmissionRefused

LN2 = math.log(2.0)
PAIR_HIGH, PAIR_LOW = 0.7, 0.3
ROW_PROBE = 0.99
DEFAULT_BUDGET = 8


@dataclass
class Fingerprint:
    """What the probes showed. ``None`` means "not measured" (budget, metric, or nothing released)."""

    probes: int = 0
    metadata_decimals: int | None = None
    decimals: int | None = None
    full_precision: bool = False
    noise: bool | None = None
    noise_spread: float = 0.0
    baseline_offset: float = 0.0
    ladder: bool | None = None
    released_nothing: bool = False
    rejected: int = 0
    public_fraction: float | None = None
    rows_probed: int = 0
    rows_moved: int = 0
    scored_rows_estimate: float | None = None
    only_public_moves: bool | None = None
    subsetting: bool | None = None
    #: The same row moved the score to the other label's value (a fresh randomized response per submission).
    fresh_flips: bool | None = None
    #: Class shares of the scored rows (sum 1), from constant probes; ``None`` when not measured.
    balance: list[float] | None = None
    balance_exact: dict[int, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def majority_class(self) -> int | None:
        return None if self.balance is None else int(np.argmax(self.balance))

    @property
    def majority_rate(self) -> float | None:
        return None if self.balance is None else float(np.max(self.balance))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> list[str]:
        """What the probes showed, as human-readable lines (``auto``'s reasoning starts with them)."""
        if self.probes == 0:
            return [f"no fingerprint probes: trusting the metadata ({_decimals_text(self.decimals)})"]
        lines = [f"fingerprint: {self.probes} probe(s); released precision {_decimals_text(self.decimals)}"
                 + ("" if self.metadata_decimals == self.decimals else f" (metadata: {self.metadata_decimals})")]
        if self.rejected or self.released_nothing:
            lines.append(f"{self.rejected} probe(s) refused by the board"
                         + ("; some released nothing (withheld)" if self.released_nothing else ""))
        if self.noise is True:
            lines.append(f"noise: the label-free probes moved by up to {self.noise_spread:.3g}")
        elif self.noise is False:
            lines.append("no noise: repeated label-free probes released the same score")
        if self.ladder:
            lines.append("sticky scores: the board re-released an earlier score (Ladder or threshold mechanism)")
        elif self.ladder is False:
            lines.append("scores not sticky: the 0.7/0.3 pair kept its label-free sum")
        if self.rows_probed:
            scored = "" if self.scored_rows_estimate is None else f", ~{self.scored_rows_estimate:.0f} rows scored"
            lines.append(f"row probes: {self.rows_moved} of {self.rows_probed} probed rows moved the score{scored}")
        if self.fresh_flips:
            lines.append("fresh flips: the same row moved the score as label 0, then as label 1 (or back)")
        if self.subsetting:
            lines.append("subsetting: the same row moved the score differently twice")
        elif self.only_public_moves:
            lines.append("only some rows move the score: a public split")
        if self.balance is not None:
            shares = ", ".join(f"class {k}: {100 * r:.1f} %" for k, r in enumerate(self.balance))
            lines.append(f"class balance of the scored rows: {shares} (majority rate {self.majority_rate:.3f})")
        else:
            lines.append("class balance not measured")
        lines.extend(f"note: {note}" for note in self.notes)
        return lines

    @property
    def tolerance(self) -> float:
        """Half a unit of the released precision (what rounding alone can move a score by), plus slack."""
        if self.decimals is None or self.full_precision:
            return 1e-9
        return 0.5 * 10.0 ** (-self.decimals) + 1e-12


def _decimals_text(decimals: int | None) -> str:
    return "full float64" if decimals is None else f"{decimals} decimals"


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
        return value


def fingerprint(oracle: Oracle, *, budget: int = DEFAULT_BUDGET, seed: int = 0) -> Fingerprint:
    """Probe ``oracle`` with at most ``budget`` queries; see the module docstring for the probes."""
    report = Fingerprint(
        metadata_decimals=oracle.decimals,
        public_fraction=getattr(oracle, "public_fraction", None),
    )
    if budget <= 0:
        report.decimals = oracle.decimals
        report.notes.append("no fingerprint budget: trusting the metadata")
        return report
    prober = _Prober(oracle, budget, report)
    n, k = oracle.n_rows, oracle.n_classes
    binary = oracle.metric == "binary_logloss" and k == 2
    high: Released = prober.send(np.full(n, PAIR_HIGH)) if binary else None
    base: Released = None
    repeat: Released = None
    if prober.left > 0:
        baseline = np.full(n, 0.5) if k == 2 else np.full((n, k), 1.0 / k)
        base = prober.send(baseline)
        if prober.left > 0:
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
    if not binary:
        if prober.left > 0:
            _measure_balance(prober, report, oracle)
        report.notes.append(f"structure probes need binary log loss; {oracle.metric} got decimals, noise and "
                            "the class balance only")
        return report
    if base is not None:
        report.baseline_offset = float(base) - LN2
        if report.noise and repeat is not None:
            # The all-1/2 probe scores ln 2 whatever the labels and rows, so each release minus ln 2 is one
            # draw of the noise itself; two draws' difference alone can come out unluckily small.
            report.noise_spread = max(report.noise_spread, abs(report.baseline_offset), abs(float(repeat) - LN2))
    low: Released = prober.send(np.full(n, PAIR_LOW)) if prober.left >= 1 and high is not None else None
    if high is not None:
        _ladder_pair(prober, report, n, high, low, base, repeat)
    if abs(report.baseline_offset) > tol and not report.ladder and not report.noise:
        # Off ln 2 yet repeatable and not sticky: a score transformed or noised with a fixed seed per content.
        report.noise = True
        report.noise_spread = max(report.noise_spread, abs(report.baseline_offset))
        report.notes.append("the all-1/2 probe did not release ln 2: noise or a transformed score")
    if report.ladder:
        report.notes.append("no row probes on a Ladder-like board (its released score sticks)")
    elif prober.left >= 1 and base is not None:
        previous = next(float(v) for v in (low, repeat, base) if v is not None)
        _row_probes(prober, report, n, float(base), previous, seed)
    return report


def _measure_balance(prober: _Prober, report: Fingerprint, oracle: Oracle) -> None:
    """The class shares from constant predictions (:func:`attacks.balance.measure_balance`) within budget."""
    measured: Balance = measure_balance(oracle, budget=prober.left, send=prober.send)
    if measured.rates is not None:
        report.balance = [float(r) for r in measured.rates]
        report.balance_exact = dict(measured.exact)
    report.notes.extend(measured.notes)


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


def _ladder_pair(
    prober: _Prober, report: Fingerprint, n: int, high: Released, low: Released, base: Released, repeat: Released
) -> None:
    """The class balance from the 0.7/0.3 pair, and whether the board re-releases earlier scores."""
    oracle = prober.oracle
    shares: list[float | None] = []
    if high is not None:
        shares.append(share_from_constant(oracle.metric, oracle.eps, 2, 1, float(high)))
    tol = report.tolerance
    if low is None and base is None:
        if high is not None:
            report.balance = _rates(shares)
        return
    if low is None:
        # Only high and the baselines: a board whose baseline re-released high's score is sticky.
        report.ladder = base is not None and high is not None and abs(float(base) - float(high)) <= 2 * tol and (
            abs(float(high) - LN2) > 2 * tol + 2 * report.noise_spread
        )
        report.balance = _rates(shares)
        if report.ladder:
            report.notes.append("the all-1/2 probe re-released the first score: Ladder-like board")
        return
    expected = -math.log(PAIR_HIGH) - math.log(PAIR_LOW)
    residual = abs(float(high) + float(low) - expected) if high is not None else math.inf
    bound = 4 * tol + 4 * report.noise_spread
    earlier = [float(v) for v in (high, base, repeat) if v is not None]
    # A later release equal to an earlier one although the true scores differ: the board re-released it.
    stale_low = any(abs(float(low) - v) <= 2 * tol for v in earlier)
    stale_base = base is not None and high is not None and abs(float(base) - float(high)) <= 2 * tol
    report.ladder = residual > bound and (stale_low or stale_base)
    if report.ladder:
        report.notes.append(
            f"the 0.7/0.3 pair broke its label-free sum by {residual:.3g}: the board re-releases an earlier score "
            "(Ladder or threshold behaviour)"
        )
        # Only the first release (high) is sure to be fresh on such a board; low is likely a stale value.
        if not stale_low:
            shares.append(1.0 - (share_from_constant(oracle.metric, oracle.eps, 2, 0, float(low)) or 0.5))
    else:
        low_share = share_from_constant(oracle.metric, oracle.eps, 2, 0, float(low))
        shares.append(None if low_share is None else 1.0 - low_share)
    report.balance = _rates(shares)


def _rates(shares: list[float | None]) -> list[float] | None:
    rates = rates_from_shares(shares, 2)
    return None if rates is None else [float(r) for r in rates]


def _row_probes(prober: _Prober, report: Fingerprint, n: int, base: float, previous: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = max(prober.left - 1, 1) if prober.left > 2 else prober.left
    rows = rng.choice(n, size=min(count, n), replace=False).tolist()
    moves: list[float] = []
    values: list[float] = []
    tol = report.tolerance + 3 * report.noise_spread
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
        # Probe a row that moved once more: a different move means a fresh random subset per submission.
        again_row = rows[[abs(m) > tol for m in moves].index(True)]
        probe = np.full(n, 0.5)
        probe[again_row] = ROW_PROBE
        value = prober.send(probe)
        if value is not None:
            # Subsetting drops the row from some submissions' subsets: its move vanishes or changes wholesale.
            # Noise only jitters the move, so "different" must mean more than half the first move (and more
            # than the noise-widened tolerance), not merely beyond the spread of two noisy releases.
            again = float(value) - base
            report.subsetting = abs(again) <= tol or abs(again - moved[0]) > max(2 * tol, abs(moved[0]) / 2)
            # Both moves exactly a label's value with every row scored, one of each label: the label flipped.
            full = [(loss - LN2) / n for loss in (-math.log(ROW_PROBE), -math.log(1 - ROW_PROBE))]
            # Each move is a difference of two rounded releases: within two tolerances of its exact value.
            if report.subsetting and all(min(abs(m - v) for v in full) <= 2 * tol for m in (again, moved[0])) and (
                    again * moved[0] < 0):
                report.subsetting = False
                report.fresh_flips = True
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
