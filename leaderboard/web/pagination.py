"""Pages of a long list: ``?page=N`` read leniently (a page that is not a number is the first, one past the end
the last: a stale link never fails), and the pager's links keep the page's other query parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.paginator import Page, Paginator
from django.http import HttpRequest

#: Rows per page of each list page (the home page's competitions, a participant's submissions, a board, ...).
COMPETITIONS_PER_PAGE = 25
SUBMISSIONS_PER_PAGE = 25
BOARD_ROWS_PER_PAGE = 100
HOST_SUBMISSIONS_PER_PAGE = 50


def page_of(request: HttpRequest, items: Sequence[Any] | Any, per_page: int, *, param: str = "page") -> Page:
    """The page of ``items`` (a list, or an ordered queryset: only that page's rows are read) that ``?page=``
    asks for. The order is the caller's; it must be total (ties broken by a unique column) for pages to be
    stable."""
    return Paginator(items, per_page).get_page(request.GET.get(param))


def pager(request: HttpRequest, page: Page, *, param: str = "page") -> dict[str, Any]:
    """What ``web/_pager.html`` shows: the page, its range of rows, and the previous and next pages' query
    strings (the request's other parameters kept)."""

    def query(number: int) -> str:
        params = request.GET.copy()
        params[param] = str(number)
        return "?" + params.urlencode()

    return {
        "page": page,
        "first_row": page.start_index(),
        "last_row": page.end_index(),
        "count": page.paginator.count,
        "previous": query(page.previous_page_number()) if page.has_previous() else None,
        "next": query(page.next_page_number()) if page.has_next() else None,
    }
