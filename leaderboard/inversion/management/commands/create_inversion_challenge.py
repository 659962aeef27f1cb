"""``manage.py create_inversion_challenge SLUG [--budget Q] [...]``: a label-only model-inversion challenge, the
bundled digits one, or the host's own (``--target FILE --evaluator FILE [--public FILE]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.competitions.management import options as opt
from leaderboard.errors import CompetitionConfigError
from leaderboard.inversion.models import InversionChallenge
from leaderboard.inversion.services import (
    inversion_custom_create,
    inversion_digits_create,
    parse_image_shape,
    split_class_names,
)
from scoring.inversion_files import MAX_MODEL_BYTES, MAX_PUBLIC_BYTES


def _read(path: str | None, option: str, limit: int) -> bytes | None:
    if path is None:
        return None
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise CommandError(f"{option} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CommandError(f"{option} {path}: larger than the {limit} bytes allowed")
    return data


class Command(BaseCommand):
    help = ("Create a model-inversion challenge: a label-only prediction endpoint of a target model, a "
            "per-participant query budget, reconstructions judged by an evaluator. Without --target: the bundled "
            "challenge on scikit-learn's digits (target trained on digits 0-4). With --target and --evaluator: "
            "your own scikit-learn MLPs, exported with `python -m attacks.inversion.export model.pkl out.npz`.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--budget", type=int, default=5000, help="prediction queries per participant")
        parser.add_argument("--seed", type=int, default=0, help="seeds the models and the reference attack")
        parser.add_argument("--title", default="")
        parser.add_argument("--daily-limit", type=opt.optional_int, default=5, help="submissions a day; 'none'")
        parser.add_argument("--total-limit", type=opt.optional_int, default=None)
        parser.add_argument("--closes-at", default=None, help="ISO 8601 (default: never)")
        parser.add_argument("--host", default=None, help="username of the host (must exist)")
        own = parser.add_argument_group("your own challenge")
        own.add_argument("--target", default=None, help="the target model's .npz (its labels are all it releases)")
        own.add_argument("--evaluator", default=None, help="the evaluation model's .npz (judges reconstructions)")
        own.add_argument("--public", default=None,
                         help="public images (.npy or CSV, one image a row) for the reference attacker's generator; "
                              "without them the reference attack is skipped")
        own.add_argument("--image-shape", default=None, help="HEIGHTxWIDTH (default: square, else one row)")
        own.add_argument("--pixel-range", nargs=2, type=float, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                         help="the values participants may send (default 0 1)")
        own.add_argument("--class-names", nargs="+", default=None, help="one name per class, in order (or a,b,c)")

    def handle(self, *args: Any, **options: Any) -> None:
        host = opt.host_user(options["host"])
        common = {"slug": options["slug"], "query_budget": options["budget"], "seed": options["seed"], "host": host,
                  "title": options["title"], "daily_limit": options["daily_limit"],
                  "total_limit": options["total_limit"],
                  "closes_at": opt.moment(options["closes_at"], "--closes-at")}
        custom = [o for o in ("target", "evaluator", "public", "image_shape", "class_names") if options[o]]
        try:
            challenge = self._custom(options, common) if custom else inversion_digits_create(**common)
        except CompetitionConfigError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"created model-inversion challenge {options['slug']!r}: {challenge.task.n_classes} private classes, "
            f"{challenge.query_budget} queries per participant; reference: {challenge.reference_note}"
        )

    def _custom(self, options: dict[str, Any], common: dict[str, Any]) -> InversionChallenge:
        if not options["target"] or not options["evaluator"]:
            raise CommandError("your own challenge needs both --target and --evaluator (.npz files)")
        target = _read(options["target"], "--target", MAX_MODEL_BYTES)
        evaluator = _read(options["evaluator"], "--evaluator", MAX_MODEL_BYTES)
        public = _read(options["public"], "--public", MAX_PUBLIC_BYTES)
        assert target is not None and evaluator is not None
        shape = None if options["image_shape"] is None else parse_image_shape(options["image_shape"])
        return inversion_custom_create(
            target_npz=target, evaluator_npz=evaluator, public=public,
            target_name=f"--target {Path(options['target']).name}",
            evaluator_name=f"--evaluator {Path(options['evaluator']).name}",
            public_name=f"--public {Path(options['public']).name}" if options["public"] else "--public",
            image_shape=shape, pixel_range=tuple(options["pixel_range"]),
            class_names=split_class_names(options["class_names"]), **common,
        )
