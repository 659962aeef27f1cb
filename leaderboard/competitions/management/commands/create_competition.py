"""``manage.py create_competition SLUG (--labels PATH | --solution PATH) [--data-file PATH [DESCRIPTION]] [...]``:
a competition from a labelled ``id,label`` CSV or a Kaggle solution file, with the files participants download."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from leaderboard.competitions.management import options as opt
from leaderboard.competitions.services import add_data_file, competition_create
from leaderboard.errors import CompetitionConfigError, DataFileError


class Command(BaseCommand):
    help = (
        "Create a competition from a labels CSV with header id,label (labels are integers 0..K-1), or from Kaggle's "
        "solution file (id, the target column(s), Usage = Public/Private/Ignored: the split is the file's)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        hidden = parser.add_mutually_exclusive_group(required=True)
        hidden.add_argument("--labels", help="path of the id,label CSV (the split is drawn: --public-fraction)")
        hidden.add_argument(
            "--solution",
            help="path of a Kaggle solution file: id, the target column(s) (integer labels, or one-hot columns), "
            "Usage = Public, Private or Ignored (Ignored rows are predicted but scored on neither board)",
        )
        parser.add_argument(
            "--data-file", nargs="+", action="append", default=[], metavar="PATH [DESCRIPTION]",
            help="a file participants download (train set, test features, ...), named as the file is, with an "
            "optional description; repeat for more files. Whatever it holds is public to every participant.",
        )
        parser.add_argument(
            "--features", default=None,
            help="path of the hidden test features (id,f1,...,fd CSV): participants then upload ONNX models",
        )
        parser.add_argument("--metric", default="binary_logloss")
        parser.add_argument("--decimals", type=opt.optional_int, default=5, help="released decimals; 'none' = full")
        parser.add_argument("--public-fraction", type=float, default=None,
                            help="share of the rows on the public board (default 0.3; not with --solution)")
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
        option = "--labels" if options["labels"] else "--solution"
        path = Path(options["labels"] or options["solution"])
        if not path.is_file():
            raise CommandError(f"{option}: no such file {path}")
        if options["solution"] and options["public_fraction"] is not None:
            raise CommandError("--public-fraction: the solution file's Usage column sets the split; leave it out")
        data_files = self._data_files(options["data_file"])
        hidden_bytes = path.read_bytes()
        for data_path, _description in data_files:
            if data_path.stat().st_size == len(hidden_bytes) and data_path.read_bytes() == hidden_bytes:
                self.stderr.write(f"warning: --data-file {data_path} is the {option[2:]} file itself: every "
                                  "participant may download the hidden labels")
        features_path = Path(options["features"]) if options["features"] else None
        if features_path is not None and not features_path.is_file():
            raise CommandError(f"--features: no such file {features_path}")
        defenses = opt.defense_chain(options["defenses"])
        description = opt.description(options) or ""
        host = opt.host_user(options["host"])
        try:
            with transaction.atomic():  # a refused data file leaves no competition behind
                competition = competition_create(
                    slug=options["slug"],
                    labels_csv=hidden_bytes if options["labels"] else None,
                    solution_csv=hidden_bytes if options["solution"] else None,
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
                stored = []
                for data_path, file_description in data_files:
                    with data_path.open("rb") as stream:
                        stored.append(add_data_file(competition, data_path.name, stream, file_description))
        except (CompetitionConfigError, DataFileError) as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"created competition {competition.slug!r}: {competition.n_rows} rows, {competition.n_classes} classes, "
            f"metric {competition.metric}"
            + (f", takes ONNX models on {competition.n_features} features" if competition.takes_models else "")
        )
        if options["solution"]:
            self.stdout.write(f"split from the solution file: {self._usage_counts(competition)}")
        for data_file in stored:
            self.stdout.write(f"data file {data_file.name}: {data_file.size:,} bytes, sha256 {data_file.sha256}")

    @staticmethod
    def _data_files(given: list[list[str]]) -> list[tuple[Path, str]]:
        files = []
        for values in given:
            if len(values) > 2:
                raise CommandError(f"--data-file takes a path and at most one description, got {len(values)} values "
                                   f"({' '.join(values)!r}); quote a description that has spaces")
            data_path = Path(values[0])
            if not data_path.is_file():
                raise CommandError(f"--data-file: no such file {data_path}")
            files.append((data_path, values[1] if len(values) == 2 else ""))
        names = [data_path.name for data_path, _ in files]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise CommandError(f"--data-file: two files are named {repeated[0]!r} (participants see the file names)")
        return files

    @staticmethod
    def _usage_counts(competition: Any) -> str:
        from leaderboard.competitions.models import HiddenTestData

        hidden = HiddenTestData.objects.get(competition=competition)
        ignored = hidden.ignored_mask
        n_ignored = 0 if ignored is None else int(ignored.sum())
        n_public = int(hidden.public_mask.sum()) if ignored is None else int((hidden.public_mask & ~ignored).sum())
        return (f"{n_public} Public, {competition.n_rows - n_public - n_ignored} Private, {n_ignored} Ignored "
                f"(public fraction {competition.public_fraction:.4g})")
