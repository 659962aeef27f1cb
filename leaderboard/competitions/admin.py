"""Django admin for hosts: create a competition by uploading its labels CSV; edit settings and the chain."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import transaction

from leaderboard.competitions.models import Competition
from leaderboard.competitions.services import (
    competition_parse_labels,
    competition_validate_defenses,
    hidden_test_data_create,
)
from leaderboard.errors import CompetitionConfigError


class CompetitionForm(forms.ModelForm):
    labels_file = forms.FileField(
        required=False, help_text="CSV with header id,label (labels 0..K-1). Required when creating; fixed after."
    )

    class Meta:
        model = Competition
        fields = "__all__"
        help_texts = {
            "description": "Markdown, shown on the competition page (raw HTML is shown as text; links: http, https, "
            "mailto)."
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            # The hidden set is fixed once created (submissions were scored against it).
            del self.fields["labels_file"]

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

    def clean_defenses(self) -> Any:
        try:
            return competition_validate_defenses(
                defenses=self.cleaned_data.get("defenses"),
                metric=self.cleaned_data.get("metric"),
                eps=self.cleaned_data.get("eps") or 1e-15,
            )
        except CompetitionConfigError as exc:
            raise forms.ValidationError(exc.message) from None


@admin.register(Competition)
class CompetitionAdmin(admin.ModelAdmin):
    form = CompetitionForm
    list_display = ("slug", "title", "metric", "n_rows", "n_classes", "opens_at", "closes_at", "host")
    search_fields = ("slug", "title")
    readonly_fields = ("n_rows", "n_classes", "created_at", "updated_at")

    def get_readonly_fields(self, request: Any, obj: Any = None) -> Any:
        # The split is drawn from the hidden set at creation; changing the fraction later would not redraw it.
        if obj is not None:
            return (*self.readonly_fields, "public_fraction")
        return self.readonly_fields

    def get_fields(self, request: Any, obj: Any = None) -> Any:
        fields = list(super().get_fields(request, obj))
        if obj is not None and "labels_file" in fields:
            fields.remove("labels_file")
        return fields

    def save_model(self, request: Any, obj: Competition, form: Any, change: bool) -> None:
        with transaction.atomic():
            if obj.host_id is None and not change:
                obj.host = request.user
            super().save_model(request, obj, form, change)
            if not change:
                ids, labels = form.parsed_labels
                hidden_test_data_create(competition=obj, ids=ids, labels=labels)
