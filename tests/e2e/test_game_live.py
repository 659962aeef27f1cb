"""Offline and live agree: the same game cells, played in process (LocalOracle) and against a live site
(gunicorn + a Celery worker + Redis, the attacker talking only to the REST API), give the same recovered
labels, queries and released scores wherever the chain draws no fresh randomness per submission."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from games import load_game, run_game
from games.live import LiveSite
from tests.e2e.bot_support import LiveStack, live_stack, redis_available

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
    live = run_game(spec, site=LiveSite(stack.url, stack.env))
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
