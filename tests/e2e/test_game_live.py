"""Offline and live agree: the same game cells, played in process (LocalOracle) and against a live site
(gunicorn + a Celery worker + Redis, the attacker talking only to the REST API), give the same recovered
labels, queries and released scores wherever the chain draws no fresh randomness per submission."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bot.client import NotFound
from games import load_game, run_game
from games.live import LiveSite
from tests.e2e.bot_support import REPO, LiveStack, live_stack, redis_available

pytestmark = pytest.mark.e2e

GAME = """
[game]
name = "live-agreement"
seeds = [3]
metric = "binary_logloss"
decimals = 5

[[datasets]]
name = "breast_cancer"
source = "breast_cancer"
test_fraction = 0.3
public_fraction = 0.5

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "randomized-response-fixed"
chain = [{name = "randomized_response", p = 0.05, mode = "fixed"}]

[[defenses]]
name = "ladder-fixed"
chain = [{name = "ladder", mode = "fixed", eta = 0.01}]

[[attacks]]
name = "capacity_split"

[[attacks]]
name = "binary_representation"
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    if not redis_available():
        pytest.fail("the live game test needs Redis at 127.0.0.1:6379")
    with live_stack(tmp_path_factory.mktemp("game-live")) as live:
        yield live


def test_a_game_played_live_matches_the_same_game_played_offline(stack: LiveStack, tmp_path: Path) -> None:
    path = tmp_path / "agreement.toml"
    path.write_text(GAME)
    spec = load_game(path)
    offline = run_game(spec)
    live = run_game(spec, site=LiveSite(stack.url, stack.host_token()))
    assert len(offline.cells) == len(live.cells) == 6
    for here, there in zip(offline.cells, live.cells, strict=True):
        where = (here.defense, here.attack)
        assert (here.status, here.queries) == (there.status, there.queries), where
        assert here.outcome.label_accuracy == there.outcome.label_accuracy, where
        assert here.outcome.public_score == there.outcome.public_score, where
    # Through the site, the split-aware attack claims exactly the public half of the rows, every claim right.
    (undefended,) = [c for c in live.cells if c.defense == "none" and c.attack == "capacity_split"]
    assert undefended.status == "ok"
    assert undefended.outcome.claimed_accuracy == 1.0
    assert undefended.outcome.recovered_fraction == pytest.approx(0.5, abs=0.01)


ONE_CELL = """
[game]
name = "live-any-site"
seeds = [5]
metric = "binary_logloss"
decimals = 5

[[datasets]]
name = "breast_cancer"
source = "breast_cancer"
test_fraction = 0.3
public_fraction = 0.5

[[defenses]]
name = "rounding"
chain = [{name = "rounding", decimals = 5}]

[[attacks]]
name = "capacity_split"
"""


def test_a_live_game_plays_any_site_given_its_url_and_a_host_token(stack: LiveStack, tmp_path: Path) -> None:
    # The command line, in a process of its own that cannot reach the site's database (its DATABASE_URL points
    # elsewhere): the site is known only by URL, the host only by the token in LEADERBOARD_HOST_TOKEN.
    path = tmp_path / "one.toml"
    path.write_text(ONE_CELL)
    env = {**stack.env, "DATABASE_URL": f"sqlite:///{tmp_path / 'not-the-site.sqlite3'}",
           "LEADERBOARD_HOST_TOKEN": stack.host_token()}
    for run in ("first", "second"):  # a second run reuses the cell's competition with a fresh attacker
        done = subprocess.run(
            [sys.executable, "-m", "games", "run", str(path), "--out", str(tmp_path / run), "--mode", "live",
             "--url", stack.url, "--quiet"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr + stack.logs()
    assert not (tmp_path / "not-the-site.sqlite3").exists()
    offline = run_game(load_game(path)).cells[0]
    for run in ("first", "second"):
        with (tmp_path / run / "cells.csv").open() as cells:
            (live,) = list(csv.DictReader(cells))
        assert (live["status"], int(live["queries"])) == (offline.status, offline.queries)
        assert float(live["label_accuracy"]) == pytest.approx(offline.outcome.label_accuracy, abs=1e-6)
        assert live["status"] == "ok" and float(live["claimed_accuracy"]) == 1.0
    game_cells = [stack.host.host_competition(slug) for slug in stack.host.clean_games(dry_run=True)["competitions"]]
    (competition,) = [c for c in game_cells if c.title.startswith("game live-any-site:")]
    board = stack.host.host_submissions(competition.slug)
    attackers = {row.participant for row in board}
    assert len(attackers) == 2 and all(a.startswith(f"{competition.slug}-attacker-") for a in attackers)
    assert len(board) == 2 * (offline.queries + 1)  # each run: the attack's queries and its final submission
    assert stack.host.host_competition(competition.slug).host == "host"
    # The cell is off the site's lists and closed once the game is done (the second run reopened it to play).
    assert competition.listed is False and competition.closes_at is not None and not competition.is_open
    assert competition.slug not in {c.slug for c in stack.host.competitions()}
    assert competition.slug not in requests.get(stack.url + "/", timeout=30).text
    # ``leaderboard-game clean --url`` removes every cell of this host's games, their submissions and attackers.
    planned = stack.host.clean_games(dry_run=True)
    assert attackers <= set(planned["accounts"]) and planned["submissions"] >= len(board)
    done = subprocess.run(
        [sys.executable, "-m", "games", "clean", "--url", stack.url], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"  {competition.slug}" in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1] == planned["summary"].replace("would remove", "removed")
    assert stack.host.clean_games(dry_run=True)["competitions"] == []
    with pytest.raises(NotFound):
        stack.host.host_competition(competition.slug)
