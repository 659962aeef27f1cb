"""Writes on model-inversion challenges: create one, and answer a prediction request under the query budget.

The budget is charged by one conditional UPDATE (``used + m <= budget``), so concurrent requests can never
spend more than the budget between them: each either moves the counter within the limit or changes nothing.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from leaderboard.competitions.models import Competition
from leaderboard.competitions.services import competition_create
from leaderboard.errors import ApplicationError, CompetitionConfigError, CompetitionNotOpen, InvalidUpload
from leaderboard.inversion.models import InversionChallenge, PredictionBudget
from scoring import SubmissionError
from scoring.inversion import InversionTask, MlpClassifier, check_inputs, predict_labels


class QueryBudgetExhausted(ApplicationError):
    """The prediction request needs more queries than the participant has left (``queries_left``)."""

    status_code = 429

    def __init__(self, message: str, *, queries_left: int, query_budget: int) -> None:
        super().__init__(message, extra={"queries_left": queries_left, "query_budget": query_budget})
        self.queries_left = queries_left


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array, dtype=np.float64), allow_pickle=False)
    return buffer.getvalue()


def inversion_challenge_create(
    *,
    slug: str,
    target: MlpClassifier,
    evaluator: MlpClassifier,
    task: InversionTask,
    query_budget: int = 5000,
    class_names: list[str] | None = None,
    host: Any = None,
    title: str = "",
    description: str = "",
    daily_limit: int | None = 5,
    total_limit: int | None = None,
    closes_at: datetime | None = None,
    reference: np.ndarray | None = None,
    reference_note: str = "",
    release_per_class: bool = False,
) -> InversionChallenge:
    """A competition whose hidden "rows" are the private classes (id ``class_c``, label ``c``, all public): a
    submission's released score is the attack accuracy, the share of classes the evaluator confirms.
    ``release_per_class`` also shows a participant which classes the evaluator recognised (off by default)."""
    if target.n_features != task.n_features or evaluator.n_features != task.n_features:
        raise CompetitionConfigError(f"target and evaluator must take {task.n_features} features")
    if target.n_classes != task.n_classes or evaluator.n_classes != task.n_classes:
        raise CompetitionConfigError(f"target and evaluator must have {task.n_classes} classes")
    if task.n_features != task.image_shape[0] * task.image_shape[1]:
        raise CompetitionConfigError(f"image shape {task.image_shape} does not hold {task.n_features} features")
    if query_budget < 1:
        raise CompetitionConfigError("the query budget must be at least 1")
    # Zero-padded past 10 classes, so the canonical order (by id) is the class order the reconstructions have.
    width = len(str(task.n_classes - 1))
    labels_csv = "id,label\n" + "".join(f"class_{c:0{width}d},{c}\n" for c in range(task.n_classes))
    with transaction.atomic():
        competition = competition_create(
            slug=slug, labels_csv=labels_csv, host=host, title=title, description=description, metric="accuracy",
            score_decimals=5, public_fraction=1.0, daily_limit=daily_limit, total_limit=total_limit,
            closes_at=closes_at,
        )
        return InversionChallenge.objects.create(
            competition=competition, query_budget=query_budget, n_features=task.n_features,
            image_height=task.image_shape[0], image_width=task.image_shape[1], pixel_low=task.low,
            pixel_high=task.high, max_batch=task.max_batch,
            class_names=list(class_names or [str(c) for c in range(task.n_classes)]),
            target_npz=target.to_bytes(), evaluator_npz=evaluator.to_bytes(),
            reference_npy=None if reference is None else _npy(reference), reference_note=reference_note[:400],
            release_per_class=release_per_class,
        )


@dataclass(frozen=True)
class PredictionAnswer:
    labels: list[int]
    queries_used: int
    query_budget: int

    @property
    def queries_left(self) -> int:
        return self.query_budget - self.queries_used


def _check_open(competition: Competition, now: datetime) -> None:
    if not competition.is_open(now):
        raise CompetitionNotOpen("the challenge is not open: its prediction endpoint answers only while it is")


def inversion_predict(
    *, challenge: InversionChallenge, participant: Any, inputs: Any, now: datetime | None = None
) -> PredictionAnswer:
    """Validate the inputs (a malformed request costs nothing), charge one query per input atomically, and
    answer the target's predicted classes — labels only."""
    _check_open(challenge.competition, now or timezone.now())
    task = challenge.task
    try:
        rows = check_inputs(task, inputs)
    except SubmissionError as exc:
        raise InvalidUpload(str(exc)) from None
    count = len(rows)
    budget = challenge.query_budget
    row, _ = PredictionBudget.objects.get_or_create(challenge=challenge, participant=participant)
    charged = PredictionBudget.objects.filter(pk=row.pk, used__lte=budget - count).update(
        used=F("used") + count, updated_at=timezone.now()
    )
    if charged != 1:
        used = PredictionBudget.objects.values_list("used", flat=True).get(pk=row.pk)
        left = max(budget - used, 0)
        raise QueryBudgetExhausted(
            f"this request needs {count} queries but {left} of your {budget} are left", queries_left=left,
            query_budget=budget,
        )
    used = PredictionBudget.objects.values_list("used", flat=True).get(pk=row.pk)
    return PredictionAnswer(predict_labels(challenge.target, task, rows.tolist()), used, budget)


