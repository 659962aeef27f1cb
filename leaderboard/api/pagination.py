"""Bounded pages of the API's list endpoints, without changing what a list is: the body stays the JSON list (the
interface contract), one page of it; ``?page=N`` (from 1) and ``?page_size=M`` (default 100, at most 500) choose
the page; the ``Link`` header (RFC 8288, as GitHub's API) gives the ``next``, ``prev``, ``first`` and ``last``
pages as paths, and ``X-Total-Count`` the number of rows. A page past the last is an empty list."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

PAGE_SIZE = 100
MAX_PAGE_SIZE = 500

PAGE_PARAMETERS = [
    OpenApiParameter("page", int, description="The page, from 1 (default 1); `Link` gives the next and previous."),
    OpenApiParameter("page_size", int, description=f"Rows a page (default {PAGE_SIZE}, at most {MAX_PAGE_SIZE})."),
]


def _positive(request: Request, name: str, default: int, most: int | None = None) -> int:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValidationError({name: [f"must be a whole number, not {text[:40]!r}"]}) from None
    if value < 1:
        raise ValidationError({name: ["must be at least 1"]})
    if most is not None and value > most:
        raise ValidationError({name: [f"must be at most {most}"]})
    return value


def paginated(request: Request, rows: Sequence[Any] | QuerySet[Any], serializer: type[BaseSerializer[Any]]
              ) -> Response:
    """One page of ``rows`` (a list or an ordered queryset: only the page's rows are read), serialised by
    ``serializer``, with its ``Link`` and ``X-Total-Count`` headers. The order is the caller's and must be total
    (ties broken by a unique column) for pages to be stable."""
    total = rows.count() if isinstance(rows, QuerySet) else len(rows)
    window = page_window(request, total)
    return page_headers(Response(serializer(list(rows[window]), many=True).data), request, total)


def page_window(request: Request, total: int) -> slice:
    """The rows of ``total`` that ``?page`` and ``?page_size`` ask for (empty past the last page); a 400 naming
    the parameter for a bad value."""
    size = _positive(request, "page_size", PAGE_SIZE, MAX_PAGE_SIZE)
    number = _positive(request, "page", 1)
    start = min((number - 1) * size, total)
    return slice(start, min(start + size, total))


def page_headers(response: Response, request: Request, total: int) -> Response:
    """``response`` with the ``Link`` (next, prev, first, last) and ``X-Total-Count`` headers of the page asked."""
    size = _positive(request, "page_size", PAGE_SIZE, MAX_PAGE_SIZE)
    number = _positive(request, "page", 1)
    last = max(1, math.ceil(total / size))
    params = request.query_params.copy()

    def link(page: int, rel: str) -> str:
        params["page"] = str(page)
        return f'<{request.path}?{params.urlencode()}>; rel="{rel}"'

    links = [link(1, "first"), link(last, "last")]
    if number < last:
        links.insert(0, link(number + 1, "next"))
    if 1 < number <= last + 1:
        links.insert(0, link(min(number - 1, last), "prev"))
    response["Link"] = ", ".join(links)
    response["X-Total-Count"] = str(total)
    return response
