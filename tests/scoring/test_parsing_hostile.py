"""Hostile uploads: any body up to the size limit is accepted or rejected in time linear in its size and in
memory a small multiple of it, with the first problem named by line; numbers are plain ASCII decimals; a JSON
object cannot give an id twice; the csv module's own limits surface as a named line, never as ``csv.Error``."""

from __future__ import annotations

import tracemalloc

import pytest

from scoring import ConfigurationError, SubmissionError, SubmissionFormat, parse_labels_csv
from scoring.parsing import parse_submission_csv, parse_submission_json

IDS = tuple(f"r{i}" for i in range(1000))
FORMAT = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 2, max_bytes=50 * 1024 * 1024)
VALID_ROWS = "".join(f"{i},0.5\n" for i in IDS)


def _peak_bytes(body: bytes) -> tuple[int, SubmissionError | None]:
    """Peak memory traced while parsing ``body`` (the body itself excluded), and the error raised if any."""
    tracemalloc.start()
    try:
        parse_submission_csv(body, FORMAT)
        error = None
    except SubmissionError as exc:
        error = exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, error


@pytest.mark.parametrize(
    ("name", "tail"),
    [
        # Line widths that differ used to build every line's fields before naming the first bad one.
        ("mixed widths", "x\n" + "x,y,z\n" * 400_000),
        ("newlines between rows", "r0,0.5\n" + "\n" * 2_000_000 + "r1,0.5\n"),
        ("repeated rows", "r0,0.5\n" * 400_000),
    ],
)
def test_a_long_hostile_body_is_rejected_within_a_small_multiple_of_its_size(name: str, tail: str) -> None:
    body = ("id,target\n" + VALID_ROWS + tail).encode()
    peak, error = _peak_bytes(body)
    assert error is not None and error.line == len(IDS) + 2, name  # the first line past the valid rows
    assert peak < 4 * len(body), f"{name}: {peak / len(body):.1f} x the body"


def test_trailing_blank_lines_cost_nothing_and_are_no_rows() -> None:
    body = ("id,target\n" + VALID_ROWS + "\n \r\n" * 1_000_000).encode()
    peak, error = _peak_bytes(body)
    assert error is None
    assert peak < 4 * len(body)


def test_the_first_wrong_width_is_named_even_past_many_good_lines() -> None:
    rows = VALID_ROWS.splitlines()
    rows[700] = "r700,0.5,0.1"
    with pytest.raises(SubmissionError, match="expected 2 columns, got 3") as caught:
        parse_submission_csv(("id,target\n" + "\n".join(rows)).encode(), FORMAT)
    assert caught.value.line == 702


def test_a_quoted_field_over_the_csv_limit_names_its_line() -> None:
    rows = VALID_ROWS.splitlines()
    rows[3] = '"' + "r" * 200_000 + '",0.5'
    with pytest.raises(SubmissionError, match="malformed CSV") as caught:
        parse_submission_csv(("id,target\n" + "\n".join(rows)).encode(), FORMAT)
    assert caught.value.line == 5


@pytest.mark.parametrize("value", ["0.1_2", "0.\u0665", "\u0660.5", "\uff10.\uff15", "0\u066b5"])
def test_only_plain_ascii_decimals_are_numbers(value: str) -> None:
    rows = VALID_ROWS.splitlines()
    rows[10] = f"r10,{value}"
    with pytest.raises(SubmissionError, match="not a plain decimal number") as caught:
        parse_submission_csv(("id,target\n" + "\n".join(rows)).encode("utf-8"), FORMAT)
    assert caught.value.line == 12
    with pytest.raises(SubmissionError, match="not a plain decimal number"):
        parse_submission_json({"predictions": {i: (value if i == "r10" else "0.5") for i in IDS}}, FORMAT)


def test_a_json_object_that_repeats_an_id_is_rejected() -> None:
    body = '{"predictions": {' + ", ".join(f'"{i}": 0.5' for i in IDS) + ', "r7": 0.9}}'
    with pytest.raises(SubmissionError, match="repeats the key 'r7'"):
        parse_submission_json(body.encode(), FORMAT)


def test_a_labels_file_with_an_oversized_field_or_a_loose_integer_names_the_line() -> None:
    with pytest.raises(ConfigurationError, match="line 3: malformed CSV"):
        parse_labels_csv('id,label\na,0\n"' + "b" * 200_000 + '",1\n')
    for loose in ("1_0", "\u0661", "\uff11"):
        with pytest.raises(ConfigurationError, match=r"line 2: label .* is not an integer"):
            parse_labels_csv(f"id,label\na,{loose}\nb,0\n")
