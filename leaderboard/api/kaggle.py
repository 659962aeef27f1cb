"""Kaggle's competition API, as far as the official ``kaggle`` command line uses it: ``kaggle competitions list``,
``files``, ``download``, ``submit``, ``submissions``, ``submission``, ``submission-limits`` and ``leaderboard``.

``kagglesdk`` posts JSON to ``/api/v1/competitions.CompetitionApiService/<Method>``; each method below reads its
fields, calls the same selectors and services as the REST API (so the same quotas, defenses, release rules and
sybil screen apply) and answers Kaggle's shapes (:mod:`leaderboard.api.kaggle_protocol`). Scores are the released
texts, exactly as the boards show them; the private ones only after the close. A submission takes three steps, as
on Kaggle: ``StartSubmissionUpload`` answers an upload URL, the command line PUTs the file there, and
``CreateSubmission`` makes the submission from it. Downloads answer a redirect to a URL ending in the file's name
(the command line names the file it saves after the URL). docs/kaggle_cli.md tells participants how to point the
command line here.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

from django.db.models import Q
from django.http import FileResponse, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotAuthenticated, NotFound, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.accounts.authentication import api_token_find
from leaderboard.api.json_bounds import BoundedJSONParser
from leaderboard.api.kaggle_protocol import (
    KaggleBasicAuthentication,
    KaggleBearerAuthentication,
    body_of,
    flag,
    integer,
    kaggle_exception_handler,
    page_of,
    text,
    when,
)
from leaderboard.api.views import _refuse_hostile_json
from leaderboard.competitions.data_files import data_file_response
from leaderboard.competitions.models import Competition, DataFile
from leaderboard.competitions.selectors import (
    competition_get,
    competition_list,
    competition_sample_submission,
    data_file_get,
    open_data_file,
)
from leaderboard.competitions.selectors import list_data_files as data_files_of
from leaderboard.errors import ApplicationError
from leaderboard.kaggle_cli.selectors import board_standing, cli_descriptions, competitions_entered
from leaderboard.kaggle_cli.services import (
    cli_upload_attach,
    cli_upload_bytes,
    cli_upload_for_submit,
    cli_upload_receive,
    cli_upload_start,
    submission_description,
)
from leaderboard.submissions.models import Status, Submission, UploadKind
from leaderboard.submissions.selectors import (
    REVIEW_HELD,
    leaderboard_csv,
    leaderboard_rows,
    quota_status,
    submission_get_for_participant,
    submission_list_for_participant,
    submission_review,
)
from leaderboard.submissions.services import submission_create
from leaderboard.uploads import stream_body

SERVICE = "competitions.CompetitionApiService"
#: Where the command line asks whose a ``KAGGLE_API_TOKEN`` is (and whether it works) before it uses one.
OAUTH_SERVICE = "security.OAuthService"
#: The sample submission is listed among the data files (as on Kaggle) unless the host attached a file so named.
SAMPLE_NAME = "sample_submission.csv"
#: Submission statuses as ``kagglesdk``'s ``SubmissionStatus`` names them.
STATUSES = {Status.QUEUED: "PENDING", Status.SCORING: "PENDING", Status.SCORED: "COMPLETE", Status.FAILED: "ERROR"}
HELD_TEXT = "held for the host's review; no score is released until the host decides"

Handler = Callable[[Request, Mapping[str, Any]], HttpResponseBase]


def _user(request: Request) -> Any:
    if not request.user.is_authenticated:
        raise NotAuthenticated("sign in: KAGGLE_USERNAME is your username here, KAGGLE_KEY one of your API tokens")
    return request.user


def _competition(body: Mapping[str, Any]) -> Competition:
    slug = text(body, "competitionName", required=True)
    try:
        return competition_get(slug=slug)
    except Competition.DoesNotExist:
        raise NotFound(f"no competition is named {slug[:80]!r} here") from None


def _compact(fields: dict[str, Any]) -> dict[str, Any]:
    """Unset fields left out, as Kaggle's answers leave them."""
    return {key: value for key, value in fields.items() if value is not None}


# --- Competitions ------------------------------------------------------------------------------------------


def _summary(description: str) -> str:
    """The description's first line of text (Kaggle's list shows a one-line brief, not the whole page)."""
    for line in description.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return stripped[:200]
    return ""


