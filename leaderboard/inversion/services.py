"""Writes on model-inversion challenges: create one, and answer a prediction request under the query budget.

The budget is charged by one conditional UPDATE (``used + m <= budget``), so concurrent requests can never
spend more than the budget between them: each either moves the counter within the limit or changes nothing.
"""

from __future__ import annotations

import io
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
) -> InversionChallenge:
    """A competition whose hidden "rows" are the private classes (id ``class_c``, label ``c``, all public): a
    submission's released score is the attack accuracy, the share of classes the evaluator confirms."""
    if target.n_features != task.n_features or evaluator.n_features != task.n_features:
        raise CompetitionConfigError(f"target and evaluator must take {task.n_features} features")
    if target.n_classes != task.n_classes or evaluator.n_classes != task.n_classes:
        raise CompetitionConfigError(f"target and evaluator must have {task.n_classes} classes")
    if task.n_features != task.image_shape[0] * task.image_shape[1]:
        raise CompetitionConfigError(f"image shape {task.image_shape} does not hold {task.n_features} features")
    if query_budget < 1:
        raise CompetitionConfigError("the query budget must be at least 1")
    labels_csv = "id,label\n" + "".join(f"class_{c},{c}\n" for c in range(task.n_classes))
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
