"""The design of the ``noisy`` attack, stored for decoding at tens of thousands of rows.

Every design query puts each row at the clipping edge, ``p = p_lo`` or ``1 − p_lo`` (``p_lo``: the power of two
at or above ``eps``): binary log loss then adds ``c·y_i`` (at ``p_lo``) or ``c·(1 − y_i)`` (at ``1 − p_lo``) to
the released mean, ``c = A/N``, ``A = ln((1 − p_lo)/p_lo)``. So the release is ``offset + Σ_i c·s_qi·y_i +
noise`` with a sign ``s_qi = ±1`` the attacker
knows, and the weight matrix is ``c·S``. :class:`SignDesign` keeps ``S`` as float32 ``±1`` blocks of queries
(4 bytes per entry instead of a float64 weight's 8; exact, since only the sign varies) and offers the products the
decoders need, ``S x`` and ``Sᵀ z``, block by block with an optional per-query scaling (whitening). At 25,000 rows
and 13,000 queries that is 1.3 GB (a 25,000-row run held 1.2 GB at 10,000 queries).
"""

from __future__ import annotations

import math

import numpy as np

BLOCK = 512


class SignDesign:
    """The signs (queries × rows, ``±1``), offsets and releases of the design queries sent so far."""

    def __init__(self, n_rows: int, eps: float) -> None:
        self.n = n_rows
        self.eps = eps
        # The edge is the power of two at or above eps: then 1 − p_lo is exact in floating point and both sides
        # weigh the same to the last bit (at p = eps itself, 1 − (1 − eps) ≠ eps, and the two weights would
        # differ by 8e-4/N: twenty times the 5th decimal on a small board). It costs 1.7 % of A at eps = 1e-15.
        self.p_lo = 2.0 ** math.ceil(math.log2(eps))
        lo, hi = float(-np.log1p(-self.p_lo)), float(-np.log(self.p_lo))  # a row's loss on its side / the other
        #: ``c``: the weight of one row (``(hi − lo)/N ≈ A/N``).
        self.unit = (hi - lo) / n_rows
        self._lo = lo
        self._blocks: list[np.ndarray] = []
        self._open: list[np.ndarray] = []
        self.offsets: list[float] = []
        self.releases: list[float] = []

    def __len__(self) -> int:
        return len(self.offsets)

    def predictions(self, signs: np.ndarray) -> np.ndarray:
        """The file for signs ``s``: ``p_lo`` where ``s = +1`` (the row adds ``c·y``), ``1 − p_lo`` where ``−1``."""
        return np.where(signs > 0, self.p_lo, 1.0 - self.p_lo)

    def add(self, signs: np.ndarray, release: float) -> None:
        """Record a query with ``signs`` that released ``release``."""
        s = np.where(signs > 0, 1.0, -1.0).astype(np.float32)
        # Rows at 1 − eps add c·(1 − y) = c − c·y: their c goes to the offset.
        self.offsets.append(self._lo + float((s < 0).sum()) * self.unit)
        self.releases.append(release)
        self._open.append(s)
        if len(self._open) >= BLOCK:
            self._blocks.append(np.stack(self._open))
            self._open = []

    def blocks(self) -> list[np.ndarray]:
        """The sign matrix as a list of row blocks (in query order)."""
        if self._open:
            self._blocks.append(np.stack(self._open))
            self._open = []
        return self._blocks

    def observed(self) -> np.ndarray:
        """Each query's release minus its known offset: ``c·Σ_i s_qi y_i + noise``."""
        return np.asarray(self.releases) - np.asarray(self.offsets)

    def matvec(self, x: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        """``diag(scale)·S·x`` (float64 result)."""
        xs = np.asarray(x, dtype=np.float32)
        out = np.concatenate([b @ xs for b in self.blocks()]).astype(np.float64) if len(self) else np.zeros(0)
        return out if scale is None else out * scale

    def rmatvec(self, z: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
        """``Sᵀ·diag(scale)·z`` (float64 result)."""
        zz = np.asarray(z if scale is None else z * scale, dtype=np.float64)
        out = np.zeros(self.n)
        start = 0
        for b in self.blocks():
            out += (zz[start:start + len(b)].astype(np.float32) @ b).astype(np.float64)
            start += len(b)
        return out

    def column(self, i: int) -> np.ndarray:
        """The signs of row ``i`` over all queries."""
        return np.concatenate([b[:, i] for b in self.blocks()]).astype(np.float64)

    def dense(self) -> np.ndarray:
        """The full weight matrix ``c·S`` (float64; small designs and tests only)."""
        return np.concatenate(self.blocks()).astype(np.float64) * self.unit
