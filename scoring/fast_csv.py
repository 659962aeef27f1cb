"""The CSV parser's fast path: Arrow's C reader for plain, valid uploads; ``None`` whenever it cannot vouch.

:func:`scoring.parsing.parse_submission_csv` tries :func:`read_plain_csv` first and, on ``None``, runs its
pure-Python path, which decides everything (and names the first bad line). So this module only has to be
*sound*: whatever it returns is exactly what the pure-Python path would return for the same bytes. It takes
only files where the two readers provably see the same cells:

* the hidden ids are plain (printable ASCII, no space, comma or quote; :func:`hidden_ids`) — so a submitted
  id that matches one exactly contains nothing the pure-Python path would strip, split or unquote;
* the whole file is ASCII (after a UTF-8 BOM), has no ``"`` (Arrow reads it with quoting off), its header is
  exactly the expected one (ASCII case aside), and it has exactly ``len(ids)`` rows on ``len(ids) - 1``
  ``\\n`` after the header, once trailing whitespace is dropped — a hostile body of extra lines is never
  handed to Arrow, and a lone ``\\r`` (a break for both readers) makes a row count Arrow's table fails;
* every value cell converts as float64 with no null spelling (``null_values=[]``): Arrow's reader accepts a
  subset of what ``float`` does (no ``_``, no hex, no non-ASCII digits, no control characters; ``' '`` and
  ``'\\t'`` trimmed, as ``float`` does) and rounds the same, correctly;
* every id is found, once, by exact comparison of its bytes and length with a hidden id.

Anything else (a NaN, a value outside [0, 1] or a multiclass sum off by more than the tolerance included) is
left to the pure-Python path. ``tests/scoring/test_parsing_fast.py`` checks both paths agree on random and
adversarial inputs.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_BOM = codecs.BOM_UTF8
#: Bytes ``bytes.rstrip`` drops (``str.rstrip`` drops these and more, so stripping them is always safe).
_TRAILING = b" \t\n\r\x0b\x0c"
#: Trailing whitespace scanned byte by byte before handing the strip to ``bytes.rstrip`` (one copy).
_TRAILING_SCAN = 64
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_HASH_MIX = np.uint64(0xBF58476D1CE4E5B9)


@dataclass
class HiddenIds:
    """The hidden ids as Arrow sees them, built once per :class:`~scoring.parsing.SubmissionFormat`; the
    hash table for rows in another order is built on the first such upload."""

    ids: Any  # pyarrow.StringArray
    _table: _IdTable | None = field(default=None, repr=False)

    @property
    def table(self) -> _IdTable:
        if self._table is None:
            self._table = _IdTable.build(self.ids)
        return self._table


def hidden_ids(ids: Sequence[str], id_index: Mapping[str, int]) -> HiddenIds | None:
    """The hidden ids for the fast path, or ``None`` if pyarrow is missing or an id is not plain (then every
    upload takes the pure-Python path)."""
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency; without it the exact path still works
        return None
    if not ids or len(id_index) != len(ids) or not all(ids):
        return None
    joined = "".join(ids)
    if not (joined.isascii() and joined.isprintable()) or any(c in joined for c in ' ,"'):
        return None
    if any(id_index.get(row_id) != i for i, row_id in enumerate(ids)):
        return None
    return HiddenIds(pa.array(ids, type=pa.string()))


def read_plain_csv(data: bytes, header: bytes, n_values: int, hidden: HiddenIds) -> tuple[np.ndarray, np.ndarray] | None:
    """Values (``(n,)`` or ``(n, n_values)`` float64, in file order) and each row's position in the hidden
    order, for an upload the pure-Python path would read the same way; ``None`` otherwise.

    ``header`` is the expected header line in lower case ASCII (``b"id,target"``).
    """
    n_rows = len(hidden.ids)
    start = len(_BOM) if data.startswith(_BOM) else 0
    if not (data.isascii() if start == 0 else data[start:].isascii()) or b'"' in data:
        return None
    end = _end_without_trailing_space(data)
    newline = data.find(b"\n", start, end)
    if newline < 0:
        return None
    head = data[start:newline]
    if head.endswith(b"\r"):
        head = head[:-1]
    if head.lower() != header:
        return None
    # A valid body holds exactly n_rows lines: the count is a memchr pass, and it keeps a long body of extra
    # lines (which the pure-Python path rejects after reading n_rows + 1 of them) away from Arrow.
    if data.count(b"\n", newline + 1, end) != n_rows - 1:
        return None
    table = _arrow_read(data, newline + 1, end, n_values)
    if table is None or table.num_rows != n_rows:
        return None
    order = _positions(table.column(0).combine_chunks(), hidden)
    if order is None:
        return None
    columns = [np.array(table.column(c + 1).to_numpy(), dtype=np.float64) for c in range(n_values)]
    values = columns[0] if n_values == 1 else np.column_stack(columns)
    return values, order


def _end_without_trailing_space(data: bytes) -> int:
    end = len(data)
    for _ in range(_TRAILING_SCAN):
        if end == 0 or data[end - 1] not in _TRAILING:
            return end
        end -= 1
    return len(data.rstrip(_TRAILING))


def _arrow_read(data: bytes, start: int, end: int, n_values: int) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    names = ["id", *(f"v{c}" for c in range(n_values))]
    try:
        return pa_csv.read_csv(
            pa.BufferReader(pa.py_buffer(data).slice(start, end - start)),
            read_options=pa_csv.ReadOptions(column_names=names),
            parse_options=pa_csv.ParseOptions(quote_char=False, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={"id": pa.string(), **{name: pa.float64() for name in names[1:]}},
                null_values=[],
                true_values=[],
                false_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except Exception:  # any failure (a wrong width, a value Arrow cannot read, ...): the exact path decides
        return None


def _positions(submitted: Any, hidden: HiddenIds) -> np.ndarray | None:
    """Each submitted id's position in the hidden order, if the ids are exactly the hidden ones (each once)."""
    n = len(hidden.ids)
    if submitted.null_count or len(submitted) != n:
        return None
    if submitted.equals(hidden.ids):  # the sample submission's order: one comparison in C
        return np.arange(n)
    table = hidden.table
    words, lengths = _padded_words(submitted, table.width)
    if words is None:
        return None
    order = table.lookup(words, lengths)
    if order is None:
        return None
    seen = np.zeros(n, dtype=bool)
    seen[order] = True
    return order if seen.all() else None  # n rows, every hidden id among them: none repeated


