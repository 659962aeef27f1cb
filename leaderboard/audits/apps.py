"""App configuration of the audits app."""

from __future__ import annotations

from django.apps import AppConfig


class AuditsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.audits"
    label = "audits"
    verbose_name = "Leakage audits"
