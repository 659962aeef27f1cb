"""Static checks of docker/ (no Docker engine runs here): the compose stack and the image are coherent with
the code — every file the Dockerfile copies exists, every process entry point resolves, and every setting
the compose file passes is one the settings module reads."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]


def _instructions(name: str) -> list[str]:
    return [line.split(None, 1)[1] for line in DOCKERFILE.splitlines() if line.startswith(name + " ")]


def test_image_is_python_311_and_runs_unprivileged() -> None:
    assert _instructions("FROM")[0].startswith("python:3.11")
    users = _instructions("USER")
    assert users and users[-1] not in ("root", "0")


def test_every_copied_path_exists() -> None:
    for args in _instructions("COPY"):
        *sources, _dest = args.split()
        for source in sources:
            assert (ROOT / source).exists(), f"Dockerfile copies {source}, which is missing"


def test_the_image_copies_every_package_the_project_installs() -> None:
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {pattern.rstrip("*") for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = {args.split()[0] for args in _instructions("COPY")}
    assert packages <= copied, f"the Dockerfile does not copy {sorted(packages - copied)}"


def test_stack_has_web_worker_redis_and_postgres() -> None:
    assert {"web", "worker", "redis", "postgres"} <= set(SERVICES)
    assert SERVICES["redis"]["image"].startswith("redis:")
    assert SERVICES["postgres"]["image"].startswith("postgres:")


def _command(service: str) -> str:
    command = SERVICES[service]["command"]
    return " ".join(command) if isinstance(command, list) else str(command)


def test_web_runs_gunicorn_on_the_projects_wsgi_module() -> None:
    match = re.search(r"gunicorn ([\w.]+):(\w+)", _command("web"))
    assert match, "web must run gunicorn"
    assert importlib.util.find_spec(match.group(1)) is not None
    assert "migrate" in _command("web")


def test_worker_runs_the_projects_celery_app() -> None:
    assert re.search(r"celery -A leaderboard worker", _command("worker"))
    assert importlib.util.find_spec("leaderboard.celery") is not None


@pytest.mark.parametrize("service", ["web", "worker"])
def test_app_services_wait_for_healthy_backends_and_get_urls(service: str) -> None:
    spec = SERVICES[service]
    depends = spec["depends_on"]
    assert depends["postgres"]["condition"] == "service_healthy"
    assert depends["redis"]["condition"] == "service_healthy"
    env = spec["environment"]
    assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:" in env["DATABASE_URL"]
    assert env["REDIS_URL"].startswith("redis://redis:")
    assert "healthcheck" in SERVICES["postgres"] and "healthcheck" in SERVICES["redis"]


def test_settings_read_every_variable_compose_sets() -> None:
    settings_source = (ROOT / "leaderboard" / "settings.py").read_text()
    for name in SERVICES["web"]["environment"]:
        if name == "DJANGO_SETTINGS_MODULE":
            continue
        assert f'"{name}"' in settings_source, f"compose sets {name} but leaderboard/settings.py never reads it"


def test_the_build_context_leaves_out_the_venv_and_local_data() -> None:
    context = (ROOT / SERVICES["web"]["build"]["context"].replace("..", ".")).resolve()
    ignored = {line.strip() for line in (context / ".dockerignore").read_text().splitlines() if line.strip()}
    assert {".venv", "var", ".git"} <= ignored


def _runs_beat(service: str) -> bool:
    command = _command(service)
    return bool(re.search(r"celery -A leaderboard beat\b", command)) or (
        "celery -A leaderboard worker" in command and re.search(r"(^| )(--beat|-B)( |$)", command) is not None
    )


def test_exactly_one_service_runs_beat_with_the_apps_settings() -> None:
    # The sweep (settings.CELERY_BEAT_SCHEDULE) is the backstop of recovery: one scheduler, never two (two would
    # sweep twice as often; none would leave a lost message to wait for a worker's start).
    beats = [name for name in SERVICES if "command" in SERVICES[name] and _runs_beat(name)]
    assert len(beats) == 1, beats
    spec = SERVICES[beats[0]]
    assert spec.get("deploy", {}).get("replicas", 1) == 1
    env = spec["environment"]
    assert env["DATABASE_URL"] == SERVICES["worker"]["environment"]["DATABASE_URL"]
    assert env["REDIS_URL"] == SERVICES["worker"]["environment"]["REDIS_URL"]
    assert spec["depends_on"]["redis"]["condition"] == "service_healthy"
    # Its schedule file goes where the image's unprivileged user may write (the Dockerfile makes /app/var).
    schedule = re.search(r"--schedule[ =](\S+)", _command(beats[0]))
    assert schedule and schedule.group(1).startswith("/app/var/")
    assert "/app/var" in DOCKERFILE


def test_the_beat_schedule_runs_the_sweep_often() -> None:
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["sweep-stuck-submissions"]
    assert entry["task"] == "leaderboard.submissions.tasks.submissions_sweep"
    assert float(entry["schedule"]) <= 60
