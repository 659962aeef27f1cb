"""Parse and validate a participant's predictions (Kaggle's format) into an array aligned to the hidden ids.

Binary competitions take ``id`` plus one probability column (the probability of label 1); K-class ones take
``id`` plus one column per class. Rows may come in any order. Every problem is reported as a
:class:`SubmissionError` naming the line (CSV; the header is line 1) or the item (JSON) and the problem.
Multiclass rows are renormalised when their sum is within :data:`ROW_SUM_TOLERANCE` of 1, as Kaggle does,
and rejected beyond it. A competition whose metric reads logits (``softmax_ce``, ``sigmoid_ce``;
:attr:`SubmissionFormat.logits`) takes the same columns holding any finite real — the log-odds of class 1
(binary) or one logit per class — with no range check and no renormalisation.
"""

from __future__ import annotations

import csv
import json
import math
import mmap
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat

import numpy as np

from scoring import fast_csv
from scoring.errors import SubmissionError
from scoring.fast_csv import BytesLike
from scoring.hidden import IdIndex
from scoring.ids import IdArray, ids_lines

ROW_SUM_TOLERANCE = 1e-4
#: What ``str.splitlines`` treats as a line break ("\r\n" counts once).
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile("\r\n|[" + _LINE_BREAKS + "]")
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
BINARY_COLUMN = "target"


def submission_columns(n_classes: int) -> list[str]:
    """The header of a valid CSV for ``n_classes`` classes: ``id`` and the probability of label 1 (binary),
    or ``id`` and one column per class.

    >>> submission_columns(2), submission_columns(3)
    (['id', 'target'], ['id', 'class_0', 'class_1', 'class_2'])
    """
    if n_classes == 2:
        return ["id", BINARY_COLUMN]
    return ["id", *(f"class_{k}" for k in range(n_classes))]


@dataclass(frozen=True)
class SubmissionFormat:
    """What a competition accepts: the hidden ids in canonical order and the number of classes."""

    ids: Sequence[str]  # a tuple, or an IdArray (scoring.ids: one Arrow array, no Python string per id)
    id_index: Mapping[str, int]
    n_classes: int
    max_bytes: int = DEFAULT_MAX_BYTES
    # The values are logits (any finite real, rows need not sum to 1) instead of probabilities.
    logits: bool = False

    @property
    def columns(self) -> list[str]:
        """The header of a valid CSV (the sample submission's header)."""
        return submission_columns(self.n_classes)

    @property
    def n_value_columns(self) -> int:
        return 1 if self.n_classes == 2 else self.n_classes

    @cached_property
    def fast_ids(self) -> fast_csv.HiddenIds | None:
        """The hidden ids as the CSV fast path reads them (built on first use; ``None``: no fast path)."""
        if isinstance(self.id_index, IdIndex):  # one table for both paths
            return self.id_index.fast_ids
        return fast_csv.hidden_ids(self.ids)


Locator = Callable[[int, str], SubmissionError]


def _csv_line(offset: int, problem: str) -> SubmissionError:
    """Data row ``offset`` (0-based) sits on line ``offset + 2``: the header is line 1."""
    return SubmissionError(problem, line=offset + 2)


def _json_item(offset: int, problem: str) -> SubmissionError:
    return SubmissionError(f"item {offset}: {problem}")


@dataclass(frozen=True)
class ParsedPredictions:
    """Validated predictions in hidden-id order: shape ``(n,)`` for binary, ``(n, K)`` for K classes.

    ``texts`` keeps the submitted decimal strings (same shape, as nested tuples) when asked for, so that a
    φ-bit arithmetic can read them at more than float64 precision.
    """

    values: np.ndarray
    texts: tuple[tuple[str, ...], ...] | None = None


def sample_submission_csv(fmt: SubmissionFormat) -> str:
    """The CSV template participants fill in: the exact header and every id, with a neutral guess (logits:
    all 0.0, the uniform prediction; written ``0.0`` so no line reads like an ``id,label`` line)."""
    if fmt.logits:
        neutral = ",".join(["0.0"] * fmt.n_value_columns)
    else:
        neutral = "0.5" if fmt.n_classes == 2 else ",".join([repr(1.0 / fmt.n_classes)] * fmt.n_classes)
    if isinstance(fmt.ids, IdArray):
        return ",".join(fmt.columns) + "\n" + ids_lines(fmt.ids, "," + neutral)
    lines = [",".join(fmt.columns), *(f"{row_id},{neutral}" for row_id in fmt.ids)]
    return "\n".join(lines) + "\n"


