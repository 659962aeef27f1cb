"""API views: each validates its input, calls one service or selector and serialises the answer."""

from __future__ import annotations

import contextlib
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotAuthenticated, NotFound, ParseError, PermissionDenied, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.accounts.services import participant_provision
from leaderboard.api import serializers as s
from leaderboard.api.json_bounds import BoundedJSONParser, JsonBounds, json_shape_refusal, submission_bounds
from leaderboard.api.pagination import PAGE_PARAMETERS, page_headers, page_window, paginated
from leaderboard.api.renderers import CSVRenderer
from leaderboard.audits.selectors import audit_get, audit_latest
from leaderboard.audits.services import audit_request, audits_expire
from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import (
    competition_can_create,
    competition_get,
    competition_is_host,
    competition_list,
    competition_sample_submission,
)
from leaderboard.competitions.services import competition_create, competition_set_defenses, competition_update
from leaderboard.errors import InvalidUpload
from leaderboard.screening.services import request_trace
from leaderboard.submissions.models import IDEMPOTENCY_KEY_MAX_LENGTH, UploadKind
from leaderboard.submissions.selectors import (
    BOARDS,
    leaderboard_csv,
    leaderboard_rows,
    quota_status,
    submission_get_for_participant,
    submission_leakage_for_host,
    submission_list_for_host,
    submission_list_for_participant,
)
from leaderboard.submissions.services import submission_create, submission_select_final
from leaderboard.submissions.teams import (
    invitation_accept,
    invitation_decline,
    invitations_for,
    team_create,
    team_get,
    team_invitations,
    team_invite,
    team_is_member,
    team_leave,
    team_list_with_members,
    team_members,
    team_merge,
)
from leaderboard.uploads import (
    StreamedUploadedFile,
    stream_body,
    streams_uploads,
    too_large,
    upload_bytes,
    upload_limit,
    upload_refusal,
)

IDEMPOTENCY_HEADER = "Idempotency-Key"


def _host_competition(request: Request, slug: str) -> Competition:
    competition = competition_get(slug=slug)
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may do this")
    return competition


class CompetitionListApi(APIView):
    """The listed competitions, newest opening first, a page at a time (``Link`` gives the next)."""

    @extend_schema(responses=s.CompetitionSummarySerializer(many=True), parameters=PAGE_PARAMETERS)
    def get(self, request: Request) -> Response:
        return paginated(request, competition_list(), s.CompetitionSummarySerializer)


class CompetitionDetailApi(APIView):
    @extend_schema(responses=s.CompetitionDetailSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(s.CompetitionDetailSerializer(competition_get(slug=slug)).data)


class SampleSubmissionApi(APIView):
    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request: Request, slug: str) -> HttpResponse:
        competition = competition_get(slug=slug)
        response = HttpResponse(competition_sample_submission(competition=competition), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{competition.slug}-sample-submission.csv"'
        return response


class QuotaApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=s.QuotaSerializer)
    def get(self, request: Request, slug: str) -> Response:
        competition = competition_get(slug=slug)
        return Response(s.QuotaSerializer(quota_status(competition=competition, participant=request.user)).data)


def _read_upload(request: Request) -> tuple[bytes | StreamedUploadedFile | UploadedFile, str, str]:
    """The upload, its kind and file name: multipart ``file`` or a raw CSV body (each streamed to a temporary
    file: :mod:`leaderboard.uploads`), or a JSON body (bytes).

    JSON is read as raw bytes (not ``request.data``) so that numbers keep their exact decimal text.
    """
    content_type = (request.content_type or "").split(";")[0].strip().lower()
    try:
        if content_type == "application/json" or content_type.endswith("+json"):
            return request.body, UploadKind.JSON, ""
        if content_type in {"text/csv", "text/plain", "application/csv", "application/octet-stream"}:
            return stream_body(request._request), UploadKind.CSV, ""
        if content_type == "multipart/form-data":
            upload = request.FILES.get("file")
            refusal = upload_refusal(request._request)
            if refusal is not None:
                raise refusal
            if upload is None:
                raise InvalidUpload('send the predictions as the multipart field "file" (a CSV file)')
            limit = upload_limit()
            if upload.size is not None and upload.size > limit:
                raise too_large(upload.size, limit)
            return upload, UploadKind.CSV, upload.name or ""
    except RequestDataTooBig:
        raise InvalidUpload("the upload is over the size limit") from None
    raise InvalidUpload(
        f"unsupported content type {content_type or '(none)'!r}: send multipart/form-data with a 'file' field, "
        'text/csv, or application/json {"predictions": ...}'
    )


