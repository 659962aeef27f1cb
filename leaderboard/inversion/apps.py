"""App configuration of the model-inversion challenges app."""

from __future__ import annotations

from django.apps import AppConfig


class InversionConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.inversion"
    label = "inversion"
    verbose_name = "Model-inversion challenges"
