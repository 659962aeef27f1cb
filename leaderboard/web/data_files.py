"""The competition's Data page (files to download, signed in) and the host's page that attaches and removes them."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from leaderboard.competitions.data_files import MAX_DESCRIPTION_LENGTH, data_file_response
from leaderboard.competitions.models import DATA_FILE_NAME_MAX_LENGTH, Competition, DataFile
from leaderboard.competitions.selectors import competition_is_host, data_file_get, list_data_files
from leaderboard.competitions.services import add_data_file, remove_data_file
from leaderboard.errors import DataFileError
from leaderboard.web.views import _competition, participant_login_required


class DataFileUploadForm(forms.Form):
    file = forms.FileField(label="File", allow_empty_file=True,
                           help_text="CSV, Parquet, zip or any other file: every signed-in participant may "
                           "download it.")
    name = forms.CharField(required=False, max_length=DATA_FILE_NAME_MAX_LENGTH,
                           help_text="The name participants see (default: the file's own).")
    description = forms.CharField(required=False, max_length=MAX_DESCRIPTION_LENGTH, widget=forms.Textarea(
        attrs={"rows": 2}), help_text="What it holds, e.g. 'training rows with the label column'.")
    replace = forms.BooleanField(required=False, help_text="Replace a file of the same name.")


def competition_data(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _competition(slug)
    return render(request, "web/competition_data.html", {
        "competition": competition, "files": list_data_files(competition),
        "is_host": competition_is_host(user=request.user, competition=competition),
    })


@participant_login_required
def data_file_download(request: HttpRequest, slug: str, name: str) -> FileResponse:
    competition = _competition(slug)
    try:
        return data_file_response(data_file_get(competition=competition, name=name))
    except DataFile.DoesNotExist:
        raise Http404("no such data file") from None


def _host_competition(request: HttpRequest, slug: str) -> Competition:
    competition = _competition(slug)
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may change its data files")
    return competition


@participant_login_required
def host_data(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _host_competition(request, slug)
    form = DataFileUploadForm()
    status = 200
    if request.method == "POST":
        form = DataFileUploadForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                stored = add_data_file(competition, form.cleaned_data["name"] or upload.name or "", upload,
                                       form.cleaned_data["description"], replace=form.cleaned_data["replace"])
            except DataFileError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"Attached {stored.name} ({stored.size:,} bytes).")
                return redirect("web:host-data", slug=competition.slug)
        status = 400
    return render(request, "web/host_data.html", {
        "competition": competition, "files": list_data_files(competition), "form": form,
        "max_bytes": settings.LEADERBOARD_MAX_DATA_FILE_BYTES,
    }, status=status)


@require_POST
@participant_login_required
def host_data_remove(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    competition = _host_competition(request, slug)
    try:
        remove_data_file(data_file_get(competition=competition, name=name))
    except DataFile.DoesNotExist:
        raise Http404("no such data file") from None
    messages.success(request, f"Removed {name}.")
    return redirect("web:host-data", slug=competition.slug)
