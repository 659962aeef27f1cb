"""Live mode of the game runner: the attacker plays each cell against a running site over its REST API.

Any site will do, given its URL and a host token (a staff account's API token, or one allowed to add
competitions): everything goes through :class:`~bot.client.LeaderboardClient`. Each (data set, defense, seed,
attack) cell gets its own competition, created through the host API with the cell's seed as the competition
secret — so the site draws the same public/private split and the same competition-level defense randomness as
the offline cell's ``LocalOracle(seed=…)`` — and its own attacker account, made through the host API for this
run (so per-participant defense state, such as the Ladder's, starts fresh as offline). The attack then talks
to the site only through :class:`~bot.http_oracle.HttpOracle`. The honest population's board is scored
offline with the same code (a dozen uploads per cell would only re-measure the site's throughput).

A cell's competition is unlisted (off the site's home page and competition list; the game's accounts reach it by
its slug, ``game-`` and 20 hex digits) and open only while the cell plays: :meth:`LiveSite.close_cells` closes it
(``closes_at``: nothing more is accepted), and a later run that reuses it opens it again for its own attacker.
``leaderboard-game clean --url`` (or ``manage.py clean_games`` on the site) removes the cells with their
submissions and attacker accounts.

Where the chain draws fresh randomness per submission (noise, fresh randomized response, subsetting), the
site seeds it with its own submission ids, so such cells agree with offline ones in distribution, not draw by
draw; every other cell gives the same recovered labels and queries (``tests/e2e/test_game_live.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.client import LeaderboardClient
from bot.http_oracle import HttpOracle
from games.gamefile import DatasetSpec, DefenseSpec, GameSpec
from games.population import Population
from stack.processes import running_stack

#: The environment variable ``leaderboard-game run --mode live --url`` reads the host token from.
HOST_TOKEN_ENV = "LEADERBOARD_HOST_TOKEN"
#: Every cell's slug starts so (then 20 hex digits), and its attacker accounts' usernames with the slug.
CELL_PREFIX = "game-"
CELL_SLUG = re.compile(r"^game-[0-9a-f]{20}$")
ATTACKER_INFIX = "-attacker-"


class LiveSite:
    """A running site at ``url`` and a host token for it: where live cells create their competitions.

    ``run_id`` tells this run's attacker accounts apart from earlier runs' (default: a fresh one).
    """

    def __init__(self, url: str, host_token: str, *, run_id: str | None = None) -> None:
        if not host_token:
            raise ValueError("a live game needs a host token (a staff account's API token) for the site")
        self.url = url.rstrip("/")
        self.host = LeaderboardClient(self.url, host_token)
        self.run_id = run_id or uuid.uuid4().hex[:8]
        #: The cells this run opened and has not closed yet (slug → opening time).
        self.open_cells: dict[str, datetime | None] = {}

    def attacker_oracle(
        self, spec: GameSpec, dataset: DatasetSpec, population: Population, defense: DefenseSpec, seed: int,
        attack: str,
    ) -> HttpOracle:
        """A competition for one cell (made once per site: a later run reuses it), a fresh attacker account on
        it, and the attacker's oracle."""
        public = 1.0 if dataset.public_fraction is None else dataset.public_fraction
        settings = [spec.metric, spec.eps, spec.decimals, public, defense.chain]
        key = json.dumps([spec.name, dataset.name, defense.name, seed, attack, str(spec.source), settings])
        slug = CELL_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:20]
        cell = self.host.create_competition(
            slug, zip(population.ids, (int(y) for y in population.labels), strict=True),
            title=f"game {spec.name}: {dataset.name} / {defense.name} / seed {seed} / {attack}",
            metric=spec.metric, eps=spec.eps, score_decimals=spec.decimals, public_fraction=public,
            daily_limit=None, defenses=list(defense.chain), secret=seed, listed=False, exist_ok=True,
        )
        if cell.closes_at is not None or cell.listed:  # an earlier run's cell, closed when it finished: reopen it
            cell = self.host.update_competition(slug, closes_at=None, listed=False)
        self.open_cells[slug] = cell.opens_at
        token = self.host.create_participant(f"{slug}{ATTACKER_INFIX}{self.run_id}").token
        return HttpOracle(self.url, slug, token, on_quota="stop")

    def close_cells(self) -> list[str]:
        """Close every cell this run opened (its ``closes_at`` set to now: no submission is accepted after it);
        the slugs closed."""
        closed = []
        for slug, opened in list(self.open_cells.items()):
            now = datetime.now(UTC)
            # A close must come after the opening; a site clock ahead of ours must not refuse it.
            moment = now if opened is None or opened < now else opened + timedelta(seconds=1)
            self.host.update_competition(slug, closes_at=moment)
            del self.open_cells[slug]
            closed.append(slug)
        return closed


@contextlib.contextmanager
def local_site() -> Iterator[LiveSite]:
    """Start a site of our own (gunicorn, a Celery worker, Redis unless ``REDIS_URL`` is set) on a fresh
    SQLite database and make its host token once, for ``leaderboard-game run … --mode live`` without ``--url``."""
    with (
        tempfile.TemporaryDirectory(prefix="game-live-") as tmp,
        running_stack(
            logs_dir=Path(tmp) / "logs", database_url=f"sqlite:///{Path(tmp) / 'game.sqlite3'}",
            extra_env={"LEADERBOARD_VAR_DIR": tmp},
        ) as stack,
    ):
        yield LiveSite(stack.url, stack.host_token("game-host"))
