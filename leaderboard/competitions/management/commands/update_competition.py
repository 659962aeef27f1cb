"""``manage.py update_competition SLUG [...]``: change a competition's settings after creation.

Only the options given change; each is validated exactly as ``create_competition`` validates it (the same
service checks), and nothing is saved if any is refused. The hidden set, its split, the metric, eps and the
arithmetic are fixed at creation.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.competitions.management import options as opt
from leaderboard.competitions.models import Competition
from leaderboard.competitions.services import UPDATABLE_FIELDS, competition_update
from leaderboard.errors import CompetitionConfigError


class Command(BaseCommand):
    help = (
        "Change a competition's settings after creation; only the options given change. Limits and --decimals "
        "take 'none' (no limit, full precision), --closes-at takes 'never'. Scores already released keep their "
        "text; a new chain or precision applies from the next scoring on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        keep = argparse.SUPPRESS  # an option not given is not in the options at all: it stays unchanged
        parser.add_argument("slug")
        parser.add_argument("--title", default=keep)
        parser.add_argument("--description", default=keep, help="Markdown shown on the competition page")
        parser.add_argument("--description-file", default=keep, help="read the Markdown description from a file")
        parser.add_argument("--decimals", type=opt.optional_int, default=keep, help="released decimals; 'none' = full")
        parser.add_argument("--daily-limit", type=opt.optional_int, default=keep, help="'none' = unlimited")
        parser.add_argument("--total-limit", type=opt.optional_int, default=keep, help="'none' = unlimited")
        parser.add_argument("--opens-at", default=keep, help="ISO 8601")
        parser.add_argument("--closes-at", default=keep, help="ISO 8601, or 'never'")
        parser.add_argument("--defenses", default=keep, help="the new defense chain as JSON ('[]' for none)")
        parser.add_argument("--disclose", default=keep, help="what participants are told about the defenses")
        parser.add_argument("--also-report", default=keep, help="comma-separated metrics ('' for none)")
        parser.add_argument("--same-file-same-score", action=argparse.BooleanOptionalAction, default=keep)
        parser.add_argument("--max-team-size", type=opt.optional_int, default=keep, help="'none' = no limit")
        parser.add_argument("--listed", action=argparse.BooleanOptionalAction, default=keep,
                            help="shown on the home page and the API's list (--no-listed: reached by URL only)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            competition = Competition.objects.get(slug=options["slug"])
        except Competition.DoesNotExist:
            raise CommandError(f"no competition {options['slug']!r}") from None
        changes = self._changes(options)
        if not changes:
            raise CommandError("nothing to change: give at least one option (see --help)")
        before = {name: getattr(competition, name) for name in changes}
        try:
            updated = competition_update(competition=competition, **changes)
        except CompetitionConfigError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"updated competition {updated.slug!r}:")
        for name in changes:
            self.stdout.write(f"  {name}: {_shown(before[name])} -> {_shown(getattr(updated, name))}")

    def _changes(self, options: dict[str, Any]) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        description = opt.description(options)
        if description is not None:
            changes["description"] = description
        simple = {"title": "title", "decimals": "score_decimals", "daily_limit": "daily_limit",
                  "total_limit": "total_limit", "disclose": "disclosed_defenses",
                  "same_file_same_score": "same_file_same_score", "max_team_size": "max_team_size",
                  "listed": "listed"}
        changes.update({field: options[option] for option, field in simple.items() if option in options})
        if "opens_at" in options:
            changes["opens_at"] = opt.moment(options["opens_at"], "--opens-at")
        if "closes_at" in options:
            changes["closes_at"] = opt.optional_moment(options["closes_at"], "--closes-at")
        if "defenses" in options:
            changes["defenses"] = opt.defense_chain(options["defenses"])
        if "also_report" in options:
            changes["also_report"] = opt.metric_list(options["also_report"])
        assert set(changes) <= set(UPDATABLE_FIELDS)
        return changes


def _shown(value: Any) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value)
    if isinstance(value, str) and len(value) > 60:
        return repr(value[:57] + "...")
    return repr(value) if isinstance(value, str) else str(value)