DIGITS_DESCRIPTION = (
    "A label-only model-inversion challenge on scikit-learn's 8×8 digits (after paper 002, BREP-MI, Appendix "
    "B.1). The host's target model was trained on the private digits 0–4; its prediction endpoint "
    "(`POST /api/v1/competitions/{slug}/predict/`) answers only the predicted class of each 8×8 image you send "
    "(64 grey levels in [0, 16], row by row), within your query budget. The public digits 5–9 are yours to "
    "learn from (`sklearn.datasets.load_digits`). Submit one image per private class "
    '(`{{"reconstructions": [[64 numbers] × 5]}}`, class 0 first); the score is the share of classes the '
    "host's separate evaluation classifier recognises."
)


def inversion_digits_create(
    *, slug: str, query_budget: int = 5000, seed: int = 0, host: Any = None, title: str = "",
    daily_limit: int | None = 5, total_limit: int | None = None, closes_at: datetime | None = None,
    reference_budget: int | None = None,
) -> InversionChallenge:
    """The bundled digits challenge: target and evaluator trained on private digits 0–4 (seeded), and the
    reference attack (BREP-MI on the public digits' generator, through the same prediction code, with the
    participants' budget) run once so the host's page shows what a budget buys."""
    from attacks.inversion import LocalLabelOracle, brep_mi
    from attacks.inversion.digits import PRIVATE_DIGITS, build_digits_challenge
    from scoring.inversion import evaluate_reconstructions

    bundle = build_digits_challenge(seed=seed)
    budget = reference_budget or query_budget
    result = brep_mi(LocalLabelOracle(bundle.target, bundle.task, budget=budget), bundle.generator, seed=seed)
    verdict = evaluate_reconstructions(bundle.evaluator, result.reconstructions)
    note = (f"BREP-MI (paper 002, Algorithm 1) in a 16-dimensional PCA-Gaussian latent space of the public digits "
            f"5–9, {result.queries} label queries, seed {seed}: the evaluator recognises {verdict.recovered} of "
            f"{len(verdict.hits)} classes (paper 002 on MNIST: 4 of 5)")
    return inversion_challenge_create(
        slug=slug, target=bundle.target, evaluator=bundle.evaluator, task=bundle.task, query_budget=query_budget,
        class_names=[f"digit {d}" for d in PRIVATE_DIGITS], host=host, title=title or "Invert the digits",
        description=DIGITS_DESCRIPTION.replace("{slug}", slug), daily_limit=daily_limit, total_limit=total_limit,
        closes_at=closes_at, reference=result.reconstructions, reference_note=note,
    )


CUSTOM_DESCRIPTION = (
    "A label-only model-inversion challenge (after paper 002, BREP-MI). The host's target model was trained on "
    "private classes ({classes}); its prediction endpoint (`POST /api/v1/competitions/{slug}/predict/`) answers "
    "only the predicted class of each {height}×{width} image you send ({n_features} values in [{low:g}, {high:g}], "
    "row by row), within your query budget. Submit one image per private class "
    '(`{{"reconstructions": [[{n_features} numbers] × {n_classes}]}}`, class 0 first); the score is the share of '
    "classes the host's separate evaluation classifier recognises."
)
#: The reference attack on a host's own challenge spends at most this many queries (it runs during creation).
REFERENCE_QUERY_CAP = 20_000
#: One prediction request carries at most this many numbers (large images: fewer inputs a request).
MAX_BATCH_VALUES = 256 * 1024


def parse_image_shape(text: str) -> tuple[int, int]:
    """``"28x28"`` (or ``28×28``) as ``(28, 28)``; :class:`CompetitionConfigError` otherwise."""
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise CompetitionConfigError(f"image shape: expected HEIGHTxWIDTH such as 8x8, got {text!r}")
    height, width = (int(p) for p in parts)
    if not (1 <= height <= 65_536 and 1 <= width <= 65_536):
        raise CompetitionConfigError(f"image shape: {text!r} is out of range")
    return height, width


def split_class_names(values: list[str] | None) -> list[str] | None:
    """Class names as given on a command line or a form: several values, or one comma-separated value."""
    if not values:
        return None
    if len(values) == 1 and "," in values[0]:
        return [name.strip() for name in values[0].split(",")]
    return list(values)


def _square_or_row(n_features: int) -> tuple[int, int]:
    side = math.isqrt(n_features)
    return (side, side) if side * side == n_features else (1, n_features)


