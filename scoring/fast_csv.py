r"""The CSV parser's fast path: Arrow's C reader for plain, valid uploads; ``None`` whenever it cannot vouch.

:func:`scoring.parsing.parse_submission_csv` tries :func:`read_plain_csv` first and, on ``None``, runs its
pure-Python path, which decides everything (and names the first bad line). So this module only has to be
*sound*: whatever it returns is exactly what the pure-Python path would return for the same bytes. It takes
only files where the two readers provably see the same cells:

* the hidden ids are plain (printable ASCII, no space, comma or quote; :func:`hidden_ids`) — so a submitted
  id that matches one exactly contains nothing the pure-Python path would strip, split or unquote;
* the whole file is ASCII (after a UTF-8 BOM) with no ``"`` (Arrow reads it with quoting off) and no NUL, its
  header is exactly the expected one (ASCII case aside), and, once trailing whitespace is dropped, it has
  exactly ``len(ids)`` lines after the header by ``\n`` and Arrow reads exactly ``len(ids)`` rows from them,
  empty lines being rows (which fail): lines end at ``\n``, ``\r\n`` or ``\r`` for both readers, and the
  further breaks of ``str.splitlines`` (``\v``, ``\f``, ``\x1c``-``\x1e``, ...) can sit in no cell Arrow
  accepts. A long body of extra lines is never handed to Arrow;
* every value cell converts as float64 with no null spelling (``null_values=[]``): Arrow's reader accepts a
  subset of what ``float`` does (no ``_``, no hex, no non-ASCII digits, no control characters; ``' '`` and
  ``'\t'`` trimmed, as ``float`` does) and rounds the same, correctly;
* every id is found, once, by exact comparison of its bytes with a hidden id's — or else the first row with an
  unknown or repeated id gets the exact path's own error for it (:func:`_positions` says when that is sure).

Anything else (a NaN, or for probabilities a value outside [0, 1] or a multiclass sum off by more than the
tolerance, included) is left to the pure-Python path; logits (``SubmissionFormat.logits``) need only be
finite. ``tests/scoring/test_parsing_fast.py`` checks both paths agree on random and adversarial inputs.
"""

from __future__ import annotations

import codecs
import mmap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring.ids import IdArray

try:  # imported with the module, not within a parse: the first upload's time and memory are not the import's
    import pyarrow as pa
    import pyarrow.compute as pa_compute
    import pyarrow.csv as pa_csv
except ImportError:  # pragma: no cover - pyarrow is a dependency; without it every upload takes the exact path
    pa = None

_BOM = codecs.BOM_UTF8
#: An upload's bytes: ``bytes``, or a buffer over a streamed upload's file (a read-only ``mmap``).
BytesLike = bytes | bytearray | mmap.mmap
#: Bytes ``bytes.rstrip`` drops (``str.rstrip`` drops these and more, so stripping them is always safe).
_TRAILING = b" \t\n\r\x0b\x0c"
#: ASCII bytes ``str.splitlines`` (the exact path's rule) breaks a line at, which Arrow reads as cell text: a file
#: holding one before its trailing space is left to the exact path (else "b\vc,0.5" is one row here, two there).
_OTHER_BREAKS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
#: Trailing whitespace scanned byte by byte before handing the strip to ``bytes.rstrip`` (one copy).
_TRAILING_SCAN = 64
_COUNT_CHUNK = 4 << 20
_LOOKUP_CHUNK = 1 << 18
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


def hidden_ids(ids: Sequence[str]) -> HiddenIds | None:
    """The hidden ids for the fast path, or ``None`` if pyarrow is missing or an id is not plain (then every
    upload takes the pure-Python path)."""
    if pa is None:  # pragma: no cover
        return None
    if isinstance(ids, IdArray):  # no Python string per id: the check runs on Arrow's buffers
        array = ids.arrow
        if not len(array) or array.type != pa.string():
            return None
        plain = _cells_within(array, 1, None, lambda c: (c > 32) & (c < 127) & (c != ord(",")) & (c != ord('"')))
        return HiddenIds(array) if plain else None
    if not ids or not all(ids):
        return None
    joined = "".join(ids)
    if not (joined.isascii() and joined.isprintable()) or any(c in joined for c in ' ,"'):
        return None
    # Distinct ids need no check here (the hidden set's readers refuse repeats, and the dict lookup once made
    # for it cost a second per million ids): with a repeated hidden id, the sample order is read as the exact
    # path reads it (as the hidden order itself), and in any other order both copies of the id would meet one
    # slot of the hash table, so a row stays unmatched and the fast path declines.
    return HiddenIds(pa.array(ids, type=pa.string()))


