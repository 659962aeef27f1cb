# mypy: disable-error-code="var-annotated"
# (pyproject enables no django-stubs plugin, which is what infers model field types; without it every field
# would need a generic annotation. Foreign-key ``*_id`` attributes are declared below for the same reason.)
"""Submissions and the per-participant state of the defense chain.

A submission keeps what scoring reads, in the database (so a worker on another machine needs only the database
and the broker): the validated predictions as ``.npy`` bytes under float64 arithmetic (so the worker never
parses a file twice), the upload itself under φ-bit arithmetic (which reads the decimal text) or when the host
keeps every upload (``LEADERBOARD_KEEP_UPLOADS``). Every submission keeps its upload's size and name, and one
sent with an ``Idempotency-Key`` its SHA-256 (a replay compares it).
Raw scores and defense notes are host-only; participants see the released score and its exact text.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from leaderboard.competitions.models import Competition


class Status(models.TextChoices):
    QUEUED = "queued", "queued"
    SCORING = "scoring", "scoring"
    SCORED = "scored", "scored"
    FAILED = "failed", "failed"


TERMINAL_STATUSES = (Status.SCORED, Status.FAILED)
IDEMPOTENCY_KEY_MAX_LENGTH = 255


class UploadKind(models.TextChoices):
    CSV = "csv", "CSV"
    JSON = "json", "JSON"
    ONNX = "onnx", "ONNX model"


class Team(models.Model):
    """A team in one competition: one quota, one set of final submissions and one board row for its members.

    A participant without a team is a team of one implicitly (no row). Its members are the participations that
    point at it; a team's submissions are its members' (a member with submissions joins only by a merge, and a
    member leaves only before the team's first submission, so the two always agree)."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="teams_created"
    )
    created_at = models.DateTimeField(default=timezone.now)

    competition_id: int
    created_by_id: int | None

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(Lower("name"), "competition", name="one_team_name_per_competition"),
        ]

    def __str__(self) -> str:
        return self.name


class Participation(models.Model):
    """One row per (competition, participant): the row locked while checking the quota, and the membership of
    the participant's team in that competition (``team``; empty: a team of one), so a user is in at most one
    team per competition."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="participations")
    participant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participations")
    joined_at = models.DateTimeField(default=timezone.now)
    team = models.ForeignKey(Team, on_delete=models.SET_NULL, null=True, blank=True, related_name="memberships")
    joined_team_at = models.DateTimeField(null=True, blank=True)

    competition_id: int
    participant_id: int
    team_id: int | None

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["competition", "participant"], name="one_participation_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} in {self.competition_id}"


class Submission(models.Model):
    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="submissions")
    participant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)

    # Empty unless scoring reads it (φ-bit arithmetic) or LEADERBOARD_KEEP_UPLOADS: a million-row upload is
    # 27 MB, and storing what nothing reads was most of the web worker's time per upload.
    upload = models.BinaryField(blank=True)
    upload_sha256 = models.CharField(max_length=64, blank=True)
    upload_kind = models.CharField(max_length=4, choices=UploadKind.choices, default=UploadKind.CSV)
    upload_name = models.CharField(max_length=255, blank=True)
    upload_size = models.PositiveIntegerField(default=0)
    predictions_npy = models.BinaryField(null=True, blank=True)

    # Host-only: the metric's true values, exact text (float64 repr or the MPFR digits). Text fields without a
    # length: a φ-bit value has about 0.3·φ digits (400 characters at φ ≈ 1,300, and φ goes to 1,000,000).
    raw_public = models.FloatField(null=True, blank=True)
    raw_public_text = models.TextField(blank=True)
    raw_private = models.FloatField(null=True, blank=True)
    raw_private_text = models.TextField(blank=True)
    defense_notes = models.JSONField(default=list, blank=True)

    # Released through the defense chain at the released precision; empty text = nothing released (with full
    # precision under MPFR arithmetic, as long as the raw text).
    public_score = models.FloatField(null=True, blank=True)
    public_score_text = models.TextField(blank=True)
    private_score = models.FloatField(null=True, blank=True)
    private_score_text = models.TextField(blank=True)
    # Released values of the competition's also_report metrics: {metric: {split: released text}} ("" = none).
    extra_scores = models.JSONField(default=dict, blank=True)
    # Participant-safe reason a defense gave for releasing no public score (e.g. a spent privacy budget).
    public_message = models.CharField(max_length=400, blank=True)

    error = models.TextField(blank=True)
    # A failure that still counts against the quota: a defense's rejection (probe_detector, a spent budget) is an
    # answer about the submission, so a free one would be a free query.
    charged = models.BooleanField(default=False)
    selected_for_final = models.BooleanField(default=False)

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    scoring_started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The claim a worker holds while scoring; a stale worker whose claim was swept cannot write a result.
    claim_token = models.CharField(max_length=32, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Who holds the claim ("<celery node> <host> <pid>") and its last sign of life (refreshed while scoring):
    # a claim whose worker is gone is taken over by the next delivery, a worker start or the sweep.
    claimed_by = models.CharField(max_length=255, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The upload's Idempotency-Key header (API uploads): a repeated POST with the same key by the same
    # participant on the same competition returns this submission instead of creating another.
    idempotency_key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX_LENGTH, null=True, blank=True)

    competition_id: int
    participant_id: int
    #: Not stored: set by ``submission_create`` when it returned this earlier submission for a repeated key.
    replayed: bool = False

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["competition", "participant", "created_at"], name="sub_quota_idx"),
            models.Index(fields=["competition", "status"], name="sub_board_idx"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "competition", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="one_submission_per_idempotency_key",
            ),
        ]

    def __str__(self) -> str:
        return f"submission {self.pk} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


class DefenseState(models.Model):
    """The defense chain's JSON state for one participant on one split of one competition."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="defense_states")
    participant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="defense_states")
    # "public"/"private" for the primary metric; "public@auc" etc. for a metric in Competition.also_report.
    split = models.CharField(max_length=64)
    state = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    competition_id: int
    participant_id: int

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["competition", "participant", "split"], name="one_state_per_split"),
        ]

    def __str__(self) -> str:
        return f"defense state {self.competition_id}/{self.participant_id}/{self.split}"


