"""``Authorization: Token …`` against hashed tokens: DRF's header parsing and answers, our lookup.

The token's prefix finds the candidate rows through an index; each candidate's digest is compared with the
presented token's in constant time (:func:`~leaderboard.accounts.tokens.digests_match`), so the answer's time
says nothing about how much of a digest matched. Inactive accounts (deactivated by the sybil screen or an
administrator) are refused as DRF refuses them.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.tokens import MAX_TOKEN_LENGTH, digests_match, token_digest, token_prefix


def api_token_find(token: str) -> ApiToken | None:
    """The stored token whose digest matches ``token``'s, or None. Every candidate sharing the prefix is
    compared (no early exit), each in constant time."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    presented = token_digest(token)
    found: ApiToken | None = None
    for candidate in ApiToken.objects.select_related("user").filter(prefix=token_prefix(token)):
        if digests_match(candidate.digest, presented):
            found = candidate
    return found


class HashedTokenAuthentication(TokenAuthentication):
    """DRF's ``TokenAuthentication`` (``Token`` keyword, 401 with ``WWW-Authenticate: Token``) over
    :class:`~leaderboard.accounts.models.ApiToken`; ``request.auth`` is the stored row (prefix and digest)."""

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        stored = api_token_find(key)
        if stored is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not stored.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return stored.user, stored
