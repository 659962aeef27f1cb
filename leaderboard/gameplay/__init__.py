"""Games over the site's Celery workers: the task that plays one game unit (``tasks``) and the ``celery``
backend of ``leaderboard-game run --backend celery`` that sends units to it (``backend``).

The games package stays free of Celery: it finds the backend by name through the entry point
``leaderboard_lab.game_backends`` (``pyproject.toml``), and the task calls the pure :func:`games.units.play_unit`.
"""
