"""``manage.py create_competition SLUG --labels PATH [...]``: a competition from a labelled ``id,label`` CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.competitions.management import options as opt
from leaderboard.competitions.services import competition_create
from leaderboard.errors import CompetitionConfigError


class Command(BaseCommand):
    help = "Create a competition from a labels CSV with header id,label (labels are integers 0..K-1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--labels", required=True, help="path of the id,label CSV")
        parser.add_argument(
            "--features", default=None,
            help="path of the hidden test features (id,f1,...,fd CSV): participants then upload ONNX models",
        )
        parser.add_argument("--metric", default="binary_logloss")
        parser.add_argument("--decimals", type=opt.optional_int, default=5, help="released decimals; 'none' = full")
        parser.add_argument("--public-fraction", type=float, default=0.3)
        parser.add_argument("--daily-limit", type=opt.optional_int, default=5, help="'none' = unlimited")
        parser.add_argument("--total-limit", type=opt.optional_int, default=None)
        parser.add_argument("--opens-at", default=None, help="ISO 8601 (default: now)")
        parser.add_argument("--closes-at", default=None, help="ISO 8601 (default: never)")
        parser.add_argument("--defenses", default="[]", help="defense chain as JSON")
        parser.add_argument("--disclose", default="", help="what participants are told about the defenses")
        parser.add_argument("--eps", type=float, default=1e-15)
        parser.add_argument("--arithmetic", default="float64", help="'float64' or 'mpfr:BITS'")
        parser.add_argument("--title", default="")
        parser.add_argument("--description", default=None, help="Markdown shown on the competition page")
        parser.add_argument("--description-file", default=None, help="read the Markdown description from a file")
        parser.add_argument("--host", default=None, help="username of the host (must exist)")
        parser.add_argument("--same-file-same-score", action="store_true")
        parser.add_argument("--also-report", default="", help="comma-separated metrics released beside the primary one")
        parser.add_argument(
            "--secret", type=int, default=None,
            help="fix the secret seed (split and defense randomness), e.g. to replay an offline game cell",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["labels"])
        if not path.is_file():
            raise CommandError(f"--labels: no such file {path}")
        features_path = Path(options["features"]) if options["features"] else None
        if features_path is not None and not features_path.is_file():
            raise CommandError(f"--features: no such file {features_path}")
        defenses = opt.defense_chain(options["defenses"])
        description = opt.description(options) or ""
        host = opt.host_user(options["host"])
        try:
            competition = competition_create(
                slug=options["slug"],
                labels_csv=path.read_bytes(),
                features_csv=None if features_path is None else features_path.read_bytes(),
                host=host,
                title=options["title"],
                description=description,
                metric=options["metric"],
                eps=options["eps"],
                score_decimals=options["decimals"],
                public_fraction=options["public_fraction"],
                daily_limit=options["daily_limit"],
                total_limit=options["total_limit"],
                opens_at=opt.moment(options["opens_at"], "--opens-at"),
                closes_at=opt.moment(options["closes_at"], "--closes-at"),
                arithmetic=options["arithmetic"],
                defenses=defenses,
                disclosed_defenses=options["disclose"],
                same_file_same_score=options["same_file_same_score"],
                also_report=opt.metric_list(options["also_report"]),
                secret=options["secret"],
            )
        except CompetitionConfigError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"created competition {competition.slug!r}: {competition.n_rows} rows, {competition.n_classes} classes, "
            f"metric {competition.metric}"
            + (f", takes ONNX models on {competition.n_features} features" if competition.takes_models else "")
        )
