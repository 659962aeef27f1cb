# mypy: disable-error-code="var-annotated"
# (pyproject enables no django-stubs plugin, which is what infers model field types; without it every field
# would need a generic annotation. Foreign-key ``*_id`` attributes are declared below for the same reason.)
"""A competition and its hidden test set.

The hidden ids, labels and public/private mask live in :class:`HiddenTestData`, a separate table, so that
listing or showing competitions never loads (or risks serialising) the labels.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from defenses import DefenseChain, DefenseConfigError
from scoring import METRICS, Arithmetic, ConfigurationError, HiddenTestSet
from scoring.ids import IdArray, ids_from_json, ids_json
from scoring.metrics import check_clipping, check_metric_for, get_metric, task_of
from scoring.parsing import submission_columns

METRIC_CHOICES = [(name, name) for name in sorted(METRICS)]
# Static text (a list of the registry's names here would change, and need a migration, with every new metric).
METRIC_HELP = (
    "A metric of the scoring core (scoring.metrics.METRICS: binary_logloss, auc, kl, itakura_saito, brier, ...), "
    "or norm_like:α for the norm-like loss with α ≥ 2 (plain norm_like: α = 3). softmax_ce and sigmoid_ce are "
    "scored on submitted logits (any finite real), the others on probabilities."
)


def validate_metric_name(value: str) -> None:
    """A metric the scoring core knows: a registry name or a parametrised one (``norm_like:2.5``)."""
    try:
        get_metric(value)
    except ConfigurationError as exc:
        raise ValidationError(str(exc)) from None


class Competition(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    host = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="hosted_competitions"
    )
    # Not a choices field: a parametrised name (norm_like:2.5) is a metric too; the validator asks the core.
    metric = models.CharField(
        max_length=40, default="binary_logloss", validators=[validate_metric_name], help_text=METRIC_HELP
    )
    eps = models.FloatField(default=1e-15, help_text="Predictions are clipped to [eps, 1 - eps].")
    score_decimals = models.PositiveSmallIntegerField(
        null=True, blank=True, default=5, help_text="Decimals released; empty = full precision."
    )
    public_fraction = models.FloatField(default=0.3)
    daily_limit = models.PositiveIntegerField(null=True, blank=True, default=5, help_text="Per UTC day; empty = none.")
    total_limit = models.PositiveIntegerField(null=True, blank=True, help_text="Over the whole competition.")
    opens_at = models.DateTimeField(default=timezone.now)
    closes_at = models.DateTimeField(null=True, blank=True)
    # Joining a team (an invitation accepted) and merging two teams are allowed until this moment, as on Kaggle;
    # empty: until the close. Creating a team of one and inviting are not limited by it.
    team_merger_deadline = models.DateTimeField(null=True, blank=True)
    # The most members a team may have (enforced when an invitation is accepted and when two teams merge);
    # empty: no limit.
    max_team_size = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="The most members a team may have (empty: no limit); checked on accepting and on merging.",
    )
    arithmetic = models.CharField(max_length=20, default="float64", help_text="'float64' or 'mpfr:BITS'.")
    defenses = models.JSONField(default=list, blank=True, help_text="Defense chain as a JSON list.")
    also_report = models.JSONField(
        default=list, blank=True,
        help_text='Further metrics released beside the primary one for every submission, e.g. ["auc"] '
        "(paper 004, Section 3: AUC and log loss together leak more than either).",
    )
    disclosed_defenses = models.TextField(
        blank=True, help_text="What participants are told about the defenses (shown as written)."
    )
    same_file_same_score = models.BooleanField(
        default=False, help_text="Seed defense randomness from the file content, so a re-upload gets the same score."
    )
    # Denormalised from the hidden set so metadata pages need not load it.
    n_rows = models.PositiveIntegerField(default=0, editable=False)
    n_classes = models.PositiveSmallIntegerField(default=2, editable=False)
    # Hidden test features per row (0: none). A competition with features takes ONNX models, run by the worker
    # on those features, instead of prediction files (a code competition: participants never see the features).
    n_features = models.PositiveIntegerField(default=0, editable=False)
    # An unlisted competition (a game's cell, a rehearsal) is left out of every list a participant sees (the home
    # page, /api/v1/competitions/) and is reached only by its URL: its own accounts play it there.
    listed = models.BooleanField(
        default=True, help_text="Shown on the home page and in the API's competition list; unlisted ones are "
        "reached only by their URL.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    host_id: int | None

    class Meta:
        ordering = ["-opens_at", "slug"]

    def __str__(self) -> str:
        return self.title or self.slug

    @property
    def task(self) -> str:
        return task_of(self.n_classes)

    @property
    def takes_models(self) -> bool:
        """Participants upload an ONNX model that the worker runs on the hidden features."""
        return self.n_features > 0

    @property
    def higher_is_better(self) -> bool:
        return get_metric(self.metric).higher_is_better

    @property
    def metric_alpha(self) -> float | None:
        """The metric's parameter (``norm_like``'s α), ``None`` for a metric without one."""
        try:
            return get_metric(self.metric).alpha
        except ConfigurationError:
            return None

    @property
    def predictions_are_logits(self) -> bool:
        """Whether participants submit logits (any finite real) rather than probabilities."""
        try:
            return get_metric(self.metric).logits
        except ConfigurationError:  # refused when set; never fail a metadata read on it
            return False

    @property
    def submission_columns(self) -> list[str]:
        """The CSV header participants must use, as the scoring core parses it."""
        return submission_columns(self.n_classes)

    @property
    def released_decimals(self) -> int | None:
        """The decimals released scores carry: ``score_decimals`` or a coarser rounding defense of the chain
        (what every participant can read off the scores, so it is public even when the chain is not)."""
        try:
            return DefenseChain.from_json(self.defenses).released_decimals(self.score_decimals)
        except DefenseConfigError:  # an invalid chain is refused when set; never fail a metadata read on it
            return self.score_decimals

    @property
    def feedback(self) -> dict[str, Any]:
        """What a released value is (public, like the precision: participants read it off the values):
        ``{"kind": "score"}``, or the hard label the chain releases (``threshold`` with its cut-offs ``t``,
        ``rank``, ``accept_reject``; :mod:`defenses.feedback`)."""
        try:
            return DefenseChain.from_json(self.defenses).feedback()
        except DefenseConfigError:  # an invalid chain is refused when set; never fail a metadata read on it
            return {"kind": "score"}

    @property
    def board_higher_is_better(self) -> bool:
        """The order of the boards: the metric's direction, unless the chain releases a hard label (a badge:
        1 above 0; a rank: 1 first)."""
        try:
            return DefenseChain.from_json(self.defenses).released_higher_is_better(self.higher_is_better)
        except DefenseConfigError:
            return self.higher_is_better

    def is_open(self, now: Any = None) -> bool:
        now = now or timezone.now()
        return self.opens_at <= now and (self.closes_at is None or now < self.closes_at)

    def is_closed(self, now: Any = None) -> bool:
        now = now or timezone.now()
        return self.closes_at is not None and now >= self.closes_at

    def clean(self) -> None:
        """Validate the settings the scoring core will rely on (the admin calls this on save)."""
        errors: dict[str, str] = {}
        try:
            arithmetic = Arithmetic.parse(self.arithmetic)
        except ConfigurationError as exc:
            errors["arithmetic"] = str(exc)
            arithmetic = None
        try:
            DefenseChain.from_json(self.defenses)
        except DefenseConfigError as exc:
            errors["defenses"] = str(exc)
        if not 0.0 <= self.public_fraction <= 1.0:
            errors["public_fraction"] = "must lie between 0 and 1"
        if not 0.0 < self.eps < 0.5:
            errors["eps"] = "must lie strictly between 0 and 0.5"
        if self.score_decimals is not None and self.score_decimals > 17:
            errors["score_decimals"] = "at most 17 decimals (or empty for full precision)"
        if self.closes_at is not None and self.opens_at is not None and self.closes_at <= self.opens_at:
            errors["closes_at"] = "must be after the opening time"
        try:
            primary = get_metric(self.metric)
        except ConfigurationError:
            primary = None  # the field's validator (validate_metric_name) says why, once
        if arithmetic is not None and primary is not None and self.n_rows:
            try:
                check_metric_for(get_metric(self.metric), self.n_classes, arithmetic)
            except ConfigurationError as exc:
                errors["metric"] = str(exc)
            else:
                try:
                    check_clipping(get_metric(self.metric), self.n_classes, self.eps, arithmetic)
                except ConfigurationError as exc:
                    errors["eps"] = str(exc)
        also = self.also_report
        if not isinstance(also, list) or not all(isinstance(name, str) for name in also):
            errors["also_report"] = 'must be a JSON list of metric names, e.g. ["auc"]'
        elif arithmetic is not None:
            for name in also:
                try:
                    metric = get_metric(name)
                    if name == self.metric:
                        raise ConfigurationError(f"{name!r} is already the primary metric")
                    if primary is not None and metric.logits != primary.logits:
                        raise ConfigurationError(
                            f"{name!r} reads {'logits' if metric.logits else 'probabilities'} but the primary "
                            f"metric {self.metric!r} reads {'logits' if primary.logits else 'probabilities'}; one "
                            "upload cannot be both"
                        )
                    if self.n_rows:
                        check_metric_for(metric, self.n_classes, arithmetic)
                except ConfigurationError as exc:
                    errors["also_report"] = str(exc)
        if arithmetic is not None and self.n_rows and "arithmetic" not in errors:
            # The worst a submission costs a worker in φ-bit arithmetic, known now: rows × columns × metrics.
            columns = 1 if self.n_classes == 2 else self.n_classes
            metrics = 1 + (len(also) if isinstance(also, list) else 0)
            try:
                arithmetic.check_work(self.n_rows * columns * metrics,
                                      what=f"{self.n_rows:,} rows × {columns} column{'s' if columns != 1 else ''}"
                                      + (f" × {metrics} metrics" if metrics > 1 else ""))
            except ConfigurationError as exc:
                errors["arithmetic"] = str(exc)
        if errors:
            raise ValidationError(errors)


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_array(data: bytes | memoryview) -> np.ndarray:
    """The array of ``.npy`` bytes (no pickles)."""
    return np.load(io.BytesIO(bytes(data)), allow_pickle=False)


class HiddenTestData(models.Model):
    """The hidden test set: never exposed by any participant-facing surface.

    ``secret`` (a 128-bit integer as hex) seeds the public/private split and every defense's randomness.
    """

    competition = models.OneToOneField(Competition, on_delete=models.CASCADE, primary_key=True, related_name="hidden")
    ids_json = models.TextField()
    labels_npy = models.BinaryField()
    public_mask_npy = models.BinaryField()
    # The hidden test features (float64, rows in the order of ``ids``) of a model competition; null otherwise.
    features_npy = models.BinaryField(null=True, blank=True)
    # The rows a host's solution file calls Ignored (bool, True = scored on neither board); null: every row scored.
    ignored_mask_npy = models.BinaryField(null=True, blank=True)
    secret = models.CharField(max_length=64)

    competition_id: int

    class Meta:
        verbose_name = "hidden test set"

    def __str__(self) -> str:
        return f"hidden test set of {self.competition_id}"

    @property
    def secret_int(self) -> int:
        return int(self.secret, 16)

    @property
    def ids(self) -> IdArray:
        """The ids as one Arrow array (no Python string per id: ten million were ~0.7 GB as a tuple)."""
        return ids_from_json(self.ids_json)

    @property
    def labels(self) -> np.ndarray:
        return npy_array(self.labels_npy)

    @property
    def public_mask(self) -> np.ndarray:
        return npy_array(self.public_mask_npy)

    @property
    def features(self) -> np.ndarray | None:
        return None if self.features_npy is None else npy_array(self.features_npy)

    @property
    def ignored_mask(self) -> np.ndarray | None:
        return None if self.ignored_mask_npy is None else npy_array(self.ignored_mask_npy)

    def to_hidden_test_set(self, n_classes: int) -> HiddenTestSet:
        return HiddenTestSet(self.ids, self.labels, n_classes, self.public_mask, ignored_mask=self.ignored_mask)

    @staticmethod
    def encode(
        *, ids: Sequence[str], labels: np.ndarray, public_mask: np.ndarray, features: np.ndarray | None = None,
        ignored_mask: np.ndarray | None = None,
    ) -> dict[str, Any]:
        return {
            "ids_json": ids_json(ids),  # json.dumps' text, from Arrow's buffers when the ids need no escape
            "labels_npy": _npy_bytes(np.asarray(labels, dtype=np.int64)),
            "public_mask_npy": _npy_bytes(np.asarray(public_mask, dtype=bool)),
            "features_npy": None if features is None else _npy_bytes(np.asarray(features, dtype=np.float64)),
            # Only a solution file with Ignored rows stores one (a mask of all False would say nothing).
            "ignored_mask_npy": None if ignored_mask is None or not np.any(ignored_mask)
            else _npy_bytes(np.asarray(ignored_mask, dtype=bool)),
        }


#: The longest data file name (as shown, served and typed on a command line).
DATA_FILE_NAME_MAX_LENGTH = 128


class _DataFileManager(models.Manager["DataFile"]):
    """Every query leaves the file's bytes in the database (a list of files never loads them); the bytes are read
    as raw bytes by :func:`leaderboard.competitions.selectors.open_data_file`."""

    def get_queryset(self) -> models.QuerySet[DataFile]:
        return super().get_queryset().defer("content")


class DataFile(models.Model):
    """A file a host attaches to a competition for participants to download (a train set, test features, a zip).

    What a participant may read: the host chose to publish every byte of it. The hidden test set is never one
    (it lives in :class:`HiddenTestData`).
    """

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="data_files")
    name = models.CharField(max_length=DATA_FILE_NAME_MAX_LENGTH)
    description = models.TextField(blank=True)
    size = models.PositiveBigIntegerField(default=0, editable=False)
    sha256 = models.CharField(max_length=64, editable=False)
    # Written and read as raw bytes (leaderboard.blobs), never as an SQL literal in hex.
    content = models.BinaryField(default=b"", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    competition_id: int

    objects = _DataFileManager()

    class Meta:
        ordering = ["competition", "name"]
        constraints = [
            models.UniqueConstraint(fields=["competition", "name"], name="data_file_name_unique_per_competition"),
        ]

    def __str__(self) -> str:
        return self.name
