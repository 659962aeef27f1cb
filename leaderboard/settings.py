"""Settings of the Leaderboard Lab site, read from the environment (one module for every deployment).

Environment:
- ``DATABASE_URL`` — any dj-database-url URL; default a SQLite file under ``var/`` in the repository (mode 0600).
- ``REDIS_URL`` — Celery broker and result store; default ``redis://127.0.0.1:6379/0`` (the launcher sets it
  to the Redis server it starts).
- ``DJANGO_DEBUG`` — ``1``/``0``; default ``0``: a debug page would show too much to a hostile participant.
- ``DJANGO_SECRET_KEY`` — default: a key generated once and kept in ``var/secret-key`` (mode 0600); set it
  explicitly when several machines serve the site.
- ``DJANGO_HTTPS`` — ``1`` behind HTTPS: secure cookies, HSTS (``DJANGO_HSTS_SECONDS``, default one year),
  redirect to HTTPS (``DJANGO_SSL_REDIRECT``), and trust of ``X-Forwarded-Proto`` from the proxy
  (``DJANGO_BEHIND_PROXY``: a proxy on this machine, whose ``X-Forwarded-For`` is believed from loopback only).
  ``manage.py check --deploy`` is clean with it.
- ``DJANGO_TRUSTED_PROXIES`` — comma-separated proxy addresses or CIDR blocks whose ``X-Forwarded-For`` names the
  client (its right-most entry that is not a trusted proxy); default none: the client is ``REMOTE_ADDR``.
- ``LEADERBOARD_LOGIN_ATTEMPTS`` / ``LEADERBOARD_LOGIN_ADDRESS_ATTEMPTS`` — failed logins per (username, client
  address) and per address across usernames before a lock (10 and 30); ``LEADERBOARD_LOGIN_LOCKOUT`` /
  ``LEADERBOARD_LOGIN_LOCKOUT_MAX`` — the first lock and the cap of its doubling (300 s and one day);
  ``LEADERBOARD_LOGIN_WINDOW`` — quiet seconds after which counts are forgotten (900); docs/security.md.
  ``LEADERBOARD_API_THROTTLE_ANON`` / ``LEADERBOARD_API_THROTTLE_USER`` — DRF rates such as ``100/minute`` (off
  unless set).
- ``LEADERBOARD_SIGNUP`` — who may make an account on the sign-up page: ``open`` (default, anyone), ``invite``
  (whoever knows ``LEADERBOARD_INVITE_CODE``) or ``closed`` (hosts make accounts: ``create_participant``, the
  host API, the admin); ``LEADERBOARD_SIGNUP_ATTEMPTS`` / ``LEADERBOARD_SIGNUP_WINDOW`` — sign-up and
  password-reset requests allowed per client address and the window in seconds (20 and 3600);
  ``LEADERBOARD_HOST_ACCOUNTS_PER_DAY`` — new accounts a host (not a superuser) may make through the host API in
  24 hours (1,000; 0: no limit).
- ``DJANGO_EMAIL_BACKEND`` — default: a file per message (mode 0600) under ``var/mail/`` (0700;
  ``LEADERBOARD_MAIL_DIR``); with ``django.core.mail.backends.smtp.EmailBackend``, ``DJANGO_EMAIL_HOST``,
  ``DJANGO_EMAIL_PORT``, ``DJANGO_EMAIL_HOST_USER``, ``DJANGO_EMAIL_HOST_PASSWORD``, ``DJANGO_EMAIL_USE_TLS``;
  ``DJANGO_DEFAULT_FROM_EMAIL``.
- ``DJANGO_ALLOWED_HOSTS`` — comma-separated; ``LEADERBOARD_CELERY_QUEUE`` — the queue web and workers share
  (tests use a unique one per session so parallel runs never take each other's tasks).
- ``LEADERBOARD_MODEL_MAX_BYTES``, ``LEADERBOARD_MODEL_MAX_NODES``, ``LEADERBOARD_MODEL_CPU_SECONDS``,
  ``LEADERBOARD_MODEL_WALL_SECONDS``, ``LEADERBOARD_MODEL_MEMORY_MB`` — what an ONNX model of a model
  competition may be and use (32 MiB, 20,000 nodes, 30 s CPU, 60 s wall, 2,048 MiB). ``LEADERBOARD_MODEL_SCREEN``
  — ``off`` (default), ``flag`` or ``reject``: screen every scored model for a MutNet head (paper 001 §5).
- ``LEADERBOARD_MAX_UPLOAD_BYTES``, ``LEADERBOARD_KEEP_UPLOADS`` (``1``: keep every upload's bytes),
  ``LEADERBOARD_SCORING_SOFT_TIME_LIMIT``, ``LEADERBOARD_SCORING_HARD_TIME_LIMIT``, ``LEADERBOARD_SWEEP_INTERVAL``,
  ``LEADERBOARD_STUCK_AFTER``, ``LEADERBOARD_CLAIM_HEARTBEAT``, ``LEADERBOARD_CLAIM_STALE_AFTER``,
  ``LEADERBOARD_PUBLISH_RETRY_FOR``.
- ``LEADERBOARD_MAX_DATA_FILE_BYTES`` — the largest data file a host may attach to a competition (100 MiB; kept
  in the database, read whole when served).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import tempfile
import time
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("LEADERBOARD_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


def secret_key(var_dir: Path) -> str:
    """``DJANGO_SECRET_KEY``, else the key in ``var_dir/secret-key``, made on first use.

    Processes starting together (web and worker) race to make it: ``O_EXCL`` lets exactly one write it.
    """
    configured = os.environ.get("DJANGO_SECRET_KEY", "")
    if configured:
        return configured
    path = var_dir / "secret-key"
    try:
        var_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(64))
    for _ in range(200):  # the writer may not have written yet
        key = path.read_text().strip()
        if key:
            return key
        time.sleep(0.01)
    raise ImproperlyConfigured(f"{path} is empty: delete it or set DJANGO_SECRET_KEY")


def private_sqlite_file(path: Path) -> None:
    """Make the SQLite file 0600 before SQLite does, and tighten one an earlier version left 0644.

    It holds the hidden labels and every account's credentials; SQLite would create it with the umask's mode
    (0644 by default). Its journal, WAL and shared-memory files take the database file's mode from SQLite.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    for sibling in (path, *(path.with_name(path.name + suffix) for suffix in ("-journal", "-wal", "-shm"))):
        if sibling.exists() and sibling.stat().st_mode & 0o077:
            sibling.chmod(0o600)


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = secret_key(VAR_DIR)
# Error pages and reports show no frame's local variables: scoring frames hold hidden labels and the secret.
DEFAULT_EXCEPTION_REPORTER_FILTER = "leaderboard.security.NoLocalsReporterFilter"
AUTHENTICATION_BACKENDS = ["leaderboard.security.ThrottledModelBackend"]
# Failed logins per (username, client address), and per address across usernames (a spray), before a lock of
# LEADERBOARD_LOGIN_LOCKOUT seconds that doubles with every further failure up to LEADERBOARD_LOGIN_LOCKOUT_MAX;
# counts are forgotten after LEADERBOARD_LOGIN_WINDOW quiet seconds. The owner elsewhere is never locked out.
LEADERBOARD_LOGIN_ATTEMPTS = env_int("LEADERBOARD_LOGIN_ATTEMPTS", 10)
LEADERBOARD_LOGIN_ADDRESS_ATTEMPTS = env_int("LEADERBOARD_LOGIN_ADDRESS_ATTEMPTS", 30)
LEADERBOARD_LOGIN_WINDOW = env_int("LEADERBOARD_LOGIN_WINDOW", 900)
LEADERBOARD_LOGIN_LOCKOUT = env_int("LEADERBOARD_LOGIN_LOCKOUT", 300)
LEADERBOARD_LOGIN_LOCKOUT_MAX = env_int("LEADERBOARD_LOGIN_LOCKOUT_MAX", 24 * 3600)

