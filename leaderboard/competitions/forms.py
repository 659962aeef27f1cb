"""The settings forms of a competition: one validation for the admin and the host's pages.

:class:`CompetitionSettingsForm` is the base of the admin's form and of the host pages' create and edit forms,
so a bad chain, metric or JSON text gets the same message wherever a host types it; the host pages'
validation endpoint runs the very form that creating runs. The services validate everything again when they
write (:func:`~leaderboard.competitions.services.competition_create`, ``competition_update``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.forms.fields import JSONString  # type: ignore[attr-defined]

from leaderboard.competitions.models import Competition
from leaderboard.competitions.services import UPDATABLE_FIELDS, competition_parse_labels, competition_validate_defenses
from leaderboard.competitions.staging import StagedLabels, labels_stage, labels_staged
from leaderboard.errors import CompetitionConfigError
from scoring import METRICS, ConfigurationError, get_metric

FIXED_AFTER_CREATION = ("metric", "eps", "arithmetic", "public_fraction")
"""Settings shown read-only once a competition exists, in the admin and on the edit page: the split was drawn
from ``public_fraction`` at creation, and released scores were computed with the metric, eps and arithmetic
(``competition_update`` refuses to change them too)."""

CREATE_FIELDS = (
    "slug", "title", "description", "metric", "eps", "arithmetic", "public_fraction", "score_decimals",
    "daily_limit", "total_limit", "opens_at", "closes_at", "defenses", "disclosed_defenses", "same_file_same_score",
)
"""What the host's create page sets (the admin sets every field)."""

EDIT_FIELDS = tuple(name for name in CREATE_FIELDS if name in UPDATABLE_FIELDS)
"""What the host's edit page changes: the create page's settings that ``competition_update`` may change."""

_POSITION = re.compile(r"defense #(\d+)")


def chain_position(message: str) -> int | None:
    """The 1-based position of the chain object a chain error names ("defense #2: ..."), else ``None``.

    >>> chain_position("invalid defense chain: defense #2: defense 'noise': 'scale' must be ...")
    2
    """
    found = _POSITION.search(message)
    return int(found.group(1)) if found else None


class JSONTextField(forms.JSONField):
    """A JSON text field whose parse error says what is wrong and where (Django's says "Enter a valid JSON.")."""

    def to_python(self, value: Any) -> Any:
        if self.disabled:
            return value
        if value in self.empty_values:
            return None
        if isinstance(value, (list, dict, int, float, JSONString)):
            return value
        try:
            converted = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", code="invalid"
            ) from None
        return JSONString(converted) if isinstance(converted, str) else converted


def _metric_is_known(metric: Any) -> bool:
    try:
        get_metric(metric)
    except (ConfigurationError, TypeError, AttributeError):
        return False
    return True


class CompetitionSettingsForm(forms.ModelForm):
    """Validation shared by every form that sets a competition's settings: JSON text errors that name the line
    and column, the chain checked by the services' own function (against the metric only when the metric is
    valid, so a bad metric is reported once, under the metric)."""

    class Meta:
        model = Competition
        fields: Any = "__all__"
        field_classes = {"defenses": JSONTextField, "also_report": JSONTextField}

    def _setting(self, name: str) -> Any:
        """A setting as this form validates it: the cleaned value when it is a field, else the instance's."""
        return self.cleaned_data.get(name) if name in self.fields else getattr(self.instance, name)

    def clean_defenses(self) -> Any:
        chain = self.cleaned_data.get("defenses")
        metric = self._setting("metric")
        eps = self._setting("eps")
        try:
            return competition_validate_defenses(
                defenses=[] if chain is None else chain,
                metric=metric if _metric_is_known(metric) else None,
                eps=eps if isinstance(eps, float) and 0 < eps < 0.5 else 1e-15,
            )
        except CompetitionConfigError as exc:
            raise forms.ValidationError(exc.message) from None


class HostCompetitionForm(CompetitionSettingsForm):
    """The host's create page: the settings plus the labels file, kept server-side once it parses (a later error
    in another setting does not make the host upload it again: the page sends back ``labels_token``)."""

    metric = forms.ChoiceField(
        choices=[(name, name) for name in sorted(METRICS)], initial="binary_logloss",
        help_text="The metric participants are scored by (the scoring core's registry).",
    )
    labels_file = forms.FileField(
        required=False, allow_empty_file=True,
        help_text="CSV with the header id,label; labels are the integers 0..K-1. Fixed after creation.",
    )
    labels_token = forms.CharField(required=False, widget=forms.HiddenInput)

    class Meta(CompetitionSettingsForm.Meta):
        fields = list(CREATE_FIELDS)
        widgets = {
            "defenses": forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "code"}),
            "description": forms.Textarea(attrs={"rows": 5}),
            "disclosed_defenses": forms.Textarea(attrs={"rows": 3}),
            "opens_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
            "closes_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        }

    def __init__(self, *args: Any, user: Any, require_labels: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.require_labels = require_labels
        self.staged: StagedLabels | None = None
        self.fields["opens_at"].help_text = "UTC."
        self.fields["closes_at"].help_text = "UTC; empty: never."
        self.order_fields(["labels_file", "labels_token", *CREATE_FIELDS])

    def clean_labels_file(self) -> Any:
        upload = self.cleaned_data.get("labels_file")
        if upload is not None:
            limit = settings.LEADERBOARD_MAX_UPLOAD_BYTES
            if upload.size is not None and upload.size > limit:
                raise forms.ValidationError(f"the file is {upload.size} bytes, over the limit of {limit} bytes")
            data = upload.read()
            try:
                ids, _, n_classes = competition_parse_labels(labels_csv=data)
            except CompetitionConfigError as exc:
                raise forms.ValidationError(exc.message) from None
            self.staged = labels_stage(
                user_id=self.user.pk, name=upload.name or "labels.csv", data=data, n_rows=len(ids), n_classes=n_classes
            )
        else:
            token = self.data.get("labels_token") or ""
            if token:
                self.staged = labels_staged(user_id=self.user.pk, token=token)
                if self.staged is None:
                    raise forms.ValidationError(
                        "the labels file kept from your last attempt has expired; upload it again"
                    )
            elif self.require_labels:
                raise forms.ValidationError("a new competition needs its labels file (CSV with the header id,label)")
        if self.staged is not None:
            # The model's checks (metric against the task, the work limit) need the hidden set's shape.
            self.instance.n_rows, self.instance.n_classes = self.staged.n_rows, self.staged.n_classes
        return upload

    def settings_for_create(self) -> dict[str, Any]:
        """The keyword arguments of ``competition_create`` (besides the labels and the host)."""
        data = {name: self.cleaned_data[name] for name in CREATE_FIELDS if name in self.cleaned_data}
        if data.get("opens_at") is None:
            data.pop("opens_at", None)
        return data


class HostCompetitionEditForm(CompetitionSettingsForm):
    """The host's edit page: what ``competition_update`` may change; :data:`FIXED_AFTER_CREATION` is shown,
    not sent."""

    class Meta(CompetitionSettingsForm.Meta):
        fields = list(EDIT_FIELDS)
        widgets = HostCompetitionForm.Meta.widgets

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["opens_at"].help_text = "UTC."
        self.fields["closes_at"].help_text = "UTC; empty: never."

    def settings_for_update(self) -> dict[str, Any]:
        """The keyword arguments of ``competition_update``: every setting of the page."""
        return {name: self.cleaned_data[name] for name in EDIT_FIELDS if name in self.cleaned_data}
