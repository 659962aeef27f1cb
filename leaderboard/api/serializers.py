"""Input validation and output shapes of the API. Participant outputs carry released values only."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.validators import UnicodeUsernameValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

import defenses
from leaderboard.competitions.models import METRIC_HELP, Competition
from leaderboard.submissions.models import Submission
from leaderboard.submissions.selectors import submission_review
from sandbox import ALLOWED_OPERATORS
from scoring import ConfigurationError, get_metric

SUBMISSION_CONTENT_TYPES = ["multipart/form-data (field 'file')", "text/csv", "application/json"]
MODEL_CONTENT_TYPES = ["multipart/form-data (field 'file')", "application/octet-stream"]


def model_format(competition: Competition) -> dict[str, Any]:
    """What a model competition accepts: an ONNX file, its input and output, the operators and the limits."""
    from leaderboard.submissions.model_runs import model_contract, model_limits

    contract, limits = model_contract(competition), model_limits()
    k = competition.n_classes
    return {
        "kind": "onnx",
        "content_types": MODEL_CONTENT_TYPES,
        "max_bytes": contract.max_bytes,
        "max_nodes": contract.max_nodes,
        "input": f"one float or double tensor of shape [N, {competition.n_features}]",
        "output": "a float tensor named 'probabilities' (or the only float output) of shape "
        + ("[N], [N, 1] or [N, 2] (probability of label 1; of [N, 2] the second column)" if k == 2 else f"[N, {k}]"),
        "operators": {
            domain or "ai.onnx": sorted(ops) for domain, ops in ALLOWED_OPERATORS.items() if domain != "ai.onnx"
        },
        "limits": {"cpu_seconds": limits.cpu_seconds, "wall_seconds": limits.wall_seconds,
                   "memory_bytes": limits.memory_bytes},
    }


class CompetitionSummarySerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    task = serializers.CharField()
    metric = serializers.CharField()
    n_rows = serializers.IntegerField()
    n_classes = serializers.IntegerField()
    n_features = serializers.IntegerField(help_text="Features per hidden row of a model competition; 0 otherwise.")
    takes_models = serializers.BooleanField(
        help_text="Participants upload an ONNX model (run by the worker on the hidden features), not predictions."
    )
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField(allow_null=True)
    team_merger_deadline = serializers.DateTimeField(
        allow_null=True, help_text="Joining and merging teams are allowed until then (empty: until the close)."
    )
    max_team_size = serializers.IntegerField(
        allow_null=True, help_text="The most members a team may have (empty: no limit)."
    )
    is_open = serializers.SerializerMethodField()

    def get_is_open(self, competition: Competition) -> bool:
        return competition.is_open()


class SubmissionFormatSerializer(serializers.Serializer):
    columns = serializers.ListField(child=serializers.CharField())
    content_types = serializers.ListField(child=serializers.CharField())
    max_bytes = serializers.IntegerField()
    json_example = serializers.JSONField()


class CompetitionDetailSerializer(CompetitionSummarySerializer):
    """Public metadata (DESIGN.md): never labels, never the secret, never the undisclosed chain."""

    description = serializers.CharField()
    higher_is_better = serializers.BooleanField()
    score_decimals = serializers.IntegerField(allow_null=True)
    released_decimals = serializers.IntegerField(
        allow_null=True, help_text="Decimals the released scores carry (score_decimals or a coarser rounding)."
    )
    eps = serializers.FloatField()
    arithmetic = serializers.CharField()
    public_fraction = serializers.FloatField()
    daily_limit = serializers.IntegerField(allow_null=True)
    total_limit = serializers.IntegerField(allow_null=True)
    disclosed_defenses = serializers.CharField()
    feedback = serializers.JSONField(
        help_text='What a released value is: {"kind": "score"}, or a hard label the host chose: "threshold" (1 if '
        'the score beats t; with several cut-offs t, how many it beats), "rank" (the rank of the submission among '
        'your own, 1 = best) or "accept_reject" (1 if the Ladder accepted the submission). Nothing more precise '
        "is released anywhere."
    )
    also_report = serializers.ListField(
        child=serializers.CharField(), help_text="Metrics released beside the primary one for every submission."
    )
    predictions = serializers.SerializerMethodField(
        help_text="'probabilities' (in [0, 1]; K-class rows sum to 1) or 'logits' (any finite real: the log-odds "
        "of class 1, or one logit per class), as the metric reads them."
    )
    submission_format = serializers.SerializerMethodField()
    sample_submission_url = serializers.SerializerMethodField()
    model_inversion = serializers.SerializerMethodField(
        help_text="A model-inversion challenge's terms (null for any other competition): the input size, image "
        "shape and pixel range, the private classes, the per-participant query budget of the label-only "
        "prediction endpoint (predict_url) and the most inputs one request may carry."
    )

    def get_model_inversion(self, competition: Competition) -> dict[str, Any] | None:
        from leaderboard.inversion.selectors import inversion_of

        challenge = inversion_of(competition=competition)
        if challenge is None:
            return None
        return {
            **challenge.task.public(),
            "class_names": challenge.class_names,
            "query_budget": challenge.query_budget,
            "predict_url": f"/api/v1/competitions/{competition.slug}/predict/",
            "predict_example": {"inputs": [[0.0] * challenge.n_features]},
            "submission_example": {"reconstructions": [[0.0] * challenge.n_features] * competition.n_classes},
            "score": "attack accuracy: the share of private classes whose reconstruction the host's evaluation "
                     "classifier puts in that class",
        }

    def get_predictions(self, competition: Competition) -> str:
        return "logits" if competition.predictions_are_logits else "probabilities"

    def get_submission_format(self, competition: Competition) -> dict[str, Any]:
        columns = competition.submission_columns
        if competition.takes_models:
            return {"columns": columns, **model_format(competition)}
        return {
            "columns": columns,
            "content_types": SUBMISSION_CONTENT_TYPES,
            "max_bytes": settings.LEADERBOARD_MAX_UPLOAD_BYTES,
            "json_example": {
                "predictions": [{"id": "<id>", **{c: 0.0 if competition.predictions_are_logits else 0.5
                                                  for c in columns[1:]}}]
            },
        }

    def get_sample_submission_url(self, competition: Competition) -> str:
        return f"/api/v1/competitions/{competition.slug}/sample-submission/"


LISTED_HELP = (
    "Shown on the home page and in GET /api/v1/competitions/ (default); false: reached only by its URL, e.g. a "
    "game's cell."
)


class HostCompetitionSerializer(CompetitionDetailSerializer):
    defenses = serializers.JSONField()
    same_file_same_score = serializers.BooleanField()
    listed = serializers.BooleanField(help_text=LISTED_HELP)
    host = serializers.CharField(source="host.username", allow_null=True, default=None)


class InversionChallengeCreateInputSerializer(serializers.Serializer):
    """A model-inversion challenge: the bundled digits (JSON, target and evaluator trained on digits 0–4), or the
    host's own (multipart: ``target`` and ``evaluator`` as arrays-only ``.npz``, optional ``public`` images)."""

    slug = serializers.SlugField(max_length=64)
    title = serializers.CharField(required=False, default="", allow_blank=True)
    bundle = serializers.ChoiceField(
        choices=["digits", "custom"], required=False, allow_null=True, default=None,
        help_text="'digits' (the bundled challenge) or 'custom' (your files); default: 'custom' when a target file "
        "is sent, else 'digits'.")
    query_budget = serializers.IntegerField(min_value=1, max_value=10_000_000, default=5000)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    daily_limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=5)
    total_limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    closes_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    target = serializers.FileField(
        required=False, help_text="custom: the target model (.npz written by python -m attacks.inversion.export); "
        "its predicted class is all the endpoint releases")
    evaluator = serializers.FileField(required=False, help_text="custom: the evaluation model (.npz), kept private")
    public = serializers.FileField(
        required=False, help_text="custom, optional: public images (.npy or CSV, one image a row) that fit the "
        "reference attacker's generator; without them the reference attack is skipped")
    image_shape = serializers.CharField(required=False, default=None, allow_null=True,
                                        help_text="custom: HEIGHTxWIDTH (default: square, else one row)")
    pixel_low = serializers.FloatField(required=False, default=0.0, help_text="custom: the smallest pixel value")
    pixel_high = serializers.FloatField(required=False, default=1.0, help_text="custom: the largest pixel value")
    class_names = serializers.ListField(child=serializers.CharField(max_length=80), required=False, default=None,
                                        allow_null=True, help_text="custom: one name per class, in order")


