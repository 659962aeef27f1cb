"""Integration: a game over the real Redis broker and a real Celery worker process (``leaderboard-game run
--backend celery``) reports exactly what the local backend does for the same seeds, and a run interrupted
part-way resumes from its journal without sending a finished cell again."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from games import parse_game, run_game
from games.cli import main
from games.distributed import run_units
from games.executors import BackendError, Executor, Unit, make_executor
from games.journal import FILENAME, Journal
from games.units import board_unit
from stack.processes import REDIS_URL, celery_worker, process_environment, redis_available, unique_queue
from tests.games.test_distributed import GAME, report, without_wall_times


class Interrupted:
    """The celery backend, interrupted (as by Ctrl-C) after ``stop_after`` units came back."""

    name = "celery"

    def __init__(self, inner: Executor, stop_after: int) -> None:
        self.inner, self.stop_after, self.played = inner, stop_after, 0

    def map_unordered(self, units: Sequence[Unit]) -> Iterator[tuple[int, Unit]]:
        for index, result in self.inner.map_unordered(units):
            if self.played == self.stop_after:
                raise KeyboardInterrupt
            self.played += 1
            yield index, result

    def close(self) -> None:
        self.inner.close()


@pytest.mark.integration
def test_a_game_over_a_real_celery_worker_matches_the_local_backend_and_resumes(tmp_path: Path) -> None:
    if not redis_available():
        pytest.fail(f"integration tests need Redis at {REDIS_URL}")
    queue = unique_queue("leaderboard-games-test")
    env = process_environment(f"sqlite:///{tmp_path / 'worker.sqlite3'}", queue)
    spec = parse_game(GAME, source="units.toml")
    local = report(run_game(spec), tmp_path / "local")
    game = tmp_path / "units.toml"
    game.write_text(GAME)
    out = tmp_path / "celery"
    boards = len(spec.datasets) * len(spec.defenses) * len(spec.seeds)
    with celery_worker(env, tmp_path / "worker.log"):
        # The backend found by name, as the command finds it (the entry point of the site package).
        executor = Interrupted(
            make_executor("celery", broker=REDIS_URL, queue=queue, stall_timeout=120), stop_after=boards + 3
        )
        with Journal(out / FILENAME) as journal, pytest.raises(KeyboardInterrupt):
            run_units(spec, executor, journal=journal)
        executor.close()
        kept = Journal(out / FILENAME).done
        # A unit the worker refuses (it validates what it is sent) is named, and not retried: it cannot mend.
        bad = make_executor("celery", broker=REDIS_URL, queue=queue, stall_timeout=120)
        refused = r"failed unit\(s\) 1 \(board balanced-40 · rot13 · seed 0\) 1 time.*unknown defense 'rot13'"
        with pytest.raises(BackendError, match=refused):
            list(bad.map_unordered([board_unit(spec.document(), "balanced-40", "rot13", 0)]))
        bad.close()
        assert len(kept) == boards + 3
        status = main(["run", str(game), "--out", str(out), "--backend", "celery", "--broker", REDIS_URL,
                       "--queue", queue, "--chunk", "3", "--quiet"])
        log = (tmp_path / "worker.log").read_text()
    assert status == 0, log[-3000:]
    lines = (out / FILENAME).read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines[1:]]
    assert len(keys) == len(set(keys)) == boards + spec.n_cells  # every unit once: none played twice
    assert set(kept) <= set(keys)
    assert without_wall_times(json.loads((out / "game.json").read_text())) == local
    assert "play_game_units" in log


def test_a_cell_cut_by_the_workers_time_limit_fails_its_unit_instead_of_being_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    from leaderboard.gameplay import tasks

    monkeypatch.setattr("games.units.play_unit", lambda unit: {"status": "error", "error": "SoftTimeLimitExceeded: "})
    with pytest.raises(SoftTimeLimitExceeded, match="LEADERBOARD_GAME_TASK_TIME_LIMIT"):
        tasks.play_game_units.run([{}])
    monkeypatch.setattr("games.units.play_unit", lambda unit: {"status": "error", "error": "ZeroDivisionError: x"})
    assert tasks.play_game_units.run([{}, {}])[1]["status"] == "error"  # an attack's crash is the cell's result
