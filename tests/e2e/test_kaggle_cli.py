"""The official ``kaggle`` command line (PyPI ``kaggle`` 2.x, unmodified) against a live site: gunicorn, a real
Celery worker, Redis and a fresh SQLite file.

With ``KAGGLE_API_ENVIRONMENT=LOCALHOST`` kagglesdk talks to ``http://localhost`` — port 80, with no setting to
change it (``kagglesdk/kaggle_env.py``: the TEST environment's ``localhost:7777`` is the only other local one) —
so the site is served on 127.0.0.1:80. That takes root, which the test suite has here and in CI; elsewhere the
module is skipped with that reason. Port 80 is one per machine: a lock file makes a second holder (the other
pytest-xdist worker given some of this module's tests, or another test run) wait for the first to stop its site.
Each command runs as a participant would run it: its own process, a home of its own (no ``~/.kaggle``), the
username and an API token in ``KAGGLE_USERNAME`` / ``KAGGLE_KEY``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from bot.client import LeaderboardClient
from stack.processes import process_environment, redis_available, running_stack, unique_queue

pytestmark = pytest.mark.e2e

KAGGLE = Path(sys.executable).with_name("kaggle")
SLUG = "kcli"
TITLE = "Kaggle CLI e2e"
N_ROWS = 60
LABELS = np.random.default_rng(2026).integers(0, 2, N_ROWS)
IDS = [f"p{i:03d}" for i in range(N_ROWS)]
TRAIN = b"id,x1,x2,label\n" + b"".join(f"t{i:03d},{i},{i % 7},{i % 2}\n".encode() for i in range(40))
TEST = ("id,x1,x2\n" + "".join(f"{row_id},{i},{i % 5}\n" for i, row_id in enumerate(IDS))).encode()
# A chain that rounds to 3 decimals where the board would show 5: the command line must show the 3.
CHAIN = '[{"name": "rounding", "decimals": 3}]'


PORT_LOCK = Path(tempfile.gettempdir()) / "leaderboard-lab-port-80.lock"


@contextlib.contextmanager
def port_80(timeout: float = 600.0) -> Iterator[None]:
    """Hold port 80 for this module's site: wait (polling the lock) while another holder serves there."""
    with PORT_LOCK.open("w") as lock:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"port 80 stayed held (lock {PORT_LOCK}) for {timeout:.0f} s")
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Site:
    url: str  # where the tests' own REST client reaches it (the command line goes to http://localhost)
    alice: LeaderboardClient
    env: dict[str, str]  # the command line's environment, as alice
    home: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    if os.geteuid() != 0:
        pytest.skip("the kaggle command line reaches a local site on port 80 only, which takes root to serve")
    if not redis_available():
        pytest.fail("the kaggle command line's end-to-end tests need Redis at 127.0.0.1:6379")
    root = tmp_path_factory.mktemp("kaggle-cli")
    labels = root / "labels.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{int(y)}\n" for i, y in zip(IDS, LABELS, strict=True)))
    (root / "train.csv").write_bytes(TRAIN)
    (root / "test.csv").write_bytes(TEST)
    env = process_environment(f"sqlite:///{root / 'site.sqlite3'}", unique_queue("leaderboard-kaggle-cli"),
                              LEADERBOARD_VAR_DIR=str(root / "var"))
    with port_80(), running_stack(80, logs_dir=root, env=env, web_threads=4, access_log=True) as stack:
        stack.manage("create_competition", SLUG, "--labels", str(labels), "--title", TITLE, "--daily-limit", "2",
                     "--defenses", CHAIN, "--description", "# Predict the label of each row\n\nScored by log loss.",
                     "--data-file", str(root / "train.csv"), "Training rows with their labels",
                     "--data-file", str(root / "test.csv"))
        token = stack.manage("create_participant", "alice").strip().splitlines()[-1]
        home = root / "home"
        (home / "config").mkdir(parents=True)
        cli_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
            "KAGGLE_CONFIG_DIR": str(home / "config"), "KAGGLE_API_ENVIRONMENT": "LOCALHOST",
            "KAGGLE_USERNAME": "alice", "KAGGLE_KEY": token,
        }
        with LeaderboardClient(stack.url, token) as alice:
            yield Site(stack.url, alice, cli_env, home)


def kaggle(site: Site, *args: str, cwd: Path | None = None, without: tuple[str, ...] = (),
           **env: str) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in {**site.env, **env}.items() if key not in without}
    return subprocess.run([str(KAGGLE), *args], env=environment, cwd=cwd or site.home,
                          capture_output=True, text=True, timeout=60)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def predictions(values: np.ndarray) -> bytes:
    return ("id,target\n" + "".join(f"{i},{v:.6f}\n" for i, v in zip(IDS, values, strict=True))).encode()


def test_list_and_files(site: Site) -> None:
    listed = ok(kaggle(site, "competitions", "list"))
    row = next(line for line in listed.splitlines() if line.startswith(SLUG + " "))
    # ref, deadline (none: the competition never closes), category, reward, teamCount, userHasEntered, userRank
    assert row.split()[:2] == [SLUG, "None"], row
    files = ok(kaggle(site, "competitions", "files", SLUG))
    sizes = {line.split()[0]: line.split()[1] for line in files.splitlines()[2:]}
    assert set(sizes) == {"train.csv", "test.csv", "sample_submission.csv"}
    assert (sizes["train.csv"], sizes["test.csv"]) == (str(len(TRAIN)), str(len(TEST)))