#: The digits a label of the fast path may hold (more would be a class count no competition has; and a label
#: past int64 is the exact path's to refuse).
_LABEL_DIGITS = 9


def read_labels_csv(data: bytes) -> tuple[IdArray, np.ndarray] | None:
    """Ids and labels of a host's ``id,label`` CSV in file order, for a file the pure-Python reader
    (:func:`scoring.hidden.parse_labels_csv`) reads the same way with no error; ``None`` otherwise.

    Taken only when the file is ASCII (after a BOM) with no ``"``, no NUL and no ``\\r`` but in ``\\r\\n``; the
    header is ``id,label`` (ASCII case aside); every row is two cells, the id of printable non-space ASCII
    (so ``str.strip`` and ``csv`` leave it as it is) and the label of 1 to 9 ASCII digits; empty lines (no
    rows for either reader) aside. Ids must be distinct (a repeat is the exact path's to name). Arrow's C
    reader splits the rows; numpy checks the cells on Arrow's buffers.
    """
    if pa is None:  # pragma: no cover
        return None
    start = len(_BOM) if data.startswith(_BOM) else 0
    if not (data.isascii() if start == 0 else data[start:].isascii()) or b'"' in data or b"\0" in data:
        return None
    if data.count(b"\r") != data.count(b"\r\n"):
        return None
    newline = data.find(b"\n", start)
    if newline < 0:
        return None
    head = data[start:newline]
    if head.endswith(b"\r"):
        head = head[:-1]
    if head.lower() != b"id,label":
        return None
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(pa.py_buffer(data).slice(newline + 1)),
            read_options=pa_csv.ReadOptions(column_names=["id", "label"], use_threads=False),
            parse_options=pa_csv.ParseOptions(quote_char=False, ignore_empty_lines=True),
            convert_options=pa_csv.ConvertOptions(
                column_types={"id": pa.string(), "label": pa.string()},
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except Exception:  # a wrong width or the like: the exact path names the line
        return None
    if table.num_rows == 0:
        return None
    ids = table.column("id").combine_chunks()
    labels = table.column("label").combine_chunks()
    if not _cells_within(ids, 1, None, lambda chars: (chars > 32) & (chars < 127)):
        return None
    if not _cells_within(labels, 1, _LABEL_DIGITS, lambda chars: (chars >= 48) & (chars <= 57)):
        return None
    if not _distinct(ids):
        return None
    return IdArray(ids), np.asarray(pa_compute.cast(labels, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


def _distinct(strings: Any) -> bool:
    """No string repeats: no two 64-bit hashes of the padded bytes are equal, sorted in numpy (a tenth of a
    Python ``set`` of a million fresh strings); on a shared hash, or for ids over 64 bytes, the ``set`` decides."""
    n = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + n + 1]
    width = -(-int(np.diff(offsets).max()) // 8)
    words = _padded_words(strings, width) if width <= 8 else None
    if words is not None:
        hashes = np.sort(_hash(words))
        if not (hashes[1:] == hashes[:-1]).any():
            return True
    return len(set(strings.to_pylist())) == n


def _cells_within(strings: Any, shortest: int, longest: int | None, allowed: Any) -> bool:
    """Every string holds ``shortest`` to ``longest`` bytes, each ``allowed`` (a test on a uint8 array)."""
    n = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + n + 1]
    lengths = np.diff(offsets)
    if int(lengths.min()) < shortest or (longest is not None and int(lengths.max()) > longest):
        return False
    chars = np.frombuffer(strings.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
    # 4 MB at a time: each comparison of ten million ids' bytes at once was an 80 MB temporary.
    return all(bool(allowed(chars[at : at + _COUNT_CHUNK]).all()) for at in range(0, len(chars), _COUNT_CHUNK))


def read_plain_csv(
    data: BytesLike, header: bytes, n_values: int, hidden: HiddenIds
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Values (``(n,)`` or ``(n, n_values)`` float64, in file order) and each row's position in the hidden
    order (``None``: the hidden order itself), for an upload the pure-Python path would read the same way;
    ``None`` otherwise.

    ``header`` is the expected header line in lower case ASCII (``b"id,target"``). ``data`` may be any buffer
    (a read-only ``mmap`` of a streamed upload's file: Arrow reads it where it lies, with no copy).
    """
    start = len(_BOM) if bytes(data[: len(_BOM)]) == _BOM else 0
    if not _ascii_without_quote_or_nul(data, start):
        return None
    end = _end_without_trailing_space(data)
    if any(data.find(brk, start, end) >= 0 for brk in _OTHER_BREAKS):
        return None
    newline = data.find(b"\n", start, end)
    if newline < 0:
        return None
    head = data[start:newline]
    if head.endswith(b"\r"):
        head = head[:-1]
    if head.lower() != header:
        return None
    table = _arrow_read(data, newline + 1, end, n_values, len(hidden.ids))
    if table is None:
        return None
    found = _positions(table.column(0).combine_chunks(), hidden)
    if found is None:
        return None
    columns = [_writable(table.column(c + 1).to_numpy()) for c in range(n_values)]
    values = columns[0] if n_values == 1 else np.column_stack(columns)
    return values, found.order


def _writable(values: np.ndarray) -> np.ndarray:
    """A float64 array the caller owns (Arrow hands out read-only views of one chunk)."""
    if values.dtype == np.float64 and values.flags.writeable and values.flags.owndata:
        return values
    return np.array(values, dtype=np.float64)


def _ascii_without_quote_or_nul(data: BytesLike, start: int) -> bool:
    """``data[start:]`` is ASCII, and ``data`` holds no ``"`` and no NUL (for a buffer that is not ``bytes``:
    ``find`` over it in place, and the ASCII test 4 MB at a time)."""
    if isinstance(data, bytes):
        return (data.isascii() if start == 0 else data[start:].isascii()) and b'"' not in data and b"\0" not in data
    if data.find(b'"') >= 0 or data.find(b"\0") >= 0:
        return False
    return all(bytes(data[at : at + _COUNT_CHUNK]).isascii() for at in range(start, len(data), _COUNT_CHUNK))


def _end_without_trailing_space(data: BytesLike) -> int:
    end = len(data)
    for _ in range(_TRAILING_SCAN):
        if end == 0 or data[end - 1] not in _TRAILING:
            return end
        end -= 1
    if isinstance(data, bytes):
        return len(data.rstrip(_TRAILING))
    view = np.frombuffer(data, dtype=np.uint8)
    trailing = np.frombuffer(_TRAILING, dtype=np.uint8)
    while end > 0:  # back from the end, 4 MB at a time
        chunk = view[max(0, end - _COUNT_CHUNK) : end]
        kept = np.flatnonzero(~np.isin(chunk, trailing))
        if kept.size:
            return end - len(chunk) + int(kept[-1]) + 1
        end -= len(chunk)
    return 0


def _arrow_read(data: BytesLike, start: int, end: int, n_values: int, n_rows: int) -> Any:
    """The table of ``data[start:end]`` if it holds exactly ``n_rows`` lines and Arrow reads them as rows.

    Counting the lines first (a C pass) keeps a long body of extra lines, which the pure-Python path rejects
    after reading ``n_rows + 1`` of them, away from Arrow. Arrow reads synchronously on this thread: its
    streaming reader, left early, was seen to crash in its read-ahead thread, and its thread pool can hang on
    a parse error (apache/arrow#38676) or abort the interpreter's exit (apache/arrow#34314).
    """
    if _count_newlines(data, start, end) != n_rows - 1:
        return None
    names = ["id", *(f"v{c}" for c in range(n_values))]
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(pa.py_buffer(data).slice(start, end - start)),
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False),
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
    return table if table.num_rows == n_rows else None  # a lone "\r" breaks a line for both readers


def _count_newlines(data: BytesLike, start: int, end: int) -> int:
    """``data.count(b"\\n", start, end)``, with numpy's SIMD compare, 4 MB at a time (a bounded temporary)."""
    view = np.frombuffer(data, dtype=np.uint8)
    return sum(
        int(np.count_nonzero(view[at : min(at + _COUNT_CHUNK, end)] == 10)) for at in range(start, end, _COUNT_CHUNK)
    )


@dataclass(frozen=True)
class _Found:
    order: np.ndarray | None  # each row's hidden position; None: the rows are in the hidden order


def _positions(submitted: Any, hidden: HiddenIds) -> _Found | None:
    """Each submitted id's position in the hidden order, if the ids are exactly the hidden ones (each once).

    Otherwise the first row with an unknown or a repeated id raises the :class:`SubmissionError` the exact path
    would raise for it (the same text and line), when the exact path provably reads that row's id as Arrow does;
    ``None`` when in doubt. Every earlier row is a hidden id given once, byte for byte, and the exact path checks
    ids in row order before it reads any value, so its first complaint is about this row too.
    """
    n = len(hidden.ids)
    if submitted.null_count or len(submitted) != n:
        return None
    if submitted.equals(hidden.ids):  # the sample submission's order: one comparison in C
        return _Found(None)
    if int(_lengths(submitted).min()) < 1:
        return None  # an empty id: the exact path's
    order = lookup_ids(hidden, submitted)
    seen = np.zeros(n, dtype=bool)
    seen[order[order >= 0]] = True
    if seen.all():  # n rows, every hidden id among them: none repeated, none unknown
        return _Found(order)
    _raise_first_id_problem(submitted, order)
    return None


def lookup_ids(hidden: HiddenIds, strings: Any) -> np.ndarray:
    """Each string's position among the hidden ids (an exact match of its bytes), -1 where it is none.

    ``strings`` is any Arrow string array (an upload's ids, whatever they hold): a string that is empty, longer
    than the longest hidden id, not ASCII or holding a NUL (which the padding would hide) is no plain hidden id.
    """
    table = hidden.table
    size = 8 * table.width
    n = len(strings)
    order = np.full(n, -1, dtype=np.int64)
    # 262,144 rows at a time: the padded words, hashes and probed slots of ten million rows at once were 400 MB of
    # temporaries (the lookup is per row, so chunks change nothing but the peak).
    for start in range(0, n, _LOOKUP_CHUNK):
        chunk = strings.slice(start, _LOOKUP_CHUNK)
        lengths = _lengths(chunk)
        fits = (lengths >= 1) & (lengths <= size)
        if fits.any() and not _plain_ascii(chunk):
            fits &= np.asarray(pa_compute.string_is_ascii(chunk).fill_null(False), dtype=bool)
            fits &= ~np.asarray(pa_compute.match_substring(chunk, "\x00").fill_null(True), dtype=bool)
        if fits.any():
            words = _padded_words(chunk if fits.all() else chunk.filter(pa.array(fits)), table.width)
            if words is None:  # pragma: no cover - ASCII, non-empty, fitting: always padded
                raise AssertionError("unpadded ids")
            order[start : start + len(chunk)][fits] = table.lookup(words)
    return order


def _plain_ascii(strings: Any) -> bool:
    """Every byte of the strings is ASCII and none is NUL (one numpy pass over the data buffer)."""
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + len(strings) + 1]
    data_buffer = strings.buffers()[2]
    if data_buffer is None:
        return True
    chars = np.frombuffer(data_buffer, dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
    return bool(((chars > 0) & (chars < 128)).all())


def _lengths(strings: Any) -> np.ndarray:
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + len(strings) + 1]
    return np.diff(offsets)


#: What ``str.strip`` removes from an ASCII id (the exact path strips ids; an id holding one may read otherwise).
_STRIPPED = frozenset(b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")


def _raise_first_id_problem(submitted: Any, order: np.ndarray) -> None:
    """Raise the exact path's error for the first row whose id is unknown (``order`` -1) or repeated; return when
    the exact path might read that row's id differently (then it decides)."""
    from scoring.errors import SubmissionError

    n = len(order)
    unknown = np.flatnonzero(order < 0)
    first_unknown = int(unknown[0]) if unknown.size else n
    known = np.flatnonzero(order >= 0)
    by_position = known[np.argsort(order[known], kind="stable")]  # rows grouped by id, in row order within
    positions = order[by_position]
    repeats = np.flatnonzero(positions[1:] == positions[:-1]) + 1
    first_repeat = int(by_position[repeats].min()) if repeats.size else n
    row = min(first_unknown, first_repeat)
    if row >= n:  # pragma: no cover - seen.all() was False, so some row is unknown or repeated
        return
    row_id = submitted[row].as_py()
    if any(byte in _STRIPPED for byte in row_id.encode("ascii")):
        return
    if row == first_unknown:
        shown = row_id if len(row_id) <= 40 else row_id[:40] + "..."
        raise SubmissionError(f"id {shown!r} is not in the test set", line=row + 2)
    group = np.searchsorted(positions, order[row])  # the first row that gave this id
    raise SubmissionError(f"duplicate id {row_id!r} (first given on line {int(by_position[group]) + 2})", line=row + 2)


def _padded_words(strings: Any, width: int) -> np.ndarray | None:
    """Each string's bytes NUL-padded to ``width`` 8-byte words, ``(n, width)`` uint64 (as the strings hold no
    NUL, equal rows are equal strings); ``None`` if a string is empty or longer, or not ASCII."""
    n = len(strings)
    size = 8 * width
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset : strings.offset + n + 1]
    lengths = offsets[1:] - offsets[:-1]
    if int(lengths.min()) < 1 or int(lengths.max()) > size:
        return None
    padded = pa_compute.ascii_rpad(strings, width=size, padding="\x00")  # the file was checked to be ASCII
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32)[padded.offset : padded.offset + n + 1]
    first = int(offsets[0])
    if int(offsets[-1]) - first != n * size:  # a character of more than one byte (none in ASCII)
        return None
    data = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[first : first + n * size]
    return data.view(np.uint64).reshape(n, width)


@dataclass(frozen=True)
class _IdTable:
    """An open-addressing (linear probing) hash table of the hidden ids, probed for all rows at once in numpy.

    ``slots`` holds a position + 1 per slot (0: empty), at least two slots per id; ``words`` the ids' padded
    words in hidden order. A row is taken only when all its bytes equal the id's: a colliding (or forged) hash
    costs a probe, never a wrong match. Ten million ids of 8 bytes take 134 MB of slots and 80 MB of words
    (slots holding the words themselves, four per id, took 1.07 GB).
    """

    width: int
    words: np.ndarray
    slots: np.ndarray
    shift: np.uint64

    @classmethod
    def build(cls, ids: Any) -> _IdTable:
        n = len(ids)
        offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset : ids.offset + n + 1]
        width = max(1, -(-int(np.diff(offsets).max()) // 8))
        words = _padded_words(ids, width)
        assert words is not None  # hidden ids are plain ASCII, non-empty, at most 8 * width bytes
        words = np.ascontiguousarray(words)  # our own copy: the padded Arrow buffer is a temporary
        bits = max(4, int(2 * n - 1).bit_length())  # at least two slots per id: most sit in their home slot
        slots = np.zeros(1 << bits, dtype=np.int32)
        shift = np.uint64(64 - bits)
        at = _hash(words) >> shift
        mask = np.uint64((1 << bits) - 1)
        positions = np.arange(1, n + 1, dtype=np.int32)
        pending = np.arange(n)
        while pending.size:
            here = at[pending]
            free = slots[here] == 0
            trying, trying_at = pending[free], here[free]
            slots[trying_at] = positions[trying]  # one of several ids aiming at a slot wins it
            winners = trying[slots[trying_at] == positions[trying]]
            won = np.zeros(n, dtype=bool)
            won[winners] = True
            pending = pending[~won[pending]]
            at[pending] = (at[pending] + np.uint64(1)) & mask
        return cls(width, words, slots, shift)

    def lookup(self, words: np.ndarray) -> np.ndarray:
        """Hidden position of each row; -1 for a row that is no hidden id."""
        mask = np.uint64(len(self.slots) - 1)
        at = _hash(words) >> self.shift
        found = np.full(len(words), -1, dtype=np.int64)
        pending = np.arange(len(words))
        while pending.size:
            candidate = self.slots[at[pending]].astype(np.int64) - 1
            pending, candidate = pending[candidate >= 0], candidate[candidate >= 0]  # an empty slot: no hidden id
            same = ~_differ(self.words[candidate], words[pending])
            found[pending[same]] = candidate[same]
            pending = pending[~same]
            at[pending] = (at[pending] + np.uint64(1)) & mask
        return found


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of ``a`` and ``b`` (uint64 words) that differ."""
    if a.shape[1] == 1:
        return a[:, 0] != b[:, 0]
    return (a != b).any(axis=1)


def _hash(words: np.ndarray) -> np.ndarray:
    """A 64-bit mix of each row's words (only to find candidates: every hit is verified)."""
    with np.errstate(over="ignore"):
        h = np.full(len(words), _HASH_MULTIPLIER, dtype=np.uint64)
        for column in range(words.shape[1]):
            h = (h ^ words[:, column]) * _HASH_MIX
            h ^= h >> np.uint64(31)
        h = (h ^ (h >> np.uint64(29))) * _HASH_MULTIPLIER
        return h ^ (h >> np.uint64(32))
