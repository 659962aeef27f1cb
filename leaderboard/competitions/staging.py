"""A host's labels file kept server-side between attempts at creating a competition.

When the create page refuses a setting, the labels file that parsed is kept under a random token in the cache
(Redis), for that host only, for :data:`STAGED_FOR_SECONDS`; the page sends the token back instead of the
file. The token is 128 random bits and the key holds the host's id, so another account cannot use it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.core.cache import cache

STAGED_FOR_SECONDS = 6 * 3600
_PREFIX = "host-labels"


@dataclass(frozen=True)
class StagedLabels:
    """A labels file that parsed: its bytes, its name as uploaded and the hidden set's shape."""

    token: str
    name: str
    data: bytes
    n_rows: int
    n_classes: int


def _key(user_id: int, token: str) -> str:
    return f"{_PREFIX}:{user_id}:{token}"


def labels_stage(*, user_id: int, name: str, data: bytes, n_rows: int, n_classes: int) -> StagedLabels:
    """Keep a parsed labels file for ``user_id``; the returned token fetches it back."""
    staged = StagedLabels(secrets.token_urlsafe(16), name, data, n_rows, n_classes)
    cache.set(
        _key(user_id, staged.token),
        {"name": name, "data": data, "n_rows": n_rows, "n_classes": n_classes},
        timeout=STAGED_FOR_SECONDS,
    )
    return staged


def labels_staged(*, user_id: int, token: str) -> StagedLabels | None:
    """The file ``user_id`` staged under ``token``, or ``None`` (expired, never staged, or someone else's)."""
    if not token or len(token) > 64:
        return None
    kept = cache.get(_key(user_id, token))
    if not isinstance(kept, dict):
        return None
    return StagedLabels(token, str(kept["name"]), bytes(kept["data"]), int(kept["n_rows"]), int(kept["n_classes"]))


def labels_unstage(*, user_id: int, token: str) -> None:
    """Forget a staged file (the competition was created from it)."""
    cache.delete(_key(user_id, token))
