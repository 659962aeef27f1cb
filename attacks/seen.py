"""What the fingerprint's probes showed (:class:`Fingerprint`): the released precision, noise, sticky scores, a
public split, subsetting, fresh flips, refusals and the class balance. The probes themselves are in
:mod:`attacks.fingerprint`; this record sits below the catalogue (:class:`attacks.catalogue.BoardFacts` carries
it as ``seen``), so it imports nothing of the attacks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class Fingerprint:
    """What the probes showed. ``None`` means "not measured" (budget, metric, or nothing released)."""

    probes: int = 0
    metadata_decimals: int | None = None
    decimals: int | None = None
    full_precision: bool = False
    noise: bool | None = None
    noise_spread: float = 0.0
    #: The Laplace scale the probes estimate (mean |draw| of label-free probes), where measured for an attack to use.
    noise_scale: float | None = None
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
    #: On a Ladder-like board, what the Ladder attacks continue from: ``leader`` (the released best),
    #: ``edge`` (0: every row at ``eps``, 1: every row at ``1 − eps`` made it), ``fresh`` (``[edge, released]``
    #: of each accepted edge probe), ``stale`` (edges whose probe was not accepted).
    ladder_start: dict[str, Any] | None = None
    #: The Ladder was found by a probe it accepted that is not an edge probe: its leader is no edge file, so
    #: the Ladder attack cannot continue this account (a fresh one can).
    ladder_accepted_off_edge: bool = False
    #: Parameters taken from the host's disclosure instead of measured (:mod:`attacks.disclosure`), and the
    #: disclosed values a release contradicted (then measured; the attacks then ignore the disclosure).
    told: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
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
        told = [f"disclosed by the host, not measured: {', '.join(self.told)}"] if self.told else []
        told += [f"disclosure contradicted by a release, measured instead: {line}" for line in self.contradicted]
        if self.probes == 0:
            return [f"no fingerprint probes: trusting the metadata ({_decimals_text(self.decimals)})", *told]
        lines = [f"fingerprint: {self.probes} probe(s); released precision {_decimals_text(self.decimals)}"
                 + ("" if self.metadata_decimals == self.decimals else f" (metadata: {self.metadata_decimals})")]
        lines.extend(told)
        if self.rejected or self.released_nothing:
            lines.append(f"{self.rejected} probe(s) refused by the board"
                         + ("; some released nothing (withheld)" if self.released_nothing else ""))
        if self.noise is True and any("noise" in line for line in self.told):
            lines.append(f"noise: scale {self.noise_spread:.3g} on the mean, as disclosed")
        elif self.noise is True:
            lines.append(f"noise: the label-free probes moved by up to {self.noise_spread:.3g}")
        elif self.noise is False:
            lines.append("no noise: repeated label-free probes released the same score")
        if self.ladder:
            lines.append("sticky scores: the board re-released an earlier score (Ladder or threshold mechanism)")
        elif self.ladder is False:
            lines.append("scores not sticky: no edge probe re-released another probe's score")
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
