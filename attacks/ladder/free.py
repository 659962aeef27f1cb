"""``ladder_free``: label inference against the parameter-free Ladder (Blum & Hardt 2015, Section 3.2; Ladder.jl's
``FreeLadder``): its paired test is passed on purpose, and every accepted score is released unrounded.

The defense accepts a submission iff ``mean(l) < current − std(l − l*)/√n``, ``l*`` the leader's per-row
losses, and then releases ``mean(l)`` itself (at the board's decimals). A submission that differs from the
leader on a few rows has ``l − l*`` zero elsewhere, so the test reads ``−Σd > √n·std(d)`` on those rows alone:
about ``−Σd > sqrt(Σd²)``. Two known rows moved from a loss of ``A`` to 0 (``d = −A`` each) already pass it
(``2A > √2·A``) whatever a handful of other rows do, so **ballast** (known rows the leader holds at a high
loss) buys an acceptance, and an accepted score is as informative as a plain board's: a block of fresh rows
with weights ``g·2^j`` (``g`` above the released resolution ``N·10^-decimals``) is read off exactly.

Construction:

1. The first submission is always accepted: every row at the clipping edge ``eps`` (loss ``A`` for a one)
   except a first block with weights ``g·2^j`` summing below ``A``; the released score gives the count of ones
   ``c`` (the multiple of ``A``) and the block (the remainder) at once.
2. Each further query moves the next block of unknown rows from ``eps`` to their design predictions and the
   fewest ballast rows (known ones still at ``eps``: the decoded ones of earlier blocks) to their correct
   edge such that every labeling of the block but at most one passes the test (checked by enumerating them
   with the defense's own formula); the released score decodes the block exactly, and a rejection (the
   leader's score again) decodes it as the one labeling that could fail (usually no improving row), spending
   no ballast. Each accepted block yields about ``π·m`` new ballast rows and spends one or two.
3. **Resumed** (``start``, from :mod:`attacks.fingerprint`): the leader holds every row at one edge (``eps``,
   or ``1 − eps`` when the ones are the majority: blocks then sit at the logit ``18 − w``, where float64 still
   resolves ``1 − p``), the count of ones is read off its exact release, and blocks go without ballast until
   one with two improving rows is accepted (rejected ones are tried again once ballast exists).

Exact labels have confidence 1.0; rows left (budget) get the majority class of the rows left (the count of
ones is exact). Queries: about ``N / m`` with ``m = ⌊log2(A/g)⌋`` (9 at N = 2,201 and 5 decimals).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import expit

from attacks.catalogue import BoardFacts
from attacks.ladder.common import edge_logit, release_tolerance, row_losses, score_tolerance, submit
from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult

#: The most rows a block holds (its labelings are enumerated).
MAX_BLOCK = 12
#: Most ballast rows a query may spend.
MAX_BALLAST = 12
#: Where a block sits when the leader holds every row at ``1 − eps``: the logit ``HIGH_ANCHOR − w`` (a zero's
#: loss), well inside float64's resolution near 1 (``1 − p`` is exact to ~1e-8 relative there, not at the edge).
HIGH_ANCHOR = 18.0
#: Bootstrap blocks rejected in a row before the attack gives up (a fixed-step Ladder rejects them all).
MAX_BOOTSTRAP_REJECTS = 30


def design_gap(n: int, decimals: int | None) -> float:
    """The spacing ``g`` of the block's weights on the summed loss: twice the width the released decimals
    leave (``N·10^-decimals``), so two labelings' scores never round to the same text."""
    return max(2.0 * n * 10.0 ** -(decimals if decimals is not None else 12), 1e-6)


def block_size(n: int, decimals: int | None, eps: float, span: float | None = None) -> int:
    """Rows per block: weights ``g, 2g, …, 2^(m−1)g`` summing below ``span − 2g`` (default ``A``; so the first
    release separates the count of ones, in steps of ``A``, from the block)."""
    a = edge_logit(eps) if span is None else span
    g = design_gap(n, decimals)
    if a <= 3 * g:
        raise AttackFailed(f"ladder: at {decimals} released decimals over {n} rows no block of labels can be read "
                           f"(weight spacing {g:.3g} against a span of {a:.3g})")
    return max(1, min(MAX_BLOCK, math.floor(math.log2((a - 2 * g) / g + 1))))


