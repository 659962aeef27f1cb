"""Option types shared by ``create_competition`` and ``update_competition`` (the same text means the same value)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

NONE_WORDS = {"none", "full", "never", ""}


def moment(text: str | None, option: str) -> datetime | None:
    """An ISO 8601 date-time (UTC when it names no zone); ``None`` for ``None``."""
    if text is None:
        return None
    parsed = parse_datetime(text)
    if parsed is None:
        raise CommandError(f"{option}: {text!r} is not an ISO 8601 date-time (e.g. 2026-12-31T23:59:00Z)")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


def optional_moment(text: str, option: str) -> datetime | None:
    """Like :func:`moment`, with ``none``/``never`` meaning no time at all (e.g. no closing)."""
    return None if text.strip().lower() in NONE_WORDS else moment(text, option)


def optional_int(text: str) -> int | None:
    """An integer, or ``None`` for ``none``/``full`` (no limit, full precision)."""
    return None if text.strip().lower() in NONE_WORDS else int(text)


def defense_chain(text: str, option: str = "--defenses") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{option} is not valid JSON: {exc}") from None


def metric_list(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def description(options: dict[str, Any]) -> str | None:
    """``--description TEXT`` or the contents of ``--description-file PATH`` (Markdown); ``None`` if neither."""
    text, path = options.get("description"), options.get("description_file")
    if text is not None and path is not None:
        raise CommandError("give --description or --description-file, not both")
    if path is None:
        return text
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"--description-file: cannot read {path}: {exc}") from None


def host_user(username: str | None) -> Any:
    """The user ``--host`` names (``None`` when not given); a name nobody has is a ``CommandError``."""
    if not username:
        return None
    from django.contrib.auth import get_user_model

    user_model = get_user_model()
    try:
        return user_model.objects.get(username=username)
    except user_model.DoesNotExist:
        raise CommandError(f"--host: no user named {username!r}") from None
