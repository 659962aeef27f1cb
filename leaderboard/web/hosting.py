"""The host's pages for creating and editing a competition outside the admin (staff only), and the validation
endpoint their script calls as the host types.

The endpoint runs the very form the pages submit (:mod:`leaderboard.competitions.forms`), so what it says while
typing is what saving says; it answers JSON: the errors per field, the chain in canonical form, and the
preview of what participants will read, rendered by the competition page's own partials.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_POST

from defenses import catalogue
from leaderboard.competitions.forms import HostCompetitionEditForm, HostCompetitionForm, chain_position
from leaderboard.competitions.models import Competition
from leaderboard.competitions.services import competition_create, competition_update
from leaderboard.competitions.staging import labels_unstage
from leaderboard.errors import CompetitionConfigError
from leaderboard.web.views import _competition, participant_login_required

FORBIDDEN = "only staff may create or edit competitions on these pages"


def _is_staff(request: HttpRequest) -> bool:
    user: Any = request.user
    return bool(user.is_authenticated and user.is_staff)


def _require_staff(request: HttpRequest) -> None:
    if not _is_staff(request):
        raise PermissionDenied(FORBIDDEN)


def _catalogue() -> list[dict[str, Any]]:
    """The defense registry's description, with each parameter's default as the page shows it."""
    described = catalogue()
    for defense in described:
        for param in defense["parameters"]:  # type: ignore[attr-defined]
            default = param["default"]
            param["shown_default"] = (
                json.dumps(default) if default is not None else (param["default_text"] or "none")
            )
    return described


def _page(
    request: HttpRequest, form: HostCompetitionForm | HostCompetitionEditForm, competition: Competition | None
) -> HttpResponse:
    chain_valid = not form.is_bound or "defenses" not in form.errors
    context = {
        "form": form, "competition": competition, "catalogue": _catalogue(), "preview": form.instance,
        "chain_valid": chain_valid,
        "n_submissions": competition.submissions.count() if competition is not None else 0,  # type: ignore[attr-defined]
    }
    return render(request, "web/host_competition_form.html", context, status=400 if form.errors else 200)


@participant_login_required
def host_competition_create(request: HttpRequest) -> HttpResponse:
    _require_staff(request)
    if request.method != "POST":
        return _page(request, HostCompetitionForm(user=request.user), None)
    form = HostCompetitionForm(request.POST, request.FILES, user=request.user)
    if form.is_valid():
        assert form.staged is not None
        try:
            competition = competition_create(
                labels_csv=form.staged.data, host=request.user, **form.settings_for_create()
            )
        except CompetitionConfigError as exc:
            form.add_error(None, exc.message)
        else:
            labels_unstage(user_id=form.user.pk, token=form.staged.token)
            messages.success(request, f"Created {competition.slug}: {competition.n_rows} rows.")
            return redirect("web:competition-detail", slug=competition.slug)
    return _page(request, form, None)


@participant_login_required
def host_competition_edit(request: HttpRequest, slug: str) -> HttpResponse:
    _require_staff(request)
    competition = _competition(slug)
    # The form validates a copy: a refused setting never shows on the page's read-only part.
    editable = Competition.objects.get(pk=competition.pk)
    if request.method != "POST":
        return _page(request, HostCompetitionEditForm(instance=editable), competition)
    form = HostCompetitionEditForm(request.POST, instance=editable)
    if form.is_valid():
        try:
            competition_update(competition=competition, **form.settings_for_update())
        except CompetitionConfigError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, "Settings saved; they apply from the next scoring on.")
            return redirect("web:competition-detail", slug=competition.slug)
    return _page(request, form, competition)


@require_POST
def host_competition_validate(request: HttpRequest) -> JsonResponse:
    """Validate the create or edit page's settings (``competition``: the slug being edited) without saving.

    Answers ``{"valid", "errors": {field: [message, ...]}, "chain", "chain_position", "preview"}``; a labels
    file is not sent here (the page's ``labels_token`` stands for one already kept)."""
    if not _is_staff(request):
        return JsonResponse({"detail": FORBIDDEN}, status=403)
    slug = request.POST.get("competition") or ""
    form: HostCompetitionForm | HostCompetitionEditForm
    if slug:
        competition = _competition(slug)
        form = HostCompetitionEditForm(request.POST, instance=Competition.objects.get(pk=competition.pk))
    else:
        form = HostCompetitionForm(request.POST, user=request.user, require_labels=False)
    valid = form.is_valid()
    errors = {name: [str(message) for message in found] for name, found in form.errors.items()}
    chain_errors = errors.get("defenses", [])
    preview = render_to_string(
        "web/_disclosure_preview.html",
        {"competition": form.instance, "chain_valid": not chain_errors},
        request=request,
    )
    return JsonResponse({
        "valid": valid,
        "errors": errors,
        "chain": None if chain_errors else form.cleaned_data.get("defenses"),
        "chain_position": chain_position(chain_errors[0]) if chain_errors else None,
        "preview": preview,
    })
