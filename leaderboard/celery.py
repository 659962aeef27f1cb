"""The Celery application (``celery -A leaderboard worker`` finds it here).

``leaderboard/__init__.py`` stays empty on purpose: the pure scoring core is a subpackage of ``leaderboard``
and must be importable without Celery. The web process loads this module from an ``AppConfig.ready()``.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["leaderboard.submissions", "leaderboard.audits", "leaderboard.gameplay"])
