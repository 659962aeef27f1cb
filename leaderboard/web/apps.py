"""The server-rendered HTML pages of the site (usable without JavaScript)."""

from __future__ import annotations

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "leaderboard.web"
    label = "web"
    verbose_name = "Web pages"
