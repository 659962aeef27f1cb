"""``ladder_fixed``: label inference against the fixed-step Ladder (Blum & Hardt 2015, Algorithm 1), by threshold
questions placed on its deterministic acceptance boundary.

The weakness: the Ladder accepts a submission iff its score ``s < R − η``, with ``R`` the released best and
``η`` the step, both known to the attacker — a deterministic threshold. Hardt ("Climbing a shaky ladder:
Better adaptive risk estimation", 2017, arXiv:1706.02733) exhibits an attack separating the fixed-step Ladder
from his randomized "Shaky Ladder", whose noisy threshold is the fix; only the abstract was retrievable here,
so this construction is ours, aimed at the weakness his fix removes. A submission whose score is a
known affine function of a few unknown labels, placed so that ``R − η`` falls between two of its values,
turns the accept/reject answer into an exact yes/no question about those labels. A rejection changes
nothing (the question was free); an acceptance lowers ``R`` to ``[s]_η``, one step, and its released value is
one more observation. The Shaky Ladder's noisy threshold is what defeats this.

Our construction (binary log loss):

1. **Height.** The attacker controls its first score: every row at the clipping edge ``p = eps`` scores
   ``c·A/N`` (``c`` ones, ``A = −ln eps``), e.g. 21.7 on breast cancer against ``ln 2`` for a constant ½. The
   first score is always accepted, so the transcript has about ``c·A/(N·η)`` accepts to spend (the levels of
   :func:`attacks.information.ladder_bits`); rejections are free. ``R0`` also gives ``c`` within ``N·η/A``.
2. **The count.** Constant predictions ``q`` on every row score ``(c·ℓ1(q) + (N − c)·ℓ0(q))/N``; ``q`` is solved
   so that ``R − η`` falls between two candidate counts: binary search until ``c`` is exact.
3. **Blocks, arithmetic-coded.** With ``c`` exact, rows outside the questioned block sit at a common logit
   ``ℓ_bg`` (their total depends on the labels only through the count), known rows are ballast whose loss is
   set at will, and the ``k`` rows of the block get logits ``ℓ_bg + W·2^(k−1−j)``: the score is
   ``(K − W·V)/N`` with ``V`` the block's labels read as a binary number. ``K`` is solved (ballast, then
   ``ℓ_bg``) so that the answer is "``V ≥ t``", with ``t`` chosen under the prior (the share of ones left)
   so that an acceptance has probability ``q = levels left / queries left`` (capped at ½): the answers are an
   arithmetic code of the labels whose rare, costly symbol is the acceptance. Every block is decoded
   exactly; an acceptance's released value narrows ``V`` further.
4. **Accounts.** When the height of an account is spent, the next account (``accounts: k``) starts fresh
   with its first score at the edge again; the block being decoded carries over.

What leaks is bounded by the transcript count ``log2 C(Q + L, L)`` bits for ``L`` levels and ``Q`` queries
(:func:`attacks.information.ladder_bits`); the attack's question stream realises ``≈ Q·h(L/Q)`` bits of it.
Rows it does not decode get the majority class of the rows left (their count is known exactly), so the
labeling is never worse than the majority class. Labels decoded exactly have confidence 1.0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import expit

from attacks.catalogue import BoardFacts
from attacks.information import binary_entropy, ladder_bits
from attacks.ladder.common import (
    LOGIT_CEILING,
    bits_of,
    edge_logit,
    interval_marginals,
    loss_pair,
    release_tolerance,
    row_losses,
    score_tolerance,
    split_point,
    submit,
)
from attacks.ladder.resume import identify, round_steps
from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult

#: Default query budget when none is given, as a multiple of the rows.
DEFAULT_QUERIES_PER_ROW = 2
#: Block size: labels per arithmetic-coded block (bounded by float64: the smallest weight must stay well above
#: the summation error while the largest stays below :data:`LOGIT_CEILING` − ``ℓ_bg``).
DEFAULT_BLOCK = 24
#: The most levels an acceptance is planned to spread over when levels are plentiful.
MAX_SPREAD = 64


def default_step(n: int) -> Fraction:
    """The Ladder's default step ``n^(-1/3)`` exactly as the defense computes it."""
    return Fraction(n ** (-1 / 3))


