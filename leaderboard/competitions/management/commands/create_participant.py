"""``manage.py create_participant USERNAME``: create (or reuse) a user and print its API token last."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.authtoken.models import Token

from leaderboard.accounts.usernames import normalize_username, username_refusal


class Command(BaseCommand):
    help = "Create a participant account and print its API token as the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--staff", action="store_true", help="also allow hosting (staff account)")

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        username = normalize_username(options["username"])
        if not user_model.objects.filter(username=username).exists():
            refusal = username_refusal(username)  # as sign-up: no look-alike of a taken name
            if refusal is not None:
                raise CommandError(refusal)
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"email": options["email"], "is_staff": options["staff"]}
        )
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        token, _ = Token.objects.get_or_create(user=user)
        self.stderr.write(f"{'created' if created else 'existing'} user {user.get_username()!r}")
        self.stdout.write(token.key)
