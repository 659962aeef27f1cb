"""Data files: a host attaches them (checked name, size limit, SHA-256), participants list and read them."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from typing import Any

import pytest

from leaderboard.competitions.models import DataFile
from leaderboard.competitions.selectors import data_file_get, list_data_files, open_data_file
from leaderboard.competitions.services import add_data_file, remove_data_file
from leaderboard.errors import DataFileError, DataFileTooLarge

TRAIN = b"id,f1,label\n1,0.5,1\n2,0.25,0\n"


def test_it_stores_the_bytes_with_their_size_and_sha256(competition: Any) -> None:
    stored = add_data_file(competition, "train.csv", io.BytesIO(TRAIN), description="features and labels")

    assert (stored.name, stored.size, stored.sha256) == ("train.csv", len(TRAIN), hashlib.sha256(TRAIN).hexdigest())
    assert stored.description == "features and labels"
    assert stored.created_at is not None
    assert open_data_file(data_file_get(competition=competition, name="train.csv")).read() == TRAIN


def test_it_lists_by_name_without_loading_the_bytes(competition: Any, django_assert_num_queries: Any) -> None:
    add_data_file(competition, "test.csv", b"id,f1\n3,0.1\n")
    add_data_file(competition, "train.csv", TRAIN)

    with django_assert_num_queries(1):
        files = list_data_files(competition)
        assert [f.name for f in files] == ["test.csv", "train.csv"]
        assert all("content" in f.get_deferred_fields() for f in files)


def test_it_keeps_each_competitions_files_apart(make_competition: Any) -> None:
    first, second = make_competition(), make_competition()
    add_data_file(first, "train.csv", TRAIN)

    assert list_data_files(second) == []
    with pytest.raises(DataFile.DoesNotExist):
        data_file_get(competition=second, name="train.csv")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../hidden.csv", "is a path"),
        ("a\\b.csv", "is a path"),
        ("..", "starts with a dot"),
        (".env", "starts with a dot"),
        ("train\x00.csv", "control character U+0000"),
        ("train\n.csv", "control character U+000A"),
        ("evil\u202evsc.exe", "control character U+202E"),
        ('say"hi".csv', "Windows"),
        ("   ", "needs a name"),
        ("x" * 129 + ".csv", "at most 128"),
    ],
)
def test_it_refuses_a_name_that_is_not_a_plain_file_name(competition: Any, name: str, reason: str) -> None:
    with pytest.raises(DataFileError, match=re.escape(reason)):
        add_data_file(competition, name, TRAIN)
    assert list_data_files(competition) == []


def test_it_refuses_a_taken_name_unless_told_to_replace(competition: Any) -> None:
    add_data_file(competition, "train.csv", TRAIN)
    with pytest.raises(DataFileError, match=r"already has a data file named 'train\.csv'"):
        add_data_file(competition, "train.csv", b"other")

    replaced = add_data_file(competition, "train.csv", b"id\n1\n", replace=True)

    assert [f.sha256 for f in list_data_files(competition)] == [replaced.sha256]
    assert open_data_file(replaced).read() == b"id\n1\n"


def test_it_refuses_a_file_over_the_limit_without_reading_it_all(competition: Any, settings: Any) -> None:
    settings.LEADERBOARD_MAX_DATA_FILE_BYTES = 1000

    class Endless(io.RawIOBase):
        reads = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            Endless.reads += 1
            buffer[: len(buffer)] = b"x" * len(buffer)
            return len(buffer)

    with pytest.raises(DataFileTooLarge, match="larger than 1,000 bytes, the most a data file may be"):
        add_data_file(competition, "big.csv", io.BufferedReader(Endless()))
    assert Endless.reads < 10
    assert add_data_file(competition, "fits.csv", b"x" * 1000).size == 1000


def test_it_refuses_an_empty_file_and_one_that_is_not_what_its_name_says(competition: Any) -> None:
    with pytest.raises(DataFileError, match="empty"):
        add_data_file(competition, "train.csv", b"")
    with pytest.raises(DataFileError, match="not a zip archive"):
        add_data_file(competition, "data.zip", b"id,label\n")
    with pytest.raises(DataFileError, match="not a Parquet file"):
        add_data_file(competition, "train.parquet", b"id,label\n")

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("train.csv", TRAIN)
    assert add_data_file(competition, "data.zip", archive.getvalue()).size == len(archive.getvalue())


def test_remove_deletes_the_file(competition: Any) -> None:
    stored = add_data_file(competition, "train.csv", TRAIN)
    remove_data_file(stored)
    assert list_data_files(competition) == []
