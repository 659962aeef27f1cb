"""Games as JSON units on an executor: the same report as the in-process runner, a journal that resumes an
interrupted run without replaying finished cells, and units that a worker validates before playing."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from games import GameFileError, parse_game, run_game
from games.cli import main
from games.distributed import run_units
from games.executors import BackendError, LocalExecutor, Unit, make_executor
from games.journal import FILENAME, Journal
from games.progress import ProgressBar
from games.report import write_report
from games.runner import GameResult
from games.units import board_unit, play_unit, unit_key

#: Registered attacks only (a worker process knows no test attack): an exact one, a budget-capped one and a
#: crashing configuration (``boosting`` with an impossible ``budget`` fails), on a public/private split.
GAME = """
[game]
name = "units"
seeds = [0, 1]

[[datasets]]
name = "balanced-40"
source = "balanced"
n_rows = 40
public_fraction = 0.5

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "rounding-5"
chain = [{name = "rounding", decimals = 5}]

[[attacks]]
name = "boosting-30"
attack = "boosting"
params = {budget = 30}

[[attacks]]
name = "capacity"
budget = 3
"""


def report(result: GameResult, out: Path) -> dict[str, Any]:
    """The report's JSON without wall times (everything else is a function of the game file)."""
    return without_wall_times(json.loads(write_report(result, out)["json"].read_text()))


def without_wall_times(document: dict[str, Any]) -> dict[str, Any]:
    document = dict(document)
    document.pop("seconds")
    for row in [*document["cells"], *document["summary"]]:
        row.pop("seconds")
    return document


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return report(run_game(parse_game(GAME)), tmp_path_factory.mktemp("in-process"))


class Counting:
    """An executor that counts the units it plays and can stop (like Ctrl-C) after ``stop_after`` results."""

    name = "counting"

    def __init__(self, stop_after: int | None = None) -> None:
        self.inner = LocalExecutor()
        self.played: list[str] = []
        self.stop_after = stop_after

    def map_unordered(self, units: Sequence[Unit]) -> Iterator[tuple[int, Unit]]:
        for index, result in self.inner.map_unordered(units):
            if self.stop_after is not None and len(self.played) >= self.stop_after:
                raise KeyboardInterrupt
            self.played.append(json.dumps([units[index][key] for key in ("dataset", "defense", "seed", "kind")]
                                          + [units[index].get("attack")]))
            yield index, result

    def close(self) -> None:
        self.inner.close()


def test_a_game_played_as_units_reports_exactly_what_the_in_process_run_does(
    in_process: dict[str, Any], tmp_path: Path
) -> None:
    spec = parse_game(GAME)
    for jobs in (1, 2):
        executor = LocalExecutor(jobs)
        try:
            assert report(run_units(spec, executor), tmp_path / f"jobs-{jobs}") == in_process
        finally:
            executor.close()


def test_the_game_travels_as_the_tables_of_its_file() -> None:
    spec = parse_game(GAME, source="units.toml")
    assert parse_game(json.loads(json.dumps(spec.document())), source="units.toml") == spec


def test_a_units_key_changes_with_what_its_result_depends_on_and_nothing_else() -> None:
    def keys(text: str) -> dict[tuple[Any, ...], str]:
        document = parse_game(text).document()
        return {
            (dataset, defense, seed, attack): unit_key(document, dataset, defense, seed, attack, budget)
            for dataset, defense, seed in [("balanced-40", d, s) for d in ("none", "rounding-5") for s in (0, 1)]
            for attack, budget in ((None, None), ("boosting-30", None), ("capacity", 3))
        }

    base = keys(GAME)
    assert len(set(base.values())) == len(base)
    assert keys(GAME.replace('name = "units"', 'name = "renamed"\ndescription = "words"')) == base
    changed = keys(GAME.replace("budget = 30", "budget = 31"))
    assert {where for where in base if changed[where] != base[where]} == {w for w in base if w[3] == "boosting-30"}
    changed = keys(GAME.replace('decimals = 5}', 'decimals = 4}'))
    assert {where for where in base if changed[where] != base[where]} == {w for w in base if w[1] == "rounding-5"}
    assert set(keys(GAME.replace("n_rows = 40", "n_rows = 42")).values()).isdisjoint(base.values())


