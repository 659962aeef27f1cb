"""Hidden ids held as one Arrow array (``scoring.ids.IdArray``) and looked up in bulk: the same ids, the same JSON
text, and the same verdict and message for every submitted id list as a row-by-row reading with a dict."""

from __future__ import annotations

import json
import pickle
from typing import Any

import numpy as np
import pytest

from scoring import HiddenTestSet, ScoringSpec, SubmissionError
from scoring.hidden import IdIndex
from scoring.ids import IdArray, ids_from_json, ids_json
from scoring.parsing import _align_ids, _csv_line, parse_submission_csv

ODD_IDS = ["a", 'q"uote', "back\\slash", "é", "x y", "a, b", "tab\t", "\x7f", "\u2028", "日本", "nul\x00"]


def _reference_align(row_ids: list[str], ids: list[str]) -> np.ndarray:
    """The row-by-row reading the bulk lookup replaced (a dict, first problem in row order)."""
    index = {row_id: i for i, row_id in enumerate(ids)}
    first_seen: dict[int, int] = {}
    order = []
    for i, row_id in enumerate(row_ids):
        pos = index.get(row_id)
        if pos is None:
            if not row_id:
                raise SubmissionError("empty id", line=i + 2)
            shown = row_id if len(row_id) <= 40 else row_id[:40] + "..."
            raise SubmissionError(f"id {shown!r} is not in the test set", line=i + 2)
        if pos in first_seen:
            raise SubmissionError(f"duplicate id {row_id!r} (first given on line {first_seen[pos] + 2})", line=i + 2)
        first_seen[pos] = i
        order.append(pos)
    if len(row_ids) != len(ids):
        missing = [ids[p] for p in range(len(ids)) if p not in first_seen]
        shown = ", ".join(repr(m) for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise SubmissionError(f"{len(missing)} ids are missing: {shown}{more}")
    return np.asarray(order)


def _outcome(fn: object, *args: object) -> object:
    try:
        return ("ok", list(fn(*args)))  # type: ignore[operator]
    except SubmissionError as exc:
        return ("error", str(exc), exc.line)


def _align(rows: list[str], fmt: object) -> np.ndarray:
    return _align_ids(rows, fmt, _csv_line, "line", lambda i: i + 2)  # type: ignore[arg-type]


def _values(data: object, fmt: object) -> list[float]:
    return parse_submission_csv(data, fmt).values.tolist()  # type: ignore[arg-type]


def _formats(ids: list[str]) -> list[Any]:
    hidden = [HiddenTestSet(held, np.zeros(len(ids), dtype=int), 2, np.ones(len(ids), dtype=bool))
              for held in (tuple(ids), IdArray.from_strings(ids))]
    return [ScoringSpec(h).submission_format for h in hidden]


@pytest.mark.parametrize("plain", [True, False])
def test_bulk_alignment_agrees_with_a_row_by_row_dict_on_random_id_lists(plain: bool) -> None:
    rng = np.random.default_rng(14)
    for trial in range(60):
        n = int(rng.integers(1, 40))
        ids = [f"r{i}" for i in rng.permutation(10 * n)[:n]] if plain else [
            f"{ODD_IDS[(i + 1) % len(ODD_IDS)]}{i}" for i in range(n)
        ]
        formats = _formats(ids)
        assert (formats[1].fast_ids is not None) == plain
        rows = [ids[i] for i in rng.permutation(n)]
        kind = trial % 6
        if kind == 1 and n > 1:
            rows[int(rng.integers(1, n))] = rows[int(rng.integers(0, n))]  # a repeat (maybe of itself)
        elif kind == 2:
            rows[int(rng.integers(0, n))] = ["nobody", "r1\x00", "", "é", "r" * 100, " r1"][(trial // 6) % 6]
        elif kind == 3 and n > 1:
            rows = rows[: int(rng.integers(0, n))]  # missing ids
        elif kind == 4:
            rows = [*rows, rows[0]]  # one row too many
        elif kind == 5 and n > 2:
            rows[0], rows[-1] = "unknown-first", rows[0]
        expected = _outcome(_reference_align, rows, ids)
        for fmt in formats:
            assert _outcome(_align, rows, fmt) == expected, (ids, rows)


def test_a_nul_or_a_longer_id_never_matches_a_plain_id_it_pads_to() -> None:
    index = IdIndex(IdArray.from_strings(["r1", "r22", "abcdefgh"]))
    assert index.fast_ids is not None
    assert index.positions(["r1", "r1\x00", "r22", "r2", "abcdefgh", "abcdefgh\x00", "abcdefghi", "", "r1 "]).tolist() \
        == [0, -1, 1, -1, 2, -1, -1, -1, -1]
    assert index.get("r22") == 1 and index.get("r2") is None and "r1" in index and "r1\x00" not in index
    with pytest.raises(KeyError):
        index["nobody"]


def test_the_lookup_table_finds_every_id_of_a_large_set_and_no_other() -> None:
    rng = np.random.default_rng(5)
    ids = [f"id-{v:x}" for v in rng.choice(1 << 40, 20_000, replace=False)]
    index = IdIndex(IdArray.from_strings(ids))
    order = rng.permutation(len(ids))
    assert np.array_equal(index.positions([ids[i] for i in order]), order)
    strangers = [f"id-{v:x}" for v in rng.integers(1 << 40, 1 << 41, 2_000)]
    assert (index.positions(strangers) == -1).all()


@pytest.mark.parametrize("ids", [["r0", "r1", "r2"], ODD_IDS, ["", "x"], [f"row-{i}" for i in range(1000)]])
def test_the_stored_json_is_json_dumps_and_reads_back(ids: list[str]) -> None:
    text = ids_json(ids)
    assert text == json.dumps(ids)
    for spelling in (text, json.dumps(ids, ensure_ascii=False), json.dumps(ids, separators=(",", ":"))):
        back = ids_from_json(spelling.encode())
        assert isinstance(back, IdArray) and list(back) == ids


def test_an_id_array_is_a_sequence_of_its_strings() -> None:
    ids = IdArray.from_strings(["a", "b", "c", "d"])
    assert len(ids) == 4 and ids[0] == "a" and ids[-1] == "d" and list(ids[1:3]) == ["b", "c"]
    assert list(ids[::2]) == ["a", "c"] and "c" in ids and "e" not in ids
    assert ids == ["a", "b", "c", "d"] and ids == ("a", "b", "c", "d") and ids != ["a", "b"]
    assert pickle.loads(pickle.dumps(ids)) == ids
    with pytest.raises(IndexError):
        ids[4]


def test_an_upload_mapped_from_its_file_parses_as_its_bytes(tmp_path: object) -> None:
    """A streamed upload is parsed from a read-only ``mmap`` of its file: the same array or the same error."""
    import mmap
    from pathlib import Path


    rng = np.random.default_rng(3)
    ids = [f"r{i}" for i in range(200)]
    fmt = _formats(ids)[1]
    values = rng.random(200)
    order = rng.permutation(200)
    plain = "id,target\n" + "".join(f"{ids[i]},{values[i]!r}\n" for i in order)
    bodies = [plain, "\ufeff" + plain + "\n \n", plain.replace(ids[order[7]] + ",", "nobody,", 1),
              plain[: plain.rfind(",")] + ",1.5\n", plain.replace("\n", "\r\n"), plain + "x,0.5\n", "id,target\n",
              plain.replace(",", ';', 1), plain.replace(ids[order[3]], "é", 1)]
    for k, body in enumerate(bodies):
        data = body.encode("utf-8")
        path = Path(str(tmp_path)) / f"{k}.csv"
        path.write_bytes(data)
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            got, expected = (_outcome(_values, d, fmt) for d in (mapped, data))
        assert got == expected, body[:40]
