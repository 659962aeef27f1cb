"""The admin's user pages with the confusable-username check of sign-up: adding a user, or renaming one, to a
name that looks like a taken one ("b0b" beside "bob") is refused on the username field, naming the look-alike."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from leaderboard.accounts.usernames import username_refusal


def _checked(form: forms.ModelForm, username: Any) -> Any:
    current = form.instance.get_username() if form.instance.pk else None
    refusal = username_refusal(str(username or ""), current=current)
    if refusal is not None:
        raise forms.ValidationError(refusal, code="confusable")
    return username


class ConfusableCheckedCreationForm(AdminUserCreationForm):
    def clean_username(self) -> Any:
        return _checked(self, super().clean_username())


class ConfusableCheckedChangeForm(UserChangeForm):
    def clean_username(self) -> Any:
        return _checked(self, self.cleaned_data.get("username"))


class AccountUserAdmin(UserAdmin):
    add_form = ConfusableCheckedCreationForm
    form = ConfusableCheckedChangeForm


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, AccountUserAdmin)
