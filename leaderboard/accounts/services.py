"""Writes on accounts: a host makes a participant account and gets its API token; a person signs up with a
password; an owner gets a new API token, replacing the old one. A token is returned once, when it is made: the
database keeps only its digest and prefix (``leaderboard.accounts.tokens``). New usernames are NFKC-normalised
and refused when they look like a taken one (``leaderboard.accounts.usernames``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from leaderboard.accounts.models import ApiToken, ProvisionedAccount
from leaderboard.accounts.tokens import token_digest, token_new, token_prefix
from leaderboard.accounts.usernames import CONFUSABLE_MESSAGE, confusable_existing_username, normalize_username
from leaderboard.errors import QuotaExceeded, UsernameTaken
from leaderboard.screening.models import SignupSource
from leaderboard.screening.services import signup_trace_record

HOST_ACCOUNT_PERIOD = timedelta(days=1)


def participant_provision(
    *, username: str, host: Any, email: str = "", address: str = "", user_agent: str = ""
) -> tuple[Any, str, bool]:
    """A participant account named ``username``, a new API token for it, and whether it was created now.

    A new account has no usable password (it signs in with its token) and remembers ``host`` as its maker.
    Asking again for an existing account returns it, with a new token that replaces its old one (the site keeps
    no token it could hand out again), only to the host that made it (or to a superuser), and only when it is a
    plain participant (never a staff account); any other
    taken name raises :class:`UsernameTaken`, so a host can never obtain another person's token. A new name
    that looks like a taken one raises :class:`UsernameTaken` too; a host (not a superuser) past
    ``LEADERBOARD_HOST_ACCOUNTS_PER_DAY`` new accounts in 24 hours gets :class:`QuotaExceeded`. A new account's
    sign-up trace (the sybil screen's) keeps the host's request's ``address`` and ``user_agent``.
    """
    user_model = get_user_model()
    username = normalize_username(username)
    with transaction.atomic():
        if not user_model.objects.filter(username=username).exists():
            if confusable_existing_username(username):
                raise UsernameTaken(f"the username {username!r} looks too much like a taken one; choose another")
            _check_host_account_limit(host)
        user, created = user_model.objects.get_or_create(username=username, defaults={"email": email})
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
            ProvisionedAccount.objects.create(user=user, created_by=host)
            signup_trace_record(user=user, source=SignupSource.PROVISIONED, address=address, user_agent=user_agent,
                                provisioned_by=host)
        else:
            maker = ProvisionedAccount.objects.filter(user=user).values_list("created_by_id", flat=True).first()
            mine = maker is not None and maker == host.pk
            privileged = getattr(user, "is_staff", False) or getattr(user, "is_superuser", False)
            if privileged or not (mine or getattr(host, "is_superuser", False)):
                raise UsernameTaken(f"the username {username!r} is taken; choose another")
        token = api_token_issue(user=user)
    return user, token, created


def _check_host_account_limit(host: Any) -> None:
    """At most ``LEADERBOARD_HOST_ACCOUNTS_PER_DAY`` new accounts per host in any 24 hours (superusers: no
    limit): a host is also a participant elsewhere, and every account brings a fresh quota and defense state."""
    limit = settings.LEADERBOARD_HOST_ACCOUNTS_PER_DAY
    if getattr(host, "is_superuser", False) or limit <= 0:
        return
    # One host's requests queue here, so two at once cannot both take the last place.
    get_user_model().objects.select_for_update().filter(pk=host.pk).first()
    since = timezone.now() - HOST_ACCOUNT_PERIOD
    made = ProvisionedAccount.objects.filter(created_by=host, created_at__gte=since)
    if made.count() >= limit:
        oldest = made.order_by("created_at").values_list("created_at", flat=True).first() or timezone.now()
        raise QuotaExceeded(
            f"a host may make {limit} participant accounts in 24 hours; ask an administrator for more",
            resets_at=oldest + HOST_ACCOUNT_PERIOD,
        )


def participant_sign_up(
    *, username: str, email: str, password: str, address: str = "", user_agent: str = ""
) -> Any:
    """A new participant account with a password (validated by the caller's form), without an API token yet (its
    owner makes one on the profile page, where it is shown once); its sign-up trace keeps the request's client
    ``address`` and ``user_agent`` (host only: the sybil screen's)."""
    users: Any = get_user_model().objects  # the user model's manager (create_user is not on the base type)
    username = normalize_username(username)
    if confusable_existing_username(username) is not None:
        raise UsernameTaken(CONFUSABLE_MESSAGE)
    try:
        with transaction.atomic():
            user = users.create_user(username=username, email=email, password=password)
            signup_trace_record(user=user, source=SignupSource.WEB, address=address, user_agent=user_agent)
    except IntegrityError:  # the name was taken between the form's check and this insert
        raise UsernameTaken("A user with that username already exists.") from None
    return user


def api_token_issue(*, user: Any) -> str:
    """A new API token for the account, replacing its old one (which stops working at once). The token is
    returned here only: the database keeps its digest and prefix, so show it to its owner now."""
    token = token_new()
    with transaction.atomic():
        # Lock the account so that two issues at once cannot both delete and then both create.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        ApiToken.objects.filter(user=user).delete()
        ApiToken.objects.create(user=user, prefix=token_prefix(token), digest=token_digest(token))
    return token
