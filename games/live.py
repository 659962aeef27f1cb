"""Live mode of the game runner: the attacker plays each cell against a running site over its REST API.

Each (data set, defense, seed, attack) cell gets its own competition on the site, created with the
documented ``manage.py create_competition`` and the cell's seed as the competition secret — so the site draws
the same public/private split and the same competition-level defense randomness as the offline cell's
``LocalOracle(seed=…)`` — and its own participant. The attack then talks to the site only through
:class:`~bot.http_oracle.HttpOracle`. The honest population's board is scored offline with the same code
(a dozen uploads per cell would only re-measure the site's throughput).

Where the chain draws fresh randomness per submission (noise, fresh randomized response, subsetting), the
site seeds it with its own submission ids, so such cells agree with offline ones in distribution, not draw by
draw; every other cell gives the same recovered labels and queries (``tests/e2e/test_game_live.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bot.http_oracle import HttpOracle
from games.gamefile import DatasetSpec, DefenseSpec, GameSpec
from games.population import Population
from stack.processes import running_stack

REPO = Path(__file__).resolve().parents[1]


class LiveSite:
    """A running site (``url``) whose database this checkout's ``manage.py`` reaches with ``env``."""

    def __init__(self, url: str, env: dict[str, str] | None = None) -> None:
        self.url = url.rstrip("/")
        self.env = dict(os.environ if env is None else env)
        self.manage_py = REPO / "manage.py"
        if not self.manage_py.exists():
            raise FileNotFoundError(
                f"live games provision competitions with {self.manage_py}, which this installation lacks; "
                "run them from a checkout of the project"
            )

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, str(self.manage_py), *args], cwd=REPO, env=self.env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def attacker_oracle(
        self, spec: GameSpec, dataset: DatasetSpec, population: Population, defense: DefenseSpec, seed: int,
        attack: str,
    ) -> HttpOracle:
        """A fresh competition for one cell, and the attacker's oracle on it."""
        key = json.dumps([spec.name, dataset.name, defense.name, seed, attack, str(spec.source)])
        slug = "game-" + hashlib.sha256(key.encode()).hexdigest()[:20]
        with tempfile.TemporaryDirectory(prefix="game-labels-") as tmp:
            labels_path = Path(tmp) / "labels.csv"
            rows = zip(population.ids, population.labels, strict=True)
            labels_path.write_text("id,label\n" + "".join(f"{i},{int(y)}\n" for i, y in rows))
            public = 1.0 if dataset.public_fraction is None else dataset.public_fraction
            with contextlib.suppress(RuntimeError):  # already created by an earlier run of the same game
                self.manage(
                    "create_competition", slug, "--labels", str(labels_path), "--metric", spec.metric,
                    "--eps", repr(spec.eps), "--decimals", "none" if spec.decimals is None else str(spec.decimals),
                    "--public-fraction", repr(public), "--daily-limit", "none",
                    "--defenses", json.dumps(defense.chain), "--secret", str(seed),
                    "--title", f"game {spec.name}: {dataset.name} / {defense.name} / seed {seed} / {attack}",
                )
        token = self.manage("create_participant", f"{slug}-attacker").strip().splitlines()[-1].strip()
        return HttpOracle(self.url, slug, token, on_quota="stop")


@contextlib.contextmanager
def local_site() -> Iterator[LiveSite]:
    """Start a site of our own (gunicorn, a Celery worker, Redis unless ``REDIS_URL`` is set) on a fresh
    SQLite database, for ``leaderboard-game run … --mode live`` without ``--url``."""
    with (
        tempfile.TemporaryDirectory(prefix="game-live-") as tmp,
        running_stack(
            logs_dir=Path(tmp) / "logs", database_url=f"sqlite:///{Path(tmp) / 'game.sqlite3'}",
            extra_env={"LEADERBOARD_VAR_DIR": tmp},
        ) as stack,
    ):
        yield LiveSite(stack.url, stack.env)
