"""Site-wide safety nets that no view has to remember.

- :class:`NoLocalsReporterFilter`: error pages (with ``DJANGO_DEBUG=1``) and error reports show no local
  variables, because a scoring frame's locals hold the hidden labels and the competition secret that seeds the
  split and every noise draw.
- :class:`ThrottledModelBackend`: a username that has failed ``LEADERBOARD_LOGIN_ATTEMPTS`` times within
  ``LEADERBOARD_LOGIN_WINDOW`` seconds cannot log in (not even with the right password) until the window has
  passed; both the site's login page and the admin's authenticate through it.
- :func:`attempt_allowed`: counts requests per client address in a scope (sign-up, password reset) and refuses
  them past ``LEADERBOARD_SIGNUP_ATTEMPTS`` within ``LEADERBOARD_SIGNUP_WINDOW`` seconds: every account has its
  own quota, so farming accounts must be slow, and so must guessing an invite code.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.http import HttpRequest
from django.views.debug import SafeExceptionReporterFilter


class NoLocalsReporterFilter(SafeExceptionReporterFilter):
    """Hide every local variable of every traceback frame (settings and POST data are cleansed as usual)."""

    def get_traceback_frame_variables(self, request: HttpRequest | None, tb_frame: Any) -> Any:
        return {name: self.cleansed_substitute for name in tb_frame.f_locals}.items()


class ThrottledModelBackend(ModelBackend):
    """Django's username/password backend with a per-username limit on failed attempts."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        key = _failures_key(username or kwargs.get("username") or "")
        if _failures(key) >= settings.LEADERBOARD_LOGIN_ATTEMPTS:
            return None  # locked: the right password fails too, so guessing gains nothing
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            _record_failure(key)
        return user


def login_locked(username: str) -> bool:
    """Whether ``username`` is locked out by failed attempts (for the login page's message)."""
    return _failures(_failures_key(username)) >= settings.LEADERBOARD_LOGIN_ATTEMPTS


def _failures_key(username: str) -> str:
    return "login-failures:" + hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]


def _failures(key: str) -> int:
    try:
        return int(cache.get(key, 0))
    except Exception:  # a cache outage must not lock everybody out
        return 0


def _record_failure(key: str) -> None:
    _increment(key, settings.LEADERBOARD_LOGIN_WINDOW)


def _increment(key: str, window: int) -> int:
    """Add one to the counter ``key`` (made with a ``window``-second lifetime); its new value, 0 on a cache outage."""
    try:
        if cache.add(key, 1, timeout=window):
            return 1
        return int(cache.incr(key))
    except Exception:  # the cache is an optional guard; the site must keep working without it
        return 0


def client_address(request: HttpRequest) -> str:
    """The address the request came from: behind a proxy (``DJANGO_BEHIND_PROXY``), the last hop it appended
    to ``X-Forwarded-For`` (earlier entries are whatever the client wrote), else ``REMOTE_ADDR``."""
    if getattr(settings, "BEHIND_PROXY", False):
        forwarded = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
        if forwarded:
            return forwarded[-1]
    return str(request.META.get("REMOTE_ADDR", ""))


def attempt_allowed(request: HttpRequest, *, scope: str) -> bool:
    """Count one attempt in ``scope`` from the request's address; ``False`` once the address has made more than
    ``LEADERBOARD_SIGNUP_ATTEMPTS`` in the current ``LEADERBOARD_SIGNUP_WINDOW``."""
    address = hashlib.sha256(client_address(request).encode()).hexdigest()[:32]
    count = _increment(f"{scope}-attempts:{address}", settings.LEADERBOARD_SIGNUP_WINDOW)
    return count <= settings.LEADERBOARD_SIGNUP_ATTEMPTS
