"""Input validation of the HTML forms (the services re-validate everything that matters)."""

from __future__ import annotations

import hmac
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

from leaderboard.accounts.usernames import CONFUSABLE_MESSAGE, confusable_existing_username


class SubmissionUploadForm(forms.Form):
    # Empty files go through to the parser, so every malformed upload gets the same precise message.
    file = forms.FileField(
        label="Predictions (CSV)", allow_empty_file=True, help_text="Same header and ids as the sample submission."
    )

    def __init__(self, *args: Any, takes_models: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if takes_models:
            self.fields["file"].label = "Model (ONNX)"
            self.fields["file"].help_text = "An .onnx file; the worker runs it on the hidden test features."

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


class SignUpForm(UserCreationForm):
    """Django's own user-creation form (its username check, the password validators of the settings) plus an
    email address for password resets and, when sign-up is by invitation, the invite code.

    A wrong invite code is the only error shown: whoever lacks the code learns nothing about which usernames
    exist. With the right code the form says what Django's form says (a taken username)."""

    email = forms.EmailField(
        required=True, help_text="Used only to reset your password; never shown on the site."
    )
    invite_code = forms.CharField(required=True, strip=True, help_text="The code the host gave you.")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def __init__(self, *args: Any, invite_code: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.expected_invite_code = invite_code
        if invite_code is None:
            del self.fields["invite_code"]

    def clean_username(self) -> Any:
        username = super().clean_username()  # NFKC-normalised by Django's UsernameField; taken names refused
        if username and confusable_existing_username(username) is not None:
            raise forms.ValidationError(CONFUSABLE_MESSAGE, code="confusable")
        return username

    def clean_invite_code(self) -> str:
        given = str(self.cleaned_data.get("invite_code", ""))
        expected = self.expected_invite_code or ""
        if not hmac.compare_digest(given.encode(), expected.encode()):
            raise forms.ValidationError("That invite code is not right; ask the host of the competition for it.")
        return given

    def full_clean(self) -> None:
        super().full_clean()
        errors = self.errors
        if "invite_code" in errors:
            for field in [name for name in errors if name != "invite_code"]:
                del errors[field]


class AuditStartForm(forms.Form):
    """The host page's "Start an audit" form (the API's ``POST host/competitions/{slug}/audit/``)."""

    budget = forms.IntegerField(required=False, min_value=1, max_value=20_000,
                                widget=forms.NumberInput(attrs={"placeholder": "from the quota"}))
    accounts = forms.CharField(initial="1, 2, 10, 30, 100, 1000", max_length=120,
                               help_text="account counts, separated by commas")

    def clean_accounts(self) -> list[int]:
        """``"1, 30, 1000"`` → ``[1, 30, 1000]``, checked as the audit checks them."""
        from games.audit import AuditError, account_counts

        text = str(self.cleaned_data["accounts"])
        try:
            return account_counts([int(part) for part in text.replace(" ", "").split(",") if part])
        except ValueError:
            raise forms.ValidationError("accounts: whole numbers separated by commas") from None
        except AuditError as exc:
            raise forms.ValidationError(str(exc)) from None
