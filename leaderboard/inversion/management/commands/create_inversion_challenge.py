"""``manage.py create_inversion_challenge SLUG [--budget Q] [...]``: the bundled label-only digits challenge."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.competitions.management import options as opt
from leaderboard.errors import CompetitionConfigError
from leaderboard.inversion.services import inversion_digits_create


class Command(BaseCommand):
    help = ("Create a model-inversion challenge on scikit-learn's digits: a label-only prediction endpoint of a "
            "target trained on digits 0-4, a per-participant query budget, reconstructions judged by an evaluator.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--budget", type=int, default=5000, help="prediction queries per participant")
        parser.add_argument("--seed", type=int, default=0, help="seeds the models and the reference attack")
        parser.add_argument("--title", default="")
        parser.add_argument("--daily-limit", type=opt.optional_int, default=5, help="submissions a day; 'none'")
        parser.add_argument("--total-limit", type=opt.optional_int, default=None)
        parser.add_argument("--closes-at", default=None, help="ISO 8601 (default: never)")
        parser.add_argument("--host", default=None, help="username of the host (must exist)")

    def handle(self, *args: Any, **options: Any) -> None:
        host = None
        if options["host"]:
            user_model = get_user_model()
            try:
                host = user_model.objects.get(username=options["host"])
            except user_model.DoesNotExist:
                raise CommandError(f"--host: no user named {options['host']!r}") from None
        try:
            challenge = inversion_digits_create(
                slug=options["slug"], query_budget=options["budget"], seed=options["seed"], host=host,
                title=options["title"], daily_limit=options["daily_limit"], total_limit=options["total_limit"],
                closes_at=opt.moment(options["closes_at"], "--closes-at"),
            )
        except CompetitionConfigError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"created model-inversion challenge {options['slug']!r}: {challenge.task.n_classes} private classes, "
            f"{challenge.query_budget} queries per participant; reference: {challenge.reference_note}"
        )
