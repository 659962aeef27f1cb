"""App configuration of the submissions app; loads the Celery app so the web process can enqueue."""

from __future__ import annotations

from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.submissions"
    label = "submissions"
    verbose_name = "Submissions"

    def ready(self) -> None:
        # Here rather than in leaderboard/__init__.py, which must stay empty so the pure scoring core never
        # drags Celery in; importing the app also makes it the default for the web process.
        from leaderboard import celery  # noqa: F401

        # Registers the scoring task, which the services publish by name (the task module imports them).
        from leaderboard.submissions import tasks  # noqa: F401
