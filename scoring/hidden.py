"""The hidden test set: ids, integer labels and the fixed public/private split.

Parsing the host's ``id,label`` CSV lives here too, so the admin, the management command, the host API and
the offline oracle all read labels the same way.
"""

from __future__ import annotations

import csv
import io
import math
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring import fast_csv
from scoring.errors import ConfigurationError

#: The text of a label: ASCII digits, optionally signed (the sign is refused after, with its own message).
INTEGER_LABEL = re.compile(r"[+-]?[0-9]+")


_UNSET: Any = object()


class IdIndex(Mapping[str, int]):
    """``{id: position}`` of a sequence of ids, looked up many at a time (:meth:`positions`).

    Plain ids (printable ASCII, no space, comma or quote: every competition's so far) are looked up in
    :mod:`scoring.fast_csv`'s numpy hash table, built on the first lookup and shared with the CSV fast path
    (:attr:`fast_ids`): ten million ids cost about 210 MB there, against about 1.2 GB for a dict of Python
    strings. Other ids fall back to a dict, built on first use too. Either way a match is exact.
    """

    def __init__(self, ids: Sequence[str]) -> None:
        self._ids = ids
        self._fast: fast_csv.HiddenIds | None = _UNSET
        self._built: dict[str, int] | None = None
        self._lock = threading.Lock()

    @property
    def fast_ids(self) -> fast_csv.HiddenIds | None:
        """The ids as the CSV fast path reads them (``None``: ids that are not plain)."""
        fast = self._fast
        if fast is _UNSET:
            with self._lock:
                if self._fast is _UNSET:
                    self._fast = fast_csv.hidden_ids(self._ids)
                fast = self._fast
        return fast

    @property
    def _dict(self) -> dict[str, int]:
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    self._built = {row_id: i for i, row_id in enumerate(self._ids)}
                built = self._built
        return built

    def positions(self, row_ids: Sequence[str]) -> np.ndarray:
        """Each row id's position among the ids (exact match), -1 where it is none of them."""
        fast = self.fast_ids
        if fast is not None:
            from scoring.ids import as_id_array

            return fast_csv.lookup_ids(fast, as_id_array(row_ids).arrow)
        index = self._dict
        return np.fromiter((index.get(row_id, -1) for row_id in row_ids), dtype=np.int64, count=len(row_ids))

    def __reduce__(self) -> tuple[type[IdIndex], tuple[Sequence[str]]]:
        """Pickled (or copied) as its ids: the lock cannot be, and the tables are rebuilt where needed."""
        return IdIndex, (self._ids,)

    def __getitem__(self, row_id: str) -> int:
        position = self.get(row_id)
        if position is None:
            raise KeyError(row_id)
        return int(position)

    def get(self, row_id: str, default: Any = None) -> Any:
        if not isinstance(row_id, str):
            return default
        position = int(self.positions([row_id])[0])
        return default if position < 0 else position

    def __contains__(self, row_id: object) -> bool:
        return isinstance(row_id, str) and self.get(row_id) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


@dataclass(frozen=True)
class HiddenTestSet:
    """Ids in their canonical order, labels ``0..K-1`` and the public mask (True = public row).

    ``ids`` is any sequence of strings: a tuple offline, an :class:`scoring.ids.IdArray` (one Arrow array, no
    Python string per id) on the site and for large sets.

    ``ignored_mask`` (True = scored nowhere; ``None``: every row is scored) marks the rows a host's solution file
    calls ``Ignored`` (:mod:`scoring.solution`): participants predict them, no split holds them.
    """

    ids: Sequence[str]
    labels: np.ndarray
    n_classes: int
    public_mask: np.ndarray
    ignored_mask: np.ndarray | None = None
    _index: IdIndex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.labels) or len(self.ids) != len(self.public_mask):
            raise ConfigurationError("ids, labels and the public mask must have the same length")
        if self.ignored_mask is not None and len(self.ignored_mask) != len(self.ids):
            raise ConfigurationError("ids and the ignored mask must have the same length")
        object.__setattr__(self, "_index", IdIndex(self.ids))

    @property
    def n_rows(self) -> int:
        return len(self.ids)

    @property
    def id_index(self) -> IdIndex:
        """Map from id to row position (a dict built on first use: the CSV fast path never needs one)."""
        return self._index

    def split_rows(self, split: str) -> np.ndarray:
        """Row positions of ``split``: ``"public"``, ``"private"`` or ``"all"`` (ignored rows are in none).

        >>> hidden = HiddenTestSet(("1", "2", "3"), np.zeros(3, int), 2, np.array([True, False, False]),
        ...                        ignored_mask=np.array([False, False, True]))
        >>> [hidden.split_rows(split).tolist() for split in ("public", "private", "all")]
        [[0], [1], [0, 1]]
        """
        scored = None if self.ignored_mask is None else ~np.asarray(self.ignored_mask, dtype=bool)
        if split == "all":
            return np.arange(self.n_rows) if scored is None else np.flatnonzero(scored)
        if split == "public":
            mask = np.asarray(self.public_mask, dtype=bool)
        elif split == "private":
            mask = ~np.asarray(self.public_mask, dtype=bool)
        else:
            raise ValueError(f"unknown split {split!r}")
        return np.flatnonzero(mask if scored is None else mask & scored)


