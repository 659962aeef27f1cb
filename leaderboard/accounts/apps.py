"""App configuration of the accounts app."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from django.contrib import admin

        from leaderboard.accounts.forms import AdminLoginForm

        # The admin's login says "try again after HH:MM UTC" when locked, as the site's does.
        admin.site.login_form = AdminLoginForm
        _check_confusable_in_createsuperuser()


def _check_confusable_in_createsuperuser() -> None:
    """``createsuperuser`` refuses a username that looks like a taken one, as sign-up does: its username check
    (asked interactively again, or a ``CommandError`` with ``--noinput``) gets the confusable check added."""
    from django.contrib.auth.management.commands import createsuperuser

    from leaderboard.accounts.usernames import username_refusal

    command: Any = createsuperuser.Command
    if getattr(command, "_confusable_checked", False):
        return
    original = command._validate_username

    def _validate_username(self: Any, username: str, verbose_field_name: str, database: str) -> str | None:
        error: str | None = original(self, username, verbose_field_name, database)
        return error or username_refusal(username)

    command._validate_username = _validate_username
    command._confusable_checked = True
