"""Every malformed upload is rejected with a message naming the line (or item) and the problem."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import SubmissionError, SubmissionFormat, sample_submission_csv
from scoring.parsing import parse_submission_csv, parse_submission_json, validate_array

IDS = ("a", "b", "c", "d")
BINARY = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 2, max_bytes=10_000)
THREE = SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 3)


def _csv(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_sample_submission_parses_back_to_the_neutral_guess() -> None:
    parsed = parse_submission_csv(sample_submission_csv(BINARY).encode(), BINARY)
    assert parsed.values.tolist() == [0.5] * 4
    parsed = parse_submission_csv(sample_submission_csv(THREE).encode(), THREE)
    np.testing.assert_allclose(parsed.values, np.full((4, 3), 1 / 3))


def test_rows_in_any_order_are_aligned_to_the_hidden_ids() -> None:
    parsed = parse_submission_csv(_csv("id,target", "c,0.3", "a,0.1", "d,0.4", "b,0.2"), BINARY)
    assert parsed.values.tolist() == [0.1, 0.2, 0.3, 0.4]


def test_crlf_bom_and_quoted_fields_are_accepted() -> None:
    data = "\ufeffid,target\r\n\"a\",0.1\r\nb,0.2\r\nc,0.3\r\nd,0.4\r\n".encode()
    assert parse_submission_csv(data, BINARY).values.tolist() == [0.1, 0.2, 0.3, 0.4]


@pytest.mark.parametrize(
    ("lines", "line", "problem"),
    [
        (("id,prob", "a,0.1"), 1, "header must be 'id,target'"),
        (("id,target,extra", "a,0.1,1"), 1, "header has 3 columns"),
        (("id,target", "a,0.1", "b,0.2,0.3", "c,0.3", "d,0.4"), 3, "expected 2 columns, got 3"),
        (("id,target", "a,0.1", "b", "c,0.3", "d,0.4"), 3, "expected 2 columns, got 1"),
        (("id,target", "a,0.1", "zz,0.2", "c,0.3", "d,0.4"), 3, "id 'zz' is not in the test set"),
        (("id,target", "a,0.1", "a,0.2", "c,0.3", "d,0.4"), 3, "duplicate id 'a' (first given on line 2)"),
        (("id,target", "a,0.1", "b,abc", "c,0.3", "d,0.4"), 3, "'abc' is not a number"),
        (("id,target", "a,0.1", "b,nan", "c,0.3", "d,0.4"), 3, "not a finite number"),
        (("id,target", "a,0.1", "b,0.2", "c,inf", "d,0.4"), 4, "not a finite number"),
        (("id,target", "a,0.1", "b,1.5", "c,0.3", "d,0.4"), 3, "outside [0, 1]"),
        (("id,target", "a,0.1", "b,-0.01", "c,0.3", "d,0.4"), 3, "outside [0, 1]"),
        (("id,target", "a,0.1", "", "c,0.3", "d,0.4"), 3, "empty line"),
        # ';' between columns (a spreadsheet with a comma decimal mark): the message names the delimiter.
        (("id;target", "a;0,1", "b;0,2", "c;0,3", "d;0,4"), 1, "header has 1 columns, expected 2: id,target; this "
         "line is separated by ';' (semicolon): separate columns with ',' (a comma), and write decimals with '.'"),
        (("id,target", "a,0.1", "b;0.2", "c,0.3", "d,0.4"), 3, "expected 2 columns, got 1; this line is separated "
         "by ';' (semicolon)"),
        (("id,target", "a,0.1", "b,0.2", "c\t0.3", "d,0.4"), 4, "got 1; this line is separated by a tab"),
    ],
)
def test_malformed_csv_names_the_line_and_problem(lines: tuple[str, ...], line: int, problem: str) -> None:
    with pytest.raises(SubmissionError) as caught:
        parse_submission_csv(_csv(*lines), BINARY)
    assert caught.value.line == line
    assert problem in str(caught.value)
    assert str(caught.value).startswith(f"line {line}:")


def test_missing_ids_are_listed() -> None:
    with pytest.raises(SubmissionError, match=r"2 ids are missing: 'c', 'd'"):
        parse_submission_csv(_csv("id,target", "a,0.1", "b,0.2"), BINARY)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "the file is empty"),
        (b"  \n\n", "the file is empty"),
        (b"id,target\n", "header but no rows"),
        (b"id,target\na,0.1\n" + b"x" * 10_001, "over the limit of 10000 bytes"),
    ],
)
def test_file_level_problems_are_named(data: bytes, problem: str) -> None:
    with pytest.raises(SubmissionError, match=problem):
        parse_submission_csv(data, BINARY)


def test_undecodable_bytes_name_line_and_column() -> None:
    data = b"id,target\na,0.1\nb,0.\xff2\nc,0.3\nd,0.4\n"
    with pytest.raises(SubmissionError, match=r"line 3: the file is not valid UTF-8 \(byte 0xff at column 5\)"):
        parse_submission_csv(data, BINARY)


def test_multiclass_rows_are_renormalised_within_tolerance_and_rejected_beyond() -> None:
    ok = _csv("id,class_0,class_1,class_2", "a,0.2,0.3,0.50001", "b,1,0,0", "c,0,1,0", "d,0,0,1")
    values = parse_submission_csv(ok, THREE).values
    np.testing.assert_allclose(values.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    bad = _csv("id,class_0,class_1,class_2", "a,0.2,0.3,0.5", "b,0.5,0.5,0.5", "c,0,1,0", "d,0,0,1")
    with pytest.raises(SubmissionError, match=r"line 3: class probabilities sum to 1.5"):
        parse_submission_csv(bad, THREE)


def test_multiclass_wrong_column_count_is_named() -> None:
    with pytest.raises(SubmissionError, match="line 1: the header has 3 columns, expected 4"):
        parse_submission_csv(_csv("id,class_0,class_1", "a,0.5,0.5"), THREE)


def test_json_positional_keyed_and_records_forms_agree() -> None:
    positional = parse_submission_json({"predictions": [0.1, 0.2, 0.3, 0.4]}, BINARY).values
    keyed = parse_submission_json({"predictions": {"d": 0.4, "c": 0.3, "b": 0.2, "a": 0.1}}, BINARY).values
    records = parse_submission_json(
        {"predictions": [{"id": k, "target": v} for k, v in zip(IDS, [0.1, 0.2, 0.3, 0.4], strict=True)]}, BINARY
    ).values
    assert positional.tolist() == keyed.tolist() == records.tolist() == [0.1, 0.2, 0.3, 0.4]


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"preds": []}, '"predictions" field'),
        ({"predictions": [0.1, 0.2]}, "needs 4 items"),
        ({"predictions": [0.1, "x", 0.3, 0.4]}, "item 1: column 'target': 'x' is not a number"),
        ({"predictions": [0.1, 0.2, 2.0, 0.4]}, "item 2: probability 2.0 is outside"),
        ({"predictions": {"a": 0.1, "b": 0.2, "c": 0.3, "q": 0.4}}, "item 3: id 'q' is not in the test set"),
        ({"predictions": [[0.1], 0.2, 0.3, 0.4]}, "item 0: expected one probability"),
        ({"predictions": 3}, "must be a list or an object"),
    ],
)
def test_malformed_json_names_the_item(payload: dict[str, object], problem: str) -> None:
    with pytest.raises(SubmissionError, match=problem.replace("(", r"\(").replace("[", r"\[")):
        parse_submission_json(payload, BINARY)


def test_json_text_keeps_exact_decimal_strings_for_mpfr() -> None:
    parsed = parse_submission_json(
        '{"predictions": [0.1000000000000000000001, 0.2, 0.3, 0.4]}', BINARY, keep_text=True
    )
    assert parsed.texts is not None
    assert parsed.texts[0] == ("0.1000000000000000000001",)


def test_in_memory_arrays_meet_the_same_checks() -> None:
    with pytest.raises(SubmissionError, match=r"row 2 \(id 'c'\): probability 1.2 is outside"):
        validate_array(np.array([0.1, 0.2, 1.2, 0.4]), BINARY)
    with pytest.raises(SubmissionError, match="shape"):
        validate_array(np.array([0.1, 0.2]), BINARY)