def inversion_custom_create(
    *, slug: str, target_npz: bytes, evaluator_npz: bytes, public: bytes | None = None,
    target_name: str = "target", evaluator_name: str = "evaluator", public_name: str = "public data",
    image_shape: tuple[int, int] | None = None, pixel_range: tuple[float, float] = (0.0, 1.0),
    class_names: list[str] | None = None, query_budget: int = 5000, max_batch: int = 256, seed: int = 0,
    host: Any = None, title: str = "", daily_limit: int | None = 5, total_limit: int | None = None,
    closes_at: datetime | None = None,
) -> InversionChallenge:
    """A host's own challenge from files: the target and the evaluator as arrays-only ``.npz`` (read strictly,
    never unpickled: :func:`scoring.inversion_files.read_mlp_npz`) and, optionally, public images that fit the
    reference attacker's generator (BREP-MI then runs once, as on the digits, within
    :data:`REFERENCE_QUERY_CAP` queries); without them the reference attack is skipped and the host's page says
    so. Every problem is a :class:`CompetitionConfigError` naming the file."""
    from scoring.inversion_files import ModelFileError, read_mlp_npz, read_public_images

    if Competition.objects.filter(slug=slug).exists():  # before the reference attack spends its time
        raise CompetitionConfigError(f"a competition with the slug {slug!r} already exists")
    low, high = pixel_range
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise CompetitionConfigError(f"the pixel range must be two finite numbers, low < high; got {low}, {high}")
    try:
        target = read_mlp_npz(target_npz, name=target_name)
        evaluator = read_mlp_npz(evaluator_npz, name=evaluator_name)
    except ModelFileError as exc:
        raise CompetitionConfigError(str(exc)) from None
    if evaluator.n_features != target.n_features:
        raise CompetitionConfigError(f"{evaluator_name}: takes {evaluator.n_features} inputs, {target_name} takes "
                                     f"{target.n_features}")
    if evaluator.n_classes != target.n_classes:
        raise CompetitionConfigError(f"{evaluator_name}: has {evaluator.n_classes} classes, {target_name} has "
                                     f"{target.n_classes}")
    shape = image_shape or _square_or_row(target.n_features)
    if shape[0] < 1 or shape[1] < 1 or shape[0] * shape[1] != target.n_features:
        raise CompetitionConfigError(f"image shape {shape[0]}x{shape[1]} does not hold the models' "
                                     f"{target.n_features} inputs")
    names = [str(c) for c in range(target.n_classes)] if not class_names else [str(n) for n in class_names]
    if len(names) != target.n_classes or any(not n.strip() or len(n) > 80 for n in names):
        raise CompetitionConfigError(f"class names: expected {target.n_classes} non-empty names of at most 80 "
                                     f"characters, got {len(names)}")
    task = InversionTask(n_features=target.n_features, n_classes=target.n_classes, image_shape=shape, low=low,
                         high=high, max_batch=max(1, min(max_batch, MAX_BATCH_VALUES // target.n_features)))
    reference, note = None, ("No public data was given, so the reference attack (BREP-MI) was skipped: upload "
                             "public images with the challenge to see what a budget buys.")
    if public is not None:
        try:
            images = read_public_images(public, n_features=task.n_features, low=low, high=high, name=public_name)
        except ModelFileError as exc:
            raise CompetitionConfigError(str(exc)) from None
        reference, note = _custom_reference(target, evaluator, task, images, query_budget, seed)
    description = CUSTOM_DESCRIPTION.format(
        classes=", ".join(names), slug=slug, height=shape[0], width=shape[1], n_features=task.n_features, low=low,
        high=high, n_classes=task.n_classes)
    return inversion_challenge_create(
        slug=slug, target=target, evaluator=evaluator, task=task, query_budget=query_budget, class_names=names,
        host=host, title=title or f"Invert {slug}", description=description, daily_limit=daily_limit,
        total_limit=total_limit, closes_at=closes_at, reference=reference, reference_note=note,
    )


def _custom_reference(
    target: MlpClassifier, evaluator: MlpClassifier, task: InversionTask, images: np.ndarray, query_budget: int,
    seed: int,
) -> tuple[np.ndarray, str]:
    """BREP-MI against the target through the endpoint's own code, its generator fitted on the public images."""
    from attacks.inversion import LocalLabelOracle, PcaGenerator, brep_mi
    from scoring.inversion import evaluate_reconstructions

    n_latent = max(1, min(16, len(images) - 1, task.n_features))
    generator = PcaGenerator.fit(images, n_latent=n_latent, low=task.low, high=task.high)
    budget = min(query_budget, REFERENCE_QUERY_CAP)
    result = brep_mi(LocalLabelOracle(target, task, budget=budget), generator, seed=seed)
    verdict = evaluate_reconstructions(evaluator, result.reconstructions)
    note = (f"BREP-MI (paper 002, Algorithm 1) in a {n_latent}-dimensional PCA-Gaussian latent space of the "
            f"{len(images)} public images, {result.queries} label queries, seed {seed}: the evaluator recognises "
            f"{verdict.recovered} of {len(verdict.hits)} classes")
    return result.reconstructions, note
