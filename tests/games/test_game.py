"""Games: the game file's validation errors, an end-to-end offline game and its report files, determinism."""

from __future__ import annotations

import csv
import html
import json
import math
import re
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

import attacks
from attacks.oracle import LocalOracle, Oracle
from attacks.registry import ATTACKS
from attacks.result import AttackFailed
from games import GameFileError, load_game, parse_game, run_game
from games.cli import main, resolve_gamefile
from games.gamefile import DatasetSpec
from games.population import Population, honest_population, load_population
from games.report import BOARD_COLUMNS, CELL_COLUMNS, SUMMARY_COLUMNS, write_report
from games.runner import make_oracle, visible_decimals
from games.utility import board_rank, confident_predictions, honest_utility, kendall_tau

GAMES = Path(__file__).resolve().parents[2] / "games" / "files"


def one_row_per_query(oracle: Oracle) -> np.ndarray:
    """A slow but exact test attack: move one row's prediction per query and read the score's direction."""
    base = np.full(oracle.n_rows, 0.5)
    baseline = oracle.submit(base)
    labels = np.full(oracle.n_rows, -1, dtype=np.int64)
    for row in range(oracle.n_rows):
        probe = base.copy()
        probe[row] = 0.9
        released = oracle.submit(probe)
        if released is None or baseline is None:
            raise AttackFailed("nothing was released")
        labels[row] = 1 if float(released) < float(baseline) else 0
    return labels


def crash(oracle: Oracle) -> np.ndarray:
    raise ZeroDivisionError("a bug in an attack")


@pytest.fixture(autouse=True)
def test_attacks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two attacks for these tests only (removed from the registry afterwards)."""
    monkeypatch.setitem(ATTACKS, "test_one_row", one_row_per_query)
    monkeypatch.setitem(ATTACKS, "test_crash", crash)


TINY = """
[game]
name = "tiny"
description = "a tiny offline game"
seeds = [0, 1]

[[datasets]]
name = "balanced-40"
source = "balanced"
n_rows = 40

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "rounding-5"
chain = [{name = "rounding", decimals = 5}]

[[attacks]]
name = "test_one_row"

[[attacks]]
name = "boosting-30"
attack = "boosting"
params = {budget = 30}

[[attacks]]
name = "capped"
attack = "test_one_row"
budget = 5

