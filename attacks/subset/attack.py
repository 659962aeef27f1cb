"""``subsetting``: exact label inference on a binary log-loss board that scores a fresh random subset of ``m``
rows per submission (``defenses/subsetting.py``; Aggarwal et al., ICML 2021, Section 6 proposes it).

Every row outside the probe group sits at 1/2 (loss ``ln 2`` whatever its label), so the release ``r`` gives
``T = m·r − m·ln 2 = Σ_{scored rows of the group} (loss_i − ln 2)`` to within ``m`` times the rounding, whatever
subset was drawn. Each group row is 0 (not scored), ``c0`` or ``c1``: :mod:`attacks.subset.design` sizes the
contributions so that the outcome reads off exactly, and :func:`attacks.subset.decoder.consistent`
enumerates every outcome the window allows — a label is reported only when all of them agree, so it is
exact whatever the draw. Rows left unresolved (not scored) are probed again; each file differs from every
other (one row off 1/2 by ``j·1e-15``), so ``same_file_same_score`` cannot pin the subset.

The subset size ``m``: ``subset_size`` when the host discloses it, else estimated — single rows at
``1 − eps`` first (a scored label-0 row moves the mean by ``(−ln(2·eps))/m``), then every decoded release
intersects the interval of ``m`` it allows; the window is widened by what the remaining doubt can move ``T``.

Per query: ``log3(ln 2/W)`` ternary rows plus 3–5 heavy rows (``W = m·10^-decimals``), against the bound
``f × log2(A·10^decimals)`` of :func:`attacks.information.subsetting_bits`; the benchmark
(``benchmarks/subset_rr_attacks.py``) prints both.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from attacks import information
from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult
from attacks.server_model import ServerModel
from attacks.subset.decoder import RowCode, agreed_labels, assignment_sum, consistent, row_code
from attacks.subset.design import SubsetDesign, heavy_prediction, subset_design

LN2 = math.log(2.0)
#: Each query's file differs from every other by one row at ``1/2 + j·JITTER`` (not a group row): far below
#: any window, but a different file for ``same_file_same_score``.
JITTER = 1e-15
#: Single-row probes spent at most on the subset size before the decoded queries refine it.
SIZE_PROBES = 12


class Window:
    """Turns a release into the interval of ``T`` it allows, for a subset size in ``[m_lo, m_hi]``."""

    def __init__(self, oracle: Oracle, m_lo: int, m_hi: int) -> None:
        self.oracle = oracle
        self.m_lo, self.m_hi = m_lo, m_hi
        self.half = 0.5 * 10.0 ** (-oracle.decimals) * (1 + 2.0**-40) if oracle.decimals is not None else 0.0

    def slack(self, m: int, magnitude: float) -> float:
        """The server's float error on ``m·mean`` (doubled, :data:`~attacks.server_model.CERTIFIED_MARGIN`)
        plus the jitter row and our own float error on ``m·r − m·ln 2``."""
        model = ServerModel(n_rows=self.oracle.n_rows, eps=self.oracle.eps, decimals=None, n_scored=m)
        server = float(model.error_bound(magnitude, model.rows_error(magnitude, m), margin=2))
        return server + 4e-15 * self.oracle.queries + 1e-13 * (m + magnitude)

    def interval(self, released: float, magnitude: float) -> tuple[float, float]:
        x_lo, x_hi = float(released) - self.half - LN2, float(released) + self.half - LN2
        ends = [m * x for m in (self.m_lo, self.m_hi) for x in (x_lo, x_hi)]
        pad = self.slack(self.m_hi, self.m_hi * LN2 + magnitude)
        return min(ends) - pad, max(ends) + pad

    def width(self, magnitude: float) -> float:
        """Width of :meth:`interval` for a design whose ``|T|`` is at most ``magnitude``."""
        spread = (self.m_hi - self.m_lo) * (magnitude / max(self.m_lo, 1) + 2 * self.half)
        return 2 * self.half * self.m_hi + spread + 2 * self.slack(self.m_hi, self.m_hi * LN2 + magnitude)

    def refine(self, released: float, totals: list[float]) -> None:
        """Keep the sizes ``m`` under which some decoded total reproduces the release."""
        lo, hi = math.inf, -math.inf
        for t in totals:
            if abs(t) < 1e-9:
                return  # "nothing scored moved": every m fits
            pad = self.slack(self.m_hi, self.m_hi * LN2 + abs(t))
            x_lo, x_hi = float(released) - self.half - LN2, float(released) + self.half - LN2
            # m·x ∈ [t − pad, t + pad] for some x ∈ [x_lo, x_hi].
            cands = []
            for x in (x_lo, x_hi):
                if x != 0 and (x > 0) == (t > 0):
                    cands += [(t - pad) / x, (t + pad) / x]
            if not cands:
                continue
            if x_lo <= 0 <= x_hi:
                return
            lo, hi = min(lo, *cands), max(hi, *cands)
        if lo > hi:
            return
        new_lo, new_hi = max(self.m_lo, math.ceil(lo - 1e-9)), min(self.m_hi, math.floor(hi + 1e-9))
        if new_lo > new_hi:
            raise AttackFailed("subsetting: no subset size fits the releases (not a fixed-size random subset?)")
        self.m_lo, self.m_hi = new_lo, new_hi


def _submit(oracle: Oracle, predictions: np.ndarray) -> float:
    out = oracle.submit(predictions)
    if out is None:
        raise AttackFailed("subsetting: the leaderboard released no score; this attack needs every score")
    return float(out)


def _first_outside(n: int, rows: np.ndarray) -> int:
    """The first row not in ``rows`` (the jitter row), or ``rows[0]`` when every row is in it."""
    taken = set(rows.tolist())
    for row in range(min(n, len(taken) + 1)):
        if row not in taken:
            return row
    return int(rows[0])


class _Probe:
    """One query's bookkeeping: the predictions and the codes of its group rows."""

    def __init__(self, n: int, jitter_row: int, j: int) -> None:
        self.p = np.full(n, 0.5)
        self.p[jitter_row] = 0.5 + j * JITTER
        self.codes: list[RowCode] = []

    def add(self, row: int, p: float, eps: float) -> None:
        self.p[row] = p
        self.codes.append(row_code(row, p, eps))

    def magnitude(self) -> float:
        return float(sum(max(abs(v) for v in c.values) for c in self.codes))