def _competition_fields(request: Request, competition: Competition) -> dict[str, Any]:
    standing = board_standing(competition=competition, user=request.user)
    return _compact({
        "ref": competition.slug,
        "title": competition.title or competition.slug,
        "url": request.build_absolute_uri(reverse("web:competition-detail", args=[competition.slug])),
        "description": _summary(competition.description) or None,
        "deadline": when(competition.closes_at),
        "enabledDate": when(competition.opens_at),
        "mergerDeadline": when(competition.team_merger_deadline),
        "dateCreated": when(competition.created_at),
        "maxDailySubmissions": competition.daily_limit,
        "maxTeamSize": competition.max_team_size,
        "evaluationMetric": competition.metric,
        "submissionsDisabled": not competition.is_open(),
        "teamCount": standing.team_count,
        "userHasEntered": standing.entered,
        "userRank": standing.user_rank,
    })


def list_competitions(request: Request, body: Mapping[str, Any]) -> Response:
    """The listed competitions (``--search`` in the slug or title; ``--group entered``: the caller's)."""
    group = text(body, "group")
    competitions = (competitions_entered(user=_user(request)) if group.endswith("ENTERED") else
                    competition_list())
    search = text(body, "search")
    if search:
        competitions = competitions.filter(Q(slug__icontains=search) | Q(title__icontains=search))
    window, next_token = page_of(body, competitions.count())
    return Response({
        "competitions": [_competition_fields(request, competition) for competition in competitions[window]],
        "nextPageToken": next_token,
    })


def get_competition(request: Request, body: Mapping[str, Any]) -> Response:
    return Response(_competition_fields(request, _competition(body)))


# --- Data files --------------------------------------------------------------------------------------------


def _has_sample(competition: Competition, files: list[DataFile]) -> bool:
    return not competition.takes_models and all(data_file.name != SAMPLE_NAME for data_file in files)


def _sample_bytes(competition: Competition) -> bytes:
    return competition_sample_submission(competition=competition).encode("utf-8")


def _file_path(competition: Competition, name: str) -> str:
    return reverse("kaggle-data-file", args=[competition.slug, name])


def list_data_files(request: Request, body: Mapping[str, Any]) -> Response:
    competition = _competition(body)
    files = data_files_of(competition)
    rows = [
        _compact({
            "ref": data_file.name, "name": data_file.name, "description": data_file.description or None,
            "totalBytes": data_file.size, "creationDate": when(data_file.created_at),
            "url": request.build_absolute_uri(_file_path(competition, data_file.name)),
        })
        for data_file in files
    ]
    if _has_sample(competition, files):
        rows.append({
            "ref": SAMPLE_NAME, "name": SAMPLE_NAME,
            "description": "Every id of the test set with a placeholder prediction, in the submission's format.",
            "totalBytes": len(_sample_bytes(competition)), "creationDate": when(competition.created_at),
            "url": request.build_absolute_uri(_file_path(competition, SAMPLE_NAME)),
        })
    window, next_token = page_of(body, len(rows))
    return Response({"files": rows[window], "nextPageToken": next_token})


def download_data_file(request: Request, body: Mapping[str, Any]) -> HttpResponseBase:
    """A redirect to the file (on this site, relative: the command line keeps its credentials on it)."""
    _user(request)
    competition = _competition(body)
    name = text(body, "fileName", required=True)
    _data_file_or_sample(competition, name)  # a 404 now rather than after the redirect
    return HttpResponseRedirect(_file_path(competition, name))


def download_data_files(request: Request, body: Mapping[str, Any]) -> HttpResponseBase:
    _user(request)
    competition = _competition(body)
    return HttpResponseRedirect(reverse("kaggle-data-bundle", args=[competition.slug, competition.slug]))


def _data_file_or_sample(competition: Competition, name: str) -> DataFile | None:
    """The data file named ``name``, or ``None`` for the sample submission; 404 for anything else."""
    try:
        return data_file_get(competition=competition, name=name)
    except DataFile.DoesNotExist:
        if name == SAMPLE_NAME and not competition.takes_models:
            return None
        raise NotFound(f"{competition.slug} has no data file named {name[:130]!r}") from None


