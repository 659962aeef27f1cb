"""Safe defaults against a hostile participant: debug off, a generated secret key, no frame locals on error
pages even with debug on, failed logins throttled per username and address, and a clean ``check --deploy``
behind HTTPS."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.test import RequestFactory, override_settings
from django.views.debug import ExceptionReporter

from stack.processes import REPO


def _settings_in_a_fresh_process(env: dict[str, str], expression: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    base = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
        env={**base, "DJANGO_SETTINGS_MODULE": "leaderboard.settings", **env},
    )
    return done.stdout.strip()


def test_debug_is_off_and_a_secret_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    env = {"LEADERBOARD_VAR_DIR": str(tmp_path)}
    first = _settings_in_a_fresh_process(env, "settings.DEBUG, settings.SECRET_KEY")
    second = _settings_in_a_fresh_process(env, "settings.DEBUG, settings.SECRET_KEY")
    assert first == second and first.startswith("False ")
    key_file = tmp_path / "secret-key"
    assert key_file.read_text() in first and len(key_file.read_text()) >= 50
    assert key_file.stat().st_mode & 0o077 == 0


def test_an_explicit_secret_key_wins_and_nothing_is_written(tmp_path: Path) -> None:
    key = secrets.token_urlsafe(60)
    env = {"LEADERBOARD_VAR_DIR": str(tmp_path), "DJANGO_SECRET_KEY": key}
    assert _settings_in_a_fresh_process(env, "settings.SECRET_KEY") == key
    assert not (tmp_path / "secret-key").exists()


def test_check_deploy_is_clean_behind_https(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DJANGO_SETTINGS_MODULE": "leaderboard.settings", "LEADERBOARD_VAR_DIR": str(tmp_path),
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(60), "DJANGO_HTTPS": "1", "DJANGO_ALLOWED_HOSTS": "lab.example.org",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO, env=env, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _scoring_frame_fails(labels: np.ndarray, secret: int) -> None:
    raise ValueError("the metric blew up")  # labels and secret are locals of this frame


@override_settings(DEBUG=True)
def test_a_debug_error_page_shows_no_local_variable() -> None:
    rng = np.random.default_rng(20261123)  # values made at run time: the page shows source lines, not these
    labels = rng.integers(0, 2, 12)
    secret = int(rng.integers(10**17, 10**18))
    try:
        _scoring_frame_fails(labels, secret)
    except ValueError:
        reporter = ExceptionReporter(RequestFactory().get("/"), *sys.exc_info())
        html = reporter.get_traceback_html()
        text = reporter.get_traceback_text()
    assert "the metric blew up" in html  # the page still says what broke and where
    for page in (html, text):
        assert str(secret) not in page
        assert np.array2string(labels) not in page and repr(labels) not in page


@pytest.mark.django_db
def test_failed_logins_lock_the_username_even_against_the_right_password(client: Any, settings: Any) -> None:
    from django.contrib.auth.models import User
    from django.core.cache import cache

    cache.clear()
    settings.LEADERBOARD_LOGIN_ATTEMPTS = 5
    User.objects.create_user("mallory-target", password="the-right-password-42")
    other = User.objects.create_user("bystander", password="another-password-42")
    attacker = {"REMOTE_ADDR": "203.0.113.66"}
    for attempt in range(5):
        client.post("/accounts/login/", {"username": "mallory-target", "password": f"guess-{attempt}"}, **attacker)
    page = client.post("/accounts/login/", {"username": "mallory-target", "password": "the-right-password-42"},
                       **attacker)
    assert page.status_code == 429  # the form again, not the redirect of a successful login
    assert "_auth_user_id" not in client.session
    # Only that username from that address is locked.
    assert client.post("/accounts/login/", {"username": other.username, "password": "another-password-42"},
                       **attacker).status_code == 302
