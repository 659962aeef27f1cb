"""Writes of the ``kaggle`` command line's uploads: start one (the site's open and quota checks first), receive its
file at the upload URL, and link the submission made from it, with its description.

The token is the only key to an upload's URL (the command line PUTs there without credentials, as it does to a
cloud bucket's signed URL), so it is 256 random bits kept as a SHA-256 only, and an upload lives an hour.
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from leaderboard.blobs import blob_read, blob_write
from leaderboard.competitions.models import Competition
from leaderboard.errors import ApplicationError, InvalidUpload
from leaderboard.kaggle_cli.models import CliUpload
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import submission_admissible
from leaderboard.uploads import too_large, upload_limit

#: How long an upload's URL and token stay good after ``StartSubmissionUpload``.
UPLOAD_TTL = timedelta(hours=1)
#: Uploads one account may have started and not yet submitted (each may hold a file of the upload limit).
MAX_PENDING_UPLOADS = 5
#: The longest submission description (``kaggle competitions submit -m``).
MAX_DESCRIPTION_LENGTH = 1000
MAX_FILE_NAME_LENGTH = 255


class UploadNotFound(ApplicationError):
    """No upload has this token (never made, expired, or someone else's)."""

    status_code = 404


class TooManyUploads(ApplicationError):
    status_code = 429


class UploadAlreadySubmitted(ApplicationError):
    status_code = 409


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _refuse_controls(text: str, what: str, allowed: str = "") -> None:
    for char in text:
        if unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp"} and char not in allowed:
            raise InvalidUpload(f"the {what} holds the control character U+{ord(char):04X}")


def upload_file_name(name: str) -> str:
    """The file name as given (its last path part: the command line sends the base name), checked.

    >>> upload_file_name("preds/submission.csv")
    'submission.csv'
    """
    cleaned = unicodedata.normalize("NFC", name.replace("\\", "/").rsplit("/", 1)[-1]).strip()
    if not cleaned:
        raise InvalidUpload("the upload needs a file name")
    if len(cleaned) > MAX_FILE_NAME_LENGTH:
        raise InvalidUpload(f"the file name is {len(cleaned)} characters long; at most {MAX_FILE_NAME_LENGTH}")
    _refuse_controls(cleaned, "file name")
    return cleaned


def submission_description(text: str) -> str:
    """The description checked: plain text (lines and tabs allowed), at most :data:`MAX_DESCRIPTION_LENGTH`."""
    cleaned = text.strip()
    if len(cleaned) > MAX_DESCRIPTION_LENGTH:
        raise InvalidUpload(
            f"the description is {len(cleaned)} characters long; at most {MAX_DESCRIPTION_LENGTH}"
        )
    _refuse_controls(cleaned, "description", allowed="\n\t")
    return cleaned


def cli_upload_start(
    *, user: Any, competition: Competition, file_name: str, declared_size: int, now: datetime | None = None
) -> tuple[CliUpload, str]:
    """A new upload and its token; refused as a submission would be (closed competition, spent quota), for a file
    declared over the upload limit, or with :data:`MAX_PENDING_UPLOADS` uploads of the account still pending."""
    now = now or timezone.now()
    submission_admissible(competition=competition, participant=user, now=now)
    name = upload_file_name(file_name)
    limit = upload_limit()
    if declared_size < 0:
        raise InvalidUpload("contentLength must not be negative")
    if declared_size > limit:
        raise too_large(declared_size, limit)
    stale = now - UPLOAD_TTL
    CliUpload.objects.filter(submission__isnull=True, created_at__lt=stale).delete()
    if CliUpload.objects.filter(user=user, submission__isnull=True).count() >= MAX_PENDING_UPLOADS:
        raise TooManyUploads(
            f"you have {MAX_PENDING_UPLOADS} uploads started and not submitted; submit them or wait an hour for "
            "them to expire"
        )
    token = secrets.token_urlsafe(32)
    upload = CliUpload.objects.create(
        digest=token_digest(token), user=user, competition=competition, file_name=name,
        declared_size=declared_size, created_at=now,
    )
    return upload, token


def _live(queryset: Any, now: datetime) -> Any:
    return queryset.filter(created_at__gte=now - UPLOAD_TTL)


def cli_upload_receive(*, token: str, data: bytes, now: datetime | None = None) -> CliUpload:
    """Keep the file PUT to an upload's URL (a repeated PUT replaces it, as a retried upload does) until the
    upload becomes a submission."""
    now = now or timezone.now()
    with transaction.atomic():
        upload = _live(CliUpload.objects.select_for_update(), now).filter(digest=token_digest(token)).first()
        if upload is None:
            raise UploadNotFound("no upload has this URL (it expired, or was never made); run the submit again")
        if upload.submission_id is not None:
            raise UploadAlreadySubmitted("this upload was already submitted; run the submit again for a new one")
        blob_write(CliUpload, upload.pk, content=data)
        CliUpload.objects.filter(pk=upload.pk).update(size=len(data), received_at=now)
    upload.size, upload.received_at = len(data), now
    return upload


def cli_upload_for_submit(
    *, user: Any, competition: Competition, token: str, now: datetime | None = None
) -> CliUpload:
    """The caller's upload to ``competition`` named by ``token`` (one already submitted too: submitting again
    answers with the same submission)."""
    now = now or timezone.now()
    found = CliUpload.objects.filter(digest=token_digest(token), user=user, competition=competition).first()
    if found is None or (found.submission_id is None and found.created_at < now - UPLOAD_TTL):
        raise UploadNotFound(
            "no upload of yours to this competition has this token (it expired, or was never made); run the "
            "submit again"
        )
    return found


def cli_upload_bytes(upload: CliUpload) -> bytes:
    """The file that arrived at the upload's URL; refused when none did."""
    if upload.received_at is None:
        raise InvalidUpload("the file never arrived at the upload URL; run the submit again")
    return blob_read(CliUpload, upload.pk, "content") or b""


def cli_upload_attach(*, upload: CliUpload, submission: Submission, description: str) -> None:
    """Link the submission made from the upload (with its description) and drop the upload's copy of the file.
    A second call for the same upload (a repeated ``CreateSubmission``) changes nothing."""
    CliUpload.objects.filter(pk=upload.pk, submission__isnull=True).update(
        submission=submission, description=description, content=None
    )