class PredictInputSerializer(serializers.Serializer):
    inputs = serializers.JSONField(help_text="A list of inputs, each a list of n_features numbers in the pixel range.")


class PredictionSerializer(serializers.Serializer):
    """The label-only endpoint's answer: predicted classes and the budget, nothing else."""

    labels = serializers.ListField(child=serializers.IntegerField(), help_text="The target's class of each input.")
    queries_used = serializers.IntegerField()
    queries_left = serializers.IntegerField()
    query_budget = serializers.IntegerField()


class QuotaSerializer(serializers.Serializer):
    daily_limit = serializers.IntegerField(allow_null=True)
    used_today = serializers.IntegerField()
    remaining_today = serializers.IntegerField(allow_null=True)
    total_limit = serializers.IntegerField(allow_null=True)
    used_total = serializers.IntegerField()
    remaining_total = serializers.IntegerField(allow_null=True)
    resets_at = serializers.DateTimeField(help_text="Next UTC midnight, when the daily counter restarts.")


class SubmissionSerializer(serializers.Serializer):
    """A participant's own submission: released scores only; the private one only after the close."""

    id = serializers.IntegerField()
    competition = serializers.CharField(source="competition.slug")
    status = serializers.CharField()
    public_score = serializers.FloatField(allow_null=True)
    public_score_text = serializers.CharField(help_text="The released score exactly as shown on the board.")
    public_message = serializers.CharField(help_text="Why no public score was released, when a defense withheld it.")
    private_score = serializers.SerializerMethodField()
    private_score_text = serializers.SerializerMethodField()
    extra_scores = serializers.SerializerMethodField(
        help_text="Released values of the competition's also_report metrics: {metric: {public_score_text, "
        "private_score_text}}; the private text only after the close."
    )
    error = serializers.CharField()
    review = serializers.SerializerMethodField(
        help_text="The sybil screen's hold: \"held\" (held for the host's review: scored, no score released, cannot "
        "be selected as final), \"releasing\" (the host released it; its score follows), \"withheld\" (the host "
        "disqualified the account: never released); null when not held."
    )
    selected_for_final = serializers.BooleanField()
    upload_name = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    per_class = serializers.SerializerMethodField(
        help_text="On a model-inversion challenge: whether the evaluator recognised each class's reconstruction "
        "(true/false per class, once scored); null elsewhere."
    )

    def get_per_class(self, submission: Submission) -> list[bool] | None:
        from leaderboard.inversion.selectors import inversion_of, inversion_per_class

        challenge = inversion_of(competition=submission.competition)
        return None if challenge is None else inversion_per_class(challenge=challenge, submission=submission)

    def get_extra_scores(self, submission: Submission) -> dict[str, dict[str, str]]:
        closed = submission.competition.is_closed()
        return {
            name: {
                "public_score_text": texts.get("public", ""),
                "private_score_text": texts.get("private", "") if closed else "",
            }
            for name, texts in (submission.extra_scores or {}).items()
        }

    def get_private_score(self, submission: Submission) -> float | None:
        return submission.private_score if submission.competition.is_closed() else None

    def get_review(self, submission: Submission) -> str | None:
        return submission_review(submission) or None

    def get_private_score_text(self, submission: Submission) -> str:
        return submission.private_score_text if submission.competition.is_closed() else ""


class SubmissionCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    url = serializers.CharField()
    quota = QuotaSerializer()
    replayed = serializers.BooleanField(
        help_text="True when the Idempotency-Key repeated an earlier upload: this is that submission, as it is "
        "now; nothing new was created or charged."
    )


class HostSubmissionSerializer(serializers.Serializer):
    """Host-only: raw next to released, and the defenses' notes."""

    id = serializers.IntegerField()
    participant = serializers.CharField(source="participant.username")
    status = serializers.CharField()
    raw_public = serializers.FloatField(allow_null=True)
    raw_public_text = serializers.CharField()
    public_score = serializers.FloatField(allow_null=True)
    public_score_text = serializers.CharField()
    raw_private = serializers.FloatField(allow_null=True)
    raw_private_text = serializers.CharField()
    private_score = serializers.FloatField(allow_null=True)
    private_score_text = serializers.CharField()
    defense_notes = serializers.JSONField()
    error = serializers.CharField()
    selected_for_final = serializers.BooleanField()
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    participant = serializers.CharField()
    score = serializers.FloatField()
    score_text = serializers.CharField(help_text="The released score exactly as shown.")
    entries = serializers.IntegerField()
    submitted_at = serializers.DateTimeField()


class SelectFinalInputSerializer(serializers.Serializer):
    selected = serializers.BooleanField(required=False, allow_null=True, default=None)


