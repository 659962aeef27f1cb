"""App configuration of the accounts app."""

from __future__ import annotations

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
