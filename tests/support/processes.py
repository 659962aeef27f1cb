"""Real processes for the integration and end-to-end tests: the environment they share, a Celery worker on a
queue of its own, a web server, and readiness checks. No pytest here, so a subprocess can import it too."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REDIS_URL = os.environ.get("LEADERBOARD_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def redis_available(url: str = REDIS_URL) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


def unique_queue(prefix: str = "leaderboard-test") -> str:
    """A Celery queue no other test run consumes, so parallel runs never take each other's tasks."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def process_environment(database_url: str, queue: str, **extra: str) -> dict[str, str]:
    """The environment a worker, a web server and the scenario share: one database, one broker, one queue."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=REDIS_URL,
        LEADERBOARD_CELERY_QUEUE=queue,
        DJANGO_SETTINGS_MODULE="leaderboard.settings",
        PYTHONPATH=str(REPO),
        **extra,
    )
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def spawned(argv: Sequence[str], env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` from the repository with its output in ``log_path``; terminate it on exit."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(list(argv), cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            stop(process)


def celery_worker(env: dict[str, str], log_path: Path) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    """A real Celery worker (solo pool) consuming only ``env``'s ``LEADERBOARD_CELERY_QUEUE``."""
    queue = env["LEADERBOARD_CELERY_QUEUE"]
    argv = [
        sys.executable, "-m", "celery", "-A", "leaderboard", "worker", "--pool=solo", "--loglevel=INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat", "-Q", queue, "-n", f"{queue}@%h",
    ]
    return spawned(argv, env, log_path)


def gunicorn_server(
    env: dict[str, str], port: int, log_path: Path
) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    """The site under gunicorn on 127.0.0.1:``port`` (what docker/ and the launcher run)."""
    argv = [
        str(BIN / "gunicorn"), "leaderboard.wsgi:application", "--bind", f"127.0.0.1:{port}",
        "--workers", "1", "--threads", "4", "--access-logfile", "-",
    ]
    return spawned(argv, env, log_path)


def manage(env: dict[str, str], *args: str, timeout: float = 120.0) -> str:
    """Run ``manage.py`` with ``env``; return its stdout, or raise with its output when it fails."""
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def wait_for_http(url: str, process: subprocess.Popen[bytes], log_path: Path, timeout: float = 20.0) -> None:
    """Until ``url`` answers at all; fail early (with the log) if the server process died."""
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        # The first request may wait while the server imports the site: a read timeout is "not yet" too.
        with contextlib.suppress(requests.ConnectionError, requests.Timeout):
            requests.get(url, timeout=10)
            return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{log_path.read_text()[-3000:]}")

