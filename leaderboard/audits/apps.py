"""App configuration of the audits app."""

from __future__ import annotations

from django.apps import AppConfig


class AuditsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.audits"
    label = "audits"
    verbose_name = "Leakage audits"

    def ready(self) -> None:
        # Registers the audit task, which the services publish by name (the task module imports them).
        from leaderboard.audits import tasks  # noqa: F401
