"""Site-wide safety nets that no view has to remember.

- :class:`NoLocalsReporterFilter`: error pages (with ``DJANGO_DEBUG=1``) and error reports show no local
  variables, because a scoring frame's locals hold the hidden labels and the competition secret that seeds the
  split and every noise draw.
- :class:`ThrottledModelBackend`: a username that has failed ``LEADERBOARD_LOGIN_ATTEMPTS`` times within
  ``LEADERBOARD_LOGIN_WINDOW`` seconds cannot log in (not even with the right password) until the window has
  passed; both the site's login page and the admin's authenticate through it.
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
    window = settings.LEADERBOARD_LOGIN_WINDOW
    try:
        if cache.add(key, 1, timeout=window):
            return
        cache.incr(key)
    except Exception:  # the cache is an optional guard; logging in must keep working without it
        return
