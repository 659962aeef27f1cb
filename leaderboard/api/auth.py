"""``POST /api/v1/auth/token/``: a script trades a username and password for a new API token of the account.

The site keeps only digests of tokens, so it cannot hand back the one the account has: each successful call
makes a new token, and the account's previous token stops working.

It authenticates through the same lockout as the login page (``leaderboard.security``): a locked login answers
429 with ``resets_at`` (UTC) and a Retry-After header, never "did not match"."""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth import authenticate
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.accounts.services import api_token_issue
from leaderboard.security import locked_message, request_locked_until, retry_after_seconds

DID_NOT_MATCH = "username and password did not match"


class TokenLoginApi(APIView):
    authentication_classes: list[type] = []  # no session, hence no CSRF: the answer is the token itself
    permission_classes = [AllowAny]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description="`{token, username}`: a new token; the account's old one stops working"
            ),
            400: OpenApiResponse(description="missing fields, or the username and password did not match"),
            429: OpenApiResponse(description="too many failed attempts; `resets_at` (UTC) and a Retry-After header"),
        },
    )
    def post(self, request: Request) -> Response:
        data = request.data if isinstance(request.data, Mapping) else {}
        username, password = data.get("username"), data.get("password")
        if not isinstance(username, str) or not isinstance(password, str) or not username or not password:
            return Response({"detail": "send a username and a password"}, status=status.HTTP_400_BAD_REQUEST)
        if "\x00" in username or "\x00" in password:  # PostgreSQL refuses NUL in a string: never a 500
            return Response({"detail": DID_NOT_MATCH}, status=status.HTTP_400_BAD_REQUEST)
        raw = request._request  # the lockout reads the client address from the Django request
        user = authenticate(raw, username=username[:150], password=password[:4096])
        if user is None:
            until = request_locked_until(raw)
            if until is not None:
                body = {"detail": locked_message(until), "resets_at": until.isoformat().replace("+00:00", "Z")}
                headers = {"Retry-After": str(retry_after_seconds(until))}
                return Response(body, status=status.HTTP_429_TOO_MANY_REQUESTS, headers=headers)
            return Response({"detail": DID_NOT_MATCH}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"token": api_token_issue(user=user), "username": user.get_username()})


class WhoAmIApi(APIView):
    """``GET /api/v1/auth/me/``: the username behind the request's token, so a script holding several tokens can
    tell its accounts apart (e.g. to invite them to one team). Nothing else of the account."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="`{username}`"),
                   401: OpenApiResponse(description="no token, or an unknown one")},
    )
    def get(self, request: Request) -> Response:
        return Response({"username": request.user.get_username()})
