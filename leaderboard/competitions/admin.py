"""Django admin for hosts: create a competition by uploading its labels CSV (and, for a model competition, its
hidden features CSV); edit settings and the chain; attach data files. The form's validation is the host pages' own
(:class:`~leaderboard.competitions.forms.CompetitionSettingsForm`), so both say the same about a bad setting; a data
file goes through :func:`~leaderboard.competitions.services.add_data_file`, as on the host's page and the API."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from leaderboard.competitions.data_files import check_data_file_content, data_file_description, data_file_name
from leaderboard.competitions.forms import FIXED_AFTER_CREATION, CompetitionSettingsForm
from leaderboard.competitions.models import Competition, DataFile
from leaderboard.competitions.selectors import list_data_files
from leaderboard.competitions.services import (
    add_data_file,
    competition_parse_features,
    competition_parse_labels,
    hidden_test_data_create,
)
from leaderboard.errors import CompetitionConfigError, DataFileError


class CompetitionForm(CompetitionSettingsForm):
    labels_file = forms.FileField(
        required=False, help_text="CSV with header id,label (labels 0..K-1). Required when creating; fixed after."
    )
    features_file = forms.FileField(
        required=False,
        help_text="Optional: hidden test features, CSV id,f1,...,fd with the labels' ids. With it, participants "
        "upload ONNX models that the worker runs on these features. Fixed after creation.",
    )

    class Meta(CompetitionSettingsForm.Meta):
        help_texts = {
            "description": "Markdown, shown on the competition page (raw HTML is shown as text; links: http, https, "
            "mailto)."
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            # The hidden set is fixed once created (submissions were scored against it).
            del self.fields["labels_file"]
            del self.fields["features_file"]

    def clean_labels_file(self) -> Any:
        upload = self.cleaned_data.get("labels_file")
        if self.instance.pk is None and upload is None:
            raise forms.ValidationError("a new competition needs its labels file")
        if upload is None:
            return None
        try:
            ids, labels, n_classes = competition_parse_labels(labels_csv=upload.read())
        except CompetitionConfigError as exc:
            raise forms.ValidationError(exc.message) from None
        # Model validation (metric vs task) runs after this and needs the shape of the hidden set.
        self.instance.n_rows, self.instance.n_classes = len(ids), n_classes
        self.parsed_labels = (ids, labels)
        return upload

    def clean_features_file(self) -> Any:
        upload = self.cleaned_data.get("features_file")
        self.parsed_features = None
        parsed_labels = getattr(self, "parsed_labels", None)
        if upload is None or parsed_labels is None:  # without valid labels, their error is the one to fix
            return upload
        try:
            self.parsed_features = competition_parse_features(features_csv=upload.read(), ids=parsed_labels[0])
        except CompetitionConfigError as exc:
            raise forms.ValidationError(exc.message) from None
        self.instance.n_features = self.parsed_features.shape[1]
        return upload


@admin.register(Competition)
class CompetitionAdmin(admin.ModelAdmin):
    form = CompetitionForm
    list_display = ("slug", "title", "metric", "n_rows", "n_classes", "n_features", "opens_at", "closes_at", "host",
                    "listed")
    list_filter = ("listed",)  # a live game's cells are unlisted (manage.py clean_games removes them)
    search_fields = ("slug", "title")
    # The data files as links, not an inline: a formset would make every save of this page post its management form.
    readonly_fields = ("n_rows", "n_classes", "n_features", "data_files", "created_at", "updated_at")

    @admin.display(description="Data files")
    def data_files(self, obj: Competition) -> str:
        if obj.pk is None:
            return "Attach files under Data files once the competition exists."
        files = list_data_files(obj)
        rows = format_html_join(
            "", '<li><a href="{}">{}</a> ({} bytes, sha256 {})</li>',
            ((reverse("admin:competitions_datafile_change", args=[f.pk]), f.name, f"{f.size:,}", f.sha256[:12])
             for f in files),
        )
        add = format_html('<a href="{}?competition={}">Attach a file</a>',
                          reverse("admin:competitions_datafile_add"), obj.pk)
        return format_html("<ul>{}</ul>{}", rows, add) if files else add

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        # The split is drawn from the hidden set at creation; changing the fraction later would not redraw it, and
        # released scores were computed with the metric, eps and arithmetic (the host's edit page agrees).
        if obj is not None:
            return (*self.readonly_fields, *FIXED_AFTER_CREATION)
        return self.readonly_fields

    def get_fields(self, request: Any, obj: Any = None) -> Any:
        fields = list(super().get_fields(request, obj))
        if obj is not None:
            fields = [name for name in fields if name not in ("labels_file", "features_file")]
        return fields

    def save_model(self, request: Any, obj: Competition, form: Any, change: bool) -> None:
        with transaction.atomic():
            if obj.host_id is None and not change:
                obj.host = request.user
            super().save_model(request, obj, form, change)
            if not change:
                ids, labels = form.parsed_labels
                hidden_test_data_create(
                    competition=obj, ids=ids, labels=labels, features=getattr(form, "parsed_features", None)
                )


class DataFileForm(forms.ModelForm):
    upload = forms.FileField(
        required=False, help_text="The file (CSV, Parquet, zip, ...). Every signed-in participant may download it: "
        "never the hidden labels unless you mean to publish them. Required when attaching; fixed after.",
    )

    class Meta:
        model = DataFile
        fields = ("competition", "name", "description")
        help_texts = {"name": "The name participants see (default: the uploaded file's name)."}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "name" in self.fields:
            self.fields["name"].required = False
        if self.instance.pk is not None and "upload" in self.fields:  # the bytes are fixed: attach another file
            del self.fields["upload"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        try:
            cleaned["description"] = data_file_description(cleaned.get("description"))
            if self.instance.pk is None:
                upload = cleaned.get("upload")
                if upload is None:
                    raise DataFileError("attach a file")
                cleaned["name"] = data_file_name(cleaned.get("name") or upload.name or "")
                limit = int(settings.LEADERBOARD_MAX_DATA_FILE_BYTES)
                if upload.size is not None and upload.size > limit:
                    raise DataFileError(f"the file is {upload.size:,} bytes, larger than {limit:,} bytes, the most a "
                                        "data file may be")
                self.content = upload.read()
                check_data_file_content(cleaned["name"], self.content)
        except DataFileError as exc:
            raise forms.ValidationError(exc.message) from None
        return cleaned


@admin.register(DataFile)
class DataFileAdmin(admin.ModelAdmin):
    form = DataFileForm
    list_display = ("name", "competition", "size", "sha256", "created_at")
    list_filter = ("competition",)
    search_fields = ("name", "competition__slug")
    readonly_fields = ("size", "sha256", "created_at")

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        return (*self.readonly_fields, "competition", "name") if obj is not None else self.readonly_fields

    def get_fields(self, request: Any, obj: Any = None) -> Any:
        fields = list(super().get_fields(request, obj))
        return [name for name in fields if name != "upload"] if obj is not None else fields

    def save_model(self, request: Any, obj: DataFile, form: Any, change: bool) -> None:
        if change:  # only the description changes; the bytes stay in the database (never loaded here)
            obj.save(update_fields=["description"])
            return
        try:
            stored = add_data_file(obj.competition, form.cleaned_data["name"], form.content,
                                   form.cleaned_data["description"])
        except DataFileError as exc:  # e.g. a file of that name attached meanwhile
            raise forms.ValidationError(exc.message) from None
        obj.pk, obj.size, obj.sha256, obj.created_at = stored.pk, stored.size, stored.sha256, stored.created_at
