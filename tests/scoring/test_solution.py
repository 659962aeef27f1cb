"""Kaggle's solution file: labels and the host's split, every refusal naming its line and reason."""

from __future__ import annotations

import re

import numpy as np
import pytest

from scoring import ConfigurationError, HiddenTestSet, ScoringSpec, evaluate, parse
from scoring.solution import parse_solution_csv


def test_it_reads_labels_and_the_split_in_the_canonical_order() -> None:
    solution = parse_solution_csv(b"\xef\xbb\xbfid,target,Usage\n10,1,Public\n2,0,private\n1,1,PRIVATE\n3,,Ignored\n")

    assert list(solution.ids) == ["1", "2", "3", "10"]
    assert solution.labels.tolist() == [1, 0, 0, 1]
    assert solution.public_mask.tolist() == [False, False, False, True]
    assert solution.ignored_mask.tolist() == [False, False, True, False]
    assert (solution.n_classes, solution.target_columns) == (2, ("target",))
    assert solution.public_fraction == pytest.approx(1 / 3)


def test_several_target_columns_are_one_hot_in_their_order() -> None:
    solution = parse_solution_csv("Usage,id,cat,dog,bird\nPublic,a,0,0,1\nPrivate,b,1,0,0\nPrivate,c,0,1.0,0\n")

    assert (solution.labels.tolist(), solution.n_classes) == ([2, 0, 1], 3)
    assert solution.target_columns == ("cat", "dog", "bird")


def test_the_classes_are_counted_on_the_scored_rows_only() -> None:
    assert parse_solution_csv("id,target,Usage\n1,0,Public\n2,1,Private\n3,7,Ignored\n").n_classes == 2
    assert parse_solution_csv("id,target,Usage\n1,0,Public\n2,2,Private\n").n_classes == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the solution file is empty"),
        ("id,target\n1,0\n", "line 1: missing column 'Usage'"),
        ("row,target,Usage\n1,0,Public\n", "line 1: missing column 'id'"),
        ("id,Usage\n1,Public\n", "line 1: no target column"),
        ("id,target,Usage,usage\n1,0,Public,Public\n", "line 1: the column 'usage' appears twice"),
        ("id,target,Usage\n", "the solution file has no rows"),
        ("id,target,Usage\n1,0,Public\n2,1,Secret\n", "line 3: unknown Usage 'Secret' (Public, Private or Ignored)"),
        ("id,target,Usage\n1,0,Public\n2,1\n", "line 3: expected 3 columns, got 2"),
        ("id,target,Usage\n1,0,Public\n1,1,Private\n", "line 3: duplicate id '1' (first on line 2)"),
        ("id,target,Usage\n1,0,Public\n,1,Private\n", "line 3: empty id"),
        ("id,target,Usage\n1,0.7,Public\n", "line 2: label '0.7' is not an integer class 0..K-1"),
        ("id,target,Usage\n1,-1,Public\n", "line 2: label -1 is negative"),
        ("id,target,Usage\n1,yes,Public\n", "line 2: label 'yes' is not an integer"),
        ("id,a,b,Usage\n1,1,1,Public\n", "line 2: 2 target columns hold 1; a one-hot row has exactly one"),
        ("id,a,b,Usage\n1,0.5,0.5,Public\n", "line 2: '0.5' is not 0 or 1"),
        ("id,target,Usage\n1,0,Ignored\n", "every row is Ignored"),
        ("id,target,Usage\n1,0,Private\n", "no row is Public"),
    ],
)
def test_it_refuses_anything_else_naming_the_line_and_the_reason(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        parse_solution_csv(text)


def test_it_refuses_a_file_that_is_not_utf8() -> None:
    with pytest.raises(ConfigurationError, match="not valid UTF-8"):
        parse_solution_csv(b"id,target,Usage\n\xff,0,Public\n")


def test_ignored_rows_are_predicted_but_scored_on_neither_board() -> None:
    solution = parse_solution_csv("id,target,Usage\n1,1,Public\n2,0,Private\n3,1,Ignored\n")
    hidden = HiddenTestSet(solution.ids, solution.labels, solution.n_classes, solution.public_mask,
                           ignored_mask=solution.ignored_mask)
    spec = ScoringSpec(hidden=hidden, metric_name="brier", decimals=None)
    # Every id must be predicted (Kaggle's convention); row 3's prediction moves no score.
    right, wrong = (parse(spec, f"id,target\n1,1\n2,0\n3,{p}\n".encode()) for p in (1, 0))

    for split in ("public", "private"):
        released = {evaluate(spec, parsed, submission_id=1).results[split].released for parsed in (right, wrong)}
        assert released == {0.0}, split
    assert np.array_equal(hidden.split_rows("all"), [0, 1])
