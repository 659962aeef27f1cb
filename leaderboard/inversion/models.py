# mypy: disable-error-code="var-annotated"
# (no django-stubs plugin: see leaderboard/competitions/models.py)
"""A model-inversion challenge: a competition whose participants query a label-only prediction endpoint of the
host's target model under a per-participant query budget, and submit one reconstruction per private class,
judged by the host's evaluation classifier (paper 002's setting).

The competition row carries the slug, the times, the quotas and the board (attack accuracy, scored by the worker
like any submission); the target and the evaluator live here, host-only, as ``.npz`` arrays (no pickles).
"""

from __future__ import annotations

import numpy as np
from django.conf import settings
from django.db import models

from leaderboard.competitions.models import Competition, npy_array
from scoring.inversion import InversionTask, MlpClassifier


class InversionChallenge(models.Model):
    competition = models.OneToOneField(
        Competition, on_delete=models.CASCADE, primary_key=True, related_name="inversion"
    )
    query_budget = models.PositiveIntegerField(
        default=5000, help_text="Prediction queries per participant over the whole challenge (one per input)."
    )
    n_features = models.PositiveIntegerField()
    image_height = models.PositiveSmallIntegerField()
    image_width = models.PositiveSmallIntegerField()
    pixel_low = models.FloatField(default=0.0)
    pixel_high = models.FloatField(default=16.0)
    max_batch = models.PositiveIntegerField(default=256, help_text="Inputs one prediction request may carry.")
    # Each class's ✓/✗ is an evaluator answer per class, outside the prediction budget: K answers a submission
    # where the released attack accuracy is one. Off unless the host chooses to show them.
    release_per_class = models.BooleanField(
        default=False,
        help_text="Show participants which classes the evaluator recognised in each of their submissions (one "
                  "evaluator answer per class beyond the released accuracy; off by default).",
    )
    class_names = models.JSONField(default=list, blank=True, help_text="What each private class is, in order.")
    # Host-only: never serialised to a participant-facing surface.
    target_npz = models.BinaryField()
    evaluator_npz = models.BinaryField()
    # The bundled reference attack's reconstructions (n_classes × n_features, .npy), shown on the host's page.
    reference_npy = models.BinaryField(null=True, blank=True)
    reference_note = models.CharField(max_length=400, blank=True)

    competition_id: int

    class Meta:
        verbose_name = "model-inversion challenge"

    def __str__(self) -> str:
        return f"model inversion of {self.competition_id}"

    @property
    def task(self) -> InversionTask:
        return InversionTask(
            n_features=self.n_features, n_classes=self.competition.n_classes,
            image_shape=(self.image_height, self.image_width), low=self.pixel_low, high=self.pixel_high,
            max_batch=self.max_batch,
        )

    @property
    def target(self) -> MlpClassifier:
        return MlpClassifier.from_bytes(bytes(self.target_npz))

    @property
    def evaluator(self) -> MlpClassifier:
        return MlpClassifier.from_bytes(bytes(self.evaluator_npz))

    @property
    def reference(self) -> np.ndarray | None:
        return None if self.reference_npy is None else npy_array(self.reference_npy)


class PredictionBudget(models.Model):
    """Queries one participant has spent on one challenge's endpoint; charged by a conditional UPDATE."""

    challenge = models.ForeignKey(InversionChallenge, on_delete=models.CASCADE, related_name="budgets")
    participant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    used = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    challenge_id: int
    participant_id: int

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["challenge", "participant"], name="one_prediction_budget_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} used {self.used} on {self.challenge_id}"
