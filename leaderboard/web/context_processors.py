"""Values every page's account links need (``web/base.html``)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def accounts(request: HttpRequest) -> dict[str, object]:
    """Whether the sign-up page takes new accounts (``LEADERBOARD_SIGNUP`` is not ``closed``)."""
    return {"signup_enabled": settings.LEADERBOARD_SIGNUP != "closed"}