def subsetting_attack(
    oracle: Oracle,
    *,
    subset_size: int | None = None,
    fraction: float | None = None,
    budget: int | None = None,
    margin: float = 0.05,
    check_every: int = 16,
) -> AttackResult:
    """Recover binary labels exactly through fresh random subsets (see the module docstring).

    ``subset_size`` (or ``fraction``: then ``ceil(f·N)``) when the host discloses it; ``budget`` caps
    the submissions (the labels decoded so far are returned). Labels are exact (confidence 1.0); rows never
    seen scored stay ``-1``. Every ``check_every``-th query re-probes one decoded row: a board whose labels move
    between submissions (fresh randomized response) contradicts it and the attack fails instead of vouching."""
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed(f"subsetting: needs binary log loss, not {oracle.metric} with {oracle.n_classes} classes")
    started = time.perf_counter()
    n, eps = oracle.n_rows, oracle.eps
    start = oracle.queries
    limit = budget if budget is not None else 40 * n + 100
    if fraction is not None and subset_size is None:
        subset_size = max(1, min(n, math.ceil(fraction * n - 1e-9)))
    window = Window(oracle, subset_size or 1, subset_size or n)
    labels = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=np.int64)
    queue: list[int] = list(range(n))
    jitter_rows: list[int] = []
    j = 0

    def used() -> int:
        return oracle.queries - start

    def play(probe: _Probe) -> list[tuple[int, ...]]:
        released = _submit(oracle, probe.p)
        lo, hi = window.interval(released, probe.magnitude())
        found = consistent(probe.codes, lo, hi)
        if found is None:
            return []
        if not found:
            raise AttackFailed("subsetting: a release fits no outcome of its probe (the board is not a fixed-size "
                               "random subset of rows scored without noise)")
        for row, label in agreed_labels(probe.codes, found).items():
            if labels[row] >= 0 and labels[row] != label:
                raise AttackFailed(f"subsetting: row {row} decoded as {labels[row]}, then as {label}: the labels "
                                   "change between submissions (fresh randomized response?), nothing is vouched for")
            labels[row] = label
        window.refine(released, [assignment_sum(probe.codes, a) for a in found])
        return found

    # 1. The subset size, from single rows at 1 − eps (each also reveals its label if scored).
    probes_left = SIZE_PROBES if subset_size is None else 0
    while probes_left and used() < limit and (window.m_hi - window.m_lo) * 40 > window.m_lo * 0.01 + 1:
        probes_left -= 1
        row = queue.pop(0)
        queue.append(row)
        j += 1
        probe = _Probe(n, (row + 1) % n, j)
        probe.add(row, 1.0 - eps, eps)
        seen[row] += 1
        play(probe)
    # 1b. Sharpen it with rows already decoded, every one at its wrong-label edge: the release is then
    #     (−ln(2·eps))·s/m for s of them scored, and s is read off exactly while the doubt about m is small
    #     against m/s, so each such probe divides the doubt by about s.
    for _ in range(4 if subset_size is None else 0):
        doubt = window.m_hi - window.m_lo
        decoded = np.flatnonzero(labels >= 0)
        if doubt <= 1 or len(decoded) < 4 or used() >= limit:
            break
        take = int(min(len(decoded), max(1, window.m_lo / (4 * doubt))))
        j += 1
        rows = decoded[:take]
        outside = _first_outside(n, rows)
        if outside in set(rows.tolist()):
            break
        probe = _Probe(n, outside, j)
        for row in rows:
            wrong = 1.0 - eps if labels[row] == 0 else eps
            probe.p[row] = wrong
            code = row_code(int(row), wrong, eps)
            keep = code.states.index(int(labels[row]))
            probe.codes.append(RowCode(int(row), (0.0, code.values[keep]), (code.states[0], code.states[keep])))
        play(probe)
        if window.m_hi - window.m_lo >= doubt:
            break
    # 2. Exact designs on the rows still unknown, least-probed first.
    design: SubsetDesign | None = None
    design_key: tuple[int, int] | None = None
    fraction_seen = (window.m_lo + window.m_hi) / (2 * n)
    hopeless = n + 1
    while used() < limit:
        open_rows = np.flatnonzero(labels < 0)
        if len(open_rows) == 0:
            break
        if design_key != (window.m_lo, window.m_hi):
            design_key = (window.m_lo, window.m_hi)
            fraction_seen = (window.m_lo + window.m_hi) / (2 * n)
            magnitude = 60.0
            for _ in range(4):
                design = subset_design(window.width(magnitude), eps, margin=margin, fraction=fraction_seen)
                magnitude = design.max_abs_sum() + 1.0
            # Not scored this many times in a row has probability below 1e-9 for a random subset.
            hopeless = math.ceil(math.log(1e-9) / math.log(max(1 - fraction_seen, 1e-9))) + 1
        assert design is not None
        if design.rows == 0:
            raise AttackFailed("subsetting: the release is too coarse for a single row to show (window "
                               f"{window.width(60.0):.3g} over ln 2)")
        order = open_rows[np.argsort(seen[open_rows], kind="stable")]
        # A row that was probed so often without ever being scored is outside what is scored (a public split):
        # give up on it rather than spend the budget.
        order = order[seen[order] < hopeless]
        if len(order) == 0:
            break
        group = order[: design.rows]
        decoded = np.flatnonzero(labels >= 0)
        if check_every and len(decoded) and j % check_every == 0:
            check = int(decoded[(j // check_every) % len(decoded)])
            group = np.concatenate([[check], group[: design.rows - 1]])
        j += 1
        jitter_row = _first_outside(n, group)
        probe = _Probe(n, jitter_row, j)
        if jitter_row in group:
            probe.p[jitter_row] = 0.5
        k = 0
        for p in design.ternary:
            if k < len(group):
                probe.add(int(group[k]), p, eps)
                k += 1
        decoded_labels = labels[labels >= 0]
        majority = int(decoded_labels.mean() > 0.5) if len(decoded_labels) else 0
        for a in design.heavy:
            if k < len(group):
                row = int(group[k])
                # The heavy label is read whenever the row is scored: the likelier class first, then the other
                # (a row left open by its light label is heavy on its next probe).
                probe.add(row, heavy_prediction(a, majority ^ int(seen[row] % 2)), eps)
                k += 1
        seen[group] += 1
        play(probe)
        jitter_rows.append(jitter_row)
    queries = used()
    known = labels >= 0
    balance = float(labels[known].mean()) if known.any() else 0.5
    base = information.rounding_bits(n, oracle.decimals, eps)
    f = (window.m_lo + window.m_hi) / (2 * n)
    bound = information.subsetting_bits(f, base)
    return AttackResult(
        "subsetting",
        labels,
        confidence=np.where(known, 1.0, 0.0),
        details={
            "subset_size": [window.m_lo, window.m_hi],
            "fraction": f,
            "design": {"ternary": len(design.ternary) if design else 0, "heavy": len(design.heavy) if design else 0,
                       "width": design.width if design else None},
            "complete": bool(known.all()),
            "bound_bits_per_query": bound,
            "bound_queries": information.queries_lower_bound(n, bound, balance),
            "bits_per_query": information.label_entropy_bits(int(known.sum()), balance) / max(queries, 1),
            "seconds": time.perf_counter() - started,
        },
    )


def describe(result: AttackResult) -> dict[str, Any]:
    """A short summary for benchmarks and logs."""
    d = result.details
    return {"queries": result.queries, "complete": d["complete"], "bound_queries": round(d["bound_queries"], 1),
            "design": d["design"], "subset_size": d["subset_size"]}
