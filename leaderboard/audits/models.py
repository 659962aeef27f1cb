# mypy: disable-error-code="var-annotated"
# (pyproject enables no django-stubs plugin, which is what infers model field types; see competitions/models.py.)
"""One leakage audit of a competition: what was asked, how far it got, and what it found (host only)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from leaderboard.competitions.models import Competition


class AuditStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


ACTIVE_STATUSES = (AuditStatus.QUEUED, AuditStatus.RUNNING)


class Audit(models.Model):
    """``result`` is :meth:`games.audit.AuditReport.as_dict` once ``status`` is ``done``; ``error`` says why
    when it is ``failed``. ``progress`` (0 to 1) and ``step`` are written by the running task, ``heartbeat_at``
    by its heartbeat thread: a running audit whose heartbeat stopped is failed by the next read
    (:func:`leaderboard.audits.services.audits_expire`), so no audit stays "running" after its worker died.
    ``budget`` ``None``: the audit's default for the competition's quota."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="audits")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=AuditStatus.choices, default=AuditStatus.QUEUED, db_index=True)
    budget = models.PositiveIntegerField(null=True, blank=True)
    accounts = models.PositiveSmallIntegerField(default=1)
    #: The account counts of the accounts axis (smallest first; ``accounts`` is the smallest, the one the battery's
    #: budget ladder plays with). Empty on audits stored before the axis: ``[accounts]``.
    account_counts = models.JSONField(default=list, blank=True)
    seed = models.PositiveIntegerField(default=0)
    progress = models.FloatField(default=0.0)
    step = models.CharField(max_length=200, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    competition_id: int

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"audit {self.pk} of {self.competition_id} ({self.status})"

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def percent(self) -> int:
        """Progress as a whole percentage (100 only when done)."""
        if self.status == AuditStatus.DONE:
            return 100
        return min(99, max(0, int(100 * self.progress)))

    @property
    def counts(self) -> list[int]:
        """The account counts the audit tries (``[accounts]`` for an audit stored before the accounts axis)."""
        return [int(k) for k in self.account_counts] if self.account_counts else [int(self.accounts)]

    @property
    def verdict(self) -> str:
        return str((self.result or {}).get("verdict", ""))
