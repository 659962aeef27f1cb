"""The CSV parser's Arrow fast path against its exact pure-Python path: whenever the fast path answers, the
exact path accepts the same bytes with bit-identical values; whatever the bytes, the public parser's outcome
(values, or error text and line) is the exact path's. And the fast path does answer for the plain files most
participants upload, so the speed is not bought by never using it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from scoring import SubmissionError, SubmissionFormat, fast_csv, sample_submission_csv
from scoring.parsing import ParsedPredictions, _parse_csv_exact, _parse_csv_fast, parse_submission_csv

IDS = ("a", "b", "c", "10", "2", "id_with_more_than_sixteen_bytes")
BINARY = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 2, max_bytes=20_000)
THREE = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 3, max_bytes=20_000)
# Logit competitions (softmax_ce, sigmoid_ce): any finite real, no renormalisation; the two paths must agree too.
BINARY_LOGITS = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 2, max_bytes=20_000, logits=True)
THREE_LOGITS = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 3, max_bytes=20_000, logits=True)
FORMATS = (BINARY, THREE, BINARY_LOGITS, THREE_LOGITS)

# What float() and Arrow may disagree on, and what the exact path rejects (or accepts) on purpose.
TRICKY_NUMBERS = [
    "0.5", "1", "0", "1.0", "0.25", "1e-3", "1E-3", "5e-1", "+0.5", ".5", "5.", "-0", "-0.0", "00.5", "0.5e-0",
    "1e05", "4.9e-324", "2.5e-324", "1e-400", "0." + "0" * 350 + "1", "0.1000000000000000055511151231257827",
    " 0.5", "0.5 ", "\t0.5", "0.5\t", "0x1p-3", "infinity", "Infinity", "inf", "-inf", "nan", "NaN", "-nan",
    "1e400", "1_0", "0.1_2", "\u0660.5", "0.\u0665", "\uff10.\uff15", "0\u066b5", '"0.5"', "", "NA", "null",
    "true", "1e", "e5", ".", "+", "-", "0..5", "1.5", "-0.1", "0.5\x00", "0.5\x0b", "\x0c0.5", "0.5\x1c",
    "0.5\x85", "0.5\xa0", "1d5", "0.5f", "0,5", "1/2", "0.5\r",
]
NUMBERS = st.one_of(
    st.sampled_from(TRICKY_NUMBERS),
    st.floats(0, 1).map(repr),
    st.floats(0, 1).map(lambda x: f"{x:.17e}"),
    st.from_regex(r"[+-]?[0-9]{0,3}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    st.text(alphabet="0123456789.eE+-_ \t\"\u0665\uff10", max_size=8),
)
ROW_IDS = st.one_of(
    st.sampled_from(IDS),
    st.sampled_from([" a", "a ", "A", '"a"', "a\t", "", "zz", "1", "010", "a\x00", "id_with_more_than_sixteen_byte",
                     "id_with_more_than_sixteen_bytes_", "\u00e1", "b\x0bc"]),
)
BREAKS = st.sampled_from(["\n"] * 6 + ["\r\n"] * 3 + ["\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
                                                     "\n\n", "\r\r\n", "\n \n"])
HEADERS = {
    2: ["id,target", "ID,Target", " id , target ", "id,target,", '"id","target"', "id;target", "id,target\r",
        "id\rtarget"],
    3: ["id,class_0,class_1,class_2", "ID,CLASS_0,Class_1,class_2", "id,class_0,class_1", "id,class_0,class_2,class_1"],
}
ENDINGS = st.sampled_from(["", "\n", "\r\n", "\n\n\n", " \n \r\n", "\t", "\x1c", "\n\x0c", "\u2028"])


def outcome(parse: object) -> tuple[str, object]:
    """``("ok", values as bytes and shape)`` or ``("error", (text, line))`` of a parse."""
    try:
        parsed = parse()  # type: ignore[operator]
    except SubmissionError as exc:
        return "error", (str(exc), exc.line)
    assert isinstance(parsed, ParsedPredictions)
    return "ok", (parsed.values.shape, parsed.values.tobytes())


@st.composite
def uploads(draw: st.DrawFn) -> tuple[bytes, SubmissionFormat]:
    """Mostly valid files (a plain or random value per row) with, at a drawn rate, tricky ids, numbers, line
    breaks, headers and endings: so both paths' acceptance and refusal are well explored."""
    fmt = draw(st.sampled_from(FORMATS))
    width = fmt.n_value_columns
    mess = draw(st.sampled_from([0, 0, 1, 5, 20]))  # per-mille-ish odds of an odd piece, per piece

    def odd() -> bool:
        return mess > 0 and draw(st.integers(0, 99)) < mess

    canonical = ",".join(fmt.columns)
    header = draw(st.sampled_from(HEADERS[fmt.n_classes])) if odd() else canonical
    order = draw(st.permutations(range(len(IDS))))
    n_rows = len(IDS) + (draw(st.sampled_from([-1, 1])) if odd() else 0)
    plain = st.floats(0, 1).map(repr)
    lines = [header]
    for k in range(max(n_rows, 0)):
        row_id = draw(ROW_IDS) if odd() else IDS[order[k % len(IDS)]]
        if width == 1:
            values = [draw(NUMBERS) if odd() or draw(st.booleans()) else draw(plain)]
        else:
            split = draw(st.floats(0, 1))
            values = [repr(split), repr(1 - split), "0"]
            if odd():
                values[draw(st.integers(0, 2))] = draw(NUMBERS)
        lines.append(",".join([row_id, *values]))
    usual = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    breaks = [draw(BREAKS) if odd() else usual for _ in lines]
    text = "".join(line + brk for line, brk in zip(lines, breaks, strict=True))[: -len(breaks[-1])]
    text += draw(ENDINGS)
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text.encode("utf-8"), fmt


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(upload=uploads())
def test_the_fast_path_answers_only_what_the_exact_path_answers(upload: tuple[bytes, SubmissionFormat]) -> None:
    data, fmt = upload
    exact = outcome(lambda: _parse_csv_exact(data, fmt, keep_text=False))
    fast = fast_outcome(data, fmt)
    event(f"exact path: {exact[0]}; fast path: {'declined' if fast is None else 'answered ' + fast[0]}")
    if fast is not None:  # an answer, values or an error naming the line, is exactly the exact path's
        assert fast == exact
    assert outcome(lambda: parse_submission_csv(data, fmt)) == exact


