# mypy: disable-error-code="var-annotated"
# (pyproject enables no django-stubs plugin, which is what infers model field types; see competitions/models.py.)
"""An upload of the ``kaggle`` command line: ``StartSubmissionUpload`` makes one (a secret token, kept as its
SHA-256 only), the command line PUTs its file to the URL naming the token, and ``CreateSubmission`` turns it
into a submission through the site's one upload service, keeping the description the participant gave."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from leaderboard.competitions.models import Competition
from leaderboard.submissions.models import Submission


class _CliUploadManager(models.Manager["CliUpload"]):
    """Every query leaves the file's bytes in the database; they are read as raw bytes when a submission is made."""

    def get_queryset(self) -> models.QuerySet[CliUpload]:
        return super().get_queryset().defer("content")


class CliUpload(models.Model):
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the upload token (never the token).")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cli_uploads")
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="cli_uploads")
    file_name = models.CharField(max_length=255)
    declared_size = models.PositiveBigIntegerField(default=0)
    # Null until the file arrives; emptied once it became a submission (which keeps what it keeps of it).
    # Written and read as raw bytes (leaderboard.blobs).
    content = models.BinaryField(null=True, blank=True, editable=False)
    size = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    received_at = models.DateTimeField(null=True, blank=True)
    submission = models.OneToOneField(
        Submission, on_delete=models.CASCADE, null=True, blank=True, related_name="cli_upload"
    )
    description = models.TextField(blank=True)

    user_id: int
    competition_id: int
    submission_id: int | None

    objects = _CliUploadManager()

    def __str__(self) -> str:
        return f"{self.file_name} ({self.user_id})"
