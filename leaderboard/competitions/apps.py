"""App configuration of the competitions app."""

from __future__ import annotations

from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.competitions"
    label = "competitions"
    verbose_name = "Competitions"