[[attacks]]
name = "test_crash"
"""


def tiny(**game: Any) -> str:
    text = TINY
    for key, value in game.items():
        text = text.replace('seeds = [0, 1]', f"seeds = [0, 1]\n{key} = {json.dumps(value)}")
    return text


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


# --- the game file --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('[game]', '[gaem]'), "unknown table(s) gaem"),
        (lambda t: t.replace('name = "tiny"', 'name = "tiny'), "not valid TOML"),
        (lambda t: t.replace('seeds = [0, 1]', 'seeds = [0, 1]\ncolour = "red"'), "[game]: unknown key(s) colour"),
        (lambda t: t.replace('seeds = [0, 1]', 'seeds = [0, 0]'), "lists a seed twice"),
        (lambda t: t.replace('seeds = [0, 1]', 'seeds = []'), "'seeds' must be a non-empty list"),
        (lambda t: t.replace('seeds = [0, 1]', 'seeds = [0, 1]\nmetric = "f1"'), "unknown metric 'f1'"),
        (lambda t: t.replace('seeds = [0, 1]', 'seeds = [0, 1]\ndecimals = 40'), "'decimals' must be an integer"),
        (lambda t: t.replace('n_rows = 40', ''), "source 'balanced' needs 'n_rows'"),
        (lambda t: t.replace('source = "balanced"', 'source = "imdb"'), "unknown source 'imdb'"),
        (lambda t: t.replace('source = "balanced"', 'source = "breast_cancer"'), "'n_rows' applies to source"),
        (lambda t: t.replace('n_rows = 40', 'n_rows = 40\npublic_fraction = 1.5'), "'public_fraction' must be"),
        (lambda t: t.replace('decimals = 5}', 'digits = 5}'), "[[defenses]] #2 ('rounding-5'): invalid defense"),
        (lambda t: t.replace('name = "rounding", decimals', 'name = "rot13", decimals'), "unknown defense 'rot13'"),
        (lambda t: t.replace('chain = []', ''), "'chain' is required"),
        (lambda t: t.replace('name = "test_crash"', 'name = "nope"'), "[[attacks]] #4 ('nope'): unknown attack"),
        (lambda t: t.replace('params = {budget = 30}', 'params = {kk = 30}'), "does not accept these params"),
        (lambda t: t.replace('budget = 5', 'budget = 0'), "'budget' must be a positive integer"),
        (lambda t: t.replace('name = "capped"', 'name = "test_crash"'), "names must be unique; 'test_crash'"),
        (lambda t: t.split("[[attacks]]")[0], "[[attacks]]: missing"),
    ],
)
def test_it_rejects_a_bad_game_file_with_a_clear_message(edit: Any, message: str) -> None:
    with pytest.raises(GameFileError) as caught:
        parse_game(edit(TINY), source="tiny.toml")
    assert str(caught.value).startswith("tiny.toml: ")
    assert message in str(caught.value)


def test_it_reads_a_game_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    spec = load_game(path)
    assert spec.n_cells == 1 * 2 * 4 * 2
    assert [a.name for a in spec.attacks] == ["test_one_row", "boosting-30", "capped", "test_crash"]
    assert spec.attacks[2].attack == "test_one_row" and spec.attacks[2].budget == 5
    assert spec.decimals is None and spec.metric == "binary_logloss"


def test_it_reports_a_missing_file() -> None:
    with pytest.raises(GameFileError, match="cannot read the game file"):
        load_game("/nonexistent/game.toml")


def test_the_shipped_games_are_valid_when_their_attacks_are_registered() -> None:
    for path in sorted(GAMES.glob("*.toml")):
        try:
            spec = load_game(path)
        except GameFileError as exc:
            if "unknown attack" in str(exc):
                pytest.skip(f"{path.name} names an attack not registered yet: {exc}")
            raise
        assert spec.n_cells > 0


# --- playing a game -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Path]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(ATTACKS, "test_one_row", one_row_per_query)
        patch.setitem(ATTACKS, "test_crash", crash)
        result = run_game(parse_game(TINY))
    return result, write_report(result, tmp_path_factory.mktemp("tiny"))


def test_it_plays_every_cell_and_writes_every_file(played: tuple[Any, dict[str, Path]]) -> None:
    result, paths = played
    assert len(result.cells) == 16
    cells = read_csv(paths["cells_csv"])
    assert list(cells[0]) == CELL_COLUMNS and len(cells) == 16
    assert list(read_csv(paths["summary_csv"])[0]) == SUMMARY_COLUMNS
    boards = read_csv(paths["boards_csv"])
    assert list(boards[0]) == BOARD_COLUMNS and len(boards) == 2 * 2 * 10  # defenses × seeds × models
    document = json.loads(paths["json"].read_text())
    assert set(document) >= {"game", "summary", "cells", "boards", "mode"} and document["mode"] == "offline"
    assert document["game"]["name"] == "tiny" and len(document["cells"]) == 16
    assert paths["queries_png"].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert paths["frontier_svg"].read_text().startswith("<svg xmlns=")
    frontier = json.loads(paths["frontier_json"].read_text())
    assert len(frontier["points"]) == 2 and set(frontier["recommended"]) == {"balanced-40"}
    page = paths["html"].read_text()
    assert page.count('src="data:image/png;base64,') == 1 and "Privacy–utility frontier" in page
    assert page.count("<svg ") == 1 and 'class="frontier-line"' in page
    assert "| test_one_row |" in paths["summary_md"].read_text()


def test_with_no_defense_the_exact_attacker_recovers_everything_and_ranks_first(
    played: tuple[Any, dict[str, Path]],
) -> None:
    result, _ = played
    exact = [c for c in result.cells if c.attack == "test_one_row"]
    assert len(exact) == 4
    for cell in exact:
        assert cell.status == "ok"
        assert cell.queries == 41
        assert cell.outcome.label_accuracy == 1.0 and cell.outcome.exact_recovery
        assert cell.outcome.public_rank == 1 and cell.outcome.private_rank == 1
        assert cell.outcome.n_participants == 11


def test_failures_are_reported_per_cell_and_do_not_stop_the_game(played: tuple[Any, dict[str, Path]]) -> None:
    result, _ = played
    capped = [c for c in result.cells if c.attack == "capped"]
    assert {c.status for c in capped} == {"failed"}
    assert all("budget of 5" in c.error and c.queries == 5 for c in capped)
    assert all(c.outcome.label_accuracy == 0.0 and c.outcome.recovered_fraction == 0.0 for c in capped)
    crashed = [c for c in result.cells if c.attack == "test_crash"]
    assert {c.status for c in crashed} == {"error"}
    assert all(c.error == "ZeroDivisionError: a bug in an attack" for c in crashed)


def test_the_honest_population_keeps_its_ranking_without_a_defense(played: tuple[Any, dict[str, Path]]) -> None:
    result, _ = played
    plain = [b for b in result.boards if b.defense == "none"]
    for board in plain:
        assert board.utility.kendall_tau == pytest.approx(1.0)
        assert board.utility.best_wins and board.utility.mean_abs_error == 0.0
        assert [p.released_public for p in board.participants] == [p.raw_public for p in board.participants]


def test_same_game_and_seeds_give_identical_outputs_but_wall_time_serial_or_parallel(tmp_path: Path) -> None:
    outputs = []
    for run, jobs in (("serial", 1), ("two-processes", 2)):
        paths = write_report(run_game(parse_game(TINY), jobs=jobs), tmp_path / run)
        document = json.loads(paths["json"].read_text())
        document.pop("seconds")
        for row in [*document["cells"], *document["summary"]]:
            row.pop("seconds")
        tables = [
            [{k: v for k, v in row.items() if k != "seconds"} for row in read_csv(paths[key])]
            for key in ("cells_csv", "summary_csv", "boards_csv")
        ]
        outputs.append((document, tables))
    assert outputs[0] == outputs[1]


def test_noise_reaches_each_honest_participant_independently() -> None:
    text = TINY.replace('chain = [{name = "rounding", decimals = 5}]',
                        'chain = [{name = "noise", kind = "laplace", scale = 0.3}]')
    spec = parse_game(text.replace('seeds = [0, 1]', 'seeds = [0]'))
    noisy = next(b for b in run_game(spec).boards if b.defense == "rounding-5")
    errors = [float(p.released_public) - p.raw_public for p in noisy.participants]  # type: ignore[arg-type]
    assert len({round(e, 12) for e in errors}) == len(errors)  # no two participants share a noise draw
    assert noisy.utility.kendall_tau < 1.0 and noisy.utility.mean_abs_error > 0.0


def test_a_public_split_gives_separate_public_and_private_boards() -> None:
    text = TINY.replace("n_rows = 40", "n_rows = 40\npublic_fraction = 0.5").replace("seeds = [0, 1]", "seeds = [3]")
    result = run_game(parse_game(text))
    board = result.boards[0]
    assert all(p.raw_public != p.raw_private for p in board.participants[:3])
    exact = next(c for c in result.cells if c.attack == "test_one_row" and c.defense == "none")
    # The public score only moves with public rows: the attacker learns those and ranks first on the public
    # board, while its guesses for the private rows are wrong or lucky and it drops on the private board.
    assert exact.outcome.public_rank == 1
    assert exact.outcome.private_rank > 1
    assert 0.5 <= exact.outcome.label_accuracy < 1.0


@pytest.mark.skipif("binary_representation" not in attacks.available(), reason="paper 004 attacks not registered")
def test_a_real_attack_recovers_breast_cancer_through_the_game() -> None:
    text = """
    [game]
    name = "bc"
    seeds = [0]
    [[datasets]]
    name = "breast_cancer"
    [[defenses]]
    name = "kaggle"
    chain = [{name = "rounding", decimals = 5}]
    [[attacks]]
    name = "binary_representation"
    """
    cell = run_game(parse_game(text)).cells[0]
    assert cell.status == "ok" and cell.n_rows == 171
    assert cell.outcome.exact_recovery and cell.outcome.public_rank == 1 and cell.outcome.n_participants >= 11


def test_auto_plays_within_the_cells_budget_and_never_below_the_majority_class() -> None:
    text = """
    [game]
    name = "auto"
    seeds = [0]
    [[datasets]]
    name = "breast_cancer"
    [[defenses]]
    name = "kaggle"
    chain = [{name = "rounding", decimals = 5}]
    [[defenses]]
    name = "ladder"
    chain = [{name = "ladder", mode = "parameter_free"}, {name = "rounding", decimals = 5}]
    [[attacks]]
    name = "auto"
    budget = 40
    """
    kaggle, ladder = run_game(parse_game(text)).cells
    assert kaggle.status == ladder.status == "ok"
    assert kaggle.outcome.exact_recovery and kaggle.details["attack"] == "capacity" and kaggle.queries <= 40
    # The fingerprint's edge probes leave the parameter-free Ladder's height to the Ladder attack, which takes
    # every label within the cell's budget (breast cancer's held-out rows are 63 % benign: never less than that).
    assert ladder.queries <= 40 and ladder.details["attack"] == "ladder"
    assert ladder.outcome.label_accuracy >= 0.63
    assert any("Ladder" in line for line in ladder.details["reasoning"])


# --- the command line ----------------------------------------------------------------------------------------


def test_the_command_runs_a_game_and_prints_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "tiny.toml"
    game.write_text(TINY.replace("seeds = [0, 1]", "seeds = [0]"))
    assert main(["run", str(game), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    # The compact table on the terminal (tests/games/test_terminal.py); the full one in summary.md.
    assert printed.startswith("balanced-40, with no cap on submissions, 1 account:") and "report.html" in printed
    assert (tmp_path / "out" / "report.html").exists()


def test_the_command_explains_a_bad_game_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "bad.toml"
    game.write_text(TINY.replace('name = "test_crash"', 'name = "nope"'))
    assert main(["run", str(game), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert "bad.toml" in error and "unknown attack 'nope'" in error
    assert not (tmp_path / "out").exists()


def test_the_command_finds_a_shipped_game_by_name(tmp_path: Path) -> None:
    assert resolve_gamefile("quick") == GAMES / "quick.toml"
    assert resolve_gamefile("standard.toml") == GAMES / "standard.toml"
    own = tmp_path / "quick.toml"
    assert resolve_gamefile(str(own)) == own  # a path is taken as given


def test_the_run_help_names_every_shipped_game(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps the line
    shipped = sorted(path.stem for path in GAMES.glob("*.toml"))
    assert "multiclass" in shipped and f"shipped game: {', '.join(shipped)}" in help_text


def test_the_command_checks_without_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "tiny.toml"
    game.write_text(TINY)
    assert main(["check", str(game)]) == 0
    assert "OK, 16 cells" in capsys.readouterr().out
    assert not (tmp_path / "report.html").exists()  # checking runs nothing (live mode: tests/e2e/test_game_live.py)


# --- the measures ----------------------------------------------------------------------------------------------


def test_ranks_break_ties_for_the_earlier_submission() -> None:
    assert board_rank([0.2, 0.1, 0.3], 0.05, higher_is_better=False) == 1
    assert board_rank([0.2, 0.1, 0.3], 0.1, higher_is_better=False) == 2  # behind the tied earlier 0.1
    assert board_rank([0.9, None], 0.95, higher_is_better=True) == 1
    assert board_rank([0.9, 0.5], None, higher_is_better=True) == 3


def test_honest_utility_measures() -> None:
    utility = honest_utility(
        released_public=[0.3, 0.1, None], raw_public=[0.1, 0.2, 0.3], raw_private=[0.1, 0.2, 0.3],
        higher_is_better=False,
    )
    assert not utility.best_wins  # model 1 tops the released board, model 0 is truly best
    assert utility.mean_abs_error == pytest.approx(0.15)
    assert utility.withheld == 1
    assert utility.kendall_tau == pytest.approx(kendall_tau(np.array([-0.3, -0.1, -1.3]), np.array([-0.1, -0.2, -0.3])))
    assert math.isnan(kendall_tau(np.array([1.0, 1.0]), np.array([1.0, 2.0])))


def test_honest_utility_reads_a_hard_label_board_in_its_own_direction() -> None:
    # A badge board on a loss: model 0 (loss 0.1) holds the badge (1) and is truly best; read as a loss, the
    # label 0 of model 1 would have looked best.
    utility = honest_utility(
        released_public=[1.0, 0.0, 1.0], raw_public=[0.1, 0.9, 0.3], raw_private=[0.1, 0.9, 0.3],
        higher_is_better=False, released_higher_is_better=True,
    )
    assert utility.best_wins and utility.kendall_tau > 0


def test_the_final_submission_is_confident_on_claimed_labels_only() -> None:
    binary = confident_predictions(np.array([1, 0, -1]), 2, 0.999)
    assert binary.tolist() == pytest.approx([0.999, 0.001, 0.5])
    multi = confident_predictions(np.array([2, -1]), 3, 0.9)
    np.testing.assert_allclose(multi, [[0.05, 0.05, 0.9], [1 / 3, 1 / 3, 1 / 3]])


def test_the_attacker_sees_the_coarsest_released_precision() -> None:
    assert visible_decimals(None, []) is None
    assert visible_decimals(6, [{"name": "rounding", "decimals": 3}]) == 3
    assert visible_decimals(None, [{"name": "rounding", "significant": 4}]) is None


# --- how a game was played, and what its report says about it --------------------------------------------------


class InProcessSite:
    """Stands in for :class:`games.live.LiveSite`: each cell's "site" is a fresh ``LocalOracle`` of the cell's
    competition, so live mode runs without processes (the real site: ``tests/e2e/test_game_live.py``)."""

    url = "http://site.invalid"

    def attacker_oracle(self, spec: Any, dataset: Any, population: Any, defense: Any, seed: int, attack: str) -> Any:
        return make_oracle(spec, dataset, population, defense, seed)

    def close_cells(self) -> list[str]:
        return []  # nothing stays open: each cell's oracle is gone with it


def test_the_report_states_the_mode_the_game_was_played_in(tmp_path: Path) -> None:
    spec = parse_game(TINY.replace("seeds = [0, 1]", "seeds = [0]"))
    offline = run_game(spec)
    site: Any = InProcessSite()
    live = run_game(spec, site=site)
    assert (offline.mode, offline.site) == ("offline", None)
    assert (live.mode, live.site) == ("live", "http://site.invalid")
    assert [c.queries for c in live.cells] == [c.queries for c in offline.cells]
    for result, name in ((offline, "offline"), (live, "live")):
        paths = write_report(result, tmp_path / name)
        document = json.loads(paths["json"].read_text())
        assert document["mode"] == name and document["site"] == result.site
        page = paths["html"].read_text()
        other = "offline" if name == "live" else "live"
        assert f"Mode: {name} (" in page and f"Mode: {other}" not in page
        assert paths["summary_md"].read_text().startswith(f"Game `tiny`, mode: {name}")
        assert "| test_one_row |" in paths["summary_md"].read_text()
    assert "<code>http://site.invalid</code>" in (tmp_path / "live" / "report.html").read_text()


class ClosingSite(InProcessSite):
    """An in-process site that records what the runner opens and when it closes it."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.events: list[str] = []
        self.open = 0
        self.fail_on = fail_on

    def attacker_oracle(self, spec: Any, dataset: Any, population: Any, defense: Any, seed: int, attack: str) -> Any:
        self.open += 1
        self.events.append(f"open {defense.name}/{attack}")
        if self.fail_on is not None and self.open == self.fail_on:
            raise KeyboardInterrupt
        return super().attacker_oracle(spec, dataset, population, defense, seed, attack)

    def close_cells(self) -> list[str]:
        self.events.append("close")
        return []