def _sample_response(competition: Competition) -> HttpResponseBase:
    response = HttpResponse(_sample_bytes(competition), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{SAMPLE_NAME}"'
    return response


class KaggleView(APIView):
    """Basic authentication (username and API token) and Kaggle's error shape; outside the site's OpenAPI
    document (this is Kaggle's protocol, described in docs/kaggle_cli.md)."""

    authentication_classes = [KaggleBasicAuthentication, KaggleBearerAuthentication]
    permission_classes = [AllowAny]

    def get_exception_handler(self) -> Callable[..., Response | None]:
        return kaggle_exception_handler


class KaggleDataFileApi(KaggleView):
    @extend_schema(exclude=True)
    def get(self, request: Request, slug: str, name: str) -> HttpResponseBase:
        _user(request)
        competition = _competition({"competitionName": slug})
        data_file = _data_file_or_sample(competition, name)
        return _sample_response(competition) if data_file is None else data_file_response(data_file)


#: Names whose bytes are compressed already: stored in the bundle as they are.
_COMPRESSED = (".zip", ".gz", ".parquet", ".npy", ".bz2", ".xz", ".7z")


class KaggleDataBundleApi(KaggleView):
    """Every data file of the competition in one zip (``kaggle competitions download -c SLUG``)."""

    @extend_schema(exclude=True)
    def get(self, request: Request, slug: str, bundle: str) -> FileResponse:
        _user(request)
        competition = _competition({"competitionName": slug})
        if bundle != competition.slug:
            raise NotFound("no such bundle")
        files = data_files_of(competition)
        if not files and not _has_sample(competition, files):
            raise NotFound(f"{competition.slug} has no data files")
        # Spooled: a bundle of large files goes to a temporary file rather than this process's memory.
        spool = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 - closed by the response
        with zipfile.ZipFile(spool, "w") as bundle_zip:
            for data_file in files:
                info = zipfile.ZipInfo(data_file.name, date_time=data_file.created_at.timetuple()[:6])
                info.compress_type = (zipfile.ZIP_STORED if data_file.name.lower().endswith(_COMPRESSED)
                                      else zipfile.ZIP_DEFLATED)
                with open_data_file(data_file) as source, bundle_zip.open(info, "w") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
            if _has_sample(competition, files):
                bundle_zip.writestr(SAMPLE_NAME, _sample_bytes(competition), zipfile.ZIP_DEFLATED)
        spool.seek(0)
        return FileResponse(spool, as_attachment=True, filename=f"{competition.slug}.zip",
                            content_type="application/zip")


# --- Submissions -------------------------------------------------------------------------------------------


def start_submission_upload(request: Request, body: Mapping[str, Any]) -> Response:
    """An upload URL for the file (refused at once for a closed competition, a spent quota or a file over the
    limit, before the file is sent)."""
    user = _user(request)
    competition = _competition(body)
    _, token = cli_upload_start(
        user=user, competition=competition, file_name=text(body, "fileName", required=True),
        declared_size=integer(body, "contentLength"),
    )
    return Response({"token": token, "createUrl": request.build_absolute_uri(reverse("kaggle-upload", args=[token]))})


class KaggleUploadApi(KaggleView):
    """Where the command line PUTs the file: the URL's token is the credential (the command line sends none)."""

    authentication_classes: list[type] = []

    @extend_schema(exclude=True)
    def put(self, request: Request, token: str) -> Response:
        with stream_body(request._request, name="upload") as upload:
            cli_upload_receive(token=token, data=upload.read())
        return Response({})


def create_submission(request: Request, body: Mapping[str, Any]) -> Response:
    """The submission made from the uploaded file through the site's upload service (its validation, quota,
    scoring and screen); calling again with the same token answers the same submission."""
    user = _user(request)
    competition = _competition(body)
    if flag(body, "sandbox"):
        raise ValidationError({"sandbox": "this site has no sandbox submissions: every submission counts"})
    description = submission_description(text(body, "submissionDescription"))
    upload = cli_upload_for_submit(user=user, competition=competition,
                                   token=text(body, "blobFileTokens", required=True))
    submission = upload.submission
    if submission is None:
        data = cli_upload_bytes(upload)
        kind = UploadKind.JSON if upload.file_name.lower().endswith(".json") else UploadKind.CSV
        if kind == UploadKind.JSON:
            _refuse_hostile_json(data, competition)
        # The upload's own key: a repeated or concurrent call makes one submission, charged once.
        submission = submission_create(competition=competition, participant=user, data=data, kind=kind,
                                       filename=upload.file_name, idempotency_key=f"kaggle-cli-upload-{upload.pk}")
        cli_upload_attach(upload=upload, submission=submission, description=description)
    return Response({"message": f"Successfully submitted to {competition.title or competition.slug}",
                     "ref": submission.pk})


def _submission_fields(submission: Submission, description: str, username: str) -> dict[str, Any]:
    closed = submission.competition.is_closed()
    held = submission_review(submission) == REVIEW_HELD
    return _compact({
        "ref": submission.pk,
        "date": when(submission.created_at),
        "description": description or None,
        "fileName": submission.upload_name or None,
        "status": STATUSES.get(submission.status, "PENDING"),
        "publicScore": submission.public_score_text or None,
        "privateScore": (submission.private_score_text or None) if closed else None,
        "errorDescription": submission.error or submission.public_message or (HELD_TEXT if held else "") or None,
        "submittedBy": username,
    })


def list_submissions(request: Request, body: Mapping[str, Any]) -> Response:
    """The caller's own submissions to the competition, newest first (as the REST API lists them)."""
    user = _user(request)
    submissions = submission_list_for_participant(competition=_competition(body), participant=user)
    window, next_token = page_of(body, submissions.count())
    page = list(submissions[window])
    descriptions = cli_descriptions(submission.pk for submission in page)
    username = user.get_username()
    return Response({
        "submissions": [_submission_fields(submission, descriptions.get(submission.pk, ""), username)
                        for submission in page],
        "nextPageToken": next_token,
    })


def get_submission(request: Request, body: Mapping[str, Any]) -> Response:
    user = _user(request)
    ref = integer(body, "ref")
    try:
        submission = submission_get_for_participant(submission_id=ref, participant=user)
    except Submission.DoesNotExist:
        raise NotFound(f"you have no submission {ref}") from None
    return Response(_submission_fields(submission, cli_descriptions([submission.pk]).get(submission.pk, ""),
                                       user.get_username()))


def get_submission_limits(request: Request, body: Mapping[str, Any]) -> Response:
    quota = quota_status(competition=_competition(body), participant=_user(request))
    left = [remaining for remaining in (quota.remaining_today, quota.remaining_total) if remaining is not None]
    if not left:
        raise ApplicationError("this competition sets no submission limit: every submission is allowed")
    return Response({
        "numToday": quota.used_today,
        "numTotal": quota.used_total,
        "numAllowedNow": min(left),
        "limitedByTotal": quota.remaining_total is not None and quota.remaining_total == min(left)
        and (quota.remaining_today is None or quota.remaining_total < quota.remaining_today),
    })


# --- Leaderboards ------------------------------------------------------------------------------------------


def _board(competition: Competition, body: Mapping[str, Any]) -> str:
    """The private board once the competition closed (what Kaggle shows then), unless ``overridePublic``."""
    return "private" if competition.is_closed() and not flag(body, "overridePublic") else "public"


def get_leaderboard(request: Request, body: Mapping[str, Any]) -> Response:
    """The board's rows in rank order: each team's (or participant's) name, the released score exactly as the
    board shows it and when that submission was made."""
    competition = _competition(body)
    rows = leaderboard_rows(competition=competition, board=_board(competition, body))
    window, next_token = page_of(body, len(rows))
    return Response({
        "submissions": [
            {"teamName": row.participant, "submissionDate": when(row.submitted_at), "score": row.score_text}
            for row in rows[window]
        ],
        "nextPageToken": next_token,
    })


def download_leaderboard(request: Request, body: Mapping[str, Any]) -> HttpResponseBase:
    """The board as the site's CSV export, in a zip (the command line saves ``<competition>.zip``)."""
    competition = _competition(body)
    board = _board(competition, body)
    csv_text = leaderboard_csv(competition=competition, board=board)
    spool = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 - closed by the response
    with zipfile.ZipFile(spool, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{competition.slug}-{board}leaderboard.csv", csv_text)
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename=f"{competition.slug}.zip",
                        content_type="application/zip")


METHODS: dict[str, Handler] = {
    "ListCompetitions": list_competitions,
    "GetCompetition": get_competition,
    "ListDataFiles": list_data_files,
    "DownloadDataFile": download_data_file,
    "DownloadDataFiles": download_data_files,
    "StartSubmissionUpload": start_submission_upload,
    "CreateSubmission": create_submission,
    "ListSubmissions": list_submissions,
    "GetSubmission": get_submission,
    "GetSubmissionLimits": get_submission_limits,
    "GetLeaderboard": get_leaderboard,
    "DownloadLeaderboard": download_leaderboard,
}


class CompetitionApiService(KaggleView):
    """``POST /api/v1/competitions.CompetitionApiService/<Method>`` with the method's JSON fields."""

    parser_classes = [BoundedJSONParser]

    @extend_schema(exclude=True)
    def post(self, request: Request, method: str) -> HttpResponseBase:
        handler = METHODS.get(method)
        if handler is None:
            raise NotFound(f"this site does not serve {SERVICE}/{method[:60]}; it serves {', '.join(METHODS)}")
        return handler(request, body_of(request))


class IntrospectTokenApi(KaggleView):
    """``POST /api/v1/security.OAuthService/IntrospectToken`` ``{"token"}``: whether the token is one of this site's
    API tokens of an active account, and the account's username (only to someone who holds the token)."""

    authentication_classes: list[type] = []
    parser_classes = [BoundedJSONParser]

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        stored = api_token_find(text(body_of(request), "token", required=True))
        if stored is None or not stored.user.is_active:
            return Response({"active": False})
        return Response({"active": True, "username": stored.user.get_username()})