def fast_outcome(data: bytes, fmt: SubmissionFormat) -> tuple[str, object] | None:
    """:func:`outcome` of the fast path, ``None`` when it declines."""
    try:
        parsed = _parse_csv_fast(data, fmt)
    except SubmissionError as exc:
        return "error", (str(exc), exc.line)
    return None if parsed is None else ("ok", (parsed.values.shape, parsed.values.tobytes()))


def assert_refused_as_the_exact_path_refuses(data: bytes, fmt: SubmissionFormat, *, answered: bool = False) -> None:
    """The exact path refuses ``data``; the fast path declines (unless ``answered``) or gives the same error."""
    exact = outcome(lambda: _parse_csv_exact(data, fmt, keep_text=False))
    assert exact[0] == "error"
    fast = fast_outcome(data, fmt)
    assert fast == exact if answered else fast in (None, exact)
    assert outcome(lambda: parse_submission_csv(data, fmt)) == exact


@settings(max_examples=300, derandomize=True, deadline=None)
@given(data=st.binary(max_size=200) | st.text(max_size=120).map(str.encode), which=st.integers(0, 1))
def test_any_bytes_get_the_exact_paths_outcome(data: bytes, which: int) -> None:
    fmt = FORMATS[which]
    exact = outcome(lambda: _parse_csv_exact(data, fmt, keep_text=False))
    assert outcome(lambda: parse_submission_csv(data, fmt)) == exact


def _rows(fmt: SubmissionFormat, ids: tuple[str, ...], newline: str = "\n") -> str:
    value = "0.25" if fmt.n_classes == 2 else "0.2,0.3,0.5"
    return newline.join([",".join(fmt.columns), *(f"{i},{value}" for i in ids)])


@pytest.mark.parametrize(
    "body",
    [
        sample_submission_csv(BINARY),
        _rows(BINARY, tuple(reversed(IDS))),
        _rows(BINARY, IDS, "\r\n") + "\r\n",
        "\ufeff" + _rows(BINARY, IDS) + "\n\n \n",
        _rows(BINARY, IDS).replace("id,target", "ID,Target", 1),
        _rows(BINARY, IDS).replace("0.25", " 0.25\t"),
        _rows(BINARY, IDS).replace("0.25", "2.5e-1"),
        sample_submission_csv(THREE),
        _rows(THREE, tuple(reversed(IDS))),
    ],
)
def test_plain_files_take_the_fast_path(body: str) -> None:
    fmt = THREE if "class_0" in body else BINARY
    fast = _parse_csv_fast(body.encode(), fmt)
    assert fast is not None
    exact = _parse_csv_exact(body.encode(), fmt, keep_text=False)
    assert fast.values.tobytes() == exact.values.tobytes()


