"""The games' accounts axis behind the sybil screen: a cell with several accounts is played again with the screen
holding the accounts it clusters, and every report surface (accounts_screen.csv, summary.md, game.json, the HTML
report) shows labels read with and without it, the accounts let through and the submissions held."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from games import parse_game, run_game
from games.report import write_report
from games.runner import GameResult

GAME = """
[game]
name = "screened"
seeds = [0]
budgets = [200]
accounts = [1, 30]

[[datasets]]
name = "balanced-300-public"
source = "balanced"
n_rows = 300
public_fraction = 0.3

[[defenses]]
name = "ladder-parameter-free"
chain = [{name = "ladder", mode = "parameter_free"}, {name = "rounding", decimals = 5}]

[[attacks]]
name = "auto"
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[GameResult, dict[str, Path]]:
    result = run_game(parse_game(GAME))
    return result, write_report(result, tmp_path_factory.mktemp("screened"))


def test_a_cell_with_several_accounts_is_played_behind_the_screen(played: tuple[GameResult, dict[str, Path]]) -> None:
    result, _ = played
    cells = {cell.accounts: cell for cell in result.cells}
    assert cells[1].screen is None  # one account is never a cluster
    thirty = cells[30]
    screen = thirty.screen
    assert screen is not None and thirty.status == screen["status"] == "ok"
    assert screen["label_accuracy"] < thirty.outcome.label_accuracy  # the hold cost the attack labels
    assert 1 <= screen["let_through"] < 30 and screen["held_submissions"] > 0 and screen["held_accounts"] > 0
    assert screen["honest_flagged"] == 0 and screen["honest_accounts"] > 0


def test_every_report_surface_shows_the_screen_columns(played: tuple[GameResult, dict[str, Path]]) -> None:
    _, paths = played
    with paths["accounts_screen_csv"].open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["defense"], r["accounts"]) for r in rows] == [("ladder-parameter-free", "30")]
    row = rows[0]
    assert float(row["screened_label_accuracy"]) < float(row["label_accuracy"])
    assert 1 <= float(row["let_through"]) < 30 and float(row["held_submissions"]) > 0
    summary = paths["summary_md"].read_text()
    assert "## The accounts axis behind the sybil screen (hold mode)" in summary
    assert "| let through |" in summary and "may pass the screen" in summary and "lower bound" in summary
    document = json.loads(paths["json"].read_text())
    assert document["accounts_screen"][0]["accounts"] == 30
    assert [c["screen"] is None for c in document["cells"]] == [True, False]
    page = paths["html"].read_text()
    assert 'id="accounts-screen"' in page and "Let through" in page and "may pass the screen" in page
    assert "safe" not in page[page.index('id="accounts-screen"'):page.index("</table>", page.index(
        'id="accounts-screen"'))].lower()
