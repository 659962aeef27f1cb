"""Fingerprint a leaderboard from what a participant can observe, within a stated query budget.

Every probe is built so that its *undefended* released score is known in advance whatever the hidden labels
are; a defense shows up as a departure from that known value. For a binary log-loss board:

1. **baseline** — every row at 1/2: the loss is ``ln 2`` on every row, so on any scored subset.
   The released text's digits give the decimals; a value off ``ln 2`` beyond rounding means noise (or a
   transformed score).
2. **repeat** — the baseline with one row nudged by one ulp (not byte-identical, so a same-file-same-score
   cache cannot answer it, yet the score is the same to ~1e-16): a different released value means noise.
3. **ladder pair** — every row at 0.7, then every row at 0.3. Each row contributes ``-ln 0.7 - ln 0.3`` to
   the two losses together, whatever its label, so the two released scores must sum to ``1.5606…``; and one
   of the two is worse than the baseline. A board that keeps showing the best score so far (the Ladder,
   threshold mechanisms) breaks the sum, typically by re-releasing the baseline's value.
4. **row probes** — the baseline with one row at 0.99: if the row is scored, the score moves by
   ``(loss - ln 2) / n_scored`` (down if its label is 1, up if 0), which also estimates how many rows are
   scored; if it is not scored (private split, or left out by subsetting), nothing moves. The same row
   probed twice moving differently means a fresh random subset per submission (subsetting).

Queries: at most ``budget`` (default 8: 1 + 1 + 2 + 4). Other metrics get the baseline and repeat only
(decimals and noise). The fingerprint never uses a label it learns on the way: it only describes the board.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from attacks.oracle import Oracle, Released
from bot.http_oracle import SubmissionFailed

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
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def tolerance(self) -> float:
        """Half a unit of the released precision (what rounding alone can move a score by), plus slack."""
        if self.decimals is None or self.full_precision:
            return 1e-9
        return 0.5 * 10.0 ** (-self.decimals) + 1e-12


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
        except SubmissionFailed as exc:
            self.report.rejected += 1
            self.report.notes.append(f"a probe was failed by the site: {exc.message}")
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
    baseline = np.full(n, 0.5) if k == 2 else np.full((n, k), 1.0 / k)
    base = prober.send(baseline)
    repeat: Released = None
    if prober.left > 0:
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
        report.notes.append(f"structure probes need binary log loss; {oracle.metric} got decimals and noise only")
        return report
    if base is not None:
        report.baseline_offset = float(base) - LN2
        if report.noise and repeat is not None:
            # The all-1/2 probe scores ln 2 whatever the labels and rows, so each release minus ln 2 is one
            # draw of the noise itself; two draws' difference alone can come out unluckily small.
            report.noise_spread = max(report.noise_spread, abs(report.baseline_offset), abs(float(repeat) - LN2))
    if prober.left >= 2 and base is not None:
        _ladder_pair(prober, report, n, float(base))
    if abs(report.baseline_offset) > tol and not report.ladder and not report.noise:
        # Off ln 2 yet repeatable and not sticky: a score transformed or noised with a fixed seed per content.
        report.noise = True
        report.noise_spread = max(report.noise_spread, abs(report.baseline_offset))
        report.notes.append("the all-1/2 probe did not release ln 2: noise or a transformed score")
    if prober.left >= 1 and base is not None:
        _row_probes(prober, report, n, float(base), seed)
    return report


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


def _ladder_pair(prober: _Prober, report: Fingerprint, n: int, base: float) -> None:
    high = prober.send(np.full(n, PAIR_HIGH))
    low = prober.send(np.full(n, PAIR_LOW))
    if high is None or low is None:
        report.ladder = True
        report.notes.append("a clearly different submission released nothing: threshold/Ladder-like board")
        return
    expected = -math.log(PAIR_HIGH) - math.log(PAIR_LOW)
    residual = abs(float(high) + float(low) - expected)
    bound = 4 * report.tolerance + 4 * report.noise_spread
    stuck = min(abs(float(high) - base), abs(float(low) - base)) <= 2 * report.tolerance
    report.ladder = residual > bound and stuck
    if report.ladder:
        report.notes.append(
            f"the 0.7/0.3 pair broke its label-free sum by {residual:.3g}: the board re-releases an earlier score "
            "(Ladder or threshold behaviour)"
        )


def _row_probes(prober: _Prober, report: Fingerprint, n: int, base: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = max(prober.left - 1, 1) if prober.left > 2 else prober.left
    rows = rng.choice(n, size=min(count, n), replace=False).tolist()
    moves: list[float] = []
    tol = report.tolerance + 3 * report.noise_spread
    for row in rows:
        probe = np.full(n, 0.5)
        probe[row] = ROW_PROBE
        value = prober.send(probe)
        if value is None:
            continue
        moves.append(float(value) - base)
    if not moves:
        return
    if report.ladder:
        report.notes.append("row probes are not read on a Ladder-like board (its released score sticks)")
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
    if prober.left >= 1 and moved:
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
    if report.public_fraction is None and report.only_public_moves and not report.subsetting:
        report.notes.append("some rows never move the score although the metadata says every row is public")
    if report.subsetting:
        report.notes.append("the same row moved the score differently twice: rows are subsampled per submission")
