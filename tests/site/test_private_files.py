"""The files holding hidden labels, credentials and reset links are readable by their owner only, whatever the
umask: the default SQLite database, ``var/mail/`` and its messages, the demo's host password."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.core import mail

import launcher.demo
from leaderboard.mail import PrivateFileEmailBackend

REPO = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def lax_umask() -> Any:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _import_settings(var_dir: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LEADERBOARD_", "DATABASE_URL"))}
    env = {**base, "DJANGO_SETTINGS_MODULE": "leaderboard.settings", "LEADERBOARD_VAR_DIR": str(var_dir)}
    code = "import os; os.umask(0o022); import django; django.setup()"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


def test_the_default_sqlite_database_and_var_are_made_private(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    _import_settings(var_dir)
    assert mode(var_dir / "leaderboard.sqlite3") == 0o600
    assert mode(var_dir / "secret-key") == 0o600
    assert mode(var_dir) == 0o700


def test_a_world_readable_database_left_by_an_older_version_is_tightened(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    for name in ("leaderboard.sqlite3", "leaderboard.sqlite3-wal", "leaderboard.sqlite3-shm"):
        (var_dir / name).write_bytes(b"")
        (var_dir / name).chmod(0o644)
    _import_settings(var_dir)
    for name in ("leaderboard.sqlite3", "leaderboard.sqlite3-wal", "leaderboard.sqlite3-shm"):
        assert mode(var_dir / name) == 0o600, name


def test_mail_files_are_private(tmp_path: Path, lax_umask: Any) -> None:
    mail_dir = tmp_path / "mail"
    backend = PrivateFileEmailBackend(file_path=str(mail_dir))
    sent = mail.EmailMessage("reset", "https://site/reset/abc/", "from@example.org", ["to@example.org"])
    assert backend.send_messages([sent]) == 1
    (message,) = mail_dir.iterdir()
    assert mode(mail_dir) == 0o700 and mode(message) == 0o600
    assert b"https://site/reset/abc/" in message.read_bytes()


def test_the_demo_writes_its_host_password_private(
    tmp_path: Path, lax_umask: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher.demo, "VAR", tmp_path)
    monkeypatch.setattr(launcher.demo, "manage", lambda *args, **kwargs: None)
    password = launcher.demo.ensure_host_account(SimpleNamespace(env={}))  # type: ignore[arg-type]
    path = tmp_path / "host-password.txt"
    assert path.read_text() == password and mode(path) == 0o600
    (tmp_path / "old.txt").write_text("x")
    (tmp_path / "old.txt").chmod(0o644)
    launcher.demo.write_private(tmp_path / "old.txt", "y")
    assert mode(tmp_path / "old.txt") == 0o600