def parse_submission_csv(data: BytesLike, fmt: SubmissionFormat, *, keep_text: bool = False) -> ParsedPredictions:
    """Validate CSV bytes and return predictions aligned to ``fmt.ids``.

    A plain, valid file is read by Arrow's C reader (:mod:`scoring.fast_csv`, which returns nothing when in
    doubt); so is a plain file whose only problems are ids (unknown, repeated) or values (out of range, not
    finite), which then gets exactly the error the exact path would give. Every other file, and every file
    whose decimal strings are kept, goes to the pure-Python path below, which names the first bad line.

    ``data`` may be any buffer (a streamed upload's file mapped read-only): the fast path reads it in place; the
    exact path copies it to ``bytes`` first.
    """
    if not keep_text and len(data) <= fmt.max_bytes:
        fast = _parse_csv_fast(data, fmt)
        if fast is not None:
            return fast
    if len(data) > fmt.max_bytes:
        raise SubmissionError(f"the file is {len(data)} bytes, over the limit of {fmt.max_bytes} bytes")
    if isinstance(data, bytes):
        return _parse_csv_exact(data, fmt, keep_text=keep_text)
    copied = bytes(data)
    if isinstance(data, mmap.mmap):  # the copy is what is read from here on: drop the mapped pages from memory
        data.madvise(mmap.MADV_DONTNEED)
    return _parse_csv_exact(copied, fmt, keep_text=keep_text)


def _parse_csv_fast(data: BytesLike, fmt: SubmissionFormat) -> ParsedPredictions | None:
    hidden = fmt.fast_ids
    if hidden is None:
        return None
    read = fast_csv.read_plain_csv(data, ",".join(fmt.columns).encode("ascii"), fmt.n_value_columns, hidden)
    if read is None:
        return None
    values, order = read
    # Arrow read every cell as the exact path would (the same rows, widths, ids and bit-identical values), so the
    # exact path would get past every earlier check and meet this one on these very values in file order: its
    # error, naming the line, is the exact path's own. Raised here, a million-row file with one value out of
    # range costs one Arrow read instead of the exact path's Python objects per cell (11x the file in memory).
    values = _check_probabilities(values, fmt, _csv_line)
    if order is not None:
        aligned = np.empty_like(values)
        aligned[order] = values
        values = aligned
    return ParsedPredictions(values=values)


def _parse_csv_exact(data: bytes, fmt: SubmissionFormat, *, keep_text: bool) -> ParsedPredictions:
    """The pure-Python path: decides every file and names the first bad line."""
    # Trailing blank lines are no rows. A valid file has a header and len(ids) rows, so among the first
    # len(ids) + 1 data lines of any longer file one is bad (a wrong width, an unknown or a repeated id):
    # reading no further keeps time and memory linear in what a valid file could hold, however many lines come.
    text = _decode(data, fmt.max_bytes).rstrip()
    lines = _head_lines(text, len(fmt.ids) + 2)
    if not lines:
        raise SubmissionError("the file is empty")
    header = [h.strip() for h in _split_line(lines[0])]
    expected = fmt.columns
    if [h.lower() for h in header] != expected:
        if len(header) != len(expected):
            raise SubmissionError(
                f"the header has {len(header)} columns, expected {len(expected)}: {','.join(expected)}"
                + delimiter_hint(lines[0]), line=1
            )
        raise SubmissionError(f"the header must be {','.join(expected)!r}, got {','.join(header)!r}", line=1)
    if len(lines) == 1:
        raise SubmissionError(f"the file has a header but no rows; expected {len(fmt.ids)} rows")
    width = len(expected)
    cells = _columns(lines[1:], width, quoted='"' in text)
    row_ids = list(map(str.strip, cells[0]))
    order = _align_ids(row_ids, fmt, _csv_line, "line", lambda i: i + 2)
    return _finish(fmt, cells[1:], order, _csv_line, keep_text)


