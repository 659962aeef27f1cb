# mypy: disable-error-code="var-annotated"
# (no django-stubs plugin; see leaderboard/submissions/models.py)
"""Which host made which participant account, so that asking again returns the same account to that host
only (and never hands another person's token to a host); and each account's API token, kept as a digest."""

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


class ApiToken(models.Model):
    """An account's API token as the database keeps it (``leaderboard.accounts.tokens``): its SHA-256 digest
    and its first characters, never the token itself. One per account; issuing a new one replaces it."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token")
    prefix = models.CharField(max_length=12, db_index=True, help_text="the token's first characters (not secret)")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, hex")
    created_at = models.DateTimeField(default=timezone.now)

    user_id: int

    def __str__(self) -> str:
        return f"API token {self.prefix}… of account {self.user_id}"
