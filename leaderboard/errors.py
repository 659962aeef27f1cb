"""Errors the site's services raise on purpose. The API maps each to one HTTP answer in one place
(``leaderboard.api.exception_handlers``); the web pages show ``message``.

Every message is safe to show to the caller: it never holds a hidden label or a raw score.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


class ApplicationError(Exception):
    """Base class: ``message`` for people, ``extra`` for machine-readable fields of the error answer."""

    status_code = 400

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class InvalidUpload(ApplicationError):
    """A malformed submission; ``line`` names the offending line (``None`` for file-level problems)."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message, extra={"line": line})
        self.line = line


class CompetitionNotOpen(ApplicationError):
    """The competition has not opened yet or has closed."""

    status_code = 403


class QuotaExceeded(ApplicationError):
    """Over the daily or total limit. ``resets_at`` is ``None`` when only the total limit applies."""

    status_code = 429

    def __init__(self, message: str, *, resets_at: datetime | None, remaining_today: int | None = 0) -> None:
        super().__init__(
            message,
            extra={"resets_at": resets_at.isoformat().replace("+00:00", "Z") if resets_at else None},
        )
        self.resets_at = resets_at
        self.remaining_today = remaining_today


class SelectionError(ApplicationError):
    """A final-submission selection that is not allowed (not scored, more than two, after the close)."""


class CompetitionConfigError(ApplicationError):
    """A host's competition settings (labels, metric, defense chain, ...) are invalid."""


class DataFileError(ApplicationError):
    """A data file a host attaches that is refused (a bad or taken name, a file that is not what its name says)."""


class DataFileTooLarge(DataFileError):
    """A data file over ``LEADERBOARD_MAX_DATA_FILE_BYTES``."""

    status_code = 413


class BoardNotAvailable(ApplicationError):
    """The private board before the close."""

    status_code = 403


class IdempotencyKeyReused(ApplicationError):
    """An ``Idempotency-Key`` the participant already used on this competition, sent with a different upload."""

    status_code = 422


class UsernameTaken(ApplicationError):
    """A host asked for a participant account whose name belongs to an account it did not make."""

    status_code = 409


class AuditRequestError(ApplicationError):
    """A leakage audit asked with options out of range (``field`` names the option)."""


class AuditBusy(ApplicationError):
    """Another audit of the competition is queued or running (``id`` and ``url`` name it)."""

    status_code = 409


class TeamError(ApplicationError):
    """A team request that is malformed (an empty or too long name, a missing field)."""


class TeamForbidden(ApplicationError):
    """A team action the caller may not take (not a member, the competition closed, the merger deadline past)."""

    status_code = 403


class TeamNotFound(ApplicationError):
    """No such team, user or invitation — or one the caller may not see (answered like a missing one)."""

    status_code = 404


class TeamConflict(ApplicationError):
    """A team action the current state refuses (a taken name, a user already in a team, a merge over quota)."""

    status_code = 409