def parse_submission_json(payload: object, fmt: SubmissionFormat, *, keep_text: bool = False) -> ParsedPredictions:
    """Validate the JSON body ``{"predictions": ...}``.

    ``predictions`` is either a list in sample-submission order (numbers for binary, lists of K numbers for
    multiclass), a list of objects with ``id`` and the value columns, or an object mapping id to value(s).
    Numbers may be JSON numbers or numeric strings.
    """
    if isinstance(payload, (bytes, str)):
        raw = payload.encode("utf-8") if isinstance(payload, str) else payload
        payload = json.loads(
            _decode(raw, fmt.max_bytes), parse_float=str, parse_int=str, object_pairs_hook=_object_without_repeats
        )
    if not isinstance(payload, dict) or "predictions" not in payload:
        raise SubmissionError('the JSON body must be an object with a "predictions" field')
    preds = payload["predictions"]
    value_columns = fmt.columns[1:]
    row_ids: list[str]
    cells: list[list[object]]
    if isinstance(preds, dict):
        row_ids = [str(k) for k in preds]
        cells = [_as_cells(v, fmt, f"id {k!r}") for k, v in preds.items()]
    elif isinstance(preds, list):
        if preds and isinstance(preds[0], dict):
            row_ids, cells = [], []
            for i, item in enumerate(preds):
                if not isinstance(item, dict) or "id" not in item:
                    raise SubmissionError(f"item {i}: expected an object with an 'id' field")
                missing = [c for c in value_columns if c not in item]
                extra = sorted(set(item) - {"id", *value_columns})
                if missing or extra:
                    raise SubmissionError(
                        f"item {i}: expected fields id,{','.join(value_columns)}"
                        + (f"; missing {','.join(missing)}" if missing else "")
                        + (f"; unexpected {','.join(extra)}" if extra else "")
                    )
                row_ids.append(str(item["id"]))
                cells.append([item[c] for c in value_columns])
        else:
            if len(preds) != len(fmt.ids):
                raise SubmissionError(
                    f"a positional predictions list needs {len(fmt.ids)} items (one per id, in the sample "
                    f"submission's order), got {len(preds)}"
                )
            if fmt.n_classes == 2 and all(type(v) is str for v in preds):
                # Fast path (the bot's): numbers arrive as their JSON text; one column, already in id order.
                return _finish(fmt, [list(preds)], np.arange(len(preds)), _json_item, keep_text)
            cells = [_as_cells(v, fmt, f"item {i}") for i, v in enumerate(preds)]  # in the hidden order
            column_texts = [[_cell_text(row[c]) for row in cells] for c in range(len(value_columns))]
            return _finish(fmt, column_texts, np.arange(len(preds)), _json_item, keep_text)
    else:
        raise SubmissionError('"predictions" must be a list or an object')
    if not cells:
        raise SubmissionError("the predictions are empty")
    order = _align_ids(row_ids, fmt, _json_item, "item", lambda i: i)
    column_texts = [[_cell_text(row[c]) for row in cells] for c in range(len(value_columns))]
    return _finish(fmt, column_texts, order, _json_item, keep_text)


