"""Login forms that say when a login is locked ("try again after HH:MM UTC") instead of "did not match"."""

from __future__ import annotations

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from leaderboard.security import locked_message, request_locked_until


class _LockAware:
    """Replace the "did not match" error by the lock's message when the backend met a lock."""

    request: Any

    def clean(self) -> Any:
        try:
            return super().clean()  # type: ignore[misc]
        except ValidationError:
            until = request_locked_until(self.request)
            if until is None:
                raise
            raise ValidationError(locked_message(until), code="locked") from None


class LoginForm(_LockAware, AuthenticationForm):
    """The site's login form."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": "Your username and password did not match. Please try again.",
    }


class AdminLoginForm(_LockAware, AdminAuthenticationForm):
    """The admin's login form (staff only, as Django's)."""
