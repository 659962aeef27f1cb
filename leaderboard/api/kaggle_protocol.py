"""The wire rules of Kaggle's API as the official ``kaggle`` command line (``kagglesdk``) speaks them: HTTP basic
authentication with the username and an API token of this site (or the token alone as a bearer token), JSON
bodies with camelCase fields, errors as ``{"code": <status>, "message": <text>}`` (the command line prints
``message``), timestamps in UTC with milliseconds and a ``Z``, and pages chosen by ``page``, ``pageToken`` and
``pageSize``.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication
from rest_framework.response import Response

from leaderboard.accounts.authentication import HashedTokenAuthentication, api_token_find
from leaderboard.api.exception_handlers import api_exception_handler

#: Rows a page holds when the request does not say (the command line asks for 20 itself).
PAGE_SIZE = 20
#: The most rows one page may hold (as the REST API's pages).
MAX_PAGE_SIZE = 500
#: Fields of an error answer kept as they are beside the message (the rest is the message).
MACHINE_FIELDS = ("line", "resets_at", "opens_at", "closes_at")


class KaggleBasicAuthentication(BasicAuthentication):
    """``Authorization: Basic`` with a username and one of its API tokens (what ``KAGGLE_USERNAME`` and
    ``KAGGLE_KEY`` hold), looked up by digest as ``Authorization: Token`` is; the username must be the token's."""

    def authenticate_credentials(self, userid: str, password: str, request: Any = None) -> tuple[Any, Any]:
        stored = api_token_find(password)
        if stored is None or not hmac.compare_digest(
            stored.user.get_username().encode("utf-8", "surrogatepass"), userid.encode("utf-8", "surrogatepass")
        ):
            raise exceptions.AuthenticationFailed(_("Invalid username or API token."))
        if not stored.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return stored.user, stored


class KaggleBearerAuthentication(HashedTokenAuthentication):
    """``Authorization: Bearer`` with an API token of this site: what the command line sends when the token is in
    ``KAGGLE_API_TOKEN`` (or ``~/.kaggle/access_token``), after ``IntrospectToken`` named its account."""

    keyword = "Bearer"


def _text_of(value: Any) -> str:
    """One line of text from DRF's error detail (a string, a list of them, or fields mapped to them)."""
    if isinstance(value, Mapping):
        return "; ".join(f"{key}: {_text_of(item)}" if key != "detail" else _text_of(item)
                         for key, item in value.items())
    if isinstance(value, list | tuple):
        return "; ".join(_text_of(item) for item in value)
    return str(value)


def kaggle_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The site's error answer (same statuses, same messages), reshaped as Kaggle's ``{code, message}``; the
    machine-readable fields of an application error (``line``, ``resets_at``) stay beside them."""
    response = api_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    extra = {key: data[key] for key in MACHINE_FIELDS if key in data} if isinstance(data, Mapping) else {}
    rest = {key: value for key, value in data.items() if key not in extra} if isinstance(data, Mapping) else data
    response.data = {"code": response.status_code, "message": _text_of(rest), **extra}
    return response


def when(moment: datetime | None) -> str | None:
    """A timestamp as ``kagglesdk`` reads it: UTC, milliseconds, ``Z``.

    >>> when(datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC))
    '2026-01-02T03:04:05.678Z'
    """
    if moment is None:
        return None
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def body_of(request: Any) -> Mapping[str, Any]:
    data = request.data
    if data is None or data == {}:
        return {}
    if not isinstance(data, Mapping):
        raise exceptions.ParseError("the request body must be a JSON object")
    return data


def text(body: Mapping[str, Any], name: str, *, required: bool = False) -> str:
    value = body.get(name)
    if value is None or value == "":
        if required:
            raise exceptions.ValidationError({name: "is required"})
        return ""
    if not isinstance(value, str):
        raise exceptions.ValidationError({name: f"must be a string, not {type(value).__name__}"})
    if "\x00" in value:  # PostgreSQL refuses NUL in a string: a 400, never a 500
        raise exceptions.ValidationError({name: "must not hold a NUL character"})
    return value


def integer(body: Mapping[str, Any], name: str, default: int = 0) -> int:
    """A whole number field; JSON numbers and the decimal strings protobuf's JSON uses for 64-bit ones."""
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) <= 20:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise exceptions.ValidationError({name: f"must be a whole number, not {str(value)[:40]!r}"})
    if not -(1 << 63) <= value < 1 << 63:  # what the database's integers hold: never a 500 on a lookup
        raise exceptions.ValidationError({name: "is out of range"})
    return value


def flag(body: Mapping[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise exceptions.ValidationError({name: "must be true or false"})
    return value


def page_of(body: Mapping[str, Any], total: int) -> tuple[slice, str]:
    """The rows of the page the request asks for and the token of the next page (``""`` after the last).

    ``pageToken`` is where the page starts (the ``nextPageToken`` of the page before); without one, ``page``
    counts pages from 1. ``pageSize`` is :data:`PAGE_SIZE` by default, at most :data:`MAX_PAGE_SIZE`.
    """
    size = integer(body, "pageSize") or PAGE_SIZE
    if size < 0:
        raise exceptions.ValidationError({"pageSize": "must be at least 1"})
    if size > MAX_PAGE_SIZE:
        raise exceptions.ValidationError({"pageSize": f"must be at most {MAX_PAGE_SIZE}"})
    token = text(body, "pageToken")
    if token:
        if not token.isdigit() or len(token) > 12:
            raise exceptions.ValidationError({"pageToken": "is not a page token this site gave"})
        start = int(token)
    else:
        page = integer(body, "page") or 1
        if page < 1:
            raise exceptions.ValidationError({"page": "must be at least 1"})
        start = (page - 1) * size
    end = start + size
    return slice(start, end), str(end) if end < total else ""