# --- Accounts: who may sign up, and how password-reset mail leaves --------------------------------------
SIGNUP_MODES = ("open", "invite", "closed")
LEADERBOARD_SIGNUP = (os.environ.get("LEADERBOARD_SIGNUP") or "open").strip().lower()
if LEADERBOARD_SIGNUP not in SIGNUP_MODES:
    raise ImproperlyConfigured(f"LEADERBOARD_SIGNUP={LEADERBOARD_SIGNUP!r}: use one of {', '.join(SIGNUP_MODES)}")
LEADERBOARD_INVITE_CODE = os.environ.get("LEADERBOARD_INVITE_CODE", "").strip()
if LEADERBOARD_SIGNUP == "invite" and not LEADERBOARD_INVITE_CODE:
    raise ImproperlyConfigured("LEADERBOARD_SIGNUP=invite needs LEADERBOARD_INVITE_CODE (the code to hand out)")
# Per client address, counted in the cache like failed logins: slows account farming (every account has its
# own quota) and guessing the invite code; a class behind one NAT address may need a larger number.
LEADERBOARD_SIGNUP_ATTEMPTS = env_int("LEADERBOARD_SIGNUP_ATTEMPTS", 20)
LEADERBOARD_SIGNUP_WINDOW = env_int("LEADERBOARD_SIGNUP_WINDOW", 3600)
# New participant accounts one host (not a superuser) may make through the host API in 24 hours; 0: no limit.
LEADERBOARD_HOST_ACCOUNTS_PER_DAY = env_int("LEADERBOARD_HOST_ACCOUNTS_PER_DAY", 1000)
EMAIL_BACKEND = os.environ.get("DJANGO_EMAIL_BACKEND") or "leaderboard.mail.PrivateFileEmailBackend"  # 0600 files
EMAIL_FILE_PATH = Path(os.environ.get("LEADERBOARD_MAIL_DIR") or VAR_DIR / "mail")
EMAIL_HOST = os.environ.get("DJANGO_EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("DJANGO_EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("DJANGO_EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("DJANGO_EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("DJANGO_EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DJANGO_DEFAULT_FROM_EMAIL", "leaderboard-lab@localhost")
PASSWORD_RESET_TIMEOUT = env_int("DJANGO_PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600)

# --- HTTPS (behind a TLS-terminating proxy) -------------------------------------------------------------
HTTPS = env_bool("DJANGO_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", HTTPS)
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
# A TLS proxy on this machine: X-Forwarded-Proto is believed, and X-Forwarded-For when the peer is loopback.
BEHIND_PROXY = env_bool("DJANGO_BEHIND_PROXY", HTTPS)
# Peers whose X-Forwarded-For names the client (addresses or CIDR blocks); none by default: the header is ignored
# and the client is REMOTE_ADDR. The client is then the right-most X-Forwarded-For entry not in this list.
TRUSTED_PROXIES = [p.strip() for p in os.environ.get("DJANGO_TRUSTED_PROXIES", "").split(",") if p.strip()]
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"DJANGO_TRUSTED_PROXIES: {_proxy!r} is not an IP address or CIDR block") from None
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Every page: scripts, styles, images and connections from the site only, no inline script or style (the site's
# templates keep them in static files), no plug-ins, no framing, forms post to the site only. A view that needs
# another policy sets its own header (the API docs pages, game files), which the middleware leaves alone.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",  # API tokens are leaderboard.accounts' (hashed), not rest_framework.authtoken's
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc served by the site itself, not from a CDN
    "leaderboard.competitions",
    "leaderboard.submissions",
    "leaderboard.web",
    "leaderboard.accounts",
    "leaderboard.audits",
    "leaderboard.inversion",
    "leaderboard.screening",
    "leaderboard.kaggle_cli",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "leaderboard.security.ContentSecurityPolicyMiddleware",
    # Serves static files (the admin's CSS) from gunicorn, so one machine needs no separate web server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before the CSRF check, which may read (and so parse) a form: submission uploads are streamed to a file.
    "leaderboard.uploads.StreamedUploadMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "leaderboard.urls"
WSGI_APPLICATION = "leaderboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "leaderboard.web.context_processors.accounts",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------------
DEFAULT_SQLITE_PATH = VAR_DIR / "leaderboard.sqlite3"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{DEFAULT_SQLITE_PATH}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    if not os.environ.get("DATABASE_URL"):
        private_sqlite_file(DEFAULT_SQLITE_PATH)
    # IMMEDIATE takes the write lock at BEGIN, so two quota checks cannot both read "4 used" and both insert
    # (SQLite ignores SELECT ... FOR UPDATE); the timeout makes the loser wait instead of failing.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 30}
    # A file (not Django's in-memory default) so that threads and a worker process see the test database.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get("LEADERBOARD_TEST_SQLITE")
        or str(Path(tempfile.gettempdir()) / f"leaderboard-test-{os.getpid()}.sqlite3")
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

# Everyone logs in at the site's page (the admin keeps its own, for staff).
LOGIN_URL = "web:login"
LOGIN_REDIRECT_URL = "web:profile"

# --- Uploads --------------------------------------------------------------------------------------------
LEADERBOARD_MAX_UPLOAD_BYTES = env_int("LEADERBOARD_MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
# JSON bodies are read whole; let the scoring core's own limit (with a clear message) be the one that bites.
DATA_UPLOAD_MAX_MEMORY_SIZE = LEADERBOARD_MAX_UPLOAD_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Keep every upload's bytes in the database; by default only φ-bit competitions keep them (their scoring reads
# the decimal text), float64 ones keep the validated array, the size, the name and the SHA-256.
LEADERBOARD_KEEP_UPLOADS = env_bool("LEADERBOARD_KEEP_UPLOADS", False)
# A competition's data files (train set, test features) live in the database, so every web server of a
# multi-machine site serves the same bytes; each is read whole when served, hence a limit well under the RAM.
LEADERBOARD_MAX_DATA_FILE_BYTES = env_int("LEADERBOARD_MAX_DATA_FILE_BYTES", 100 * 1024 * 1024)

# --- REST framework -------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "leaderboard.accounts.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "leaderboard.api.exception_handlers.api_exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON bodies have their shape checked before json.loads (leaderboard.api.json_bounds); forms as DRF's default.
    "DEFAULT_PARSER_CLASSES": [
        "leaderboard.api.json_bounds.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
_THROTTLES = {
    scope: rate
    for scope, rate in (
        ("anon", os.environ.get("LEADERBOARD_API_THROTTLE_ANON")),
        ("user", os.environ.get("LEADERBOARD_API_THROTTLE_USER")),
    )
    if rate
}
if _THROTTLES:
    REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"] = [
        f"rest_framework.throttling.{scope.title()}RateThrottle" for scope in _THROTTLES
    ]
    REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = _THROTTLES  # type: ignore[assignment]
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append("rest_framework.renderers.BrowsableAPIRenderer")  # type: ignore[attr-defined]

SPECTACULAR_SETTINGS = {
    "TITLE": "Leaderboard Lab API",
    "DESCRIPTION": "Kaggle-style competitions: metadata, submissions, released scores and leaderboards.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs pages load their scripts from the site (drf-spectacular-sidecar): they work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No badge fetched from the online validator.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
}

# --- Cache: the login and API throttles count here, shared by every web process through Redis --------------
CACHES = {
    # Short socket timeouts: with Redis unreachable, login falls back to a per-process limiter at once and
    # sign-up answers 503 (leaderboard/security.py), instead of every request hanging.
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ["REDIS_URL"],
                "KEY_PREFIX": "leaderboard", "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}
    if os.environ.get("REDIS_URL")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# --- Celery ---------------------------------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_IGNORE_RESULT = True  # results live in the database row, never in the result store
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("LEADERBOARD_CELERY_QUEUE") or "leaderboard"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
LEADERBOARD_SCORING_SOFT_TIME_LIMIT = env_int("LEADERBOARD_SCORING_SOFT_TIME_LIMIT", 120)
LEADERBOARD_SCORING_HARD_TIME_LIMIT = env_int("LEADERBOARD_SCORING_HARD_TIME_LIMIT", 150)
CELERY_TASK_SOFT_TIME_LIMIT = LEADERBOARD_SCORING_SOFT_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = LEADERBOARD_SCORING_HARD_TIME_LIMIT
# Redis redelivers an unacknowledged (acks_late) message after this long; keep it above the hard limit.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
# Publishing happens in the web request's on_commit hook: give up quickly when the broker is down (the
# submission stays queued and the sweep enqueues it later) instead of hanging the upload.
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Model competitions: limits of an uploaded ONNX model (checked at upload) and of its run in the worker's
# sandboxed child process (sandbox.runner). The wall time stays well under the scoring soft time limit.
LEADERBOARD_MODEL_MAX_BYTES = env_int("LEADERBOARD_MODEL_MAX_BYTES", 32 * 1024 * 1024)
LEADERBOARD_MODEL_MAX_NODES = env_int("LEADERBOARD_MODEL_MAX_NODES", 20_000)
LEADERBOARD_MODEL_CPU_SECONDS = env_int("LEADERBOARD_MODEL_CPU_SECONDS", 30)
LEADERBOARD_MODEL_WALL_SECONDS = env_int(
    "LEADERBOARD_MODEL_WALL_SECONDS", max(1, min(60, LEADERBOARD_SCORING_SOFT_TIME_LIMIT // 2))
)
LEADERBOARD_MODEL_MEMORY_MB = env_int("LEADERBOARD_MODEL_MEMORY_MB", 2048)
# The MutNet screen of a scored model (games.model_screen: its graph, and its outputs on the hidden rows):
# "off", "flag" (a host note on the submission) or "reject" (the submission fails with a fixed message).
LEADERBOARD_MODEL_SCREEN = os.environ.get("LEADERBOARD_MODEL_SCREEN", "off")
LEADERBOARD_SWEEP_INTERVAL = env_int("LEADERBOARD_SWEEP_INTERVAL", 60)
# A scoring worker refreshes its claim's heartbeat this often; a claim silent for LEADERBOARD_CLAIM_STALE_AFTER
# is taken over by the next delivery, a worker's start or the sweep (its worker is presumed gone).
LEADERBOARD_CLAIM_HEARTBEAT = env_int("LEADERBOARD_CLAIM_HEARTBEAT", 5)
LEADERBOARD_CLAIM_STALE_AFTER = env_int("LEADERBOARD_CLAIM_STALE_AFTER", max(30, 6 * LEADERBOARD_CLAIM_HEARTBEAT))
# A failed publish (broker down at upload time) is retried in the web process for this long (0: not at all).
LEADERBOARD_PUBLISH_RETRY_FOR = env_int("LEADERBOARD_PUBLISH_RETRY_FOR", 600)
# A submission queued or scoring for longer than this is treated as lost (kept above the hard time limit).
LEADERBOARD_STUCK_AFTER = env_int("LEADERBOARD_STUCK_AFTER", max(300, 2 * LEADERBOARD_SCORING_HARD_TIME_LIMIT))
# The host's leakage audit (leaderboard.audits): its wall-clock bound in seconds (rungs that would not fit are
# skipped and listed), the heartbeat of a running audit, and when a silent or never-started one is failed.
LEADERBOARD_AUDIT_TIME_LIMIT = env_int("LEADERBOARD_AUDIT_TIME_LIMIT", 120)
LEADERBOARD_AUDIT_HEARTBEAT = env_int("LEADERBOARD_AUDIT_HEARTBEAT", 5)
LEADERBOARD_AUDIT_STALE_AFTER = env_int("LEADERBOARD_AUDIT_STALE_AFTER", 60)
LEADERBOARD_AUDIT_QUEUED_EXPIRES = env_int("LEADERBOARD_AUDIT_QUEUED_EXPIRES", 3600)
# A game task on a worker (leaderboard-game --backend celery): a batch of honest boards or attack cells (--chunk).
# Kept below the broker's visibility timeout, after which Redis would hand an unfinished task to a second worker.
LEADERBOARD_GAME_TASK_TIME_LIMIT = env_int("LEADERBOARD_GAME_TASK_TIME_LIMIT", 3000)
CELERY_BEAT_SCHEDULE = {
    "sweep-stuck-submissions": {
        "task": "leaderboard.submissions.tasks.submissions_sweep",
        "schedule": float(LEADERBOARD_SWEEP_INTERVAL),
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LEADERBOARD_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