# inversion.services.MAX_BATCH_VALUES (imported late there; tests/site/test_json_bodies.py checks they agree).
PREDICT_MAX_VALUES = 256 * 1024


def _inversion(slug: str) -> Any:
    from leaderboard.inversion.selectors import inversion_of

    challenge = inversion_of(competition=competition_get(slug=slug))
    if challenge is None:
        raise NotFound("this competition has no prediction endpoint (it is not a model-inversion challenge)")
    return challenge


class PredictApi(APIView):
    """The label-only prediction endpoint of a model-inversion challenge: each input costs one query of the
    participant's budget; the answer is the target's predicted class of each input and nothing else."""

    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser]
    # A batch holds at most PREDICT_MAX_VALUES numbers, so as many inputs at most.
    json_bounds = JsonBounds(containers=PREDICT_MAX_VALUES + 16, separators=2 * PREDICT_MAX_VALUES + 64, depth=6)

    @extend_schema(responses=s.PredictionSerializer)
    def get(self, request: Request, slug: str) -> Response:
        from leaderboard.inversion.selectors import inversion_budget

        budget = inversion_budget(challenge=_inversion(slug), participant=request.user)
        return Response({"labels": [], "queries_used": budget.queries_used, "queries_left": budget.queries_left,
                         "query_budget": budget.query_budget})

    @extend_schema(
        request=s.PredictInputSerializer,
        responses={
            200: s.PredictionSerializer,
            400: OpenApiResponse(description="malformed inputs (`detail` names the input); nothing is charged"),
            403: OpenApiResponse(description="the challenge is not open"),
            429: OpenApiResponse(description="the budget cannot cover the request; `queries_left` says what can"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        from leaderboard.inversion.services import inversion_predict

        challenge = _inversion(slug)
        payload = s.PredictInputSerializer(data=request.data if isinstance(request.data, dict) else {})
        payload.is_valid(raise_exception=True)
        answer = inversion_predict(challenge=challenge, participant=request.user,
                                   inputs=payload.validated_data["inputs"])
        return Response(s.PredictionSerializer({
            "labels": answer.labels, "queries_used": answer.queries_used, "queries_left": answer.queries_left,
            "query_budget": answer.query_budget,
        }).data)


@streams_uploads
class CompetitionSubmissionsApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, BoundedJSONParser]

    @extend_schema(responses=s.SubmissionSerializer(many=True), parameters=PAGE_PARAMETERS)
    def get(self, request: Request, slug: str) -> Response:
        """Your submissions, newest first, a page at a time (``Link`` gives the next)."""
        competition = competition_get(slug=slug)
        submissions = submission_list_for_participant(competition=competition, participant=request.user)
        return paginated(request, submissions, s.SubmissionSerializer)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER, str, location=OpenApiParameter.HEADER, required=False,
                description="A unique value per logical upload (e.g. a UUID), repeated on every retry of it: a POST "
                "repeating a key you already used on this competition answers 202 with that earlier submission "
                "(its current status, `replayed: true`, header `Idempotent-Replayed: true`) without creating or "
                "charging anything; the same key with a different upload is a 422. Printable ASCII, at most "
                f"{IDEMPOTENCY_KEY_MAX_LENGTH} characters.",
            ),
        ],
        request={
            "multipart/form-data": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}},
            "application/json": {"type": "object", "properties": {"predictions": {}}},
        },
        responses={
            202: s.SubmissionCreatedSerializer,
            400: OpenApiResponse(description="malformed upload (`detail` names the line, `line` gives it) or key"),
            403: OpenApiResponse(description="the competition is not open"),
            422: OpenApiResponse(description="the Idempotency-Key was already used with a different upload"),
            429: OpenApiResponse(description="over quota; `resets_at` (UTC) and a Retry-After header"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        competition = competition_get(slug=slug)
        key = _idempotency_key(request)
        upload, kind, name = _read_upload(request)
        if isinstance(upload, bytes):  # JSON: its shape checked before anything parses it
            _refuse_hostile_json(upload, competition)
        with upload_bytes(upload) if not isinstance(upload, bytes) else contextlib.nullcontext(upload) as data:
            submission = submission_create(
                competition=competition, participant=request.user, data=data, kind=kind, filename=name,
                idempotency_key=key, sha256=getattr(upload, "sha256", None),
            )
        quota = quota_status(competition=competition, participant=request.user)
        body = {
            "id": submission.pk,
            "status": submission.status,
            "url": f"/api/v1/submissions/{submission.pk}/",
            "quota": s.QuotaSerializer(quota).data,
            "replayed": submission.replayed,
        }
        headers = {"Idempotent-Replayed": "true"} if submission.replayed else None
        return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)


def _refuse_hostile_json(body: bytes, competition: Any) -> None:
    """A JSON upload whose shape no accepted ``{"predictions": ...}`` of this competition has is refused before
    ``json.loads`` builds it (a 50 MB ``[[], [], ...]`` is 1.6 GB of lists): ``leaderboard.api.json_bounds``."""
    n_values = len(competition.submission_columns) - 1
    refusal = json_shape_refusal(body, submission_bounds(n_rows=competition.n_rows, n_values=n_values))
    if refusal is not None:
        raise InvalidUpload(f"{refusal} (this competition has {competition.n_rows} rows)")


def _idempotency_key(request: Request) -> str | None:
    """The upload's ``Idempotency-Key`` header (one pair of surrounding double quotes dropped), or ``None``."""
    value = request.headers.get(IDEMPOTENCY_HEADER)
    if value is None:
        return None
    key = value.strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    if not key:
        raise ParseError(f"the {IDEMPOTENCY_HEADER} header is empty; send a unique value per upload or leave it out")
    if len(key) > IDEMPOTENCY_KEY_MAX_LENGTH:
        raise ParseError(
            f"the {IDEMPOTENCY_HEADER} header is {len(key)} characters long, over the limit of "
            f"{IDEMPOTENCY_KEY_MAX_LENGTH}"
        )
    if not all(" " <= char <= "~" for char in key):
        raise ParseError(f"the {IDEMPOTENCY_HEADER} header may hold only printable ASCII characters")
    return key


class SubmissionDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=s.SubmissionSerializer)
    def get(self, request: Request, submission_id: int) -> Response:
        submission = submission_get_for_participant(submission_id=submission_id, participant=request.user)
        return Response(s.SubmissionSerializer(submission).data)


class SubmissionSelectApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=s.SelectFinalInputSerializer, responses=s.SubmissionSerializer)
    def post(self, request: Request, submission_id: int) -> Response:
        payload = s.SelectFinalInputSerializer(data=request.data or {})
        payload.is_valid(raise_exception=True)
        submission = submission_get_for_participant(submission_id=submission_id, participant=request.user)
        submission = submission_select_final(
            submission=submission, participant=request.user, selected=payload.validated_data["selected"]
        )
        return Response(s.SubmissionSerializer(submission).data)


class LeaderboardApi(APIView):
    """``?board=public|private`` (private after the close; hosts any time); ``?format=csv`` exports it."""

    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("board", str, enum=list(BOARDS), default="public"),
            OpenApiParameter("format", str, enum=["json", "csv"], default="json"),
            *PAGE_PARAMETERS,
        ],
        responses=s.LeaderboardRowSerializer(many=True),
        description="JSON: one page of the board's `rows` in rank order (`Link` gives the next page, "
        "`X-Total-Count` the rows); the CSV export has every row.",
    )
    def get(self, request: Request, slug: str) -> Response:
        competition = competition_get(slug=slug)
        board = request.query_params.get("board", "public")
        if board not in BOARDS:
            raise NotFound(f"unknown board {board!r}; use 'public' or 'private'")
        is_host = competition_is_host(user=request.user, competition=competition)
        if request.accepted_renderer.format == "csv":
            text = leaderboard_csv(competition=competition, board=board, allow_private_before_close=is_host)
            response = Response(text)
            response["Content-Disposition"] = f'attachment; filename="{competition.slug}-{board}-leaderboard.csv"'
            return response
        rows = leaderboard_rows(competition=competition, board=board, allow_private_before_close=is_host)
        window = page_window(request, len(rows))
        return page_headers(Response(
            {
                "competition": competition.slug,
                "board": board,
                "metric": competition.metric,
                "higher_is_better": competition.board_higher_is_better,
                "feedback": competition.feedback,
                "closed": competition.is_closed(),
                "rows": s.LeaderboardRowSerializer(rows[window], many=True).data,
            }
        ), request, len(rows))