DEFENSE_CHAIN_HELP = (
    "The defense chain: an ordered JSON list of stages, each an object with the defense's `name` and its "
    'parameters, e.g. `[{"name": "noise", "kind": "laplace", "scale": 0.0001}, {"name": "rounding", "decimals": 5}]`; '
    f"`[]` releases scores as computed (rounded to `score_decimals`). Names: {', '.join(defenses.available())} "
    "(their parameters: the documentation's Defenses page, docs/defense_chains.md). Unknown names or parameters, "
    "bad values, a wrong stage order or a stage the metric cannot serve are a 400 naming the problem."
)


class DefensesInputSerializer(serializers.Serializer):
    """The body of ``PUT host/competitions/{slug}/defenses/``: the whole new chain (not a patch of the old one)."""

    defenses = serializers.JSONField(help_text=DEFENSE_CHAIN_HELP)
    disclosed_defenses = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, default=None,
        help_text="What participants are told about the defenses, shown as written on the competition page and in "
        "its metadata; leave it out (or null) to keep what is disclosed now. The chain itself is never shown.",
    )


class CompetitionUpdateInputSerializer(serializers.Serializer):
    """The body of ``PATCH host/competitions/{slug}/``: only the settings given change (``update_competition``)."""

    title = serializers.CharField(required=False, allow_blank=True)
    description = serializers.CharField(
        required=False, allow_blank=True, help_text="Markdown shown on the competition page (no raw HTML)."
    )
    score_decimals = serializers.IntegerField(required=False, min_value=0, max_value=17, allow_null=True)
    daily_limit = serializers.IntegerField(required=False, min_value=0, allow_null=True)
    total_limit = serializers.IntegerField(required=False, min_value=0, allow_null=True)
    opens_at = serializers.DateTimeField(required=False)
    closes_at = serializers.DateTimeField(required=False, allow_null=True)
    team_merger_deadline = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Joining and merging teams close then (empty: at the close)."
    )
    max_team_size = serializers.IntegerField(
        required=False, min_value=1, max_value=32767, allow_null=True,
        help_text="The most members a team may have (empty: no limit); checked on accepting and on merging.",
    )
    defenses = serializers.JSONField(required=False, help_text=DEFENSE_CHAIN_HELP)
    disclosed_defenses = serializers.CharField(required=False, allow_blank=True)
    also_report = serializers.ListField(child=serializers.CharField(), required=False)
    same_file_same_score = serializers.BooleanField(required=False)
    listed = serializers.BooleanField(required=False, help_text=LISTED_HELP)


class GameCleanInputSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField(default=False, help_text="say what would be removed, remove nothing")


class GameCleanSerializer(serializers.Serializer):
    competitions = serializers.ListField(child=serializers.CharField(), help_text="the slugs removed")
    submissions = serializers.IntegerField()
    accounts = serializers.ListField(child=serializers.CharField(), help_text="the usernames removed")
    dry_run = serializers.BooleanField()
    summary = serializers.CharField()


class CompetitionCreateInputSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=64)
    labels = serializers.FileField(help_text="CSV with header id,label; labels are integers 0..K-1.")
    features = serializers.FileField(
        required=False, allow_null=True, default=None,
        help_text="Optional hidden test features: CSV id,f1,...,fd with the labels' ids. With it, participants "
        "upload ONNX models, run by the worker on these features.",
    )
    title = serializers.CharField(required=False, allow_blank=True, default="")
    description = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Markdown shown on the competition page (no raw HTML)."
    )
    metric = serializers.CharField(max_length=40, default="binary_logloss", help_text=METRIC_HELP)
    eps = serializers.FloatField(default=1e-15)
    score_decimals = serializers.IntegerField(min_value=0, max_value=17, allow_null=True, default=5)
    public_fraction = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.3)
    daily_limit = serializers.IntegerField(min_value=0, allow_null=True, default=5)
    total_limit = serializers.IntegerField(min_value=0, allow_null=True, default=None)
    opens_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    closes_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    arithmetic = serializers.CharField(default="float64")
    defenses = serializers.JSONField(required=False, default=None, help_text=DEFENSE_CHAIN_HELP)
    disclosed_defenses = serializers.CharField(required=False, allow_blank=True, default="")
    same_file_same_score = serializers.BooleanField(default=False)
    also_report = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    secret = serializers.IntegerField(
        min_value=0, max_value=2**128 - 1, required=False, allow_null=True, default=None,
        help_text="Fix the secret seed (public/private split and defense randomness), e.g. to replay an offline "
        "game cell; default: a fresh random secret. Never shown back.",
    )
    listed = serializers.BooleanField(default=True, help_text=LISTED_HELP)

    def validate_metric(self, value: str) -> str:
        try:
            get_metric(value)
        except ConfigurationError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate_defenses(self, value: Any) -> Any:
        # In a multipart form the chain arrives as JSON text.
        if isinstance(value, str):
            import json

            try:
                return json.loads(value) if value.strip() else []
            except json.JSONDecodeError as exc:
                raise serializers.ValidationError(f"not valid JSON: {exc}") from None
        return value


class ParticipantLeakageSerializer(serializers.Serializer):
    participant = serializers.CharField()
    submissions = serializers.IntegerField()
    scored = serializers.IntegerField()
    failed = serializers.IntegerField()
    mean_abs_public_error = serializers.FloatField(allow_null=True, help_text="mean |released - raw| (public)")
    max_abs_public_error = serializers.FloatField(allow_null=True)
    mean_abs_private_error = serializers.FloatField(allow_null=True)


class ParticipantCreateInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class ParticipantCreatedSerializer(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(
        help_text="A new API token of the account, shown this once (the site keeps only its digest; it replaces the "
        "account's previous token): send it as `Authorization: Token …`."
    )
    created = serializers.BooleanField(help_text="False when this host had made the account before.")


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 1, "maximum": 10_000},
                               {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 10_000},
                                "minItems": 1, "maxItems": 12}]})
