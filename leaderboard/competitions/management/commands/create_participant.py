"""``manage.py create_participant USERNAME``: create (or reuse) a user and print a new API token last.

The site keeps only a token's digest, so the printed token is the one chance to read it: for an existing user
the command makes a new token, and the user's old one stops working."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from leaderboard.accounts.services import api_token_issue
from leaderboard.accounts.usernames import normalize_username, username_refusal


class Command(BaseCommand):
    help = (
        "Create a participant account and print a new API token as the last line (shown this once; for an existing "
        "account the new token replaces its old one)."
    )

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
        token = api_token_issue(user=user)
        self.stderr.write(
            f"created user {user.get_username()!r}" if created
            else f"existing user {user.get_username()!r}: a new API token replaces its old one"
        )
        self.stdout.write(token)
