"""Whatever a participant uploads, the parsers either return aligned probabilities or raise a SubmissionError
(which the site turns into a 400 naming the problem) — never another exception, which would be a 500."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import SubmissionError, SubmissionFormat
from scoring.parsing import parse_submission_csv, parse_submission_json

IDS = ("a", "b", "c")
FORMATS = [
    SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 2, max_bytes=2_000),
    SubmissionFormat(IDS, {k: i for i, k in enumerate(IDS)}, 3, max_bytes=2_000),
]
# Fragments that make near-valid files, so the search reaches deep into the parser, not only the header check.
PIECES = st.sampled_from(
    ["id", "target", "class_0", "class_1", "class_2", "a", "b", "c", "d", ",", "\n", "\r\n", '"', "0.5", "1",
     "0", "-0.1", "1.5", "nan", "inf", "1e-3", " ", "\ufeff", "\xff", "x", ""]
)
NEAR_CSV = st.lists(PIECES, max_size=60).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(["id", "target", "a", "b", "c"]),
                                                                 inner, max_size=4),
    max_leaves=20,
)


def _check(result_values: np.ndarray, n_classes: int) -> None:
    assert len(result_values) == len(IDS)
    assert np.isfinite(result_values).all() and (result_values >= 0).all() and (result_values <= 1).all()
    if n_classes > 2:
        np.testing.assert_allclose(result_values.sum(axis=1), 1.0)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(data=st.one_of(st.binary(max_size=300), NEAR_CSV), which=st.integers(0, 1))
def test_any_bytes_parse_or_raise_a_submission_error(data: bytes, which: int) -> None:
    fmt = FORMATS[which]
    try:
        parsed = parse_submission_csv(data, fmt)
    except SubmissionError:
        return
    _check(parsed.values, fmt.n_classes)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(predictions=JSON_VALUES, which=st.integers(0, 1))
def test_any_json_parses_or_raises_a_submission_error(predictions: object, which: int) -> None:
    fmt = FORMATS[which]
    try:
        parsed = parse_submission_json({"predictions": predictions}, fmt)
    except SubmissionError:
        return
    _check(parsed.values, fmt.n_classes)