def test_keeping_the_decimal_strings_takes_the_exact_path() -> None:
    parsed = parse_submission_csv(_rows(BINARY, IDS).encode(), BINARY, keep_text=True)
    assert parsed.texts is not None and parsed.texts[0] == ("0.25",)


@pytest.mark.parametrize("odd", ["a b", " a", "a,b", 'a"b', "\u00e1", "a\tb", ""])
def test_hidden_ids_that_are_not_plain_turn_the_fast_path_off(odd: str) -> None:
    ids = ("x", odd)
    fmt = SubmissionFormat(ids, {k: i for i, k in enumerate(ids)}, 2)
    assert fmt.fast_ids is None
    if odd.strip() == odd and odd and "," not in odd and '"' not in odd:
        assert parse_submission_csv(f"id,target\nx,0.1\n{odd},0.2\n".encode(), fmt).values.tolist() == [0.1, 0.2]


def _big_format(n: int, seed: int) -> tuple[SubmissionFormat, np.random.Generator]:
    rng = np.random.default_rng(seed)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/"))
    ids: dict[str, None] = {}
    while len(ids) < n:
        ids["".join(rng.choice(alphabet, size=int(rng.integers(1, 30))))] = None
    keys = tuple(ids)
    return SubmissionFormat(keys, {k: i for i, k in enumerate(keys)}, 2, max_bytes=10**7), rng


@pytest.mark.parametrize("seed", range(4))
def test_rows_in_any_order_are_aligned_by_the_hash_table(seed: int) -> None:
    fmt, rng = _big_format(3000, seed)
    values = rng.random(len(fmt.ids))
    perm = rng.permutation(len(fmt.ids))
    body = "id,target\n" + "".join(f"{fmt.ids[j]},{float(values[j])!r}\n" for j in perm)
    fast = _parse_csv_fast(body.encode(), fmt)
    assert fast is not None
    assert fast.values.tobytes() == values.tobytes()
    # One id off by a byte (longer, shorter, changed), or repeated: the fast path declines.
    ids = [fmt.ids[j] for j in perm]
    k = int(rng.integers(len(ids)))
    for wrong in (ids[k] + "x", ids[k][:-1] or "?", "~" + ids[k][1:], ids[(k + 1) % len(ids)]):
        changed = "id,target\n" + "".join(
            f"{wrong if i == k else row_id},0.5\n" for i, row_id in enumerate(ids)
        )
        assert_refused_as_the_exact_path_refuses(changed.encode(), fmt)


def test_colliding_hashes_cost_probes_never_a_wrong_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every id hashed alike (a forged collision at its worst), ids are still matched byte for byte."""
    monkeypatch.setattr(fast_csv, "_hash", lambda words: np.zeros(len(words), dtype=np.uint64))
    fmt, rng = _big_format(200, 7)
    perm = rng.permutation(len(fmt.ids))
    body = "id,target\n" + "".join(f"{fmt.ids[j]},{j / 1000}\n" for j in perm)
    fast = _parse_csv_fast(body.encode(), fmt)
    assert fast is not None
    assert fast.values.tolist() == [j / 1000 for j in range(len(fmt.ids))]
    stranger = body.replace(f"\n{fmt.ids[perm[5]]},", "\nnot-an-id,", 1)
    assert_refused_as_the_exact_path_refuses(stranger.encode(), fmt, answered=True)


def test_a_body_of_extra_rows_stops_the_fast_path_early() -> None:
    fmt, _ = _big_format(1000, 3)
    rows = "".join(f"{i},0.5\n" for i in fmt.ids)
    body = ("id,target\n" + rows * 50).encode()
    assert fast_csv._arrow_read(body, body.index(b"\n") + 1, len(body), 1, len(fmt.ids)) is None
    with pytest.raises(SubmissionError, match="duplicate id") as caught:
        parse_submission_csv(body, fmt)
    assert caught.value.line == len(fmt.ids) + 2


def test_rows_in_any_order_are_aligned_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lookup runs over chunks of rows (bounded temporaries); a chunk boundary changes no outcome."""
    monkeypatch.setattr(fast_csv, "_LOOKUP_CHUNK", 7)
    fmt, rng = _big_format(500, 11)
    values = rng.random(len(fmt.ids))
    perm = rng.permutation(len(fmt.ids))
    body = "id,target\n" + "".join(f"{fmt.ids[j]},{float(values[j])!r}\n" for j in perm)
    fast = _parse_csv_fast(body.encode(), fmt)
    assert fast is not None and fast.values.tobytes() == values.tobytes()
    for k in (0, 6, 7, 499):  # a row that is no hidden id, at and around chunk edges
        rows = [fmt.ids[j] for j in perm]
        rows[k] = "not-an-id"
        changed = "id,target\n" + "".join(f"{row_id},0.5\n" for row_id in rows)
        assert_refused_as_the_exact_path_refuses(changed.encode(), fmt, answered=True)
    repeated = [fmt.ids[j] for j in perm]
    repeated[8] = repeated[1]  # the same id in two chunks
    twice = ("id,target\n" + "".join(f"{r},0.5\n" for r in repeated)).encode()
    assert_refused_as_the_exact_path_refuses(twice, fmt, answered=True)