class AccountCountsField(serializers.Field):
    """One account count or a list of them, as a list of whole numbers, each checked as the audit checks them."""

    default_error_messages = {"invalid": "give a whole number of accounts or a list of them"}

    def to_internal_value(self, data: Any) -> list[int]:
        from games.audit import AuditError, account_counts

        values = data if isinstance(data, list) else [data]
        if not values or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            self.fail("invalid")
        try:
            return account_counts([int(v) for v in values])
        except AuditError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value: Any) -> Any:
        return value


class AuditStartInputSerializer(serializers.Serializer):
    """The body of ``POST host/competitions/{slug}/audit/`` (every field optional)."""

    budget = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=20_000,
        help_text="The most submissions an attack may make (all accounts together). Default: four times the "
        "participants' quota, at most 2,000 (2,000 when the quota is unbounded).",
    )
    accounts = AccountCountsField(
        required=False, default=None,
        help_text="The account counts of the accounts axis: one whole number or a list of them (at most 12, each "
        "from 1 to 10,000; default [1, 2, 10, 30, 100, 1000]). The quota is per account, so an attacker with k "
        "accounts has k times it; the battery's budget ladder plays with the smallest count.",
    )
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1,
                                    help_text="Seed of the attacks' random choices.")


class AuditSerializer(serializers.Serializer):
    """A leakage audit (host only): its status, progress and, once done, the result of ``games.audit``: per
    attack a curve of label accuracy on the public and the private rows against submissions, the quota, the
    majority-class rate, the honest utility with and without the chain, and the verdict."""

    id = serializers.IntegerField(source="pk")
    competition = serializers.CharField(source="competition.slug")
    status = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    progress = serializers.IntegerField(source="percent", help_text="Percent done (100 once done).")
    step = serializers.CharField(help_text="What the audit is doing now.")
    budget = serializers.IntegerField(allow_null=True, help_text="As asked; null: the default for the quota.")
    accounts = serializers.IntegerField(help_text="The smallest account count: the one the battery's ladder plays.")
    account_counts = serializers.ListField(child=serializers.IntegerField(), source="counts",
                                           help_text="Every account count of the accounts axis, smallest first.")
    seed = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(help_text="Why it failed (empty otherwise).")
    verdict = serializers.CharField(help_text="What the library's attacks read within the quota (each split against "
                                    "its own majority class) and the sign-ups they needed: a lower bound on the "
                                    "leakage, not a limit on every attacker.")
    result = serializers.JSONField(allow_null=True, help_text="The full result once done, else null.")
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField(help_text="The host page showing this audit with its charts.")

    def get_url(self, audit: Any) -> str:
        return f"/api/v1/host/competitions/{audit.competition.slug}/audit/{audit.pk}/"

    def get_page(self, audit: Any) -> str:
        return f"/c/{audit.competition.slug}/host/audit/"


# --- Teams ----------------------------------------------------------------------------------------------


class TeamCreateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64, help_text="Unique in the competition (case-insensitive).")


class TeamInviteInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)


class TeamMergeInputSerializer(serializers.Serializer):
    team = serializers.IntegerField(help_text="The id of the other team, in the same competition.")


class TeamSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    competition = serializers.CharField(source="competition.slug")
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    members = serializers.ListField(child=serializers.CharField(), help_text="Member usernames (public, as on Kaggle).")


class InvitationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    team = serializers.IntegerField(source="team.id")
    team_name = serializers.CharField(source="team.name")
    competition = serializers.CharField(source="team.competition.slug")
    invitee = serializers.CharField(source="invitee.username")
    status = serializers.CharField()
    created_at = serializers.DateTimeField()


class TeamSerializer(TeamSummarySerializer):
    is_member = serializers.BooleanField(help_text="Whether the caller is a member.")
    invitations = InvitationSerializer(many=True, help_text="Pending invitations: shown to members only.")


class TeamMergeSerializer(serializers.Serializer):
    merged = serializers.BooleanField(help_text="False: the request is recorded until the other team agrees.")
    team = TeamSerializer()
