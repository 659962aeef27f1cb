"""What ``leaderboard-game run`` prints: a compact table (every line within 100 characters) whose figures are the
report's own (``frontier.json``), the recommended chain named as the report names it, and the full table left to
``summary.md``. Run as a user runs it: the console command in a process of its own."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from games.templating import percent
from games.terminal import WIDTH

REPO = Path(__file__).resolve().parents[2]

GAME = """
[game]
name = "terminal"
seeds = [0]
metric = "binary_logloss"
budgets = [60]

[[datasets]]
name = "balanced-60"
source = "balanced"
n_rows = 60

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "ladder-parameter-free-with-a-name-longer-than-its-column"
chain = [{name = "ladder", mode = "parameter_free"}, {name = "rounding", decimals = 5}]

[[attacks]]
name = "capacity"

[[attacks]]
name = "boosting-60"
attack = "boosting"
params = {budget = 60}
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    where = tmp_path_factory.mktemp("terminal")
    (where / "game.toml").write_text(GAME)
    done = subprocess.run(
        [sys.executable, "-m", "games", "run", str(where / "game.toml"), "--out", str(where / "out"), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, where / "out"


def test_the_run_prints_a_compact_table_within_100_characters(played: tuple[str, Path]) -> None:
    printed, out = played
    lines = printed.splitlines()
    assert lines[0] == "balanced-60, within 60 submissions, 1 account:"
    assert lines[1].split() == ["chain", "labels", "right", "majority", "leakage", "honest", "1", "−", "τ",
                                "strongest", "attack"]
    assert all(len(line) <= WIDTH for line in lines if not line.startswith(("Every attack", "Report:")))
    # The full table (17 columns) went to the report file, not to the terminal.
    assert "| data set | defense | attack | budget | accounts |" in (out / "summary.md").read_text()
    assert "| data set |" not in printed


def test_every_printed_figure_is_the_reports_and_the_recommended_chain_is_marked(played: tuple[str, Path]) -> None:
    printed, out = played
    frontier = json.loads((out / "frontier.json").read_text())
    chosen = frontier["recommended"]["balanced-60"]["defense"]
    points = [p for p in frontier["points"] if p["budget"] == 60]
    rows = printed.splitlines()[2:2 + len(points)]
    assert len(rows) == 2
    for row, point in zip(rows, points, strict=True):
        marked = row.startswith("* ")
        assert marked == (point["defense"] == chosen)
        name = row[2:24].strip()
        assert point["defense"].startswith(name.rstrip("…"))
        figures = re.split(r"\s{2,}", row[24:].strip())
        assert figures[:4] == [percent(point["label_accuracy"]), percent(point["majority_rate"]),
                               f"{point['leakage']:.2f}", f"{point['cost']:.3f}"]
        assert figures[4] == point["attack"]
    # A truncated name still fits its column; the sentence names the chain whole.
    assert any(row.rstrip().endswith("boosting-60") and "…" in row for row in rows)
    sentence = " ".join(line.strip() for line in printed.split("\n\n")[1].splitlines())
    assert sentence.startswith("balanced-60: ")
    if frontier["recommended"]["balanced-60"]["point"]["leakage"] < 0.5:
        assert f"recommended chain `{chosen}`" in sentence
    point = frontier["recommended"]["balanced-60"]["point"]
    assert f"leakage {point['leakage']:.2f}" in sentence
    assert f"{percent(point['label_accuracy'])} of the labels" in sentence
    assert printed.splitlines()[-1] == f"Report: {out / 'report.html'}"


def test_the_demos_leak_line_says_what_each_chain_gave_away() -> None:
    from games import parse_game, run_game
    from games.terminal import frontier_of, leak_line

    result = run_game(parse_game(GAME))
    points, _recommended = frontier_of(result)
    by_name = {p.defense: p for p in points}
    line = leak_line(result)
    assert line.startswith("What leaked in the terminal game: balanced-60 (60 hidden rows, within 60 submissions, "
                           "1 account): ")
    # The undefended board gives every label away; behind the Ladder the attacks read the majority class only.
    assert by_name["none"].label_accuracy == 1.0
    assert "every label under none" in line
    ladder = by_name["ladder-parameter-free-with-a-name-longer-than-its-column"]
    assert ladder.leakage == 0.0
    assert (f"nothing beyond the majority class ({percent(ladder.majority_rate)}) under "
            "ladder-parameter-free-with-a-name-longer-than-its-column.") in line
