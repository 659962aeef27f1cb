"""``create_competition --solution`` (Kaggle's solution file sets labels and split) and ``--data-file``."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.audits.services import audit_setup
from leaderboard.competitions.models import Competition, HiddenTestData
from leaderboard.competitions.selectors import competition_scoring_spec, list_data_files, open_data_file
from scoring import evaluate, parse

pytestmark = pytest.mark.django_db

# Ids 1..12: 1-6 Public, 7-10 Private, 11-12 Ignored (with a placeholder target, as Kaggle files carry).
SOLUTION = "id,target,Usage\n" + "".join(
    f"{i},{i % 2},{'Public' if i <= 6 else 'Private' if i <= 10 else 'Ignored'}\n" for i in range(1, 11)
) + "11,-1,Ignored\n12,,Ignored\n"


def _run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_competition", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_solution_file_sets_the_labels_and_the_hosts_split(tmp_path: Path) -> None:
    (tmp_path / "solution.csv").write_text(SOLUTION)

    out, _ = _run("kaggle-split", "--solution", str(tmp_path / "solution.csv"))

    assert "split from the solution file: 6 Public, 4 Private, 2 Ignored (public fraction 0.6)" in out
    competition = Competition.objects.get(slug="kaggle-split")
    assert (competition.n_rows, competition.n_classes, competition.public_fraction) == (12, 2, 0.6)
    hidden = competition_scoring_spec(competition=competition).hidden
    assert [hidden.ids[i] for i in hidden.split_rows("public")] == ["1", "2", "3", "4", "5", "6"]
    assert [hidden.ids[i] for i in hidden.split_rows("private")] == ["7", "8", "9", "10"]


def test_ignored_rows_are_in_the_submission_but_move_no_score(tmp_path: Path) -> None:
    (tmp_path / "solution.csv").write_text(SOLUTION)
    _run("kaggle-ignored", "--solution", str(tmp_path / "solution.csv"), "--metric", "brier", "--decimals", "none")
    spec = competition_scoring_spec(competition=Competition.objects.get(slug="kaggle-ignored"))

    def released(ignored_guess: float) -> dict[str, float | None]:
        rows = "".join(f"{i},{i % 2 if i <= 10 else ignored_guess}\n" for i in range(1, 13))
        results = evaluate(spec, parse(spec, f"id,target\n{rows}".encode()), submission_id=1).results
        return {split: result.released for split, result in results.items()}

    assert released(0.0) == released(1.0) == {"public": 0.0, "private": 0.0}
    missing = "id,target\n" + "".join(f"{i},0.5\n" for i in range(1, 11))
    with pytest.raises(Exception, match="missing"):
        parse(spec, missing.encode())  # Kaggle's convention: every test id, the Ignored ones too


def test_the_audit_attacks_the_scored_rows_of_the_hosts_split(tmp_path: Path) -> None:
    (tmp_path / "solution.csv").write_text(SOLUTION)
    _run("kaggle-audit", "--solution", str(tmp_path / "solution.csv"))

    setup = audit_setup(competition=Competition.objects.get(slug="kaggle-audit"))
    oracle = setup.oracle()

    assert setup.labels.tolist() == [i % 2 for i in range(1, 11)]
    assert oracle.spec.hidden.public_mask.tolist() == [True] * 6 + [False] * 4


@pytest.mark.parametrize(
    ("solution", "message"),
    [
        ("id,target\n1,0\n", "invalid solution file: line 1: missing column 'Usage'"),
        ("id,target,Usage\n1,0,Public\n2,1,Test\n", "invalid solution file: line 3: unknown Usage 'Test'"),
        ("id,target,Usage\n1,0,Public\n1,1,Private\n", "invalid solution file: line 3: duplicate id '1'"),
        ("id,target,Usage\n1,0,Public\n2,cat,Private\n", "invalid solution file: line 3: label 'cat' is not an "),
    ],
)
def test_a_bad_solution_file_is_refused_with_the_line_and_the_reason(tmp_path: Path, solution: str, message: str
                                                                     ) -> None:
    (tmp_path / "solution.csv").write_text(solution)
    with pytest.raises(CommandError, match=re.escape(message)):
        _run("refused", "--solution", str(tmp_path / "solution.csv"))
    assert not Competition.objects.filter(slug="refused").exists()


def test_a_solution_and_a_public_fraction_or_labels_do_not_go_together(tmp_path: Path) -> None:
    (tmp_path / "solution.csv").write_text(SOLUTION)
    with pytest.raises(CommandError, match="Usage column sets the split"):
        _run("both", "--solution", str(tmp_path / "solution.csv"), "--public-fraction", "0.5")
    with pytest.raises(CommandError, match="not allowed with argument"):
        _run("both", "--solution", str(tmp_path / "solution.csv"), "--labels", str(tmp_path / "solution.csv"))


def test_data_files_are_attached_with_their_descriptions(tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text("id,label\n1,0\n2,1\n3,1\n")
    (tmp_path / "train.csv").write_bytes(b"id,f1,label\n10,0.1,0\n")
    (tmp_path / "test.csv").write_bytes(b"id,f1\n1,0.2\n2,0.3\n3,0.4\n")

    out, err = _run("with-data", "--labels", str(tmp_path / "labels.csv"),
                    "--data-file", str(tmp_path / "train.csv"), "Training rows with the label",
                    "--data-file", str(tmp_path / "test.csv"))

    files = list_data_files(Competition.objects.get(slug="with-data"))
    assert [(f.name, f.description) for f in files] == [("test.csv", ""), ("train.csv", "Training rows with the label")]
    assert open_data_file(files[1]).read() == b"id,f1,label\n10,0.1,0\n"
    assert f"data file train.csv: 21 bytes, sha256 {files[1].sha256}" in out
    assert err == ""


def test_a_refused_data_file_leaves_no_competition(tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text("id,label\n1,0\n2,1\n")
    (tmp_path / "data.zip").write_bytes(b"not a zip")
    with pytest.raises(CommandError, match=r"data\.zip: the name says zip but the file is not a zip archive"):
        _run("no-data", "--labels", str(tmp_path / "labels.csv"), "--data-file", str(tmp_path / "data.zip"))
    assert not Competition.objects.filter(slug="no-data").exists()
    with pytest.raises(CommandError, match="no such file"):
        _run("no-data", "--labels", str(tmp_path / "labels.csv"), "--data-file", str(tmp_path / "missing.csv"))
    with pytest.raises(CommandError, match="at most one description"):
        _run("no-data", "--labels", str(tmp_path / "labels.csv"), "--data-file", str(tmp_path / "data.zip"), "a",
             "b")


def test_publishing_the_labels_file_itself_is_the_hosts_choice_but_warned(tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text("id,label\n1,0\n2,1\n")

    _, err = _run("published", "--labels", str(tmp_path / "labels.csv"), "--data-file", str(tmp_path / "labels.csv"))

    assert "is the labels file itself: every participant may download the hidden labels" in err
    hidden = HiddenTestData.objects.get(competition__slug="published")
    assert np.array_equal(hidden.labels, [0, 1])


def test_the_labels_path_is_unchanged(tmp_path: Path, settings: Any) -> None:
    (tmp_path / "labels.csv").write_text("id,label\n" + "".join(f"{i},{i % 2}\n" for i in range(10)))
    _run("plain", "--labels", str(tmp_path / "labels.csv"))
    competition = Competition.objects.get(slug="plain")
    hidden = HiddenTestData.objects.get(competition=competition)
    assert competition.public_fraction == 0.3 and int(hidden.public_mask.sum()) == 3
    assert hidden.ignored_mask_npy is None