def _padded_words(strings: Any, width: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Each string's bytes zero-padded to ``width`` 8-byte words, ``(n, width)`` uint64, and its length;
    ``None`` for the words if a string is longer or empty."""
    import pyarrow.compute as pa_compute

    n = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + n + 1]
    lengths = np.diff(offsets)
    if n == 0 or int(lengths.min()) < 1 or int(lengths.max()) > 8 * width:
        return None, lengths
    size = 8 * width
    if int(lengths.min()) == size:
        padded = strings
    else:
        padded = pa_compute.utf8_rpad(strings, width=size, padding="\x00")
    start = padded.offset
    padded_offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32)[start : start + n + 1]
    first = int(padded_offsets[0])
    if int(padded_offsets[-1]) - first != n * size:  # not one byte per character (cannot happen in ASCII)
        return None, lengths
    raw = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[first : first + n * size]
    return raw.view(np.uint64).reshape(n, width), lengths


@dataclass(frozen=True)
class _IdTable:
    """An open-addressing (linear probing) hash table of the hidden ids, probed for all rows at once in numpy;
    a hit is confirmed by comparing every byte and the length, so a colliding id is never taken for another."""

    width: int
    words: np.ndarray
    lengths: np.ndarray
    hashes: np.ndarray
    slots: np.ndarray
    shift: np.uint64

    @classmethod
    def build(cls, ids: Any) -> _IdTable:
        n = len(ids)
        offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset : ids.offset + n + 1]
        width = max(1, -(-int(np.diff(offsets).max()) // 8))
        words, lengths = _padded_words(ids, width)
        assert words is not None  # hidden ids are plain ASCII, non-empty, at most 8 * width bytes
        bits = max(4, int(2 * n - 1).bit_length())  # a power of two at least twice the ids: load <= 1/2
        shift = np.uint64(64 - bits)
        hashes = _hash(words, lengths)
        slots = np.full(1 << bits, -1, dtype=np.int64)
        pending = np.arange(n)
        home = hashes >> shift
        mask = np.uint64((1 << bits) - 1)
        while pending.size:
            at = home[pending]
            free = slots[at] < 0
            trying, trying_at = pending[free], at[free]
            slots[trying_at] = trying  # one of several ids aiming at a slot wins it
            won = np.zeros(n, dtype=bool)
            won[trying[slots[trying_at] == trying]] = True
            pending = pending[~won[pending]]
            home[pending] = (home[pending] + np.uint64(1)) & mask
        return cls(width, words.copy(), lengths.copy(), hashes, slots, shift)

    def lookup(self, words: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        """Hidden position of each row, or ``None`` if some row is no hidden id."""
        hashes = _hash(words, lengths)
        mask = np.uint64(len(self.slots) - 1)
        at = hashes >> self.shift
        found = np.empty(len(words), dtype=np.int64)
        pending = np.arange(len(words))
        while pending.size:
            candidate = self.slots[at[pending]]
            if (candidate < 0).any():  # an empty slot before a match: not a hidden id
                return None
            hit = self.hashes[candidate] == hashes[pending]
            found[pending[hit]] = candidate[hit]
            pending = pending[~hit]
            at[pending] = (at[pending] + np.uint64(1)) & mask
        if not (np.array_equal(self.lengths[found], lengths) and np.array_equal(self.words[found], words)):
            return None  # a hash collision (or a forged one): the exact path decides
        return found


def _hash(words: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each row's words and length (only to find candidates: every hit is verified)."""
    with np.errstate(over="ignore"):
        h = lengths.astype(np.uint64) * _HASH_MULTIPLIER
        for column in range(words.shape[1]):
            h = (h ^ words[:, column]) * _HASH_MIX
            h ^= h >> np.uint64(31)
        h = (h ^ (h >> np.uint64(29))) * _HASH_MULTIPLIER
        return h ^ (h >> np.uint64(32))
