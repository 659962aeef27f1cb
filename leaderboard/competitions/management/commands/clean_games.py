"""``manage.py clean_games [--host USERNAME] [--dry-run]``: remove the competitions live games made (unlisted,
``game-`` + 20 hex digits), their submissions and the attacker accounts made for them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.competitions.cleanup import game_cells_remove


class Command(BaseCommand):
    help = (
        "Remove what live games left on this site: their unlisted game-… competitions with every submission, and "
        "the attacker accounts made for them (accounts that submitted anywhere else are kept)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=None, help="only the game competitions this user hosts")
        parser.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        host = None
        if options["host"] is not None:
            try:
                host = get_user_model().objects.get(username=options["host"])
            except get_user_model().DoesNotExist:
                raise CommandError(f"no user {options['host']!r}") from None
        done = game_cells_remove(host=host, dry_run=options["dry_run"])
        for slug in done.competitions:
            self.stdout.write(f"  {slug}")
        self.stdout.write(done.summary(dry_run=options["dry_run"]))
