"""``manage.py sweep_submissions``: re-enqueue submissions stuck in queued or scoring."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from leaderboard.submissions.services import submissions_sweep


class Command(BaseCommand):
    help = "Re-enqueue submissions stuck in 'queued' or 'scoring' for longer than --older-than seconds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than", type=float, default=None,
            help="seconds a submission must have been stuck (default: LEADERBOARD_STUCK_AFTER)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        older = options["older_than"]
        result = submissions_sweep(stuck_after=timedelta(seconds=older) if older is not None else None)
        self.stdout.write(
            f"requeued {len(result.requeued)} scoring submission(s); "
            f"re-enqueued {len(result.reenqueued)} submission(s) in total"
        )
