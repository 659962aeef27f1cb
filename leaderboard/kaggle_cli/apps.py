"""App configuration of the kaggle_cli app."""

from __future__ import annotations

from django.apps import AppConfig


class KaggleCliConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.kaggle_cli"
    label = "kaggle_cli"
    verbose_name = "Kaggle command line"
