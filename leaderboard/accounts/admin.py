"""The admin's user pages with the confusable-username check of sign-up: adding a user, or renaming one, to a
name that looks like a taken one ("b0b" beside "bob") is refused on the username field, naming the look-alike.
API tokens are listed by prefix (the admin cannot see or make one, only delete it, which revokes it)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from leaderboard.accounts.models import ApiToken
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


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "created_at")
    search_fields = ("prefix", "user__username")
    fields = ("user", "prefix", "created_at")  # never the digest: nothing here helps to use or guess a token
    readonly_fields = fields

    def has_add_permission(self, request: Any) -> bool:
        return False  # a token is made where its owner sees it once: the profile, the host API, create_participant

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False
