"""Reads on model-inversion challenges: the challenge of a competition, a participant's budget, per-class
verdicts of a scored submission, and the pictures."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from leaderboard.blobs import blob_read
from leaderboard.competitions.models import Competition
from leaderboard.inversion.models import InversionChallenge, PredictionBudget
from leaderboard.submissions.models import Status, Submission
from scoring.inversion import evaluate_reconstructions


def inversion_of(*, competition: Competition) -> InversionChallenge | None:
    """The competition's model-inversion challenge, or ``None`` for any other kind. Free when the competition
    was loaded with ``select_related("inversion")`` (the upload and scoring paths do), else one query."""
    try:
        challenge: InversionChallenge = competition.inversion  # type: ignore[attr-defined]
    except InversionChallenge.DoesNotExist:
        return None
    return challenge


@dataclass(frozen=True)
class BudgetStatus:
    query_budget: int
    queries_used: int

    @property
    def queries_left(self) -> int:
        return max(self.query_budget - self.queries_used, 0)


def inversion_budget(*, challenge: InversionChallenge, participant: Any) -> BudgetStatus:
    row = PredictionBudget.objects.filter(challenge=challenge, participant=participant).first()
    return BudgetStatus(challenge.query_budget, 0 if row is None else row.used)


def inversion_reconstructions(*, submission: Submission) -> np.ndarray | None:
    """The reconstructions a submission uploaded (validated when it was accepted)."""
    stored = blob_read(Submission, submission.pk, "predictions_npy")
    return None if stored is None else np.load(io.BytesIO(stored), allow_pickle=False)


def inversion_per_class(*, challenge: InversionChallenge, submission: Submission) -> list[bool] | None:
    """Whether the evaluator put each class's reconstruction in that class — for a scored submission only (the
    same verdict its released attack accuracy counts; nothing finer than a yes/no per class), and only when the
    host chose to release it (``release_per_class``, off by default: each ✓/✗ is an evaluator answer outside the
    prediction budget, K of them a submission where the released accuracy is one number). Withheld when the
    host set a defense chain on the challenge, which would then be bypassed."""
    if not challenge.release_per_class:
        return None
    if submission.status != Status.SCORED or challenge.competition.defenses:
        return None  # a host who added a defense chain releases only what the chain releases
    reconstructions = inversion_reconstructions(submission=submission)
    if reconstructions is None:
        return None
    return list(evaluate_reconstructions(challenge.evaluator, reconstructions).hits)


@dataclass(frozen=True)
class Picture:
    caption: str
    svg: str


def inversion_pictures(
    *, challenge: InversionChallenge, images: np.ndarray, hits: list[bool] | None = None
) -> list[Picture]:
    """One SVG per class (drawn from validated numbers only); a class the evaluator rejected is marked ✗."""
    # Imported here: the attacks package loads every attack (scipy included), ~2 s a process start that the
    # site's processes (manage.py, gunicorn, the scoring worker) never need unless a page draws pictures.
    from attacks.inversion.pictures import image_svg

    task = challenge.task
    names = challenge.class_names or [str(c) for c in range(task.n_classes)]
    pictures = []
    for c, image in enumerate(images):
        mark = "" if hits is None else (" ✓" if hits[c] else " ✗")
        caption = f"{names[c] if c < len(names) else c}{mark}"
        pictures.append(Picture(caption, image_svg(image, task.image_shape, low=task.low, high=task.high,
                                                   pixel=10, caption=caption)))
    return pictures


def inversion_best_submissions(*, challenge: InversionChallenge) -> list[tuple[Submission, list[bool]]]:
    """Each participant's best scored submission with its per-class verdicts (the host's page)."""
    best: dict[int, Submission] = {}
    for submission in Submission.objects.filter(
        competition_id=challenge.competition_id, status=Status.SCORED
    ).select_related("participant").defer("upload", "predictions_npy").order_by("created_at"):
        current = best.get(submission.participant_id)
        if current is None or (submission.public_score or 0.0) > (current.public_score or 0.0):
            best[submission.participant_id] = submission
    rows = []
    evaluator = challenge.evaluator
    for submission in sorted(best.values(), key=lambda s: -(s.public_score or 0.0)):
        reconstructions = inversion_reconstructions(submission=submission)
        if reconstructions is not None:  # the host sees the evaluator's verdicts whatever the chain releases
            rows.append((submission, list(evaluate_reconstructions(evaluator, reconstructions).hits)))
    return rows
