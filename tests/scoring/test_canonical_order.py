"""The canonical row order is a function of the ids alone: a labels file sorted by label gives nothing away
through the sample submission, a JSON submission's list or the rows fed to a model."""

from __future__ import annotations

import numpy as np

from scoring import HiddenTestSet, ScoringSpec, parse_labels_csv, sample_submission_csv
from scoring.hidden import canonical_order


def _labels_file(ids: list[str], labels: np.ndarray, order: np.ndarray) -> bytes:
    return ("id,label\n" + "".join(f"{ids[i]},{int(labels[i])}\n" for i in order)).encode()


def _sample_ids(data: bytes) -> list[str]:
    ids, labels, k = parse_labels_csv(data)
    spec = ScoringSpec(hidden=HiddenTestSet(ids, labels, k, np.ones(len(labels), dtype=bool)))
    return [line.split(",")[0] for line in sample_submission_csv(spec.submission_format).splitlines()[1:]]


def test_a_file_sorted_by_label_gives_the_sorted_ids_whatever_the_labels() -> None:
    rng = np.random.default_rng(3)
    ids = [str(i) for i in rng.permutation(np.arange(1, 2001))[:500]]  # numbers, unsorted, 1 to 4 digits
    labels = rng.integers(0, 2, 500)
    natural = sorted(ids, key=int)
    for order in (np.argsort(labels, kind="stable"), np.argsort(-labels, kind="stable"), rng.permutation(500)):
        data = _labels_file(ids, labels, order)
        parsed_ids, parsed_labels, _ = parse_labels_csv(data)
        assert list(parsed_ids) == natural  # numbers as numbers: "2" before "10"
        assert _sample_ids(data) == natural
        by_id = dict(zip(ids, labels.tolist(), strict=True))
        assert parsed_labels.tolist() == [by_id[i] for i in natural]
    # Another labelling of the same ids: the same sample, row for row.
    flipped = 1 - labels
    assert _sample_ids(_labels_file(ids, flipped, np.argsort(flipped, kind="stable"))) == natural


def test_the_position_of_a_row_says_nothing_of_its_label() -> None:
    """The finding: with the file sorted by label, "the first n0 rows are 0" read every label in one query."""
    rng = np.random.default_rng(4)
    ids = [f"img-{rng.integers(10**9):09d}" for _ in range(1000)]
    labels = rng.integers(0, 2, 1000)
    order = np.argsort(labels, kind="stable")
    _, parsed, _ = parse_labels_csv(_labels_file(ids, labels, order))
    by_position = (np.arange(1000) >= int((labels == 0).sum())).astype(int)
    assert abs(float(np.mean(by_position == parsed)) - 0.5) < 0.1  # was 1.0: every label right


def test_text_ids_sort_by_their_bytes_and_digits_as_numbers() -> None:
    assert canonical_order(["10", "9", "0010", "1"]).tolist() == [3, 1, 2, 0]
    assert canonical_order(["b", "B", "a", "10", "9"]).tolist() == [3, 4, 1, 2, 0]
    assert canonical_order([]).tolist() == []
