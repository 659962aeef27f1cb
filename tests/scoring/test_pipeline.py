"""The pipeline: splits, released precision, reproducibility and the φ-bit arithmetic."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from defenses import DefenseChain
from scoring import (
    Arithmetic,
    ConfigurationError,
    HiddenTestSet,
    ScoringSpec,
    evaluate,
    parse,
    parse_labels_csv,
    public_split_mask,
    release_text,
)
from scoring.metrics import get_metric


def _spec(n: int = 200, **kwargs: object) -> ScoringSpec:
    rng = np.random.default_rng(7)
    hidden = HiddenTestSet(
        tuple(f"r{i}" for i in range(n)), rng.integers(0, 2, n), 2, public_split_mask(n, 0.3, seed=99)
    )
    return ScoringSpec(hidden, **kwargs)  # type: ignore[arg-type]


def _upload(spec: ScoringSpec, values: np.ndarray) -> bytes:
    lines = ["id,target", *(f"{i},{float(v)!r}" for i, v in zip(spec.hidden.ids, values, strict=True))]
    return "\n".join(lines).encode()


def test_split_is_fixed_by_the_seed_and_sized_by_the_fraction() -> None:
    a, b, c = public_split_mask(1000, 0.3, 5), public_split_mask(1000, 0.3, 5), public_split_mask(1000, 0.3, 6)
    assert a.sum() == 300
    assert (a == b).all()
    assert not (a == c).all()
    assert public_split_mask(10, 0.01, 1).sum() == 1  # both boards keep at least one row


def test_public_and_private_scores_use_only_their_rows(rng: np.random.Generator) -> None:
    spec = _spec(decimals=None)
    values = rng.random(spec.hidden.n_rows)
    result = evaluate(spec, parse(spec, _upload(spec, values)), submission_id=1)
    metric = get_metric("binary_logloss")
    for split in ("public", "private"):
        rows = spec.hidden.split_rows(split)
        assert result.results[split].raw == pytest.approx(metric.score(values[rows], spec.hidden.labels[rows], 1e-15))
        assert result.results[split].released == result.results[split].raw


def test_released_value_carries_exactly_the_displayed_decimals(rng: np.random.Generator) -> None:
    spec = _spec(decimals=5)
    values = rng.random(spec.hidden.n_rows)
    public = evaluate(spec, parse(spec, _upload(spec, values)), submission_id=1).results["public"]
    assert public.released_text is not None
    assert len(public.released_text.split(".")[1]) == 5
    assert abs(float(public.raw) - float(public.released_text)) <= 0.5e-5
    assert repr(public.released) == public.released_text.rstrip("0").rstrip(".") or public.released == float(
        public.released_text
    )


def test_rounding_uses_the_exact_binary_value_not_its_shortest_repr() -> None:
    # 0.123455 is stored as 0.12345499999...; rounding its exact value to 5 places gives 0.12345.
    assert release_text(0.123455, 5)[1] == "0.12345"
    assert release_text(Decimal("0.123455"), 5)[1] == "0.12346"  # an exact decimal tie rounds half-even up here


def test_the_same_submission_gives_the_same_released_score_under_a_chain(rng: np.random.Generator) -> None:
    spec = _spec(chain=DefenseChain.from_json([{"name": "rounding", "decimals": 3}]))
    parsed = parse(spec, _upload(spec, rng.random(spec.hidden.n_rows)))
    first = evaluate(spec, parsed, submission_id=3)
    again = evaluate(spec, parsed, submission_id=3)
    assert first.results == again.results
    assert first.results["public"].released_text is not None
    # One knob for the released precision: 3 decimals from the chain are shown as 3, not padded to the 5
    # displayed ("1.36750" had a last digit that was always 0).
    assert len(first.results["public"].released_text.split(".")[1]) == 3


def test_mpfr_arithmetic_agrees_with_float64_to_float_precision(rng: np.random.Generator) -> None:
    values = rng.random(200)
    float_spec = _spec(decimals=None)
    mpfr_spec = _spec(decimals=None, arithmetic=Arithmetic.parse("mpfr:300"))
    upload = _upload(float_spec, values)
    as_float = evaluate(float_spec, parse(float_spec, upload), submission_id=1).results["public"]
    as_mpfr = evaluate(mpfr_spec, parse(mpfr_spec, upload), submission_id=1).results["public"]
    assert isinstance(as_mpfr.raw, Decimal)
    assert len(str(as_mpfr.raw)) > 80  # every digit of the 300-bit value is released
    assert float(as_mpfr.raw) == pytest.approx(float(as_float.raw), rel=1e-13)


def test_mpfr_reads_more_digits_than_float64_can_hold() -> None:
    hidden = HiddenTestSet(("a",), np.array([1]), 2, np.array([True]))
    spec = ScoringSpec(hidden, decimals=None, arithmetic=Arithmetic.parse("mpfr:200"))
    upload = b"id,target\na,0.30000000000000000000000000001\n"
    raw = evaluate(spec, parse(spec, upload), submission_id=1, splits=("all",)).results["all"].raw
    coarse = evaluate(spec, parse(spec, b"id,target\na,0.3\n"), submission_id=1, splits=("all",)).results["all"].raw
    assert raw != coarse


def test_a_metric_must_fit_the_task_and_the_arithmetic() -> None:
    hidden = HiddenTestSet(("a", "b"), np.array([0, 2]), 3, np.array([True, False]))
    with pytest.raises(ConfigurationError, match="does not support multiclass"):
        ScoringSpec(hidden, metric_name="auc")
    with pytest.raises(ConfigurationError, match="only available in float64"):
        ScoringSpec(hidden, metric_name="accuracy", arithmetic=Arithmetic.parse("mpfr:100"))


def test_labels_csv_errors_name_the_line() -> None:
    ids, labels, k = parse_labels_csv(b"id,label\nx,0\ny,2\n")
    assert (ids, labels.tolist(), k) == (["x", "y"], [0, 2], 3)
    with pytest.raises(ConfigurationError, match="line 3: duplicate id 'x'"):
        parse_labels_csv(b"id,label\nx,0\nx,1\n")
    with pytest.raises(ConfigurationError, match="line 2: label 'yes' is not an integer"):
        parse_labels_csv(b"id,label\nx,yes\n")
    with pytest.raises(ConfigurationError, match="line 1"):
        parse_labels_csv(b"row,target\nx,1\n")
