"""What paper 004's attacks may assume about the server: how far a released log loss can be from the exact
one, how to submit predictions at the server's precision, and how to read a released score back.

The paper assumes the exact score (Sections 2.1–2.3) or φ significant digits (Section 3). A real or emulated
server releases ``decimals`` places of a float64 or φ-bit MPFR computation, so every decoder here works with
an interval: ``N × released`` lies within :meth:`ServerModel.sum_tolerance` of the exact summed loss of the
submitted values — the one server model's bound (:mod:`attacks.server_model`), pessimistic (worst-case
rounding, not typical rounding), so a decoder that finds exactly one labeling in the interval can vouch for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from attacks import server_model
from attacks.exact import local_precision, mpfr
from attacks.oracle import Oracle, Released
from attacks.result import AttackFailed
from attacks.server_model import CERTIFIED_MARGIN


@dataclass(frozen=True)
class ServerModel(server_model.ServerModel):
    """The server model (:class:`attacks.server_model.ServerModel`) as paper 004's binary attacks use it:
    the attacker works at :attr:`work_bits`, submits :attr:`digits`-digit strings to an MPFR server, and
    decodes the summed loss within :meth:`sum_tolerance`."""

    @classmethod
    def of(
        cls, oracle: Oracle, *, noise_bound: float = 0.0, bits: int | None = None, n_scored: int | None = None
    ) -> ServerModel:
        """Read the model off ``oracle`` (a binary log-loss leaderboard); ``bits`` makes the attacker assume
        a φ-bit MPFR server (e.g. when only a lower bound on φ is known)."""
        if oracle.metric != "binary_logloss":
            raise AttackFailed(f"paper 004's attacks read binary log loss; this leaderboard reports {oracle.metric!r}")
        if oracle.n_classes != 2:
            raise AttackFailed(f"paper 004's binary attacks need 2 classes, the leaderboard has {oracle.n_classes}")
        return super().of(oracle, noise_bound=noise_bound, bits=bits, n_scored=n_scored)

    @property
    def work_bits(self) -> int:
        """Precision for the attacker's own arithmetic: well beyond the server's."""
        return self.phi + 128

    @property
    def digits(self) -> int:
        """Significant digits of a submitted decimal string (MPFR servers): finer than the server reads."""
        return math.ceil(self.phi * math.log10(2)) + 6

    def sum_tolerance(self, loss_magnitude: Any, read_sensitivity: Any) -> Any:
        """An upper bound (an ``mpfr``) on ``|N × released − Σ exact row losses|``.

        ``loss_magnitude`` bounds ``Σ |row loss|`` over every labeling; ``read_sensitivity`` is
        ``Σ max(1, x/(1-x))`` over the rows, which turns the relative error of reading a prediction ``x`` at
        the server's precision into an error of its log. The server model's
        :meth:`~attacks.server_model.ServerModel.error_bound` with, as the rows' own errors, the logarithms
        (:meth:`~attacks.server_model.ServerModel.rows_error`) and the reading of the predictions
        (:meth:`~attacks.server_model.ServerModel.read_error`).
        """
        with local_precision(self.bound_bits):
            rows = self.rows_error(loss_magnitude, self.scored) + self.read_error(read_sensitivity)
            return self.error_bound(loss_magnitude, rows, margin=CERTIFIED_MARGIN)

    def encode(self, values: Sequence[Any]) -> list[Any]:
        """Predictions to submit: float64 values, or decimal strings finer than φ bits for an MPFR server."""
        if self.is_float64:
            return [float(v) for v in values]
        spec = f".{self.digits}e"
        return ["0.5" if v == mpfr("0.5") else format(v, spec) for v in values]

    def summed_loss(self, released: Released) -> Any:
        """``N × released`` at the attacker's precision; raises when nothing was released."""
        if released is None:
            raise AttackFailed("the leaderboard released no score for a probe, so the attack cannot decode it")
        with local_precision(self.work_bits):
            return self.observe(released, self.work_bits) * self.scored

    def logit_limit(self) -> float:
        """The largest ``|logit|`` a prediction may have without being clipped (with a factor-2 margin)."""
        return math.log((1 - 2 * self.eps) / (2 * self.eps))


def batches(n_rows: int, size: int) -> list[range]:
    """Consecutive row ranges of ``size`` (the last one may be shorter)."""
    return [range(start, min(start + size, n_rows)) for start in range(0, n_rows, size)]