# --- Teams ---------------------------------------------------------------------------------------------

TEAM_ERRORS = {
    400: OpenApiResponse(description="A malformed request (`detail` says what)."),
    403: OpenApiResponse(description="Not a member, the competition closed or the merger deadline passed."),
    404: OpenApiResponse(description="No such team, user or invitation (or not yours)."),
    409: OpenApiResponse(description="The current state refuses it: a taken name, already in a team, over quota."),
}


def _team_data(team: Any, viewer: Any) -> dict[str, Any]:
    return {
        "id": team.pk,
        "competition": team.competition,
        "name": team.name,
        "created_at": team.created_at,
        "members": team_members(team=team),
        "is_member": team_is_member(team=team, user=viewer),
        "invitations": list(team_invitations(team=team, viewer=viewer)),
    }


class CompetitionTeamsApi(APIView):
    """The competition's teams (public: names and members, as the board shows them); create one."""

    @extend_schema(summary="List a competition's teams", responses=s.TeamSummarySerializer(many=True),
                   parameters=PAGE_PARAMETERS)
    def get(self, request: Request, slug: str) -> Response:
        competition = competition_get(slug=slug)
        teams = [
            {"id": t.pk, "competition": competition, "name": t.name, "created_at": t.created_at, "members": members}
            for t, members in team_list_with_members(competition=competition)
        ]
        return paginated(request, teams, s.TeamSummarySerializer)

    @extend_schema(
        summary="Create a team",
        description="The caller becomes its first member. A participant already in a team of the competition "
        "cannot create another; one with submissions may (they become the team's).",
        request=s.TeamCreateInputSerializer,
        responses={201: s.TeamSerializer, **TEAM_ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        competition = competition_get(slug=slug)
        payload = s.TeamCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        team = team_create(competition=competition, user=request.user, name=payload.validated_data["name"])
        return Response(s.TeamSerializer(_team_data(team, request.user)).data, status=status.HTTP_201_CREATED)


class TeamDetailApi(APIView):
    @extend_schema(summary="One team", responses={200: s.TeamSerializer, 404: TEAM_ERRORS[404]})
    def get(self, request: Request, team_id: int) -> Response:
        team = team_get(team_id=team_id)
        return Response(s.TeamSerializer(_team_data(team, request.user)).data)


class TeamInvitationsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Invite a user to the team (members only)",
        request=s.TeamInviteInputSerializer,
        responses={201: s.InvitationSerializer, **TEAM_ERRORS},
    )
    def post(self, request: Request, team_id: int) -> Response:
        team = team_get(team_id=team_id)
        payload = s.TeamInviteInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        invitation = team_invite(team=team, inviter=request.user, username=payload.validated_data["username"])
        return Response(s.InvitationSerializer(invitation).data, status=status.HTTP_201_CREATED)


class TeamLeaveApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Leave the team (before its first submission)", request=None,
        responses={204: None, **TEAM_ERRORS},
    )
    def post(self, request: Request, team_id: int) -> Response:
        team_leave(team=team_get(team_id=team_id), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TeamMergeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Ask to merge another team into this one, or agree to its request",
        description="A member of this team asks; the merge happens when a member of the other team makes the "
        "reverse request (`merged: true`, the requesting side's members join the agreeing team, whose name is "
        "kept). Refused after the merger deadline and when the two teams' submissions so far exceed one "
        "team's daily or total limit.",
        request=s.TeamMergeInputSerializer,
        responses={200: s.TeamMergeSerializer, 202: s.TeamMergeSerializer, **TEAM_ERRORS},
    )
    def post(self, request: Request, team_id: int) -> Response:
        team = team_get(team_id=team_id)
        payload = s.TeamMergeInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        result = team_merge(team=team, other_id=payload.validated_data["team"], user=request.user)
        body = {"merged": result.merged, "team": _team_data(result.team, request.user)}
        code = status.HTTP_200_OK if result.merged else status.HTTP_202_ACCEPTED
        return Response(s.TeamMergeSerializer(body).data, status=code)


class InvitationListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Your pending team invitations", responses=s.InvitationSerializer(many=True),
                   parameters=PAGE_PARAMETERS)
    def get(self, request: Request) -> Response:
        return paginated(request, invitations_for(user=request.user).order_by("id"), s.InvitationSerializer)


class InvitationAcceptApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Accept an invitation (invitee only)",
        description="Before the merger deadline. An invitee who already has submissions in the competition joins "
        "only as a merge: when their submissions and the team's fit one team's daily and total limits.",
        request=None,
        responses={200: s.TeamSerializer, **TEAM_ERRORS},
    )
    def post(self, request: Request, invitation_id: int) -> Response:
        team = invitation_accept(invitation_id=invitation_id, user=request.user)
        return Response(s.TeamSerializer(_team_data(team, request.user)).data)


class InvitationDeclineApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Decline an invitation (invitee only)", request=None,
                   responses={200: s.InvitationSerializer, **TEAM_ERRORS})
    def post(self, request: Request, invitation_id: int) -> Response:
        invitation = invitation_decline(invitation_id=invitation_id, user=request.user)
        return Response(s.InvitationSerializer(invitation).data)


# --- Host side ------------------------------------------------------------------------------------------


class HostCompetitionCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]

    @extend_schema(request=s.CompetitionCreateInputSerializer, responses={201: s.HostCompetitionSerializer})
    def post(self, request: Request) -> Response:
        if not competition_can_create(user=request.user):
            raise PermissionDenied("only staff (or users allowed to add competitions) may create competitions")
        payload = s.CompetitionCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(payload.validated_data)
        labels, features = data.pop("labels"), data.pop("features", None)
        competition = competition_create(
            labels_csv=labels.read(), features_csv=None if features is None else features.read(), host=request.user,
            **data,
        )
        return Response(s.HostCompetitionSerializer(competition).data, status=status.HTTP_201_CREATED)


def _upload_bytes(upload: Any, field: str, limit: int) -> bytes:
    data = upload.read(limit + 1)
    if len(data) > limit:
        raise ValidationError({field: [f"{upload.name}: larger than the {limit} bytes allowed"]})
    return bytes(data)


class HostInversionChallengeCreateApi(APIView):
    """Create a model-inversion challenge: a label-only prediction endpoint of a target trained on private
    classes, a per-participant query budget, reconstructions judged by an evaluator. JSON for the bundled digits;
    multipart with ``target`` and ``evaluator`` files (and optional ``public`` images) for the host's own."""

    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser, MultiPartParser]

    @extend_schema(request={"application/json": s.InversionChallengeCreateInputSerializer,
                            "multipart/form-data": s.InversionChallengeCreateInputSerializer},
                   responses={201: s.HostCompetitionSerializer})
    def post(self, request: Request) -> Response:
        from leaderboard.inversion.services import (
            inversion_custom_create,
            inversion_digits_create,
            parse_image_shape,
            split_class_names,
        )
        from scoring.inversion_files import MAX_MODEL_BYTES, MAX_PUBLIC_BYTES

        if not competition_can_create(user=request.user):
            raise PermissionDenied("only staff (or users allowed to add competitions) may create competitions")
        payload = s.InversionChallengeCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(payload.validated_data)
        target, evaluator, public = data.pop("target", None), data.pop("evaluator", None), data.pop("public", None)
        own = {key: data.pop(key) for key in ("image_shape", "pixel_low", "pixel_high", "class_names")}
        bundle = data.pop("bundle") or ("custom" if target is not None else "digits")
        if bundle == "digits":
            if target is not None or evaluator is not None or public is not None:
                raise ValidationError({"bundle": ["the digits bundle takes no files; send bundle=custom"]})
            challenge = inversion_digits_create(host=request.user, **data)
            return Response(s.HostCompetitionSerializer(challenge.competition).data, status=status.HTTP_201_CREATED)
        missing = [name for name, upload in (("target", target), ("evaluator", evaluator)) if upload is None]
        if missing:
            raise ValidationError({name: ["a custom challenge needs this .npz file"] for name in missing})
        challenge = inversion_custom_create(
            host=request.user, target_npz=_upload_bytes(target, "target", MAX_MODEL_BYTES),
            evaluator_npz=_upload_bytes(evaluator, "evaluator", MAX_MODEL_BYTES),
            public=None if public is None else _upload_bytes(public, "public", MAX_PUBLIC_BYTES),
            target_name=f"target ({target.name})", evaluator_name=f"evaluator ({evaluator.name})",
            public_name="public" if public is None else f"public ({public.name})",
            image_shape=None if not own["image_shape"] else parse_image_shape(own["image_shape"]),
            pixel_range=(own["pixel_low"], own["pixel_high"]), class_names=split_class_names(own["class_names"]),
            **data,
        )
        return Response(s.HostCompetitionSerializer(challenge.competition).data, status=status.HTTP_201_CREATED)