def test_a_live_game_closes_each_competitions_cells_once_they_are_played_and_when_interrupted() -> None:
    spec = parse_game(TINY.replace("seeds = [0, 1]", "seeds = [0]"))
    site = ClosingSite()
    run_game(spec, site=cast(Any, site))
    attacks = [a.name for a in spec.attacks]
    # One group per defense chain (one data set, one seed): its cells open, then they close, before the next.
    assert site.events == [event for d in ("none", "rounding-5") for event in
                           [*(f"open {d}/{a}" for a in attacks), "close"]]
    interrupted = ClosingSite(fail_on=2)
    with pytest.raises(KeyboardInterrupt):
        run_game(spec, site=cast(Any, interrupted))
    assert interrupted.events == [f"open none/{attacks[0]}", f"open none/{attacks[1]}", "close"]


def test_the_html_report_escapes_what_the_game_file_says(tmp_path: Path) -> None:
    text = TINY.replace('"a tiny offline game"', '"<script>alert(1)</script> & co"').replace(
        'name = "none"', 'name = "<b>none</b>"'
    )
    paths = write_report(run_game(parse_game(text.replace("seeds = [0, 1]", "seeds = [0]"))), tmp_path)
    page = paths["html"].read_text()
    assert "<script>" not in page and "<b>none</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in page and "&lt;b&gt;none&lt;/b&gt;" in page


