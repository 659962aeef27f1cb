"""Input validation of the HTML forms (the services re-validate everything that matters)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings


class SubmissionUploadForm(forms.Form):
    # Empty files go through to the parser, so every malformed upload gets the same precise message.
    file = forms.FileField(
        label="Predictions (CSV)", allow_empty_file=True, help_text="Same header and ids as the sample submission."
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        limit = settings.LEADERBOARD_MAX_UPLOAD_BYTES
        if upload.size is not None and upload.size > limit:
            raise forms.ValidationError(f"the file is {upload.size} bytes, over the limit of {limit} bytes")
        return upload


class SelectFinalForm(forms.Form):
    selected = forms.TypedChoiceField(
        choices=[("1", "select"), ("0", "unselect")], coerce=lambda value: value == "1", empty_value=None
    )
