"""Errors mapped to HTTP answers in one place. Bad input is always a 4xx with a readable ``detail``."""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from leaderboard.errors import ApplicationError, QuotaExceeded


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        headers = {}
        if isinstance(exc, QuotaExceeded) and exc.resets_at is not None:
            seconds = (exc.resets_at - timezone.now()).total_seconds()
            headers["Retry-After"] = str(max(math.ceil(seconds), 1))
        return Response({"detail": exc.message, **exc.extra}, status=exc.status_code, headers=headers)
    if isinstance(exc, ObjectDoesNotExist):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail={"detail": exc.messages})
    elif isinstance(exc, SuspiciousOperation):
        # e.g. a request body over DATA_UPLOAD_MAX_MEMORY_SIZE; never a 500 for bad input.
        exc = exceptions.ParseError(str(exc) or "the request could not be read")
    elif isinstance(exc, (Http404, PermissionDenied)):
        pass  # DRF maps these itself
    return exception_handler(exc, context)
