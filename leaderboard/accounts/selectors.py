"""Reads on accounts: what the site may show of an account's API token (its prefix and age, never the token)."""

from __future__ import annotations

from typing import Any

from leaderboard.accounts.models import ApiToken


def api_token_of(*, user: Any) -> ApiToken | None:
    """The account's stored API token (prefix, digest, creation time), or None when it has none."""
    return ApiToken.objects.filter(user=user).first()
