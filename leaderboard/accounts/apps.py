"""App configuration of the accounts app."""

from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.accounts"
    label = "accounts"
    verbose_name = "Accounts"