def candidate_steps(n: int, eta: float | None) -> list[Fraction]:
    """Steps to try: the given one, else the defense's default and its parameter-free fallback ``1/√n``."""
    if eta is not None:
        return [Fraction(repr(float(eta)))]
    return [default_step(n), Fraction(1 / math.sqrt(n))]


@dataclass
class _Board:
    """The attacker's view of one account on a fixed-step Ladder."""

    oracle: Oracle
    step: Fraction
    rtol: float
    level: int = 0
    opened: bool = False
    queries: int = 0
    accepts: int = 0
    first_release: float = 0.0
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def best(self) -> float:
        return float(self.level * self.step)

    @property
    def threshold(self) -> Fraction:
        """Accepted iff the score is strictly below this (``R − η``, exact)."""
        return Fraction(self.best) - self.step

    def read(self, released: float) -> int:
        """The level a released value shows (:class:`AttackFailed` if it is no multiple of the step)."""
        level = round(Fraction(released) / self.step)
        if abs(float(level * self.step) - released) > self.rtol:
            raise AttackFailed(f"released {released!r} is no multiple of the step {float(self.step):.6g}")
        return int(level)

    def ask(self, p: np.ndarray) -> int | None:
        """Submit ``p``; the new level if it was accepted, ``None`` if rejected."""
        released = submit(self.oracle, p)
        self.queries += 1
        level = self.read(released)
        if not self.opened:
            self.opened = True
            self.level = level
            self.first_release = released
            return level
        if level == self.level:
            return None
        if level > self.level:
            raise AttackFailed("the released best went up: not a fixed-step Ladder")
        self.level = level
        self.accepts += 1
        return level


class _Solver:
    """Realises a question: predictions whose score is ``(K − W·V)/N`` with ``K`` placed on the threshold."""

    def __init__(self, n: int, eps: float, labels: np.ndarray) -> None:
        self.n = n
        self.eps = eps
        self.A = edge_logit(eps)
        self.labels = labels  # -1 unknown
        one, zero = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        p_lo, p_hi = np.array([eps]), np.array([1 - eps])
        # Known rows: the least and the most loss each can carry (the clipping edges).
        self.known_min = {1: float(row_losses(p_hi, one, eps)[0]), 0: float(row_losses(p_lo, zero, eps)[0])}
        self.known_max = {1: float(row_losses(p_lo, one, eps)[0]), 0: float(row_losses(p_hi, zero, eps)[0])}

    def background(self, logit: float, c_u: int, n_g: int, block_logits: np.ndarray) -> float:
        """``F(ℓ_bg)``: the label-free part of the summed loss from the unknown rows."""
        l1, l0 = loss_pair(np.array([logit]), self.eps)
        _, b0 = loss_pair(block_logits, self.eps)
        return n_g * float(l0[0]) + c_u * float(l1[0] - l0[0]) + math.fsum(b0.tolist())


