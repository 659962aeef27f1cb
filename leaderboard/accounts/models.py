# mypy: disable-error-code="var-annotated"
# (no django-stubs plugin; see leaderboard/submissions/models.py)
"""Which host made which participant account, so that asking again returns the same account to that host
only (and never hands another person's token to a host)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ProvisionedAccount(models.Model):
    """A participant account made through the host API: API token only, no usable password."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="provisioned_account")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="provisioned_accounts"
    )
    created_at = models.DateTimeField(default=timezone.now)

    user_id: int
    created_by_id: int | None

    def __str__(self) -> str:
        return f"account {self.user_id} made by {self.created_by_id}"