class CompetitionDefenseState(models.Model):
    """The state of a chain's competition-scoped defenses (``scope: "competition"``: one Ladder, privacy budget,
    probe history or Thresholdout budget for the whole board) on one split of one competition. The worker locks
    this row while it scores, so a competition's releases through such a defense are serialised."""

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="competition_defense_states"
    )
    # As ``DefenseState.split``: "public"/"private" for the primary metric, "public@auc" for a reported metric.
    split = models.CharField(max_length=64)
    state = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    competition_id: int

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["competition", "split"], name="one_competition_state_per_split"),
        ]

    def __str__(self) -> str:
        return f"competition defense state {self.competition_id}/{self.split}"


class TeamDefenseState(models.Model):
    """The state of a chain's team-scoped defenses (``scope: "team"``: one Ladder, privacy budget, probe history or
    Thresholdout budget per team) on one split of one competition. Its owner is a ``team``, or, for a participant
    without a team (a team of one), the ``participant``; creating a team hands the creator's row to the team, and
    joining or merging teams merges the rows (:func:`leaderboard.submissions.teams.team_states_merge`). The worker
    locks this row while it scores, so a team's releases through such a defense are serialised."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="team_defense_states")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, null=True, blank=True, related_name="defense_states")
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="team_defense_states"
    )
    # As ``DefenseState.split``: "public"/"private" for the primary metric, "public@auc" for a reported metric.
    split = models.CharField(max_length=64)
    state = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    competition_id: int
    team_id: int | None
    participant_id: int | None

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["team", "split"], condition=models.Q(team__isnull=False), name="one_team_state_per_split"
            ),
            models.UniqueConstraint(
                fields=["competition", "participant", "split"], condition=models.Q(participant__isnull=False),
                name="one_solo_team_state_per_split",
            ),
            models.CheckConstraint(
                condition=models.Q(team__isnull=True) ^ models.Q(participant__isnull=True),
                name="team_state_has_one_owner",
            ),
        ]

    def __str__(self) -> str:
        owner = f"team {self.team_id}" if self.team_id is not None else f"participant {self.participant_id}"
        return f"team defense state {self.competition_id}/{owner}/{self.split}"


class InvitationStatus(models.TextChoices):
    PENDING = "pending", "pending"
    ACCEPTED = "accepted", "accepted"
    DECLINED = "declined", "declined"
    CANCELLED = "cancelled", "cancelled"


class Invitation(models.Model):
    """A team's invitation to one user; only the invitee answers it."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    invitee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="team_invitations")
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=10, choices=InvitationStatus.choices, default=InvitationStatus.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    answered_at = models.DateTimeField(null=True, blank=True)

    team_id: int
    invitee_id: int
    invited_by_id: int | None

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "invitee"],
                condition=models.Q(status="pending"),
                name="one_pending_invitation_per_invitee",
            ),
        ]

    def __str__(self) -> str:
        return f"invitation {self.pk} ({self.status})"


class TeamMergeRequest(models.Model):
    """A member of ``team`` asked to merge it into ``target``; a member of ``target`` completes the merge."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="merge_requests")
    target = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="merge_offers")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    team_id: int
    target_id: int

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "target"], name="one_merge_request_per_pair")]

    def __str__(self) -> str:
        return f"merge {self.team_id} into {self.target_id}"