def _bisect(fn: Any, lo: float, hi: float, goal: float, *, decreasing: bool = True, iters: int = 200) -> float:
    """``x`` in ``[lo, hi]`` with ``fn(x) ≈ goal`` for a monotone ``fn``."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        above = fn(mid) > goal
        if above == decreasing:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class FixedLadderAttack:
    """One run of the attack (see the module docstring)."""

    def __init__(
        self, oracle: Oracle, *, eta: float | None, budget: int | None, block: int, first_account: int | None,
        prior: float | None,
    ) -> None:
        if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
            raise AttackFailed("ladder_fixed needs a binary log-loss board")
        if BoardFacts.of(oracle).public_fraction is not None:
            raise AttackFailed("ladder_fixed assumes every row is scored (no public split)")
        self.oracle = oracle
        self.n = oracle.n_rows
        self.eps = oracle.eps
        self.A = edge_logit(self.eps)
        self.tol = score_tolerance(self.n, self.eps)
        self.rtol = release_tolerance(oracle.decimals)
        self.steps = candidate_steps(self.n, eta)
        self.given_eta = eta is not None
        self.budget = budget if budget is not None else DEFAULT_QUERIES_PER_ROW * self.n
        self.block = max(1, min(block, 30))
        self.accounts = BoardFacts.of(oracle).accounts
        self.next_account = BoardFacts.of(oracle).account if first_account is None else first_account
        self.prior = prior
        self.labels = np.full(self.n, -1, dtype=np.int64)
        self.count: int | None = None  # ones among all rows, once exact
        self.count_candidates: list[int] = []
        self.board: _Board | None = None
        self.boards: list[_Board] = []
        self.used = 0
        self.solver = _Solver(self.n, self.eps, self.labels)
        self.notes: list[str] = []
        # the block being decoded
        self.block_rows: np.ndarray = np.zeros(0, dtype=np.int64)
        self.lo = 0
        self.hi = 1

    # --- accounts -------------------------------------------------------------------------------------

    def open_account(self) -> bool:
        """Start the next fresh account with its first score as high as the known rows allow."""
        if self.next_account >= self.accounts or self.used >= self.budget:
            return False
        self.oracle.account = self.next_account  # type: ignore[attr-defined]
        self.next_account += 1
        p = self.height_predictions()
        released = submit(self.oracle, p)
        self.used += 1
        step = self.pick_step(released)
        board = _Board(self.oracle, step, self.rtol, queries=1, opened=True, first_release=released)
        board.level = board.read(released)
        self.board = board
        self.boards.append(board)
        self.update_count_from_height(board)
        return True

    def height_predictions(self) -> np.ndarray:
        """Unknown rows at the clipping edge ``eps`` (loss A for a one), known rows at their wrong edge."""
        p = np.full(self.n, expit(-self.A))
        p[self.labels == 1] = self.eps
        p[self.labels == 0] = 1 - self.eps
        return p

    def pick_step(self, released: float) -> Fraction:
        for step in self.steps:
            level = round(Fraction(released) / step)
            if abs(float(level * step) - released) <= self.rtol:
                if step != self.steps[0]:
                    self.notes.append(f"step {float(step):.6g} inferred from the first release")
                self.steps = [step]
                return step
        raise AttackFailed(f"the first release {released!r} is no multiple of any step tried "
                           f"({', '.join(f'{float(s):.6g}' for s in self.steps)}); give 'eta'")

    def height_score(self, c_u: int) -> float:
        """The summed loss (N-scale) of :meth:`height_predictions` when ``c_u`` unknown rows are ones."""
        known = self.labels >= 0
        kmax = sum(self.solver.known_max[int(y)] for y in self.labels[known])
        l1, l0 = loss_pair(np.array([-self.A]), self.eps)
        n_u = int((~known).sum())
        return kmax + c_u * float(l1[0]) + (n_u - c_u) * float(l0[0])

    def update_count_from_height(self, board: _Board) -> None:
        """The first release ``[S0]_η`` bounds the number of ones among the unknown rows."""
        n_u = int((self.labels < 0).sum())
        lo_s = (Fraction(board.best) - board.step / 2) * self.n
        hi_s = (Fraction(board.best) + board.step / 2) * self.n
        slack = self.tol * self.n
        fits = [c for c in self._count_range(n_u, lo_s, hi_s, slack)]
        known_ones = int((self.labels == 1).sum())
        if self.count is not None:
            if self.count - known_ones not in fits:
                raise AttackFailed("the first release of a fresh account contradicts the known count of ones")
            return
        if not fits:
            raise AttackFailed("no count of ones fits the first release")
        self.count_candidates = [c + known_ones for c in fits]
        if len(fits) == 1:
            self.count = self.count_candidates[0]

    def _count_range(self, n_u: int, lo_s: Fraction, hi_s: Fraction, slack: float) -> list[int]:
        l1, l0 = loss_pair(np.array([-self.A]), self.eps)
        base = self.height_score(0)
        slope = float(l1[0] - l0[0])
        lo_c = math.floor((float(lo_s) - slack - base) / slope) - 1
        hi_c = math.ceil((float(hi_s) + slack - base) / slope) + 1
        out = []
        for c in range(max(lo_c, 0), min(hi_c, n_u) + 1):
            s = self.height_score(c)
            if float(lo_s) - slack <= s <= float(hi_s) + slack:
                out.append(c)
        return out

    # --- the count of ones ----------------------------------------------------------------------------

    def find_count(self) -> None:
        """Binary search on the count with constant predictions (no row is known yet)."""
        while self.count is None:
            if self.used >= self.budget:
                return
            board = self.board
            assert board is not None
            cands = self.count_candidates
            mid = cands[len(cands) // 2]
            n = self.n
            thr = float(board.threshold)

            def half_score(logit: float, c: float = mid - 0.5, n: int = n) -> float:
                l1, l0 = loss_pair(np.array([logit]), self.eps)
                return (c * float(l1[0]) + (n - c) * float(l0[0])) / n

            top = min(0.0, math.log((mid - 0.5) / (n - mid + 0.5)))
            if half_score(-self.A) <= thr:
                raise AttackFailed("the count search cannot place its threshold (height spent)")
            logit = _bisect(half_score, -self.A, top, thr)
            l1, l0 = loss_pair(np.array([logit]), self.eps)
            predicted = {c: (c * float(l1[0]) + (n - c) * float(l0[0])) / n for c in cands}
            p = np.full(n, expit(logit))
            level = board.ask(p)
            self.used += 1
            keep = []
            for c, s in predicted.items():
                accepted_if = s < thr - self.tol
                rejected_if = s >= thr + self.tol
                fits_reject = level is None and not accepted_if
                fits_accept = level is not None and not rejected_if and (
                    abs(float(level * board.step) - s) <= float(board.step) / 2 + self.tol)
                if fits_reject or fits_accept:
                    keep.append(c)
            if not keep:
                raise AttackFailed("no count of ones is consistent with the Ladder's answers")
            self.count_candidates = keep
            if len(keep) == 1:
                self.count = keep[0]

    # --- blocks ---------------------------------------------------------------------------------------

    def start_block(self) -> bool:
        unknown = np.flatnonzero(self.labels < 0)
        if len(unknown) == 0:
            return False
        k = min(self.block, len(unknown))
        self.block_rows = unknown[:k]
        self.lo, self.hi = 0, 1 << k
        return True

    def finish_block(self) -> None:
        k = len(self.block_rows)
        self.labels[self.block_rows] = bits_of(self.lo, k)
        self.block_rows = np.zeros(0, dtype=np.int64)

    def unknown_ones(self) -> int:
        assert self.count is not None
        return self.count - int((self.labels == 1).sum())

    def question(self, t: int, spread: float) -> tuple[np.ndarray, float, float] | None:
        """Predictions answering "V ≥ t" on the current block, with the predicted scores at ``V = t`` and
        ``V = t − 1``; ``None`` when the account's height cannot hold the question."""
        board = self.board
        assert board is not None
        k = len(self.block_rows)
        n = self.n
        known = self.labels >= 0
        in_block = np.zeros(n, dtype=bool)
        in_block[self.block_rows] = True
        background = ~known & ~in_block
        n_g = int(background.sum())
        c_u = self.unknown_ones()  # ones among block + background
        thr = float(board.threshold)
        w_min = 8 * self.tol * n
        accept_width = self.hi - t
        weight = max(w_min, spread * float(board.step) * n / max(accept_width, 1))
        known_ones = np.flatnonzero(self.labels == 1)
        known_zeros = np.flatnonzero(self.labels == 0)
        kmin = len(known_ones) * self.solver.known_min[1] + len(known_zeros) * self.solver.known_min[0]
        powers = np.array([float(1 << (k - 1 - j)) for j in range(k)])
        # The score if the block read 0 must itself be reachable: K = N·thr + W·(t − ½) <= the most the rows
        # can carry (unknown ones at the edge, known rows at their most loss).
        kmax = len(known_ones) * self.solver.known_max[1] + len(known_zeros) * self.solver.known_max[0]
        room = self.solver.background(-self.A, c_u, n_g, np.full(k, -self.A)) + kmax - n * thr
        if room <= 0:
            return None
        weight = min(weight, 0.9 * room / max(t - 0.5, 0.5))
        bg_logit = -self.A
        ballast_rows: list[tuple[int, float]] = []
        for _ in range(40):
            weight = min(weight, (LOGIT_CEILING - bg_logit) / powers[0]) if k else weight
            if weight < w_min:
                return None
            target = n * thr + weight * (t - 0.5)

            def total(logit: float, w: float = weight) -> float:
                # F(ℓ_bg) in closed form (softplus losses; the rows stay where float64 evaluates them exactly,
                # and the verification below uses the server's own losses).
                return float(n_g * np.logaddexp(0.0, logit) - c_u * logit
                             + np.logaddexp(0.0, logit + w * powers).sum())

            def slope(logit: float, w: float = weight) -> float:
                return float(n_g * expit(logit) - c_u + expit(logit + w * powers).sum())

            need = target - total(-self.A)
            placed_rows = self._ballast(need - kmin, known_ones, known_zeros)
            if placed_rows is None:
                return None
            ballast_rows = placed_rows
            placed = kmin + sum(loss - self.solver.known_min[int(self.labels[row])] for row, loss in ballast_rows)
            if abs(placed - need) <= 1e-9 * n and need >= kmin:
                bg_logit = -self.A
            else:
                tuned = self._tune_background(target, ballast_rows, total, slope)
                if tuned is None:
                    return None
                bg_logit = tuned
            if bg_logit + weight * powers[0] <= LOGIT_CEILING + 1e-9:
                break
        else:
            return None
        p = np.full(n, expit(bg_logit))
        p[self.block_rows] = expit(bg_logit + weight * powers)
        p[known_ones] = 1 - self.eps
        p[known_zeros] = self.eps
        for row, loss in ballast_rows:
            if self.labels[row] == 1:
                p[row] = math.exp(-loss) if loss > self.solver.known_min[1] else 1 - self.eps
            else:
                p[row] = 1 - self.eps if loss >= self.solver.known_max[0] else -math.expm1(-loss)
        s_t = self.predicted(p, t, c_u, n_g, bg_logit, k)
        s_below = self.predicted(p, t - 1, c_u, n_g, bg_logit, k)
        if not (s_t < thr - self.tol and s_below >= thr + self.tol):
            return None
        return p, s_t, s_below

    def _ballast(
        self, extra: float, known_ones: np.ndarray, known_zeros: np.ndarray
    ) -> list[tuple[int, float]] | None:
        """Known rows' losses adding ``extra`` over their minimum: zeros whole (their loss is exact only at the
        edges), ones continuous (a one's loss ``−ln p`` is exact at any ``p``). When the ones cannot finish it,
        one more zero overshoots and the background is tuned down; ``None`` when even every row at its most
        loss falls short."""
        out: list[tuple[int, float]] = []
        if extra <= 0:
            return out
        room0 = self.solver.known_max[0] - self.solver.known_min[0]
        room1 = self.solver.known_max[1] - self.solver.known_min[1]
        zeros = list(known_zeros)
        while zeros and extra >= room0:
            out.append((int(zeros.pop()), self.solver.known_max[0]))
            extra -= room0
        for row in known_ones:
            if extra <= 0:
                break
            take = min(extra, room1)
            out.append((int(row), self.solver.known_min[1] + take))
            extra -= take
        if extra > 0:
            if not zeros:
                return None
            out.append((int(zeros.pop()), self.solver.known_max[0]))
        return out

    def known_floor(self) -> float:
        """The known rows' summed loss with every one at its least."""
        ones = int((self.labels == 1).sum())
        zeros = int((self.labels == 0).sum())
        return ones * self.solver.known_min[1] + zeros * self.solver.known_min[0]

    def _tune_background(
        self, target: float, ballast_rows: list[tuple[int, float]], total: Any, slope: Any
    ) -> float | None:
        """The background logit putting the summed loss on ``target`` with ``ballast_rows`` (others at their
        least): ``F`` is convex in it, decreasing from the edge to its minimum (bisection on each)."""
        ballast = self.known_floor() + sum(loss - self.solver.known_min[int(self.labels[row])]
                                           for row, loss in ballast_rows)
        goal = target - ballast
        lo, hi = -self.A, LOGIT_CEILING
        for _ in range(56):  # the minimum: F' = 0, F' increasing
            mid = 0.5 * (lo + hi)
            if slope(mid) < 0:
                lo = mid
            else:
                hi = mid
        top = 0.5 * (lo + hi)
        if total(top) > goal or total(-self.A) < goal:
            return None
        return _bisect(total, -self.A, top, goal, iters=60)

    def predicted(self, p: np.ndarray, v: int, c_u: int, n_g: int, bg_logit: float, k: int) -> float:
        """The server's score for these predictions if the block reads ``v`` (the background holding the rest
        of the ones, wherever they are: their total depends only on how many). Affine in ``v`` for every ``v``
        (a ``v`` whose ones outnumber ``c_u`` is impossible, and the formula extends past it linearly)."""
        z = bits_of(v, k)
        ones_bg = c_u - int(z.sum())
        known = self.labels >= 0
        l1, l0 = loss_pair(np.array([bg_logit]), self.eps)
        parts = [float(row_losses(p[known], self.labels[known], self.eps).sum()),
                 float(row_losses(p[self.block_rows], z, self.eps).sum()),
                 ones_bg * float(l1[0]), (n_g - ones_bg) * float(l0[0])]
        return math.fsum(parts) / self.n

    def levels_left(self) -> float:
        board = self.board
        assert board is not None
        n_u = int((self.labels < 0).sum())
        share = self.unknown_ones() / n_u if n_u else 0.5
        floor = n_u * binary_entropy(share) * math.log(2) / self.n
        return max(0.0, (board.best - float(board.step) - floor) / float(board.step))

    def spare_levels(self) -> float:
        """Levels the accounts not opened yet will bring (each as high as the first one was), less the query
        that opens each."""
        left = self.accounts - self.next_account
        if left <= 0 or not self.boards:
            return 0.0
        first = self.boards[0]
        return left * max(0.0, first.first_release / float(first.step) - 2)

    def decode_block(self) -> bool:
        """Ask questions on the current block until it is decoded; ``False`` when queries or height ran out."""
        k = len(self.block_rows)
        while self.hi - self.lo > 1:
            if self.used >= self.budget:
                return False
            board = self.board
            assert board is not None
            n_u = int((self.labels < 0).sum())
            prior = min(max(self.unknown_ones() / n_u, 1e-3), 1 - 1e-3)
            # Queries the rest needs at about a bit each, or the budget left if smaller: the levels are spread
            # over them (an acceptance costs a level; when levels are plentiful it spreads over several, and
            # the released level says where the score fell).
            needed = n_u * binary_entropy(prior) + 1
            ratio = (self.levels_left() + self.spare_levels()) / max(min(self.budget - self.used, needed), 1)
            q = min(0.5, max(ratio, 1e-3))
            spread = max(1.0, min(MAX_SPREAD, 4 * ratio - 1))
            t = split_point(self.lo, self.hi, k, prior, q)
            asked = self.question(t, spread)
            if asked is None:
                if not self.open_account():
                    self.notes.append("height spent on every account")
                    return False
                continue
            p, s_t, s_below = asked
            level = board.ask(p)
            self.used += 1
            if level is None:
                self.hi = t
                continue
            self.lo = t
            slope = s_below - s_t  # score drop per unit of V
            value = float(level * board.step)
            half = float(board.step) / 2 + self.tol
            v_low = t + (s_t - (value + half)) / slope
            v_high = t + (s_t - (value - half)) / slope
            self.lo = max(self.lo, math.ceil(v_low - 1e-6))
            self.hi = min(self.hi, math.floor(v_high + 1e-6) + 1)
            if self.lo >= self.hi:
                raise AttackFailed("the Ladder's answers are inconsistent with every labeling of the block")
        self.finish_block()
        return True

    def adopt_opening(self, released: float, predictions: np.ndarray) -> None:
        """Take over an account whose first submission (``predictions``, every unknown row at or near the edge)
        was made by someone else (the ``ladder`` dispatcher): the counts of ones its release allows, a superset
        the count search narrows."""
        self.oracle.account = self.next_account  # type: ignore[attr-defined]
        self.next_account += 1
        self.used += 1
        step = self.pick_step(released)
        board = _Board(self.oracle, step, self.rtol, queries=1, opened=True, first_release=released)
        board.level = board.read(released)
        self.board = board
        self.boards.append(board)
        n = self.n
        y1, y0 = np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        l1, l0 = row_losses(predictions, y1, self.eps), row_losses(predictions, y0, self.eps)
        # With c ones the summed loss lies between the c rows of least and of most extra loss being the ones.
        extra = np.sort(l1 - l0)
        low = float(l0.sum()) + np.concatenate([[0.0], np.cumsum(extra)])
        high = float(l0.sum()) + np.concatenate([[0.0], np.cumsum(extra[::-1])])
        lo_s = (board.best - float(step) / 2) * n - self.tol * n
        hi_s = (board.best + float(step) / 2) * n + self.tol * n
        fits = [c for c in range(n + 1) if high[c] >= lo_s and low[c] <= hi_s]
        if not fits:
            raise AttackFailed("no count of ones fits the first release")
        self.count_candidates = fits
        if len(fits) == 1:
            self.count = fits[0]

    def adopt_start(self, start: dict[str, Any]) -> None:
        """Continue the current account from what the fingerprint left (:mod:`attacks.ladder.resume`): the
        count of ones and the step, found together by threshold questions, and the released best."""
        steps = self.steps if self.given_eta else self.steps + [
            s for s in round_steps(self.oracle.decimals) if s not in self.steps]
        count, step, released, used, counts = identify(self.oracle, start, steps,
                                                       budget=max(self.budget - self.used, 0))
        self.used += used
        self.next_account = BoardFacts.of(self.oracle).account + 1
        if step is None:
            raise AttackFailed("the step could not be told apart from the releases within the budget; give 'eta'")
        if step not in candidate_steps(self.n, None) and not self.given_eta:
            self.notes.append(f"step {float(step):.6g} identified from the answers")
        self.steps = [step]
        fresh = [float(v) for e, v in start.get("fresh", []) if int(e) == 0]
        board = _Board(self.oracle, step, self.rtol, queries=used, opened=True,
                       first_release=fresh[0] if fresh else float(start["leader"]))
        board.level = board.read(released)
        self.board = board
        self.boards.append(board)
        self.count_candidates = counts
        self.count = count

    def run(self, opening: tuple[float, np.ndarray] | None = None,
            start: dict[str, Any] | None = None) -> AttackResult:
        if start is not None:
            self.adopt_start(start)
        elif opening is not None:
            self.adopt_opening(*opening)
        elif not self.open_account():
            raise AttackFailed("no query or account left")
        self.find_count()
        if self.count is not None:
            while self.start_block():
                if not self.decode_block():
                    break
        return self.result()

    def result(self) -> AttackResult:
        n = self.n
        labels = self.labels.copy()
        confidence = np.where(labels >= 0, 1.0, 0.0)
        exact = int((labels >= 0).sum())
        open_rows = labels < 0
        if open_rows.any() and self.count is not None:
            c_u = self.unknown_ones()
            n_u = int(open_rows.sum())
            share = c_u / n_u
            if len(self.block_rows) and self.hi - self.lo >= 1:
                k = len(self.block_rows)
                marg = interval_marginals(self.lo, self.hi, k, min(max(share, 1e-6), 1 - 1e-6))
                rows = self.block_rows
                block_guess = (marg >= 0.5).astype(np.int64)
                sure = (marg <= 0) | (marg >= 1)
                labels[rows] = block_guess
                confidence[rows] = np.where(sure, 1.0, np.maximum(marg, 1 - marg))
                exact += int(sure.sum())
            rest = labels < 0
            majority = 1 if share >= 0.5 else 0
            labels[rest] = majority
            confidence[rest] = max(share, 1 - share)
        elif open_rows.any() and self.count_candidates:
            share = float(np.median(self.count_candidates)) / n
            labels[open_rows] = 1 if share >= 0.5 else 0
            confidence[open_rows] = max(share, 1 - share)
        bound = sum(ladder_bits(float(b.step), b.queries, self.eps, initial=b.first_release) for b in self.boards)
        details: dict[str, Any] = {
            "exact": exact,
            "count_of_ones": self.count,
            "accounts_used": len(self.boards),
            "step": float(self.boards[0].step) if self.boards else None,
            "first_release": [b.first_release for b in self.boards],
            "accepts": sum(b.accepts for b in self.boards),
            "queries": self.used,
            "bound_bits": bound,
            "notes": self.notes,
        }
        return AttackResult("ladder_fixed", labels, details=details, confidence=confidence)


def ladder_fixed_attack(
    oracle: Oracle,
    *,
    eta: float | None = None,
    budget: int | None = None,
    block: int = DEFAULT_BLOCK,
    first_account: int | None = None,
    prior: float | None = None,
    start: dict[str, Any] | None = None,
) -> AttackResult:
    """Threshold questions on a fixed-step Ladder (module docstring). ``eta``: the step if disclosed (else the
    defense's default ``n^(-1/3)`` or ``1/√n``, checked against the first release); ``budget``: the submissions
    to spend, every account's together (default ``2·N``); ``first_account``: the first fresh account to use
    (default: the oracle's current one), later ones follow when a account's height is spent. Every row gets a
    label: exact (confidence 1.0) where decoded, else the majority class of the rows left (or the block's
    posterior). ``start``: continue the
    current account from the fingerprint's releases (:attr:`attacks.fingerprint.Fingerprint.ladder_start`)
    instead of opening it; the step is then identified among the defaults and round steps if not given."""
    return FixedLadderAttack(oracle, eta=eta, budget=budget, block=block, first_account=first_account,
                             prior=prior).run(start=start)
