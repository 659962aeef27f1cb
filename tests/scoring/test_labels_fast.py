"""The labels reader's Arrow fast path against its exact ``csv`` path: whenever the fast path answers, the exact
path reads the same bytes to the same ids and labels; whatever the bytes, ``parse_labels_csv`` gives the exact
path's outcome (ids, labels and classes, or the error naming the line). And a plain file does take it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from scoring import ConfigurationError, fast_csv, parse_labels_csv
from scoring.hidden import _parse_labels_exact, _with_classes, in_canonical_order

IDS = ["a", "b", "c", "10", "2", "id_with_more_than_sixteen_bytes", "x:y/z"]
ODD_IDS = [" a", "a ", "", '"a"', "a\t", "a\x00", "\u00e1", "b\x0bc", "a,b", "a", "A"]
ODD_LABELS = ["+1", "-1", "01", " 1", "1 ", "1_0", "\u0661", "1.0", "", "x", "1234567890", "99999999999999999999"]
BREAKS = ["\n", "\r\n", "\r", "\n\n", "\r\n\r\n", "\n \n", "\x0c", "\v"]


def exact(data: bytes) -> tuple[str, object]:
    """What the pure-``csv`` reader makes of ``data`` (bypassing the fast path), in the canonical order."""
    try:
        ids, labels, k = _parse_labels_exact(data)
    except (ConfigurationError, UnicodeDecodeError) as exc:
        return "error", str(exc)
    ids, labels = in_canonical_order(ids, labels)
    return "ok", (ids, labels.tolist(), k)


def public(data: bytes) -> tuple[str, object]:
    try:
        ids, labels, k = parse_labels_csv(data)
    except (ConfigurationError, UnicodeDecodeError) as exc:
        return "error", str(exc)
    return "ok", (ids, labels.tolist(), k)


@st.composite
def labels_files(draw: st.DrawFn) -> bytes:
    mess = draw(st.sampled_from([0, 0, 2, 10, 30]))

    def odd() -> bool:
        return mess > 0 and draw(st.integers(0, 99)) < mess

    headers = st.sampled_from(["ID,Label", " id,label", "id,label,", "id;label", "label,id"])
    header = draw(headers) if odd() else "id,label"
    n = draw(st.integers(1, len(IDS)))
    order = draw(st.permutations(IDS))[:n]
    lines = [header]
    for row_id in order:
        row_id = draw(st.sampled_from(ODD_IDS)) if odd() else row_id
        label = draw(st.sampled_from(ODD_LABELS)) if odd() else str(draw(st.integers(0, 3)))
        lines.append(f"{row_id},{label}" if not odd() else draw(st.sampled_from([row_id, f"{row_id},{label},0"])))
    usual = draw(st.sampled_from(["\n", "\r\n"]))
    text = "".join(line + (draw(st.sampled_from(BREAKS)) if odd() else usual) for line in lines)
    if odd():
        text = text[:-1]
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text.encode("utf-8")


@settings(max_examples=1500, derandomize=True, deadline=None)
@given(data=labels_files())
def test_the_fast_path_answers_only_what_the_exact_path_answers(data: bytes) -> None:
    expected = exact(data)
    fast = fast_csv.read_labels_csv(data)
    event(f"exact: {expected[0]}; fast: {'answered' if fast is not None else 'declined'}")
    if fast is not None:
        ids, labels, k = _with_classes(fast[0], fast[1], None)
        ids, labels = in_canonical_order(ids, labels)
        assert expected == ("ok", (ids, labels.tolist(), k))
        assert labels.dtype == np.int64
    assert public(data) == expected


@settings(max_examples=300, derandomize=True, deadline=None)
@given(data=st.binary(max_size=120) | st.text(max_size=80).map(str.encode))
def test_any_bytes_get_the_exact_paths_outcome(data: bytes) -> None:
    assert public(b"id,label\n" + data) == exact(b"id,label\n" + data)


@pytest.mark.parametrize(
    "body",
    ["id,label\na,0\nb,1\n", "ID,Label\r\na,0\r\n\r\nb,2\r\n", "\ufeffid,label\na,007\nb,1", "id,label\nx,1\n\n\n"],
)
def test_plain_files_take_the_fast_path(body: str) -> None:
    data = body.encode()
    assert fast_csv.read_labels_csv(data) is not None
    assert public(data) == exact(data)


def test_a_repeated_id_is_named_by_the_exact_path_even_when_hashes_collide(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"id,label\n" + b"".join(f"r{i},{i % 2}\n".encode() for i in range(500)) + b"r7,1\n"
    assert fast_csv.read_labels_csv(data) is None
    with pytest.raises(ConfigurationError, match="line 502: duplicate id 'r7'"):
        parse_labels_csv(data)
    # Every id hashed alike: distinct ids are still told apart exactly (by the set the collision falls back to).
    monkeypatch.setattr(fast_csv, "_hash", lambda words: np.zeros(len(words), dtype=np.uint64))
    distinct = b"id,label\n" + b"".join(f"r{i},{i % 2}\n".encode() for i in range(500))
    read = fast_csv.read_labels_csv(distinct)
    assert read is not None and read[0] == [f"r{i}" for i in range(500)]


def test_a_string_argument_takes_the_same_paths() -> None:
    assert parse_labels_csv("id,label\na,1\nb,0\n")[0] == ["a", "b"]
    with pytest.raises(ConfigurationError, match="line 1"):
        parse_labels_csv("\ufeffid,label\na,1\n")  # a str keeps its BOM character: the header is then wrong


def test_a_hidden_sets_id_index_is_built_on_first_use_and_survives_pickling() -> None:
    import copy
    import pickle

    from scoring import HiddenTestSet, ScoringSpec

    hidden = HiddenTestSet(("a", "b", "c"), np.array([0, 1, 0]), 2, np.array([True, False, True]))
    assert hidden.id_index._built is None  # nothing built until a lookup needs it
    assert hidden.id_index.get("b") == 1 and hidden.id_index["c"] == 2 and len(hidden.id_index) == 3
    spec = pickle.loads(pickle.dumps(ScoringSpec(hidden)))  # e.g. a game's worker process
    assert spec.hidden.id_index.get("c") == 2 and dict(copy.deepcopy(hidden.id_index)) == {"a": 0, "b": 1, "c": 2}
