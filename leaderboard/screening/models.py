# mypy: disable-error-code="var-annotated"
# (pyproject enables no django-stubs plugin, which is what infers model field types; see competitions/models.py.)
"""What the sybil screen keeps: how each account signed up (host only, never shown to participants), each
competition's screen settings, the clusters of accounts it suspects, the submissions it holds, and the
accounts a host's decision took off a competition's boards."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from leaderboard.competitions.models import Competition
from leaderboard.submissions.models import Submission


class SignupSource(models.TextChoices):
    WEB = "web", "web sign-up"
    PROVISIONED = "provisioned", "made by a host"


class SignupTrace(models.Model):
    """How one account came to be: when, from which client address (``leaderboard.security.client_address``,
    so behind the trusted proxies only) and with which user agent. For an account a host made, the address and
    agent are the host's request's, and ``provisioned_by`` says who."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signup_trace")
    source = models.CharField(max_length=12, choices=SignupSource.choices)
    address = models.CharField(max_length=64, blank=True)
    user_agent = models.CharField(max_length=400, blank=True)
    signed_up_at = models.DateTimeField(default=timezone.now)
    provisioned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    user_id: int
    provisioned_by_id: int | None

    def __str__(self) -> str:
        return f"sign-up of {self.user_id} ({self.source})"


class ScreenMode(models.TextChoices):
    OFF = "off", "off"
    FLAG = "flag", "flag (release as usual, list the clusters)"
    HOLD = "hold", "hold (keep a flagged account's submissions back until the host decides)"


class ScreenSettings(models.Model):
    """One competition's screen: ``off`` (nothing runs), ``flag`` or ``hold``, and the suspicion threshold."""

    competition = models.OneToOneField(Competition, on_delete=models.CASCADE, related_name="screen_settings")
    mode = models.CharField(max_length=4, choices=ScreenMode.choices, default=ScreenMode.OFF)
    threshold = models.FloatField(
        default=0.5, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="A cluster is flagged when its suspicion (0 to 1) reaches this.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    competition_id: int

    class Meta:
        verbose_name_plural = "screen settings"

    def __str__(self) -> str:
        return f"screen of {self.competition_id}: {self.mode}"


class ClusterStatus(models.TextChoices):
    OPEN = "open", "open"
    DISMISSED = "dismissed", "dismissed"
    MERGED = "merged", "merged into a team"
    DISQUALIFIED = "disqualified", "disqualified"
    BANNED = "banned", "banned"


class SuspectCluster(models.Model):
    """Accounts the screen suspects of being one person. ``accounts`` are the screen's keys (``user:<id>``, or
    ``team:<id>`` for a team, which counts as one account); ``names`` their usernames or team names when flagged;
    ``evidence`` the screen's sentences, ``[{"kind", "accounts", "detail"}]``."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="suspect_clusters")
    accounts = models.JSONField(default=list)
    names = models.JSONField(default=list)
    suspicion = models.FloatField(default=0.0)
    evidence = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=12, choices=ClusterStatus.choices, default=ClusterStatus.OPEN)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decision_note = models.CharField(max_length=400, blank=True)

    competition_id: int

    class Meta:
        ordering = ["-first_seen_at", "-id"]
        indexes = [models.Index(fields=["competition", "status"], name="cluster_status_idx")]

    def __str__(self) -> str:
        return f"cluster {self.pk} ({self.status}): {', '.join(self.names)}"


class HoldState(models.TextChoices):
    HELD = "held", "held for review"
    RELEASING = "releasing", "being released"
    RELEASED = "released", "released"
    WITHHELD = "withheld", "never released (disqualified or banned)"


class HeldSubmission(models.Model):
    """A submission the screen kept from the release: scored status, nothing released and no defense state
    spent, until the host's decision releases it (``releasing`` → ``released``) or keeps it back (``withheld``)."""

    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, related_name="screen_hold")
    cluster = models.ForeignKey(SuspectCluster, on_delete=models.SET_NULL, null=True, blank=True, related_name="holds")
    state = models.CharField(max_length=10, choices=HoldState.choices, default=HoldState.HELD)
    held_at = models.DateTimeField(default=timezone.now)
    released_at = models.DateTimeField(null=True, blank=True)

    submission_id: int
    cluster_id: int | None

    class Meta:
        ordering = ["held_at", "id"]

    def __str__(self) -> str:
        return f"hold of submission {self.submission_id} ({self.state})"


class BoardExclusion(models.Model):
    """A participant a host disqualified (or banned) in one competition: off its boards, and nothing they submit
    there is released. ``leaderboard_rows`` reads it through ``participant__screen_exclusions``."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="screen_exclusions")
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="screen_exclusions"
    )
    cluster = models.ForeignKey(SuspectCluster, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    reason = models.CharField(max_length=12, choices=ClusterStatus.choices)
    created_at = models.DateTimeField(default=timezone.now)

    competition_id: int
    participant_id: int

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["competition", "participant"], name="one_exclusion_per_participant"),
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} excluded from {self.competition_id} ({self.reason})"
