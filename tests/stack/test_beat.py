"""Beat runs in the one-machine stack (issue 9, item 5): the demo's stack asks for it and ``running_stack`` starts
it in exactly one worker, so the sweep runs without a separate process. (Compose: ``tests/test_docker.py``.)
Prompt recovery does not depend on it (``tests/site/test_recovery*.py``); the sweep is the backstop."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stack.processes as processes
from launcher import demo


class _Stop(Exception):
    pass


def test_the_demo_stack_runs_beat(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: dict[str, Any] = {}

    @contextlib.contextmanager
    def fake_stack(*args: Any, **kwargs: Any) -> Iterator[Any]:
        asked.update(kwargs)
        raise _Stop
        yield  # pragma: no cover

    monkeypatch.setattr(demo, "running_stack", fake_stack)
    with pytest.raises(_Stop):
        demo.main(["serve", "--port", str(processes.free_port())])
    assert asked["beat"] is True


def test_running_stack_starts_beat_in_its_first_worker_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spawned: dict[str, list[str]] = {}

    class Process:
        def poll(self) -> None:
            return None

    def spawn(self: processes.Stack, name: str, argv: list[str]) -> Any:
        spawned[name] = list(argv)
        return Process()

    monkeypatch.setattr(processes.Stack, "spawn", spawn)
    monkeypatch.setattr(processes.Stack, "manage", lambda self, *args, **kwargs: "")
    monkeypatch.setattr(processes, "wait_for_http", lambda *args, **kwargs: None)
    with processes.running_stack(logs_dir=tmp_path, redis_url="redis://127.0.0.1:1/0", database_url="sqlite:///x",
                                 workers=2, beat=True):
        pass
    assert "--beat" in spawned["worker-0"] and "--beat" not in spawned["worker-1"]
    schedule = spawned["worker-0"][spawned["worker-0"].index("--schedule") + 1]
    assert Path(schedule).parent == tmp_path