class HostParticipantsApi(APIView):
    """Make a participant account (API token only, no password) for a bot, a class or a test.

    Allowed to whoever may create competitions (staff, or the ``competitions.add_competition`` permission).
    Asking again for an account this host made answers 200 with a new token (its old one stops working: the site
    keeps only digests of tokens); a name taken otherwise is 409.
    """

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=s.ParticipantCreateInputSerializer,
        responses={
            201: s.ParticipantCreatedSerializer,
            200: OpenApiResponse(s.ParticipantCreatedSerializer,
                                 description="an account this host made before, with a new token"),
            400: OpenApiResponse(description="an invalid username or email"),
            403: OpenApiResponse(description="not allowed to create competitions"),
            409: OpenApiResponse(description="the username is taken by an account this host did not make"),
            429: OpenApiResponse(description="over the host's new accounts in 24 hours; `resets_at` (UTC)"),
        },
    )
    def post(self, request: Request) -> Response:
        if not competition_can_create(user=request.user):
            raise PermissionDenied("only staff (or users allowed to add competitions) may create participants")
        payload = s.ParticipantCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        user, token, created = participant_provision(
            username=payload.validated_data["username"], email=payload.validated_data["email"], host=request.user,
            **request_trace(request),
        )
        body = {"username": user.get_username(), "token": token, "created": created}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class HostGameCleanApi(APIView):
    """Remove the competitions this host's live games made (unlisted, ``game-`` + 20 hex digits), their submissions
    and the attacker accounts made for them (``leaderboard-game clean --url``; ``manage.py clean_games`` on the
    site). ``{"dry_run": true}`` only says what would go."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=s.GameCleanInputSerializer, responses={200: s.GameCleanSerializer})
    def post(self, request: Request) -> Response:
        from leaderboard.competitions.cleanup import game_cells_remove

        if not competition_can_create(user=request.user):
            raise PermissionDenied("only staff (or users allowed to add competitions) host games")
        payload = s.GameCleanInputSerializer(data=request.data or {})
        payload.is_valid(raise_exception=True)
        dry_run = payload.validated_data["dry_run"]
        done = game_cells_remove(host=request.user, dry_run=dry_run)
        body = {"competitions": done.competitions, "submissions": done.submissions, "accounts": done.accounts,
                "dry_run": dry_run, "summary": done.summary(dry_run=dry_run)}
        return Response(s.GameCleanSerializer(body).data)


HOST_ERRORS = {
    400: OpenApiResponse(description="a setting is refused; `detail` names it and why"),
    403: OpenApiResponse(description="not the competition's host (nor staff)"),
    404: OpenApiResponse(description="no such competition"),
}


class HostCompetitionDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=s.HostCompetitionSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(s.HostCompetitionSerializer(_host_competition(request, slug)).data)

    @extend_schema(
        summary="Change a competition's settings",
        description="Only the settings given change, validated as at creation (`manage.py update_competition` "
        "does the same). The hidden set, its split, the metric, eps and the arithmetic are fixed at creation.",
        request=s.CompetitionUpdateInputSerializer,
        responses={200: s.HostCompetitionSerializer, **HOST_ERRORS},
        examples=[
            OpenApiExample(
                "Close on a date, three uploads a day",
                value={"closes_at": "2027-01-31T23:59:00Z", "daily_limit": 3},
                request_only=True,
            ),
            OpenApiExample(
                "A Markdown description",
                value={"description": "## Task\nPredict the **diagnosis** of each row. See the [rules](https://example.org)."},
                request_only=True,
            ),
        ],
    )
    def patch(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        payload = s.CompetitionUpdateInputSerializer(data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        competition = competition_update(competition=competition, **payload.validated_data)
        return Response(s.HostCompetitionSerializer(competition).data)


class HostDefensesApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Replace the defense chain",
        description="The body is the whole new chain (an ordered list of stages), not a patch of the old one; "
        "it applies from the next scoring on. `disclosed_defenses` optionally replaces what participants are told. "
        "POST is accepted as a synonym.",
        request=s.DefensesInputSerializer,
        responses={200: s.HostCompetitionSerializer, **HOST_ERRORS},
        examples=[
            OpenApiExample(
                "Laplace noise, then rounding to 5 decimals",
                value={
                    "defenses": [
                        {"name": "noise", "kind": "laplace", "scale": 0.0001},
                        {"name": "rounding", "decimals": 5},
                    ],
                    "disclosed_defenses": "Scores carry a little Laplace noise and are rounded to 5 decimals.",
                },
                request_only=True,
            ),
            OpenApiExample(
                "The parameter-free Ladder",
                value={"defenses": [{"name": "ladder", "mode": "parameter_free"}]},
                request_only=True,
            ),
            OpenApiExample("No defense", value={"defenses": []}, request_only=True),
        ],
    )
    def put(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        payload = s.DefensesInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        competition = competition_set_defenses(
            competition=competition,
            defenses=payload.validated_data["defenses"],
            disclosed_defenses=payload.validated_data["disclosed_defenses"],
        )
        return Response(s.HostCompetitionSerializer(competition).data)

    post = put


class HostSubmissionsApi(APIView):
    """Every submission of the competition with raw and released scores side by side."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=s.HostSubmissionSerializer(many=True), parameters=PAGE_PARAMETERS)
    def get(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        return paginated(request, submission_list_for_host(competition=competition), s.HostSubmissionSerializer)


class HostLeakageApi(APIView):
    """Per participant: submissions, failures and the gap between released and raw scores."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=s.ParticipantLeakageSerializer(many=True), parameters=PAGE_PARAMETERS)
    def get(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        rows = submission_leakage_for_host(competition=competition)
        return paginated(request, rows, s.ParticipantLeakageSerializer)


class HostAuditApi(APIView):
    """The leakage audit: ``POST`` starts one (a Celery task; 202 with its id and URL), ``GET`` reads the
    latest (404 before the first). Only the competition's host (and staff)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Start a leakage audit",
        description="Runs the attack battery offline against the competition's own labels, split, chain and "
        "precision on a worker (`manage.py audit_competition` does the same in process), and `auto` at every "
        "account count of the accounts axis (`result.axis`, `result.sign_ups`). Poll the returned `url` "
        "until `status` is `done` or `failed`; one audit per competition runs at a time (409 names the running one).",
        request=s.AuditStartInputSerializer,
        responses={
            202: s.AuditSerializer,
            409: OpenApiResponse(description="an audit of this competition is queued or running (`id`, `url`)"),
            **HOST_ERRORS,
        },
        examples=[OpenApiExample("1, 30 and 1,000 accounts, 1,000 submissions",
                                 value={"budget": 1000, "accounts": [1, 30, 1000]}, request_only=True)],
    )
    def post(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        payload = s.AuditStartInputSerializer(data=request.data or {})
        payload.is_valid(raise_exception=True)
        audit = audit_request(competition=competition, user=request.user, **payload.validated_data)
        return Response(s.AuditSerializer(audit).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(operation_id="v1_host_competitions_audit_latest", summary="The latest leakage audit",
                   responses={200: s.AuditSerializer, **HOST_ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        competition = _host_competition(request, slug)
        audits_expire(competition=competition)
        audit = audit_latest(competition=competition)
        if audit is None:
            raise NotFound("no audit of this competition yet: POST to start one")
        return Response(s.AuditSerializer(audit).data)


class HostAuditDetailApi(APIView):
    """One leakage audit of the competition: status, progress percent and, once done, the result."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="One leakage audit", responses={200: s.AuditSerializer, **HOST_ERRORS})
    def get(self, request: Request, slug: str, audit_id: int) -> Response:
        competition = _host_competition(request, slug)
        audits_expire(competition=competition)
        return Response(s.AuditSerializer(audit_get(competition=competition, audit_id=audit_id)).data)