def public_split_mask(n_rows: int, public_fraction: float, seed: int) -> np.ndarray:
    """A fixed random public/private split drawn from the competition's secret seed.

    ``round(public_fraction * n_rows)`` rows are public; when the fraction is strictly between 0 and 1, both
    splits hold at least one row, so both boards have something to score.
    """
    if not 0.0 <= public_fraction <= 1.0:
        raise ConfigurationError(f"public fraction must lie in [0, 1], got {public_fraction}")
    n_public = round(public_fraction * n_rows)
    if 0.0 < public_fraction < 1.0 and n_rows >= 2:
        n_public = min(max(n_public, 1), n_rows - 1)
    rng = np.random.default_rng(seed)
    mask = np.zeros(n_rows, dtype=bool)
    mask[rng.permutation(n_rows)[:n_public]] = True
    return mask


def canonical_order(ids: Sequence[str]) -> np.ndarray:
    """The positions of ``ids`` in the competition's canonical order: by id, a function of the ids alone, so
    the order the host's file happened to have (sorted by label, say) never reaches a participant.

    Ids that are all plain digits sort as numbers (``2`` before ``10``; ``007`` just before ``7``), any
    others as strings (by their UTF-8 bytes). The sample submission, a JSON submission's list, the rows fed to
    a model and the public/private split's draw all follow this order.

    >>> canonical_order(["10", "2", "1"]).tolist()
    [2, 1, 0]
    >>> canonical_order(["b", "a10", "a9"]).tolist()
    [1, 2, 0]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from scoring.ids import as_id_array

    array = as_id_array(ids).arrow
    if not len(array):
        return np.zeros(0, dtype=np.int64)
    if pc.all(pc.match_substring_regex(array, r"^[0-9]+$")).as_py():
        digits = pc.utf8_ltrim(array, "0")
        table = pa.table({"length": pc.utf8_length(digits), "digits": digits, "id": array})
        keys = [("length", "ascending"), ("digits", "ascending"), ("id", "ascending")]
        return np.asarray(pc.sort_indices(table, sort_keys=keys), dtype=np.int64)
    return np.asarray(pc.sort_indices(array), dtype=np.int64)


def in_canonical_order(ids: Sequence[str], labels: np.ndarray) -> tuple[Sequence[str], np.ndarray]:
    """``ids`` and their ``labels`` in the canonical order (:func:`canonical_order`); ids keep their type (an
    :class:`~scoring.ids.IdArray` stays one, a list comes back a list)."""
    from scoring.ids import IdArray

    order = canonical_order(ids)
    if isinstance(ids, IdArray):
        import pyarrow as pa

        return IdArray(ids.arrow.take(pa.array(order))), labels[order]
    listed = list(ids)
    return [listed[i] for i in order], labels[order]


def parse_labels_csv(
    data: bytes | str, *, n_classes: int | None = None
) -> tuple[Sequence[str], np.ndarray, int]:
    """Read a host's ``id,label`` CSV into ids, integer labels and the number of classes, the rows in the
    canonical order (:func:`canonical_order`: by id, numbers as numbers), never the file's.

    ``n_classes`` defaults to ``max(label) + 1`` (at least 2). Errors name the line. The ids of a plain file come
    back as an :class:`~scoring.ids.IdArray` (no Python string per id), any other's as a list.

    A plain file (:func:`scoring.fast_csv.read_labels_csv`: ASCII, no quotes, plain ids and digit labels, no
    repeated id) is read by Arrow's C reader; any other, and every file with a problem, by the ``csv`` reader
    below, which names the line.
    """
    raw = data if isinstance(data, bytes) else data.encode("ascii") if data.isascii() else None
    fast = fast_csv.read_labels_csv(raw) if raw is not None else None
    if fast is not None:
        ids, labels, k = _with_classes(fast[0], fast[1], n_classes)
    else:
        ids, labels, k = _parse_labels_exact(data, n_classes=n_classes)
    ids, labels = in_canonical_order(ids, labels)
    return ids, labels, k


def _parse_labels_exact(
    data: bytes | str, *, n_classes: int | None = None
) -> tuple[Sequence[str], np.ndarray, int]:
    """The ``csv`` path: decides every file and names the first bad line."""
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    reader = csv.reader(io.StringIO(text))
    try:
        return _read_labels(reader, n_classes)
    except csv.Error as exc:  # e.g. a quoted field over the csv module's limit of 131,072 characters
        raise ConfigurationError(f"line {reader.line_num}: malformed CSV: {exc}") from None


def _read_labels(reader: Iterator[list[str]], n_classes: int | None) -> tuple[Sequence[str], np.ndarray, int]:
    try:
        header = next(reader)
    except StopIteration:
        raise ConfigurationError("the labels file is empty") from None
    if [h.strip().lower() for h in header] != ["id", "label"]:
        raise ConfigurationError(f"line 1: the labels header must be 'id,label', got {','.join(header)!r}")
    ids: list[str] = []
    labels: list[int] = []
    seen: set[str] = set()
    for line_no, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != 2:
            raise ConfigurationError(f"line {line_no}: expected 2 columns (id,label), got {len(row)}")
        row_id, label_text = row[0].strip(), row[1].strip()
        if not row_id:
            raise ConfigurationError(f"line {line_no}: empty id")
        if row_id in seen:
            raise ConfigurationError(f"line {line_no}: duplicate id {row_id!r}")
        # ``int`` also reads "1_0" and non-ASCII digits; a label is plain ASCII digits.
        if not INTEGER_LABEL.fullmatch(label_text):
            raise ConfigurationError(f"line {line_no}: label {label_text!r} is not an integer")
        label = int(label_text)
        if label < 0:
            raise ConfigurationError(f"line {line_no}: label {label} is negative")
        if label >= 2**63:
            raise ConfigurationError(f"line {line_no}: label {label_text!r} is too large")
        seen.add(row_id)
        ids.append(row_id)
        labels.append(label)
    if not ids:
        raise ConfigurationError("the labels file has no rows")
    return _with_classes(ids, np.asarray(labels, dtype=np.int64), n_classes)


def _with_classes(
    ids: Sequence[str], label_array: np.ndarray, n_classes: int | None
) -> tuple[Sequence[str], np.ndarray, int]:
    k = max(int(label_array.max()) + 1, 2) if n_classes is None else n_classes
    if n_classes is not None and int(label_array.max()) >= n_classes:
        raise ConfigurationError(f"a label is {int(label_array.max())} but the competition has {n_classes} classes")
    return ids, label_array, k


MAX_FEATURES = 100_000


def parse_features_csv(data: bytes | str, ids: Sequence[str]) -> np.ndarray:
    """Read a host's hidden test features (``id,f1,...,fd``, any column names after ``id``) into a float64
    matrix in the order of ``ids`` (the labels file's ids: the same set, each once). Errors name the line.

    >>> parse_features_csv("id,a,b\\nr2,3,4\\nr1,1,2.5\\n", ["r1", "r2"])
    array([[1. , 2.5],
           [3. , 4. ]])
    """
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
    reader = csv.reader(io.StringIO(text))
    try:
        return _read_features(reader, ids)
    except csv.Error as exc:
        raise ConfigurationError(f"line {reader.line_num}: malformed CSV: {exc}") from None


def _read_features(reader: Iterator[list[str]], ids: Sequence[str]) -> np.ndarray:
    try:
        header = next(reader)
    except StopIteration:
        raise ConfigurationError("the features file is empty") from None
    if not header or header[0].strip().lower() != "id" or len(header) < 2:
        raise ConfigurationError(f"line 1: the features header must be 'id,f1,...,fd', got {','.join(header)!r}")
    width = len(header) - 1
    if width > MAX_FEATURES:
        raise ConfigurationError(f"line 1: {width} features, over the limit of {MAX_FEATURES}")
    position = {row_id: i for i, row_id in enumerate(ids)}
    features = np.full((len(ids), width), np.nan)
    seen = np.zeros(len(ids), dtype=bool)
    for line_no, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != width + 1:
            raise ConfigurationError(f"line {line_no}: expected {width + 1} columns (id and {width} features), "
                                     f"got {len(row)}")
        row_id = row[0].strip()
        i = position.get(row_id)
        if i is None:
            raise ConfigurationError(f"line {line_no}: id {row_id!r} is not in the labels file")
        if seen[i]:
            raise ConfigurationError(f"line {line_no}: duplicate id {row_id!r}")
        try:
            values = [float(cell) for cell in row[1:]]
        except ValueError:
            bad = next(cell for cell in row[1:] if not _is_float(cell))
            raise ConfigurationError(f"line {line_no}: feature {bad.strip()!r} is not a number") from None
        if not all(math.isfinite(value) for value in values):
            raise ConfigurationError(f"line {line_no}: a feature is not a finite number (NaN or infinity)")
        features[i] = values
        seen[i] = True
    if not seen.all():
        missing = ids[int(np.flatnonzero(~seen)[0])]
        raise ConfigurationError(f"the features file has no row for id {missing!r} ({int((~seen).sum())} ids "
                                 "of the labels file missing)")
    return features


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