def test_download_every_file_and_one(site: Site, tmp_path: Path) -> None:
    ok(kaggle(site, "competitions", "download", SLUG, "-p", str(tmp_path / "all")))
    with zipfile.ZipFile(tmp_path / "all" / f"{SLUG}.zip") as bundle:
        assert sorted(bundle.namelist()) == ["sample_submission.csv", "test.csv", "train.csv"]
        assert bundle.read("train.csv") == TRAIN and bundle.read("test.csv") == TEST
        sample = bundle.read("sample_submission.csv").decode()
    assert sample.splitlines()[0] == "id,target" and len(sample.splitlines()) == N_ROWS + 1
    ok(kaggle(site, "competitions", "download", SLUG, "-f", "train.csv", "-p", str(tmp_path / "one")))
    assert (tmp_path / "one" / "train.csv").read_bytes() == TRAIN


@dataclass(frozen=True)
class Submitted:
    ref: int
    output: str
    score_text: str


@pytest.fixture(scope="module")
def submitted(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Submitted:
    """``kaggle competitions submit`` once, and the submission scored by the worker."""
    preds = tmp_path_factory.mktemp("submit") / "preds.csv"
    preds.write_bytes(predictions(np.where(LABELS == 1, 0.8, 0.3)))
    out = ok(kaggle(site, "competitions", "submit", SLUG, "-f", str(preds), "-m", "logistic regression"))
    found = re.search(r"Submission ref: (\d+)", out)
    assert found, out
    scored = site.alice.wait(int(found.group(1)), timeout=60)
    assert scored.status == "scored"
    return Submitted(int(found.group(1)), out, scored.public_score_text)


def test_submit_answers_the_ref_and_the_quota_left(submitted: Submitted) -> None:
    assert f"Successfully submitted to {TITLE}" in submitted.output
    assert "1 submissions remaining today." in submitted.output
    # Released through the chain: 3 decimals, not the board's 5.
    assert re.fullmatch(r"\d+\.\d{3}", submitted.score_text), submitted.score_text


def test_submissions_show_the_description_and_the_released_score(site: Site, submitted: Submitted) -> None:
    mine = ok(kaggle(site, "competitions", "submissions", SLUG))
    row = next((line for line in mine.splitlines() if line.split()[:1] == [str(submitted.ref)]), mine)
    assert "preds.csv" in row and "logistic regression" in row and "COMPLETE" in row
    # The released text, and no private score (blank) before the close.
    assert row.split()[-1] == submitted.score_text, row


def test_leaderboard_show(site: Site, submitted: Submitted) -> None:
    board = ok(kaggle(site, "competitions", "leaderboard", SLUG, "--show"))
    assert re.search(rf"\balice\s.*\s{re.escape(submitted.score_text)}\s*$", board, re.M), board


def test_leaderboard_download(site: Site, submitted: Submitted, tmp_path: Path) -> None:
    ok(kaggle(site, "competitions", "leaderboard", SLUG, "--download", "-p", str(tmp_path)))
    with zipfile.ZipFile(tmp_path / f"{SLUG}.zip") as archive:
        csv = archive.read(f"{SLUG}-publicleaderboard.csv").decode()
    assert csv.splitlines()[1].split(",")[:3] == ["1", "alice", submitted.score_text]


def test_a_malformed_file_is_refused_naming_the_row(site: Site, submitted: Submitted, tmp_path: Path) -> None:
    short = tmp_path / "short.csv"
    short.write_bytes(b"id,target\n" + b"".join(f"{i},0.5\n".encode() for i in IDS[:-1]))
    before = site.alice.quota(SLUG).used_today
    refused = kaggle(site, "competitions", "submit", SLUG, "-f", str(short), "-m", "missing a row")
    assert refused.returncode == 1 and IDS[-1] in refused.stderr, refused.stderr
    assert site.alice.quota(SLUG).used_today == before


def test_over_the_daily_limit_the_submit_is_refused(site: Site, submitted: Submitted, tmp_path: Path) -> None:
    left = site.alice.quota(SLUG).remaining_today
    assert left is not None
    preds = tmp_path / "constant.csv"
    preds.write_bytes(predictions(np.full(N_ROWS, 0.5)))
    for _ in range(left):  # spend what is left, through the REST API (faster), then one more by the command line
        site.alice.submit_csv(SLUG, preds.read_bytes())
    over = kaggle(site, "competitions", "submit", SLUG, "-f", str(preds), "-m", "one too many")
    assert over.returncode == 1 and "daily limit of 2 submissions reached" in over.stderr, over.stderr


def test_a_wrong_key_is_refused(site: Site) -> None:
    wrong = kaggle(site, "competitions", "submissions", SLUG, KAGGLE_KEY="lbl_" + "x" * 43)
    assert wrong.returncode == 1 and "Authentication required" in wrong.stdout


def test_the_token_alone_in_kaggle_api_token(site: Site, submitted: Submitted) -> None:
    """Kaggle's newer way: ``KAGGLE_API_TOKEN`` only (the command line learns the username by IntrospectToken)."""
    mine = ok(kaggle(site, "competitions", "submissions", SLUG, without=("KAGGLE_USERNAME", "KAGGLE_KEY"),
                     KAGGLE_API_TOKEN=site.env["KAGGLE_KEY"]))
    assert any(line.split()[:1] == [str(submitted.ref)] for line in mine.splitlines()), mine
