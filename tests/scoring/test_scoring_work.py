"""The φ-bit work limit: a submission whose MPFR scoring would cost a worker more than the limit is refused from
its shape and the competition's settings alone, before any label is read."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scoring import HiddenTestSet, ScoringSpec, evaluate
from scoring.arithmetic import MAX_SCORING_SECONDS, Arithmetic, ScoringWorkExceeded, log_seconds
from scoring.parsing import ParsedPredictions
from scoring.pipeline import check_scoring_work


class _Untouchable(np.ndarray):
    """Labels that fail the test if anything reads them."""

    def __getitem__(self, key: Any) -> Any:
        raise AssertionError("a label was read")


def _spec(bits: int, labels: np.ndarray, also_report: tuple[str, ...] = ()) -> ScoringSpec:
    mask = np.zeros(len(labels), dtype=bool)
    mask[::2] = True
    hidden = HiddenTestSet([str(i) for i in range(len(labels))], labels, 2, mask)
    return ScoringSpec(hidden=hidden, arithmetic=Arithmetic(bits), decimals=None, also_report=also_report)


def _parsed(rows: int) -> ParsedPredictions:
    values = np.random.default_rng(1).uniform(0.05, 0.95, rows)
    return ParsedPredictions(values, tuple((repr(float(v)),) for v in values))


def test_the_finding_400_rows_at_a_million_bits_is_refused_before_any_label_is_read() -> None:
    messages = set()
    for seed in range(3):
        labels = np.random.default_rng(seed).integers(0, 2, 400).view(_Untouchable)
        with pytest.raises(ScoringWorkExceeded) as info:
            evaluate(_spec(1_000_000, labels), _parsed(400), submission_id=1)
        messages.add(str(info.value))
    assert len(messages) == 1  # the same text whatever the labels
    message = messages.pop()
    assert "mpfr:1000000" in message and "400 rows × 1 column" in message
    assert f"over the limit of {MAX_SCORING_SECONDS:g} s" in message and "at most mpfr:" in message


def test_what_the_message_offers_fits_and_is_scored() -> None:
    bits = Arithmetic(1_000_000)
    with pytest.raises(ScoringWorkExceeded) as info:
        bits.check_work(400, what="400 rows")
    offered = int(str(info.value).rsplit("at most mpfr:", 1)[1].split()[0])
    Arithmetic(offered).check_work(400, what="400 rows")
    with pytest.raises(ScoringWorkExceeded):
        Arithmetic(offered + 1).check_work(400, what="400 rows")
    labels = np.random.default_rng(0).integers(0, 2, 40)
    assert evaluate(_spec(4000, labels), _parsed(40), submission_id=1).results["public"].raw > 0


def test_every_reported_metric_counts_and_float64_is_never_limited() -> None:
    labels = np.random.default_rng(0).integers(0, 2, 300)
    assert 300 * log_seconds(100_000) < MAX_SCORING_SECONDS < 3 * 300 * log_seconds(100_000)
    check_scoring_work(_spec(100_000, labels), _parsed(300))  # 300 values: fits
    with pytest.raises(ScoringWorkExceeded, match="× 3 metrics"):
        evaluate(_spec(100_000, labels.view(_Untouchable), ("brier", "kl")), _parsed(300), submission_id=1)
    assert Arithmetic(None).scoring_seconds(10**9) == 0.0


def test_the_estimate_grows_with_the_bits() -> None:
    points = [log_seconds(b) for b in (2, 53, 200, 1_000, 5_000, 50_000, 500_000, 1_000_000)]
    assert points == sorted(points)
