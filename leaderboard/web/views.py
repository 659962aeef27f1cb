"""The HTML pages: each view validates its input, calls one service or selector and renders a template.

Participant-facing pages read released values only (the selectors guarantee it); the one host page checks
``competition_is_host`` first. Errors the services raise on purpose (:class:`ApplicationError`) are shown with
their own message and HTTP status, never as a 500.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_POST

from games.audit import compare_majority, majority_note, rung_mark, sign_ups_text
from leaderboard.audits.selectors import audit_latest
from leaderboard.audits.services import audit_quota, audit_request, audits_expire
from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import (
    competition_get,
    competition_is_host,
    competition_list,
    competition_sample_submission,
    list_data_files,
)
from leaderboard.errors import ApplicationError, BoardNotAvailable, QuotaExceeded
from leaderboard.submissions.models import Status, Submission, UploadKind
from leaderboard.submissions.selectors import (
    BOARDS,
    leaderboard_csv,
    leaderboard_rows,
    quota_status,
    submission_get_for_participant,
    submission_leakage_for_host,
    submission_list_for_host,
    submission_list_for_participant,
    submission_review,
    team_submissions,
)
from leaderboard.submissions.services import MAX_FINALS, submission_create, submission_select_final
from leaderboard.submissions.teams import (
    invitation_accept,
    invitation_decline,
    invitations_for,
    merge_requests_for,
    team_create,
    team_get,
    team_invitations,
    team_invite,
    team_leave,
    team_list,
    team_members,
    team_merge,
    team_of,
    teammate_submissions,
)
from leaderboard.uploads import streams_uploads, upload_bytes, upload_refusal
from leaderboard.web import charts as charts_module
from leaderboard.web import games as game_reports
from leaderboard.web.forms import AuditStartForm, SelectFinalForm, SubmissionUploadForm
from leaderboard.web.pagination import (
    BOARD_ROWS_PER_PAGE,
    COMPETITIONS_PER_PAGE,
    HOST_SUBMISSIONS_PER_PAGE,
    SUBMISSIONS_PER_PAGE,
    page_of,
    pager,
)

MY_SUBMISSIONS_REFRESH_SECONDS = 3
AUDIT_REFRESH_SECONDS = 2
PENDING_STATUSES = frozenset({Status.QUEUED, Status.SCORING})

# Participants log in here, not at the admin's staff-only login (settings.LOGIN_URL).
participant_login_required: Callable[..., Any] = login_required(login_url=reverse_lazy("web:login"))


def _competition(slug: str) -> Competition:
    try:
        return competition_get(slug=slug)
    except Competition.DoesNotExist:
        raise Http404("no such competition") from None


def _board(board: str) -> str:
    if board not in BOARDS:
        raise Http404("no such board")
    return board


FAVICON = Path(__file__).resolve().parent / "static" / "web" / "favicon.svg"


@cache
def _favicon_bytes() -> bytes:
    return FAVICON.read_bytes()


def favicon(request: HttpRequest) -> HttpResponse:
    """The site's icon at the address browsers ask for by themselves (pages also link it)."""
    response = HttpResponse(_favicon_bytes(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response


def competitions(request: HttpRequest) -> HttpResponse:
    page = page_of(request, competition_list(), COMPETITIONS_PER_PAGE)
    return render(request, "web/competition_list.html", {"competitions": page, "pager": pager(request, page)})


def competition_detail(request: HttpRequest, slug: str) -> HttpResponse:
    from leaderboard.inversion.selectors import inversion_budget, inversion_of

    competition = _competition(slug)
    quota = None
    inversion = inversion_of(competition=competition)
    inversion_left = None
    if request.user.is_authenticated:
        quota = quota_status(competition=competition, participant=request.user)
        if inversion is not None:
            inversion_left = inversion_budget(challenge=inversion, participant=request.user).queries_left
    return render(
        request,
        "web/competition_detail.html",
        {
            "competition": competition,
            "inversion": inversion,
            "inversion_left": inversion_left,
            "quota": quota,
            "is_host": competition_is_host(user=request.user, competition=competition),
            "max_upload_bytes": settings.LEADERBOARD_MAX_UPLOAD_BYTES,
            "max_finals": MAX_FINALS,
            "data_files": list_data_files(competition),
        },
    )


def sample_submission(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _competition(slug)
    response = HttpResponse(competition_sample_submission(competition=competition), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{competition.slug}-sample-submission.csv"'
    return response


@streams_uploads
@participant_login_required
def submission_upload(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _competition(slug)
    error: ApplicationError | None = None
    status = 200
    if request.method == "POST":
        form = SubmissionUploadForm(request.POST, request.FILES, takes_models=competition.takes_models)
        refusal = upload_refusal(request)  # stopped at the size limit: said as the service would say it
        if refusal is not None:
            error, status = refusal, refusal.status_code
        elif form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                with upload_bytes(upload) as data:
                    submission = submission_create(
                        competition=competition,
                        participant=request.user,
                        data=data,
                        kind=UploadKind.CSV,
                        filename=upload.name or "",
                        sha256=getattr(upload, "sha256", None),
                    )
            except ApplicationError as exc:
                error, status = exc, exc.status_code
            else:
                messages.success(request, f"Submission #{submission.pk} received; it is queued for scoring.")
                return redirect("web:my-submissions", slug=competition.slug)
        else:
            status = 400
    else:
        form = SubmissionUploadForm(takes_models=competition.takes_models)
    quota = quota_status(competition=competition, participant=request.user)
    # Which limit stops the next upload (the refusal just given, else the counters): then no form is shown.
    limit_reached, resets_at = None, quota.resets_at
    if isinstance(error, QuotaExceeded):
        limit_reached = "daily" if error.resets_at is not None else "total"
        resets_at = error.resets_at or resets_at
    elif quota.exhausted:
        limit_reached = "total" if quota.remaining_total == 0 else "daily"
    context = {
        "competition": competition,
        "form": form,
        "error": error,
        "quota_error": isinstance(error, QuotaExceeded),
        "quota": quota,
        "limit_reached": limit_reached,
        "resets_at": resets_at,
        "show_form": limit_reached is None and competition.is_open(),
    }
    return render(request, "web/submit.html", context, status=status)


@participant_login_required
def my_submissions(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _competition(slug)
    mine = submission_list_for_participant(competition=competition, participant=request.user)
    page = page_of(request, mine, SUBMISSIONS_PER_PAGE)  # newest first, the id breaking ties: stable pages
    submissions = list(page)
    team_page = page_of(request, teammate_submissions(competition=competition, participant=request.user),
                        SUBMISSIONS_PER_PAGE, param="team_page")
    for submission in submissions:  # the sybil screen's hold, as the template shows it
        submission.review = submission_review(submission)  # type: ignore[attr-defined]
    return render(
        request,
        "web/my_submissions.html",
        {
            "competition": competition,
            "submissions": submissions,
            "pager": pager(request, page),
            "show_private": competition.is_closed(),
            # One set of finals per team: a teammate's selections count.
            "finals_selected": team_submissions(competition=competition, participant=request.user)
            .filter(selected_for_final=True).count(),
            "max_finals": MAX_FINALS,
            "quota": quota_status(competition=competition, participant=request.user),
            # Teammates' submissions: who, when, status and the released public score only.
            "teammate_submissions": team_page,
            "team_pager": pager(request, team_page, param="team_page"),
            # The page reloads itself (a meta refresh, no script) until every submission is final, on any page.
            # A row shown as pending counts whatever the second query says: scored between the two reads, it
            # would otherwise stay on screen as "scoring" with nothing to refresh the page.
            "pending": any(row.status in PENDING_STATUSES for row in submissions)
            or mine.filter(status__in=PENDING_STATUSES).exists(),
            "refresh_seconds": MY_SUBMISSIONS_REFRESH_SECONDS,
        },
    )


@require_POST
@participant_login_required
def submission_final(request: HttpRequest, slug: str, submission_id: int) -> HttpResponse:
    competition = _competition(slug)
    form = SelectFinalForm(request.POST)
    if not form.is_valid():
        messages.error(request, "choose whether to select or unselect the submission")
        return redirect("web:my-submissions", slug=competition.slug)
    try:
        submission = submission_get_for_participant(submission_id=submission_id, participant=request.user)
    except Submission.DoesNotExist:
        raise Http404("no such submission") from None
    if submission.competition_id != competition.pk:
        raise Http404("no such submission")
    try:
        submission_select_final(
            submission=submission, participant=request.user, selected=form.cleaned_data["selected"]
        )
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        state = "selected as final" if submission.selected_for_final else "no longer a final"
        messages.success(request, f"Submission #{submission.pk} is {state}.")
    return redirect("web:my-submissions", slug=competition.slug)


TEAM_ACTIONS = ("create", "invite", "accept", "decline", "leave", "merge")


def _int_field(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@participant_login_required
def team_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Your team in a competition: members, pending invitations (members only), your invitations, and forms to
    create a team, invite, accept or decline, and leave. Every action goes through the team services."""
    competition = _competition(slug)
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "create":
                team = team_create(competition=competition, user=request.user, name=request.POST.get("team_name", ""))
                messages.success(request, f"Team {team.name!r} created.")
            elif action == "invite":
                mine = team_of(competition=competition, participant=request.user)
                if mine is None:
                    raise Http404("no team")
                username = request.POST.get("username", "")
                team_invite(team=mine, inviter=request.user, username=username)
                messages.success(request, f"Invited {username.strip()!r}.")
            elif action in ("accept", "decline"):
                invitation_id = _int_field(request.POST.get("invitation"))
                if invitation_id is None:
                    raise Http404("no such invitation")
                if action == "accept":
                    team = invitation_accept(invitation_id=invitation_id, user=request.user)
                    messages.success(request, f"You joined team {team.name!r}.")
                else:
                    invitation_decline(invitation_id=invitation_id, user=request.user)
                    messages.success(request, "Invitation declined.")
            elif action == "leave":
                mine = team_of(competition=competition, participant=request.user)
                if mine is None:
                    raise Http404("no team")
                team_leave(team=team_get(team_id=mine.pk), user=request.user)
                messages.success(request, "You left the team.")
            elif action == "merge":
                mine = team_of(competition=competition, participant=request.user)
                if mine is None:
                    raise Http404("no team")
                other_id = _int_field(request.POST.get("team"))
                if other_id is None:
                    messages.error(request, "choose the team to merge with")
                else:
                    result = team_merge(team=team_get(team_id=mine.pk), other_id=other_id, user=request.user)
                    if result.merged:
                        messages.success(request, f"The teams merged: you are all in team {result.team.name!r}.")
                    else:
                        messages.success(request, "Merge requested: it happens when a member of the other team "
                                                  "agrees (asks to merge with your team).")
            else:
                messages.error(request, f"unknown action; use one of {', '.join(TEAM_ACTIONS)}")
        except ApplicationError as exc:
            messages.error(request, exc.message)
        return redirect("web:team", slug=competition.slug)
    current = team_of(competition=competition, participant=request.user)
    asked, offers = merge_requests_for(team=current) if current else ([], [])
    return render(
        request,
        "web/team.html",
        {
            "other_teams": [t for t in team_list(competition=competition) if current and t.pk != current.pk],
            "merge_asked": asked,
            "merge_offers": offers,
            "competition": competition,
            "team": current,
            "members": team_members(team=current) if current else [],
            "pending": list(team_invitations(team=current, viewer=request.user)) if current else [],
            "my_invitations": list(invitations_for(user=request.user, competition=competition)),
        },
    )


def leaderboard(request: HttpRequest, slug: str, board: str) -> HttpResponse:
    competition = _competition(slug)
    board = _board(board)
    is_host = competition_is_host(user=request.user, competition=competition)
    context: dict[str, Any] = {"competition": competition, "board": board, "is_host": is_host}
    try:
        rows = leaderboard_rows(competition=competition, board=board, allow_private_before_close=is_host)
        page = page_of(request, rows, BOARD_ROWS_PER_PAGE)  # in rank order: a page is a range of ranks
        context.update(rows=page, pager=pager(request, page))
    except BoardNotAvailable as exc:
        context["unavailable"] = exc.message
        return render(request, "web/leaderboard.html", context, status=exc.status_code)
    return render(request, "web/leaderboard.html", context)


def leaderboard_export(request: HttpRequest, slug: str, board: str) -> HttpResponse:
    competition = _competition(slug)
    board = _board(board)
    is_host = competition_is_host(user=request.user, competition=competition)
    try:
        text = leaderboard_csv(competition=competition, board=board, allow_private_before_close=is_host)
    except BoardNotAvailable as exc:
        return HttpResponse(exc.message, status=exc.status_code, content_type="text/plain; charset=utf-8")
    response = HttpResponse(text, content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{competition.slug}-{board}-leaderboard.csv"'
    return response


@participant_login_required
def host_submissions(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _competition(slug)
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may see raw scores")
    submissions = list(submission_list_for_host(competition=competition))  # the charts draw every one
    page = page_of(request, submissions, HOST_SUBMISSIONS_PER_PAGE)
    charts = [
        chart
        for split in ("public", "private")
        if (chart := charts_module.released_minus_raw(_chart_points(submissions, split), split=split)) is not None
    ]
    return render(
        request,
        "web/host_submissions.html",
        {
            "competition": competition,
            "submissions": page,
            "pager": pager(request, page),
            "leakage": submission_leakage_for_host(competition=competition),
            "chain": [_chain_step(step) for step in competition.defenses],
            "charts": charts,
            "withheld": sum(
                s.status == Status.SCORED and s.raw_public is not None and s.public_score is None for s in submissions
            ),
        },
    )


@participant_login_required
def host_audit(request: HttpRequest, slug: str) -> HttpResponse:
    """The leakage audit: the latest one (its verdict, charts and table; progress while it runs) and a form
    to start another (POST, like the API's ``POST host/competitions/{slug}/audit/``)."""
    competition = _competition(slug)
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may audit it")
    status = 200
    if request.method == "POST":
        form = AuditStartForm(request.POST)
        if form.is_valid():
            try:
                audit_request(competition=competition, user=request.user, budget=form.cleaned_data["budget"],
                              accounts=form.cleaned_data["accounts"])
            except ApplicationError as exc:
                messages.error(request, exc.message)
            else:
                messages.success(request, "Audit queued; this page shows its progress.")
            return redirect("web:host-audit", slug=competition.slug)
        status = 400
    else:
        form = AuditStartForm()
    audits_expire(competition=competition)
    audit = audit_latest(competition=competition)
    context: dict[str, Any] = {
        "competition": competition, "form": form, "audit": audit, "refresh_seconds": AUDIT_REFRESH_SECONDS,
        "quota_text": audit_quota(competition=competition).summary(),
    }
    if audit is not None and audit.result:
        context.update(_audit_context(audit.result))
    return render(request, "web/host_audit.html", context, status=status)


def _audit_context(result: dict[str, Any]) -> dict[str, Any]:
    quota = result["quota"]["submissions"]
    at_quota = result["at_quota"]
    charts = [
        chart for split in ("public", "private")
        if (chart := charts_module.accuracy_vs_submissions(
            result["curves"], split=split, quota=quota, majority=result["majority"][split])) is not None
    ]
    rows = [{"attack": curve["attack"], "point": point, "at_quota": point["budget"] == at_quota["budget"],
             "note": majority_note(point.get("vs_majority") or {}), "best": best}
            for curve in result["curves"] for point, best in zip(curve["points"], _best_within(curve), strict=True)]
    best = at_quota.get("public")
    return {
        "charts": charts, "rows": rows, "honest": result["honest"],
        "quota_mark": rung_mark(quota, at_quota["budget"]), "falls": result.get("falls") or [],
        "chain": [_chain_step(step) for step in result["chain"]],
        # Not "safe": nothing found by these attacks is a lower bound on the leakage, so it is shown plainly.
        "nothing_found": compare_majority(best, result["majority"]["public"]) in ("at", "below"),
        "axis": [{**cell, "note": majority_note(cell.get("vs_majority") or {})} for cell in result.get("axis") or []],
        "sign_ups_text": sign_ups_text(result.get("sign_ups") or {}, []),
    }


def _best_within(curve: dict[str, Any]) -> list[dict[str, Any] | None]:
    """Each point's best run within its budget: as stored (``best``), or for an audit stored before it was, the
    running best by public accuracy."""
    found: list[dict[str, Any] | None] = []
    best: dict[str, Any] | None = None
    for point in curve["points"]:
        if point.get("status") == "ok" and point.get("public") is not None and (
                best is None or point["public"] > best["public"]):
            best = point
        found.append(point.get("best", best))
    return found


def _chain_step(step: dict[str, Any]) -> str:
    """``{"name": "noise", "kind": "laplace", "scale": 0.001}`` → ``noise (kind laplace, scale 0.001)``."""
    params = ", ".join(f"{key} {value}" for key, value in step.items() if key != "name")
    return f"{step.get('name', '?')} ({params})" if params else str(step.get("name", "?"))


def _chart_points(submissions: list[Submission], split: str) -> list[charts_module.Point]:
    points = []
    for submission in submissions:
        raw, released = getattr(submission, f"raw_{split}"), getattr(submission, f"{split}_score")
        if submission.status == Status.SCORED and raw is not None and released is not None:
            points.append(charts_module.Point(submission.pk, submission.participant.username, raw, released))
    return points


def games(request: HttpRequest) -> HttpResponse:
    return render(request, "web/games.html", {"games": game_reports.game_list()})


def game_detail(request: HttpRequest, name: str) -> HttpResponse:
    try:
        files = game_reports.game_files(name=name)
    except game_reports.GameNotFound:
        raise Http404("no such game") from None
    has_report = any(f.path == game_reports.REPORT_NAME for f in files)
    return render(
        request,
        "web/game_detail.html",
        {"name": name, "files": files, "has_report": has_report, "report_name": game_reports.REPORT_NAME},
    )


@xframe_options_sameorigin  # the game page embeds its report
def game_file(request: HttpRequest, name: str, path: str) -> FileResponse:
    try:
        target = game_reports.game_file_path(name=name, path=path)
    except game_reports.GameNotFound:
        raise Http404("no such file") from None
    content_type, _ = mimetypes.guess_type(target.name)
    response = FileResponse(target.open("rb"), content_type=content_type or "application/octet-stream")
    response["X-Content-Type-Options"] = "nosniff"
    # Reports are static documents: no script in one may act with the site's origin.
    response["Content-Security-Policy"] = "sandbox"
    return response