def test_an_interrupted_run_resumes_without_playing_a_finished_unit_again(
    in_process: dict[str, Any], tmp_path: Path
) -> None:
    spec = parse_game(GAME)
    journal_path = tmp_path / FILENAME
    boards, cells = 4, spec.n_cells
    first = Counting(stop_after=boards + 3)  # every board and three cells, then Ctrl-C
    with Journal(journal_path) as journal, pytest.raises(KeyboardInterrupt):
        run_units(spec, first, journal=journal)
    assert len(first.played) == boards + 3
    second = Counting()
    with Journal(journal_path) as journal:
        assert len(journal.done) == len(first.played)
        resumed = run_units(spec, second, journal=journal)
    assert not set(second.played) & set(first.played)
    assert len(second.played) == cells - 3
    assert report(resumed, tmp_path / "report") == in_process
    third = Counting()
    with Journal(journal_path) as journal:
        run_units(spec, third, journal=journal)
    assert third.played == []


def test_a_torn_last_line_is_dropped_and_a_foreign_file_refused(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    with Journal(path) as journal:
        journal.add("one", {"x": 1})
        journal.add("two", {"x": 2})
    path.write_bytes(path.read_bytes()[:-5])  # the process died while writing "two"
    with Journal(path) as journal:
        assert journal.done == {"one": {"x": 1}}
        journal.add("three", {"x": 3})
    assert Journal(path).done == {"one": {"x": 1}, "three": {"x": 3}}
    other = tmp_path / "notes.txt"
    other.write_text("shopping list\n")
    with pytest.raises(GameFileError, match="is not a game journal"):
        Journal(other)
    assert Journal(other, fresh=True).done == {}


def test_the_command_resumes_from_its_journal_plays_only_what_a_grown_game_adds_and_prints_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "units.toml"
    game.write_text(GAME)
    out = tmp_path / "out"
    assert main(["run", str(game), "--out", str(out), "--resume"]) == 0
    first = capsys.readouterr().err
    assert f"{parse_game(GAME).n_cells}/{parse_game(GAME).n_cells} cells" in first and "cells/s" in first
    lines = (out / FILENAME).read_text().splitlines()
    assert main(["run", str(game), "--out", str(out), "--resume"]) == 0
    assert (out / FILENAME).read_text().splitlines() == lines  # nothing played twice
    assert main(["run", str(game), "--out", str(out), "--fresh", "--quiet"]) == 0
    assert len((out / FILENAME).read_text().splitlines()) == len(lines)
    capsys.readouterr()
    game.write_text(GAME.replace("seeds = [0, 1]", "seeds = [0, 1, 2]"))  # the game grows by a seed
    assert main(["run", str(game), "--out", str(out), "--resume"]) == 0
    added = (out / FILENAME).read_text().splitlines()[len(lines):]
    assert len(added) == 2 + 4  # the new seed's two boards and four cells, nothing else
    assert "9/12 cells (8 resumed)" in capsys.readouterr().err  # the bar counts on from the resumed 8
    game.write_text(GAME.replace("budget = 30", "budget = 31"))  # an attack changes: its cells only
    assert main(["run", str(game), "--out", str(out), "--resume", "--quiet"]) == 0
    assert len((out / FILENAME).read_text().splitlines()) == len(lines) + len(added) + 4


def test_backends_are_for_offline_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "units.toml"
    game.write_text(GAME)
    assert main(["run", str(game), "--out", str(tmp_path / "out"), "--mode", "live", "--backend", "celery"]) == 2
    assert "apply to offline games" in capsys.readouterr().err


def test_an_unknown_backend_is_named_with_the_available_ones() -> None:
    with pytest.raises(BackendError, match=r"no game backend 'carrier-pigeon'; available: .*local"):
        make_executor("carrier-pigeon")


def test_a_worker_refuses_a_unit_that_does_not_match_its_game() -> None:
    document = parse_game(GAME).document()
    unit = board_unit(document, "balanced-40", "none", 0)
    assert play_unit(json.loads(json.dumps(unit)))["participants"]
    for bad, message in (
        ({**unit, "format": 99}, "not a game unit"),
        ({**unit, "defense": "rot13"}, "unknown defense 'rot13'"),
        ({**unit, "seed": 7}, "seed 7 is not one of"),
        ({**unit, "kind": "shell"}, "unknown unit kind"),
        ({**unit, "game": {**document, "attacks": [{"name": "nope"}]}}, "unknown attack 'nope'"),
    ):
        with pytest.raises(GameFileError, match=message):
            play_unit(bad)


def test_the_progress_bar_counts_resumed_cells_but_not_in_the_rate() -> None:
    class Log:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> None:
            self.text += text

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return False

    log = Log()
    bar = ProgressBar(4, resumed=2, stream=log)  # type: ignore[arg-type]
    bar.advance("cell 3")
    assert log.text.startswith("[##################......] 3/4 cells (2 resumed), ") and log.text.endswith("· cell 3\n")
