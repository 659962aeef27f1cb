"""App configuration of the screening app."""

from __future__ import annotations

from django.apps import AppConfig


class ScreeningConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.screening"
    label = "screening"
    verbose_name = "Sybil screen"

    def ready(self) -> None:
        # Registers the release task, which the services publish by name (the task module imports them).
        import leaderboard.screening.tasks  # noqa: F401