def labelings(m: int) -> np.ndarray:
    """All ``2^m`` labelings of ``m`` rows, one per line."""
    return ((np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1).astype(np.int64)


class FreeLadderAttack:
    """One run of the attack (module docstring)."""

    def __init__(
        self, oracle: Oracle, *, budget: int | None, block: int | None, start: dict[str, Any] | None = None
    ) -> None:
        if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
            raise AttackFailed("ladder_free needs a binary log-loss board")
        if BoardFacts.of(oracle).public_fraction is not None:
            raise AttackFailed("ladder_free assumes every row is scored (no public split)")
        self.oracle = oracle
        self.n = oracle.n_rows
        self.eps = oracle.eps
        self.A = edge_logit(self.eps)
        self.decimals = oracle.decimals
        self.rtol = release_tolerance(self.decimals) + score_tolerance(self.n, self.eps)
        self.g = design_gap(self.n, self.decimals)
        #: 0: the leader holds unknown rows at ``eps`` (a one's loss is A); 1: at ``1 − eps`` (a zero's is).
        self.edge = 0 if start is None else int(start["edge"])
        self.edge_p = self.eps if self.edge == 0 else 1 - self.eps
        #: The logit edge-0 blocks start from (the leader's).
        self.anchor = -self.A
        span = self.A if self.edge == 0 else self.A - HIGH_ANCHOR
        self.m = block if block is not None else block_size(self.n, self.decimals, self.eps, span=span)
        self.budget = budget if budget is not None else 2 * self.n
        self.labels = np.full(self.n, -1, dtype=np.int64)
        self.leader = np.full(self.n, self.edge_p)
        self.count: int | None = None
        self.used = 0
        self.accepts = 0
        self.rejects = 0
        self.notes: list[str] = []
        self.released: float | None = None
        #: The first release and its predictions (the dispatcher hands them to the fixed-step attack).
        self.opening: tuple[float, np.ndarray] | None = None
        #: The last value released, accepted or not (the dispatcher hands it to the fixed-step attack).
        self.last_release: float | None = None
        #: Rows whose bootstrap block was rejected (no ballast yet): tried again once ballast exists.
        self.deferred: set[int] = set()
        self.bootstrap_rejects = 0
        if start is not None:
            self.adopt(start)

    # --- the model --------------------------------------------------------------------------------------

    def design(self, m: int) -> np.ndarray:
        """Block predictions: weight ``g·2^j`` on the summed loss when the label is 1 rather than 0 (near
        ``eps``), or 0 rather than 1 (near ``1 − eps``, at the logit ``HIGH_ANCHOR − g·2^j``)."""
        weights = self.g * 2.0 ** np.arange(m)
        if self.edge == 1:
            return np.asarray(1.0 - expit(-HIGH_ANCHOR + weights), dtype=np.float64)
        return np.asarray(expit(self.anchor + weights), dtype=np.float64)

    def lead_with_constant(self, p: float, released: float) -> None:
        """The leader is now every row at ``p`` (near the edge), released as ``released``: the blocks start
        from its logit (edge 0) or keep below its zero loss (edge 1, a smaller block if need be)."""
        self.edge_p = p
        self.leader = np.full(self.n, p)
        self.released = released
        self.last_release = released
        if self.edge == 0:
            self.anchor = math.log(p / (1 - p))
        else:
            zero_loss = float(row_losses(np.array([p]), np.array([0]), self.eps)[0])
            self.m = min(self.m, block_size(self.n, self.decimals, self.eps, span=zero_loss - HIGH_ANCHOR))

    def adopt(self, start: dict[str, Any]) -> None:
        """Continue from a leader someone else made (the fingerprint): every row at the ``edge``, released
        exactly as ``leader``; the count of ones is the one that fits it (and every other fresh edge release)."""
        released = float(start["leader"])
        l1, l0 = (float(v) for v in row_losses(np.full(2, self.edge_p), np.array([1, 0]), self.eps))
        approx = (released * self.n - self.n * l0) / (l1 - l0)
        fits = [c for c in (math.floor(approx), math.ceil(approx)) if 0 <= c <= self.n
                and abs((c * l1 + (self.n - c) * l0) / self.n - released) <= self.rtol]
        for edge, value in start.get("fresh", []):
            e1, e0 = (float(v) for v in row_losses(np.full(2, self.eps if edge == 0 else 1 - self.eps),
                                                   np.array([1, 0]), self.eps))
            fits = [c for c in fits if abs((c * e1 + (self.n - c) * e0) / self.n - float(value)) <= self.rtol]
        if len(set(fits)) != 1:
            raise AttackFailed(f"the leader's release fits {len(set(fits))} counts of ones: not an exact release")
        self.count = fits[0]
        self.released = released
        self.last_release = released

    def leader_total(self) -> float:
        """The leader's summed loss (N-scale): known rows exactly, unknown rows at ``eps`` by their count."""
        assert self.count is not None
        known = self.labels >= 0
        c_u = self.count - int((self.labels == 1).sum())
        n_u = int((~known).sum())
        l1 = float(row_losses(np.array([self.edge_p]), np.array([1]), self.eps)[0])
        l0 = float(row_losses(np.array([self.edge_p]), np.array([0]), self.eps)[0])
        part = float(row_losses(self.leader[known], self.labels[known], self.eps).sum())
        return part + c_u * l1 + (n_u - c_u) * l0

    def block_deltas(self, rows: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``d`` per labeling (lines) and block row (columns): the new loss minus the leader's."""
        z = labelings(len(rows))
        new = np.where(z == 1, row_losses(p, np.ones(len(p), dtype=np.int64), self.eps),
                       row_losses(p, np.zeros(len(p), dtype=np.int64), self.eps))
        old_p = self.leader[rows]
        old = np.where(z == 1, row_losses(old_p, np.ones(len(p), dtype=np.int64), self.eps),
                       row_losses(old_p, np.zeros(len(p), dtype=np.int64), self.eps))
        return np.asarray(new - old)

    def accepted(self, sums: np.ndarray, squares: np.ndarray) -> np.ndarray:
        """The defense's test for each labeling, with a safety margin (``True``: surely accepted)."""
        n = self.n
        var = np.maximum(squares - sums**2 / n, 0.0) / (n - 1)
        margin = np.sqrt(var) / math.sqrt(n)
        return np.asarray(sums / n + margin < -1e-9 * (1 + np.abs(sums) / n))

    # --- queries ----------------------------------------------------------------------------------------

    def first(self) -> None:
        m = min(self.m, self.n)
        rows = np.arange(m)
        p = self.leader.copy()
        p[rows] = self.design(m)
        released = submit(self.oracle, p)
        self.used += 1
        z = labelings(m)
        block = np.where(z == 1, row_losses(p[rows], np.ones(m, dtype=np.int64), self.eps),
                         row_losses(p[rows], np.zeros(m, dtype=np.int64), self.eps)).sum(axis=1)
        l1 = float(row_losses(np.array([self.eps]), np.array([1]), self.eps)[0])
        l0 = float(row_losses(np.array([self.eps]), np.array([0]), self.eps)[0])
        rest = self.n - m
        fits: list[tuple[int, int]] = []
        for i in range(len(z)):
            ones_block = int(z[i].sum())
            # released·N = block + (c − ones)·l1 + (rest − c + ones)·l0
            approx = (released * self.n - block[i] - rest * l0) / (l1 - l0) + ones_block
            for c in (math.floor(approx), math.ceil(approx)):
                if not ones_block <= c <= ones_block + rest:
                    continue
                total = block[i] + (c - ones_block) * l1 + (rest - c + ones_block) * l0
                if abs(total / self.n - released) <= self.rtol:
                    fits.append((i, c))
        fits = sorted(set(fits))
        self.opening = (released, p)
        if len(fits) != 1:
            raise AttackFailed(f"the first release fits {len(fits)} (count, block) pairs: not a parameter-free "
                               "Ladder with an exact release")
        i, c = fits[0]
        self.count = c
        self.labels[rows] = z[i]
        self.leader = p
        self.released = released

    def step(self) -> bool:
        """One block; ``False`` when the budget, the rows or the ballast ran out."""
        unknown = np.flatnonzero(self.labels < 0)
        if len(unknown) == 0 or self.used >= self.budget:
            return False
        unknown = np.array([r for r in unknown if int(r) not in self.deferred], dtype=np.int64)
        if len(unknown) == 0 or self.bootstrap_rejects >= MAX_BOOTSTRAP_REJECTS:
            self.notes.append(f"ballast ran out after {self.used} queries ({self.bootstrap_rejects} blocks rejected "
                              "undecoded in a row)")
            return False
        m = min(self.m, len(unknown))
        rows = unknown[:m]
        p_block = self.design(m)
        d = self.block_deltas(rows, p_block)
        sums, squares = d.sum(axis=1), (d**2).sum(axis=1)
        # Ballast: known rows whose leader loss is highest, moved to their correct edge. Enough that at most one
        # labeling fails the test (usually the block all at the low-loss label): a rejection then decodes the
        # block too, and the ballast is spent only on acceptances.
        known = np.flatnonzero(self.labels >= 0)
        losses = row_losses(self.leader[known], self.labels[known], self.eps)
        order = np.argsort(-losses)
        target = np.where(self.labels[known] == 1, 1 - self.eps, self.eps)
        gains = row_losses(target, self.labels[known], self.eps) - losses
        chosen: list[int] = []
        extra_sum, extra_sq = 0.0, 0.0
        ok = self.accepted(sums, squares)
        for idx in order[:MAX_BALLAST]:
            if (~ok).sum() <= 1:
                break
            if gains[idx] >= 0:
                break
            chosen.append(int(idx))
            extra_sum += float(gains[idx])
            extra_sq += float(gains[idx]) ** 2
            ok = self.accepted(sums + extra_sum, squares + extra_sq)
        p = self.leader.copy()
        p[rows] = p_block
        ballast_rows = known[chosen]
        p[ballast_rows] = target[chosen]
        before = self.leader_total()
        released = submit(self.oracle, p)
        self.used += 1
        self.last_release = released
        predicted = (before + sums + extra_sum) / self.n
        stale = self.released is not None and abs(released - self.released) <= self.rtol
        # An accepted labeling is released as its own score (far from the leader's: it passed the test); a
        # rejected one re-releases the leader's, and only a labeling that could fail the test can be rejected.
        consistent = (np.abs(predicted - released) <= self.rtol) & ~np.full(len(ok), stale)
        if stale:
            consistent |= ~ok
        fits = np.flatnonzero(consistent)
        if len(fits) != 1:
            if stale and len(fits) > 1:
                # Too little ballast: several labelings could have failed. Try other rows; these come back once
                # an acceptance brings new ballast.
                self.rejects += 1
                self.bootstrap_rejects += 1
                self.deferred.update(int(r) for r in rows)
                return True
            if stale:
                raise AttackFailed("a submission every labeling should pass was rejected: not a parameter-free "
                                   "Ladder (or its test differs)")
            raise AttackFailed(f"the release fits {len(fits)} labelings of the block")
        self.bootstrap_rejects = 0
        self.labels[rows] = labelings(m)[fits[0]]
        if stale:
            self.rejects += 1
            return True
        self.accepts += 1
        self.deferred.clear()
        self.leader = p
        self.released = released
        return True

    def run(self) -> AttackResult:
        if self.used >= self.budget:
            raise AttackFailed("no query left")
        if self.count is None:
            self.first()
        while self.step():
            pass
        return self.result()

    def result(self) -> AttackResult:
        labels = self.labels.copy()
        confidence = np.where(labels >= 0, 1.0, 0.0)
        exact = int((labels >= 0).sum())
        open_rows = labels < 0
        if open_rows.any() and self.count is not None:
            c_u = self.count - int((labels == 1).sum())
            share = c_u / int(open_rows.sum())
            labels[open_rows] = 1 if share >= 0.5 else 0
            confidence[open_rows] = max(share, 1 - share)
        details: dict[str, Any] = {"exact": exact, "count_of_ones": self.count, "block": self.m,
                                   "gap": self.g, "accepts": self.accepts, "queries": self.used,
                                   "notes": self.notes}
        return AttackResult("ladder_free", labels, details=details, confidence=confidence)


def ladder_free_attack(
    oracle: Oracle, *, budget: int | None = None, block: int | None = None, start: dict[str, Any] | None = None
) -> AttackResult:
    """Pass the parameter-free Ladder's test with ballast rows and read each block off the released score
    (module docstring). The oracle's current account must be fresh (its first release is this attack's), or
    ``start`` says what its leader is (:attr:`attacks.fingerprint.Fingerprint.ladder_start`: every row at one
    edge, released exactly); then the first blocks go without ballast until one is accepted. ``budget``: the
    submissions to spend (default ``2·N``); rows not reached get the majority class of the rows left."""
    return FreeLadderAttack(oracle, budget=budget, block=block, start=start).run()


__all__ = ["ladder_free_attack"]