@pytest.mark.parametrize(("value", "problem"), [("1.5", r"outside \[0, 1\]"), ("nan", "not a finite number")])
def test_a_value_the_checks_refuse_is_named_by_the_fast_path_itself(value: str, problem: str) -> None:
    fmt, rng = _big_format(2000, 5)
    rows = [f"{row_id},{float(v)!r}" for row_id, v in zip(fmt.ids, rng.random(len(fmt.ids)), strict=True)]
    rows[1500] = f"{fmt.ids[1500]},{value}"
    body = ("id,target\n" + "\n".join(rows) + "\n").encode()
    if value == "nan":  # Arrow reads "nan" as a float too: the same check then names it
        assert fast_outcome(body, fmt) == outcome(lambda: _parse_csv_exact(body, fmt, keep_text=False))
    with pytest.raises(SubmissionError, match=problem) as caught:
        _parse_csv_fast(body, fmt)
    assert caught.value.line == 1502


def test_an_unknown_or_repeated_id_in_a_shuffled_file_is_named_by_the_fast_path() -> None:
    """The first bad row is named as the exact path names it; an id that ``str.strip`` would change is left to
    the exact path (it might read as a hidden id there)."""
    fmt, rng = _big_format(3000, 9)
    rows = [fmt.ids[j] for j in rng.permutation(len(fmt.ids))]
    for k, wrong, expected in [
        (2000, "nobody", "line 2002: id 'nobody' is not in the test set"),
        (2000, "x" * 300, f"line 2002: id {'x' * 40 + '...'!r} is not in the test set"),  # longer than any id
        (2500, rows[100], f"line 2502: duplicate id {rows[100]!r} (first given on line 102)"),
    ]:
        changed = list(rows)
        changed[k] = wrong
        changed[2900] = "nobody-later"  # a later problem is not the one named
        body = ("id,target\n" + "".join(f"{r},0.5\n" for r in changed)).encode()
        with pytest.raises(SubmissionError) as caught:
            _parse_csv_fast(body, fmt)
        assert str(caught.value) == expected
        assert_refused_as_the_exact_path_refuses(body, fmt, answered=True)
    padded = list(rows)
    padded[5] = "\t" + rows[5]  # the exact path strips it back to a hidden id: only it can tell
    assert fast_outcome(("id,target\n" + "".join(f"{r},0.5\n" for r in padded)).encode(), fmt) is None


@pytest.mark.parametrize("brk", ["\v", "\f", "\x1c", "\x1d", "\x1e"])
def test_a_line_break_only_the_exact_path_knows_sends_the_file_there(brk: str) -> None:
    """``str.splitlines`` breaks at ``\\v``, ``\\f`` and ``\\x1c``–``\\x1e``, Arrow does not: the fast path read
    ``b<VT>c,0.5`` as one row and named a duplicate id on line 3, where the exact path names the short line 7 first
    (found by the property test above). It now declines such a file."""
    fmt = BINARY
    ids = list(fmt.ids)
    rows = [f"{ids[0]},0.5", f"{ids[0]},0.5", *(f"{i},0.5" for i in ids[2:-1]), f"{ids[1]}{brk}{ids[-1]},0.5"]
    data = ("id,target\n" + "\n".join(rows)).encode()
    assert fast_outcome(data, fmt) is None
    exact = outcome(lambda: _parse_csv_exact(data, fmt, keep_text=False))
    assert exact[0] == "error" and outcome(lambda: parse_submission_csv(data, fmt)) == exact
