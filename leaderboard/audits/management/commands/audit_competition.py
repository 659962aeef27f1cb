"""``manage.py audit_competition SLUG [--budget Q] [--accounts K[,K...]] [--json]``: the host's leakage audit, run in
this process (no worker needed) and stored like one started from the API, so the host page shows it too."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.audit import format_table
from leaderboard.audits.models import Audit, AuditStatus
from leaderboard.audits.services import DEFAULT_ACCOUNTS, MAX_ACCOUNTS, MAX_BUDGET, audit_request, audit_run
from leaderboard.competitions.models import Competition
from leaderboard.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Run the attack battery offline against the competition's own labels, split, chain and precision: label "
        "accuracy per attack against submissions on public and private rows, with the participants' quota "
        "marked, the accounts axis (labels read against the attacker's account count, beside the information bound), "
        "the honest-utility cost of the chain and a verdict worded as what the library's attacks found."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--budget", type=int, default=None,
                            help=f"most submissions an attack may make, 1..{MAX_BUDGET} (default: from the quota)")
        parser.add_argument("--accounts", type=_counts, default=None,
                            help="the account counts of the accounts axis, comma-separated, each 1.."
                            f"{MAX_ACCOUNTS:,} (the quota is per account; default "
                            f"{','.join(str(k) for k in DEFAULT_ACCOUNTS)})")
        parser.add_argument("--seed", type=int, default=0, help="seed of the attacks' random choices")
        parser.add_argument("--json", action="store_true", help="print the result as JSON instead of the table")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            competition = Competition.objects.get(slug=options["slug"])
        except Competition.DoesNotExist:
            raise CommandError(f"no competition {options['slug']!r}") from None
        try:
            audit = audit_request(competition=competition, budget=options["budget"], accounts=options["accounts"],
                                  seed=options["seed"], enqueue=False)
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        quiet = options["json"] or options["verbosity"] == 0
        audit_run(audit_id=audit.pk, echo=None if quiet else _echo)
        if not quiet:
            sys.stderr.write("\n")
        audit = Audit.objects.get(pk=audit.pk)
        if audit.status != AuditStatus.DONE:
            raise CommandError(f"audit {audit.pk} failed: {audit.error}")
        if options["json"]:
            self.stdout.write(json.dumps({"id": audit.pk, **(audit.result or {})}, indent=2))
        else:
            self.stdout.write(f"Leakage audit {audit.pk} of {competition.slug}")
            self.stdout.write(format_table(audit.result or {}))


def _counts(text: str) -> list[int]:
    """``"1,30,1000"`` → ``[1, 30, 1000]`` (range checks are the service's)."""
    try:
        return [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"accounts: whole numbers separated by commas, got {text!r}") from None


def _echo(fraction: float, step: str) -> None:
    sys.stderr.write(f"\r{100 * fraction:5.1f} %  {step[:70]:<70}")
    sys.stderr.flush()
