"""Kaggle's solution file: the hidden labels and the host's own public/private split in one CSV.

A header ``id``, the target column(s) and ``Usage``; each row's ``Usage`` is ``Public`` (scored on the public
board), ``Private`` (the private board) or ``Ignored`` (in the submission format, scored on neither board: Kaggle
adds such rows to keep participants from labelling the test set by hand). One target column holds integer
labels ``0..K-1``; several target columns are one-hot, class ``k`` the ``k``-th of them. An Ignored row's target
is never read (Kaggle files often carry a placeholder there).

>>> solution = parse_solution_csv("id,target,Usage\\n2,1,Public\\n1,0,Private\\n3,x,Ignored\\n")
>>> list(solution.ids), solution.labels.tolist(), solution.n_classes
(['1', '2', '3'], [0, 1, 0], 2)
>>> solution.public_mask.tolist(), solution.ignored_mask.tolist(), solution.counts
([False, True, False], [False, False, True], {'Public': 1, 'Private': 1, 'Ignored': 1})
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.errors import ConfigurationError
from scoring.hidden import INTEGER_LABEL, canonical_order

USAGES = ("Public", "Private", "Ignored")
_USAGE_CODES = {name.lower(): code for code, name in enumerate(USAGES)}
_PUBLIC, _PRIVATE, _IGNORED = range(3)
_ONE_HOT = {"0": 0, "1": 1, "0.0": 0, "1.0": 1}


@dataclass(frozen=True)
class Solution:
    """A parsed solution file, rows in the canonical order (:func:`scoring.hidden.canonical_order`).

    ``labels`` of Ignored rows are 0 (never read); ``public_mask`` and ``ignored_mask`` are boolean, and a row
    neither public nor ignored is private.
    """

    ids: Sequence[str]
    labels: np.ndarray
    n_classes: int
    public_mask: np.ndarray
    ignored_mask: np.ndarray
    target_columns: tuple[str, ...]

    @property
    def counts(self) -> dict[str, int]:
        ignored = int(self.ignored_mask.sum())
        public = int(self.public_mask.sum())
        return {"Public": public, "Private": len(self.ids) - public - ignored, "Ignored": ignored}

    @property
    def public_fraction(self) -> float:
        """The share of the scored rows that are public (what the competition's metadata states)."""
        counts = self.counts
        return counts["Public"] / (counts["Public"] + counts["Private"])


def parse_solution_csv(data: bytes | str) -> Solution:
    """Read a Kaggle solution file; :class:`ConfigurationError` names the line and the problem."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConfigurationError(f"the solution file is not valid UTF-8 (byte {exc.start})") from None
    else:
        text = data
    reader = csv.reader(io.StringIO(text))
    try:
        return _read(reader)
    except csv.Error as exc:
        raise ConfigurationError(f"line {reader.line_num}: malformed CSV: {exc}") from None


def _read(reader: Iterator[list[str]]) -> Solution:
    try:
        header = [name.strip() for name in next(reader)]
    except StopIteration:
        raise ConfigurationError("the solution file is empty") from None
    lowered = [name.lower() for name in header]
    for needed in ("id", "usage"):
        if needed not in lowered:
            raise ConfigurationError(
                f"line 1: missing column {'Usage' if needed == 'usage' else 'id'!r} (Kaggle's solution format is "
                f"id, the target column(s), Usage); the header is {','.join(header)!r}"
            )
        if lowered.count(needed) > 1:
            raise ConfigurationError(f"line 1: the column {needed!r} appears twice")
    id_at, usage_at = lowered.index("id"), lowered.index("usage")
    targets = [i for i in range(len(header)) if i not in (id_at, usage_at)]
    if not targets:
        raise ConfigurationError("line 1: no target column (the header needs id, the target column(s), Usage)")
    if len(set(lowered)) != len(lowered):
        raise ConfigurationError("line 1: a column name appears twice")
    one_hot = len(targets) > 1
    ids: list[str] = []
    labels: list[int] = []
    usages: list[int] = []
    seen: dict[str, int] = {}
    for line_no, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise ConfigurationError(f"line {line_no}: expected {len(header)} columns, got {len(row)}")
        row_id = row[id_at].strip()
        if not row_id:
            raise ConfigurationError(f"line {line_no}: empty id")
        if row_id in seen:
            raise ConfigurationError(f"line {line_no}: duplicate id {row_id!r} (first on line {seen[row_id]})")
        usage_text = row[usage_at].strip()
        usage = _USAGE_CODES.get(usage_text.lower())
        if usage is None:
            raise ConfigurationError(
                f"line {line_no}: unknown Usage {usage_text!r} (Public, Private or Ignored)"
            )
        values = [row[i].strip() for i in targets]
        label = 0 if usage == _IGNORED else (_one_hot_label(values, line_no) if one_hot else _label(values[0], line_no))
        seen[row_id] = line_no
        ids.append(row_id)
        labels.append(label)
        usages.append(usage)
    if not ids:
        raise ConfigurationError("the solution file has no rows")
    usage_array = np.asarray(usages, dtype=np.int8)
    scored = usage_array != _IGNORED
    if not scored.any():
        raise ConfigurationError("every row is Ignored: nothing would be scored")
    if not (usage_array == _PUBLIC).any():
        raise ConfigurationError("no row is Public: participants would never see a score")
    label_array = np.asarray(labels, dtype=np.int64)
    n_classes = len(targets) if one_hot else max(int(label_array[scored].max()) + 1, 2)
    order = canonical_order(ids)
    return Solution(
        ids=[ids[i] for i in order],
        labels=label_array[order],
        n_classes=n_classes,
        public_mask=(usage_array == _PUBLIC)[order],
        ignored_mask=(usage_array == _IGNORED)[order],
        target_columns=tuple(header[i] for i in targets),
    )


def _label(text: str, line_no: int) -> int:
    # The labels file's rule: plain ASCII digits (``int`` would also read "1_0" and non-ASCII digits).
    if not INTEGER_LABEL.fullmatch(text):
        raise ConfigurationError(f"line {line_no}: label {text!r} is not an integer class 0..K-1")
    label = int(text)
    if label < 0:
        raise ConfigurationError(f"line {line_no}: label {label} is negative")
    if label >= 2**31:
        raise ConfigurationError(f"line {line_no}: label {text!r} is too large")
    return label


def _one_hot_label(values: list[str], line_no: int) -> int:
    bits = [_ONE_HOT.get(value) for value in values]
    if any(bit is None for bit in bits):
        bad = next(value for value, bit in zip(values, bits, strict=True) if bit is None)
        raise ConfigurationError(f"line {line_no}: {bad!r} is not 0 or 1 (several target columns are one-hot)")
    if sum(bits) != 1:  # type: ignore[arg-type]
        raise ConfigurationError(
            f"line {line_no}: {sum(bits)} target columns hold 1; a one-hot row has exactly one"  # type: ignore[arg-type]
        )
    return bits.index(1)
