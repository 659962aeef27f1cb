"""The competition's CSV header is the scoring core's (one definition of the submission format)."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.competitions.models import Competition
from scoring.parsing import SubmissionFormat, parse_submission_csv


@pytest.mark.parametrize("n_classes", [2, 3, 7])
def test_the_competition_asks_for_the_header_the_parser_accepts(n_classes: int) -> None:
    columns = Competition(n_classes=n_classes).submission_columns
    ids = ("a", "b")
    fmt = SubmissionFormat(ids, {row_id: i for i, row_id in enumerate(ids)}, n_classes)
    assert columns == fmt.columns
    cells = "0.5" if n_classes == 2 else ",".join([repr(1 / n_classes)] * n_classes)
    upload = "\n".join([",".join(columns), *(f"{row_id},{cells}" for row_id in ids)]).encode()
    assert parse_submission_csv(upload, fmt).values.shape[0] == 2
    assert not np.isnan(parse_submission_csv(upload, fmt).values).any()