# --- one population, one confident final submission ---------------------------------------------------------------


def test_one_population_class_serves_real_and_simulated_data_sets() -> None:
    real = load_population(DatasetSpec(name="bc", source="breast_cancer"))
    direct = honest_population(seed=0, test_size=0.3)
    assert type(real) is type(direct) is Population
    assert real.dataset == "bc" and direct.dataset == "breast_cancer"
    assert real.ids == direct.ids and real.names == direct.names and real.n_rows == len(real.labels) == 171
    np.testing.assert_array_equal(real.predictions["logreg"], direct.predictions["logreg"])
    simulated = load_population(DatasetSpec(name="b", source="balanced", n_rows=40))
    assert type(simulated) is Population and simulated.n_rows == 40 and len(simulated.names) == 10


def test_the_bot_the_game_and_the_confirmation_stake_on_labels_with_one_function() -> None:
    from attacks.confirm import confident_predictions as shared
    from bot.cli import confident_predictions as bot_final

    assert bot_final is confident_predictions is shared
    labels = np.array([1, 0, -1])
    assert shared(labels, 2).tolist() == [1 - 1e-15, 1e-15, 0.5]  # the bot's and the confirmation's default
    assert shared(labels, 2, 0.999).tolist() == pytest.approx([0.999, 0.001, 0.5])  # the game's final_confidence
    released = LocalOracle(np.array([1, 0]), decimals=None).submit(shared(np.array([1, 0]), 2))
    assert released is not None and float(released) < 1e-14


