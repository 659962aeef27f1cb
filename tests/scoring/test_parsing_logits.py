"""A competition scored on logits (softmax_ce, sigmoid_ce) takes any finite real in the usual columns, on
every path (CSV fast and exact, JSON, the offline oracle's arrays), and still refuses what is not a number."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import HiddenTestSet, ScoringSpec, SubmissionError, SubmissionFormat, sample_submission_csv
from scoring.errors import ConfigurationError
from scoring.parsing import parse_submission_csv, parse_submission_json, validate_array

IDS = ("a", "b", "c", "d")
INDEX = {k: i for i, k in enumerate(IDS)}
BINARY = SubmissionFormat(IDS, INDEX, 2, logits=True)
THREE = SubmissionFormat(IDS, INDEX, 3, logits=True)


def _csv(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_binary_logits_take_any_finite_real_on_both_csv_paths() -> None:
    data = _csv("id,target", "a,-3.5", "b,12", "c,1e300", "d,-1.7976931348623157e308")
    expected = [-3.5, 12.0, 1e300, -1.7976931348623157e308]
    assert parse_submission_csv(data, BINARY).values.tolist() == expected  # the fast path
    parsed = parse_submission_csv(data, BINARY, keep_text=True)  # the exact path
    assert parsed.values.tolist() == expected and parsed.texts is not None


def test_multiclass_logits_are_not_renormalised() -> None:
    data = _csv("id,class_0,class_1,class_2", "a,1,2,3", "b,-5,0,5", "c,0,0,0", "d,100,-100,7")
    values = parse_submission_csv(data, THREE).values
    assert values.tolist() == [[1, 2, 3], [-5, 0, 5], [0, 0, 0], [100, -100, 7]]
    assert parse_submission_csv(data, THREE, keep_text=True).values.tolist() == values.tolist()


def test_json_logits_in_every_layout() -> None:
    assert parse_submission_json({"predictions": ["-2", "3", "0", "9.5"]}, BINARY).values.tolist() == [-2, 3, 0, 9.5]
    by_id = {"a": [1, 2, 3], "b": [0, 0, 0], "c": [-1, -2, -3], "d": [7, 7, 8]}
    assert parse_submission_json({"predictions": by_id}, THREE).values[0].tolist() == [1, 2, 3]


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e999"])
def test_non_finite_logits_are_refused_naming_the_line(bad: str) -> None:
    with pytest.raises(SubmissionError, match="not a finite number") as info:
        parse_submission_csv(_csv("id,target", "a,0", f"b,{bad}", "c,0", "d,0"), BINARY)
    assert info.value.line == 3


def test_a_probability_competition_still_refuses_logits() -> None:
    probabilities = SubmissionFormat(IDS, INDEX, 2)
    with pytest.raises(SubmissionError, match=r"outside \[0, 1\]"):
        parse_submission_csv(_csv("id,target", "a,-3.5", "b,0.5", "c,0.5", "d,0.5"), probabilities)


def test_the_offline_oracle_arrays_meet_the_same_rules() -> None:
    assert validate_array(np.array([-4.0, 0.0, 4.0, 1e10]), BINARY).tolist() == [-4.0, 0.0, 4.0, 1e10]
    with pytest.raises(SubmissionError, match="not a finite number"):
        validate_array(np.array([0.0, np.nan, 0.0, 0.0]), BINARY)


def test_sample_submission_holds_zero_logits() -> None:
    assert sample_submission_csv(BINARY).splitlines()[1] == "a,0.0"
    assert sample_submission_csv(THREE).splitlines()[1] == "a,0.0,0.0,0.0"
    assert parse_submission_csv(sample_submission_csv(THREE).encode(), THREE).values.tolist() == [[0, 0, 0]] * 4


def test_the_spec_of_a_logit_metric_parses_logits_and_refuses_a_probability_metric_beside_it() -> None:
    hidden = HiddenTestSet(IDS, np.array([0, 1, 2, 1]), 3, np.ones(4, bool))
    spec = ScoringSpec(hidden, metric_name="softmax_ce")
    assert spec.submission_format.logits
    assert not ScoringSpec(hidden, metric_name="kl").submission_format.logits
    with pytest.raises(ConfigurationError, match="reads probabilities"):
        ScoringSpec(hidden, metric_name="softmax_ce", also_report=("brier",))
    with pytest.raises(ConfigurationError, match="reads logits"):
        ScoringSpec(hidden, metric_name="multiclass_logloss", also_report=("softmax_ce",))
