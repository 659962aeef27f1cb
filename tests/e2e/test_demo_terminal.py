"""The one-command demo's last words, as a user sees them: ``python -m launcher demo`` in a process of its own (its
files under a temporary ``LEADERBOARD_VAR_DIR``) ends with one line on what leaked under which defense — true to
the quick game's own report — then, while it serves, the site's URL (which answers) and the host's login (which
logs in)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from games.templating import percent
from games.terminal import WIDTH
from stack.processes import REDIS_URL, REPO, free_port, redis_available, unique_queue

pytestmark = pytest.mark.e2e

SERVING = "Serving; press Ctrl-C to stop."
LEAK_PREFIX = "What leaked in the quick game: "


def _expected(point: dict[str, object]) -> str:
    """What the leak line must say of one chain (the frontier's point at the largest budget)."""
    accuracy, leakage = point["label_accuracy"], point["leakage"]
    if accuracy is None:
        return "every attack failed"
    assert isinstance(accuracy, float | int) and isinstance(leakage, float | int)
    if accuracy >= 1.0:
        return "every label"
    if leakage <= 0.0:
        return f"nothing beyond the majority class ({percent(point['majority_rate'])})"  # type: ignore[arg-type]
    return f"{percent(accuracy)} of the labels right (majority class {percent(point['majority_rate'])})"  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], Path]]:
    """The demo's output up to the moment it serves; it is stopped with Ctrl-C (SIGINT) afterwards."""
    if not redis_available():
        pytest.fail("the demo test needs Redis at 127.0.0.1:6379")
    var = tmp_path_factory.mktemp("demo-var")
    env = {**os.environ, "LEADERBOARD_VAR_DIR": str(var), "REDIS_URL": REDIS_URL,
           "LEADERBOARD_CELERY_QUEUE": unique_queue("leaderboard-demo")}
    env.pop("DATABASE_URL", None)  # the demo's own SQLite file, under its var directory
    process = subprocess.Popen(
        [sys.executable, "-m", "launcher", "demo", "--port", str(free_port())], cwd=REPO, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    lines: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(line.rstrip("\n") for line in process.stdout or ()),
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + 900
    try:
        while SERVING not in lines:
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail("the demo did not reach serving:\n" + "\n".join(lines))
            time.sleep(0.5)
        yield list(lines), var
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_the_demo_ends_with_a_true_line_on_what_leaked_under_which_defense(demo: tuple[list[str], Path]) -> None:
    lines, var = demo
    (leak,) = [line for line in lines if line.startswith(LEAK_PREFIX)]
    frontier = json.loads((var / "games" / "quick" / "frontier.json").read_text())
    (choice,) = frontier["recommended"].values()
    points = [p for p in frontier["points"] if p["budget"] == choice["budget"]]
    dataset, rest = leak.removeprefix(LEAK_PREFIX).split(": ", 1)
    assert dataset == (f"breast_cancer (171 hidden rows, within {choice['budget']:,} submissions, 1 account)")
    said: dict[str, str] = {}
    for part in rest.removesuffix(".").split("; "):
        what, chains = part.split(" under ")
        said.update({chain: what for chain in chains.split(", ")})
    assert said == {p["defense"]: _expected(p) for p in points}
    assert said["none"] == "every label"  # the undefended board gives every label away, as the game measured
    # The line comes after the game's table; the addresses and the login follow it.
    tail = lines[lines.index(leak):]
    assert tail[-1] == SERVING and any(line.startswith("Site: ") for line in tail)
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("The quick game (")):lines.index(leak)]
    assert all(len(line) <= WIDTH for line in table if not line.startswith(("Report:", "The quick game (")))
    assert any(line.startswith("* ") and choice["defense"][:20] in line for line in table)


def test_while_serving_the_demo_prints_a_site_that_answers_and_a_host_login_that_logs_in(
    demo: tuple[list[str], Path],
) -> None:
    lines, var = demo
    (site,) = [line for line in lines if line.startswith("Site: ")]
    url = site.split()[1].rstrip("/")
    assert "Breast cancer (demo)" in requests.get(url + "/", timeout=30).text
    (login,) = [line for line in lines if line.startswith("Host login: ")]
    found = re.fullmatch(r"Host login: (\S+)/admin/ +user 'host', password (\S+) \(kept in (.+)\)", login)
    assert found is not None, login
    assert found.group(1) == url and Path(found.group(3)) == var / "host-password.txt"
    assert found.group(2) == (var / "host-password.txt").read_text().strip()
    session = requests.Session()
    form = session.get(url + "/admin/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    assert token is not None
    answer = session.post(url + "/admin/login/?next=/admin/", timeout=30, headers={"Referer": url + "/admin/login/"},
                          data={"username": "host", "password": found.group(2),
                                "csrfmiddlewaretoken": token.group(1)})
    assert answer.url.rstrip("/") == url + "/admin" and "Log out" in answer.text


def test_the_demo_competitions_ship_their_data_and_description(demo: tuple[list[str], Path]) -> None:
    lines, _var = demo
    (site,) = [line for line in lines if line.startswith("Site: ")]
    url = site.split()[1].rstrip("/")
    for slug in ("breast-cancer", "breast-cancer-noise", "breast-cancer-ladder"):
        listed = requests.get(f"{url}/api/v1/competitions/{slug}/data/", timeout=30).json()
        assert [(f["name"], f["size"] > 10_000) for f in listed] == [("test.csv", True), ("train.csv", True)]
        description = requests.get(f"{url}/api/v1/competitions/{slug}/", timeout=30).json()["description"]
        assert "Predict **`target`" in description and "binary log loss" in description
    assert any(line.startswith("Competition 'breast-cancer': ") and "data: train.csv, test.csv" in line
               for line in lines)