def _object_without_repeats(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object, refusing a repeated key (``json`` would silently keep the last value of an id)."""
    made = dict(pairs)
    if len(made) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        shown = repeated if len(repeated) <= 40 else repeated[:40] + "..."
        raise SubmissionError(f"the JSON object repeats the key {shown!r} (an id may be given once)")
    return made


def _finish(
    fmt: SubmissionFormat, column_texts: list[list[str]], order: np.ndarray, fail: Locator, keep_text: bool
) -> ParsedPredictions:
    """Convert value columns to floats, check them as probabilities and align them to the hidden ids."""
    value_columns = fmt.columns[1:]
    columns = [_to_floats(texts, value_columns[c], fail) for c, texts in enumerate(column_texts)]
    values = np.column_stack(columns) if len(columns) > 1 else columns[0]
    values = _check_probabilities(values, fmt, fail)
    aligned = _reorder(values, order)
    texts = None
    if keep_text:
        per_row = list(zip(*column_texts, strict=True))
        texts = tuple(tuple(t.strip() for t in per_row[i]) for i in np.argsort(order, kind="stable"))
    return ParsedPredictions(values=aligned, texts=texts)


def _head_lines(text: str, limit: int) -> list[str]:
    """``text.splitlines()[:limit]``, without splitting (or even scanning) lines past the ``limit``-th."""
    breaks = 0  # an upper bound on the breaks ("\r\n" counts twice), counted until it reaches the limit
    for line_break in _LINE_BREAKS:
        breaks += text.count(line_break)
        if breaks >= limit:
            break
    else:  # fewer breaks than the limit: no cut needed
        return text.splitlines()
    for count, match in enumerate(_LINE_BREAK.finditer(text), start=1):
        if count == limit:
            return text[: match.start()].splitlines()
    return text.splitlines()


def _decode(data: bytes, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise SubmissionError(f"the file is {len(data)} bytes, over the limit of {max_bytes} bytes")
    if not data or data.isspace():  # ``not data.strip()``, without copying the body
        raise SubmissionError("the file is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SubmissionError(
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})", line=line
        ) from None


def _columns(body: list[str], width: int, *, quoted: bool) -> list[list[str]]:
    """Split data lines into ``width`` columns, naming the first line with the wrong column count.

    Unquoted files take a fast path: count commas per line in C, then split the joined text once; a wrong
    count names its line without splitting any other.
    """
    if not quoted:
        counts = list(map(str.count, body, repeat(",", len(body))))
        if counts.count(width - 1) != len(body):
            offset = next(i for i, count in enumerate(counts) if count != width - 1)
            _wrong_width(body[offset], counts[offset] + 1, width, offset)
        flat = ",".join(body).split(",")
        return [flat[c::width] for c in range(width)]
    rows = []
    for offset, line in enumerate(body):
        row = _split_line(line, line_number=offset + 2)
        if len(row) != width:
            _wrong_width(line, len(row), width, offset)
        rows.append(row)
    return [[row[c] for row in rows] for c in range(width)]


def _wrong_width(line: str, got: int, width: int, offset: int) -> None:
    if not line.strip():
        raise SubmissionError("empty line", line=offset + 2)
    raise SubmissionError(f"expected {width} columns, got {got}" + delimiter_hint(line), line=offset + 2)


#: Delimiters a spreadsheet writes instead of the comma (``;`` where the decimal mark is a comma), by name.
OTHER_DELIMITERS = {";": "';' (semicolon)", "\t": "a tab"}


def delimiter_hint(line: str) -> str:
    """A hint to add to a wrong column count when ``line`` is split by another delimiter than the comma.

    >>> delimiter_hint("id;target")
    "; this line is separated by ';' (semicolon): separate columns with ',' (a comma), and write decimals with '.'"
    >>> delimiter_hint("a,0.5,0.1")
    ''
    """
    for delimiter, name in OTHER_DELIMITERS.items():
        if delimiter in line:
            return (f"; this line is separated by {name}: separate columns with ',' (a comma), "
                    "and write decimals with '.'")
    return ""


def _split_line(line: str, *, line_number: int = 1) -> list[str]:
    if '"' not in line:
        return line.split(",")
    try:
        return next(csv.reader([line]))
    except csv.Error as exc:  # e.g. a quoted field over the csv module's limit of 131,072 characters
        raise SubmissionError(f"malformed CSV: {exc}", line=line_number) from None


def _align_ids(
    row_ids: Sequence[str], fmt: SubmissionFormat, fail: Locator, unit: str, position: Callable[[int], int]
) -> np.ndarray:
    """Position in the hidden order of each submitted row; rejects unknown, duplicate and missing ids.

    The rows are looked up all at once (:meth:`scoring.hidden.IdIndex.positions`: a numpy hash table for plain
    ids); the error is the one a row-by-row reading meets first: the first row whose id is unknown or was given
    on an earlier row, named by its line (or item).
    """
    n = len(fmt.ids)
    if isinstance(fmt.ids, tuple) and len(row_ids) == n and tuple(row_ids) == fmt.ids:
        return np.arange(n)
    index = fmt.id_index
    if isinstance(index, IdIndex):
        order = index.positions(row_ids)
    else:  # a plain mapping (tests, callers of the core with their own index)
        order = np.fromiter((index.get(row_id, -1) for row_id in row_ids), dtype=np.int64, count=len(row_ids))
    unknown = np.flatnonzero(order < 0)
    first_unknown = int(unknown[0]) if unknown.size else len(order)
    repeat = _first_repeat(order)
    if repeat is not None and repeat[0] < first_unknown:
        i, earlier = repeat
        raise fail(i, f"duplicate id {row_ids[i]!r} (first given on {unit} {position(earlier)})")
    if first_unknown < len(order):
        row_id = row_ids[first_unknown]
        if not row_id:
            raise fail(first_unknown, "empty id")
        shown = row_id if len(row_id) <= 40 else row_id[:40] + "..."
        raise fail(first_unknown, f"id {shown!r} is not in the test set")
    if len(row_ids) != n:
        given = np.zeros(n, dtype=bool)
        given[order] = True
        missing = np.flatnonzero(~given)
        shown = ", ".join(repr(fmt.ids[int(p)]) for p in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise SubmissionError(f"{len(missing)} ids are missing: {shown}{more}")
    return order


def _first_repeat(order: np.ndarray) -> tuple[int, int] | None:
    """``(row, earlier_row)`` for the first row whose (known, ``>= 0``) position an earlier row already had."""
    known = np.flatnonzero(order >= 0)
    by_position = known[np.argsort(order[known], kind="stable")]  # rows grouped by position, in row order within
    positions = order[by_position]
    repeats = np.flatnonzero(positions[1:] == positions[:-1]) + 1
    if not repeats.size:
        return None
    at = int(repeats[np.argmin(by_position[repeats])])
    first_of_group = int(np.searchsorted(positions, positions[at]))
    return int(by_position[at]), int(by_position[first_of_group])


def _to_floats(texts: list[str], column: str, fail: Locator) -> np.ndarray:
    try:
        values = np.fromiter(map(float, texts), dtype=np.float64, count=len(texts))
    except (ValueError, TypeError):
        values = None
    # ``float`` also reads "0.1_2" and non-ASCII digits ("٠٫٥", fullwidth "０.５"): a number is plain ASCII.
    if values is not None and _plain("".join(texts)):
        return values
    for i, value in enumerate(texts):
        if not _plain(value):
            shown = value if len(value) <= 40 else value[:40] + "..."
            raise fail(i, f"column {column!r}: {shown!r} is not a plain decimal number (ASCII digits, no '_')")
        try:
            float(value)
        except (ValueError, TypeError):
            shown = value if len(str(value)) <= 40 else str(value)[:40] + "..."
            raise fail(i, f"column {column!r}: {shown!r} is not a number") from None
    raise AssertionError("unreachable: a value failed to parse but none was found")  # pragma: no cover


def _plain(text: str) -> bool:
    return text.isascii() and "_" not in text


def _check_probabilities(values: np.ndarray, fmt: SubmissionFormat, fail: Locator) -> np.ndarray:
    """Finite values; probabilities also inside [0, 1], K-class rows summing to 1 (renormalised); logits as
    they are."""
    finite = np.isfinite(values)
    if not finite.all():
        bad = int(np.flatnonzero(~finite.reshape(len(values), -1).all(axis=1))[0])
        raise fail(bad, f"{_show_row(values[bad])} is not a finite number (NaN or infinity)")
    if fmt.logits:  # any finite real is a logit
        return values
    outside = (values < 0.0) | (values > 1.0)
    if outside.any():
        bad = int(np.flatnonzero(outside.reshape(len(values), -1).any(axis=1))[0])
        raise fail(bad, f"probability {_show_row(values[bad])} is outside [0, 1]")
    if values.ndim == 2:
        sums = values.sum(axis=1)
        off = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
        if off.any():
            bad = int(np.flatnonzero(off)[0])
            raise fail(
                bad, f"class probabilities sum to {sums[bad]:.6g}; they must sum to 1 (within {ROW_SUM_TOLERANCE:g})"
            )
        values = values / sums[:, None]
    return values


def _show_row(row: np.ndarray | float) -> str:
    if np.ndim(row) == 0:
        return repr(float(row))
    return "[" + ", ".join(repr(float(v)) for v in np.ravel(row)) + "]"


def _reorder(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    if np.array_equal(order, np.arange(len(order))):
        return values
    aligned = np.empty_like(values)
    aligned[order] = values
    return aligned


def _as_cells(value: object, fmt: SubmissionFormat, where: str) -> list[object]:
    if fmt.n_classes == 2:
        if isinstance(value, list):
            raise SubmissionError(f"{where}: expected one {'logit' if fmt.logits else 'probability'}, got a list")
        return [value]
    if not isinstance(value, list) or len(value) != fmt.n_classes:
        got = f"{len(value)} values" if isinstance(value, list) else "a single value"
        kind = "logits" if fmt.logits else "probabilities"
        raise SubmissionError(f"{where}: expected a list of {fmt.n_classes} class {kind}, got {got}")
    return list(value)


def _cell_text(cell: object) -> str:
    if isinstance(cell, bool) or cell is None:
        return repr(cell)
    if isinstance(cell, float) and not math.isfinite(cell):
        return repr(cell)
    return str(cell)


def validate_array(values: np.ndarray, fmt: SubmissionFormat) -> np.ndarray:
    """Validate an in-memory prediction array (hidden-id order) with the same rules as an upload.

    Used by the offline oracle so that an attack's query meets exactly the checks a CSV upload meets.
    """
    values = np.asarray(values, dtype=np.float64)
    expected_shape = (len(fmt.ids),) if fmt.n_classes == 2 else (len(fmt.ids), fmt.n_classes)
    if values.shape != expected_shape:
        raise SubmissionError(f"expected predictions of shape {expected_shape}, got {values.shape}")

    def fail(i: int, problem: str) -> SubmissionError:
        return SubmissionError(f"row {i} (id {fmt.ids[i]!r}): {problem}")

    return _check_probabilities(values, fmt, fail)