def test_live_mode_against_a_given_site_needs_a_host_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LEADERBOARD_HOST_TOKEN", raising=False)
    game = tmp_path / "tiny.toml"
    game.write_text(TINY)
    argv = ["run", str(game), "--out", str(tmp_path / "out"), "--mode", "live", "--url", "http://127.0.0.1:9"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "--host-token" in error and "LEADERBOARD_HOST_TOKEN" in error
    assert not (tmp_path / "out").exists()  # nothing played (the live game itself: tests/e2e/test_game_live.py)


# --- the report a host reads: the answer first, people's column names, failures as failures -------------------


def test_the_html_report_gives_the_answer_first(played: tuple[Any, dict[str, Path]]) -> None:
    _, paths = played
    page = paths["html"].read_text()
    answer = page.index("The answer")
    assert answer < page.index("<h2>Privacy–utility frontier</h2>") < page.index("Mode: offline (")
    verdict = page[answer:page.index("<h2>Privacy–utility frontier</h2>")]
    # Without a defense the exact attacker reads every label; rounding to 5 decimals does not stop it either.
    assert "No chain in this game protects the labels" in verdict
    assert "Without a defense" not in verdict or "recovers every label" in verdict
    assert verdict.count('class="recommended"') == 1
    assert "What leaks" in verdict and "What it costs honest players" in verdict


def test_the_html_report_uses_peoples_column_names(played: tuple[Any, dict[str, Path]]) -> None:
    _, paths = played
    page = paths["html"].read_text()
    headers = [html.unescape(h) for h in re.findall(r"<th[^>]*>([^<]*)</th>", page)]
    assert "Labels right" in headers and "Every label right" in headers and "Attacker's public rank" in headers
    assert not [h for h in headers if "_" in h], headers  # no data keys such as label_accuracy
    assert list(read_csv(paths["cells_csv"])[0]) == CELL_COLUMNS  # the files keep the keys


def test_the_html_report_shows_failed_cells_as_failed_not_as_zero_accuracy(
    played: tuple[Any, dict[str, Path]],
) -> None:
    _, paths = played
    page = paths["html"].read_text()
    for attack in ("capped", "test_crash"):
        cell = '<td class="t">[^<]*</td>'
        rows = re.findall(rf'<tr>{cell}{cell}<td class="t">{attack}</td>.*?</tr>', page, flags=re.S)
        assert len(rows) == 2, attack  # one per defense, in the per-attack table
        for row in rows:
            assert "0/2" in row and "failed" in row and "0 %" not in row
    cells = re.findall(r'<tr class="(failed|error)">(.*?)</tr>', page, flags=re.S)
    assert len(cells) == 8  # 2 attacks × 2 defenses × 2 seeds
    for status, row in cells:
        # labels right, labels claimed and every label right: the outcome, not a 0
        assert row.count(f'<span class="failed">{status}</span>') == 3, row


def test_a_model_competition_is_played_through_models() -> None:
    """``models = true``: every query of the cell is a MutNet model run on the hidden features; the labels it
    learns (keyed by the head's feature order) are put back on their rows, and its follow-up model tops the
    board. The same cell with prediction files spends the same queries."""
    text = """
    [game]
    name = "bc-models"
    seeds = [0]
    decimals = 5
    [[datasets]]
    name = "bc-models"
    source = "breast_cancer"
    models = true
    [[datasets]]
    name = "bc-files"
    source = "breast_cancer"
    [[defenses]]
    name = "none"
    chain = []
    [[attacks]]
    name = "capacity"
    """
    spec = parse_game(text)
    assert spec.datasets[0].models and not spec.datasets[1].models
    cells = {cell.dataset: cell for cell in run_game(spec).cells}
    models, files = cells["bc-models"], cells["bc-files"]
    assert models.status == "ok" and models.outcome.exact_recovery, models
    assert models.outcome.public_rank == 1 and models.queries == files.queries


@pytest.mark.parametrize(("entry", "message"), [
    ('source = "balanced"\nn_rows = 10\nmodels = true', "needs features"),
    ('source = "digits"\nmodels = "yes"', "'models' must be true or false"),
])
def test_a_model_competition_needs_features(entry: str, message: str) -> None:
    text = f"""
    [game]
    name = "m"
    seeds = [0]
    [[datasets]]
    name = "d"
    {entry}
    [[defenses]]
    name = "none"
    chain = []
    [[attacks]]
    name = "capacity"
    """
    with pytest.raises(GameFileError, match=message):
        parse_game(text)


def test_the_summary_table_shows_a_failed_attack_as_failed_with_its_reason() -> None:
    from games.report import markdown_table

    row = {"dataset": "d", "defense": "c", "attack": "capacity", "budget": None, "accounts": 1, "cells": 2, "ok": 0,
           "error": "no labeling is consistent with the released score", "label_accuracy": 0.0,
           "majority_rate": 0.6, "exact_recovery_rate": 0.0, "queries": 8.0, "seconds": 0.1,
           "attacker_public_rank": 12, "attacker_private_rank": 12, "n_participants": 14, "honest_kendall_tau": 1.0,
           "honest_best_wins_rate": 1.0, "honest_mean_abs_error": 0.0}
    cells = [cell.strip() for cell in markdown_table([row]).splitlines()[-1].strip("|").split("|")]
    assert cells[5] == "0/2" and cells[6] == "failed (no labeling is consistent with the released score)"
    assert cells[8] == "–"  # no exact-recovery rate for an attack that measured nothing
