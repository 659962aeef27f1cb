"""The games' Jinja templates (``games/templates``) and the filters they format numbers with, shared by the
HTML report (:mod:`games.report`) and the frontier chart (:mod:`games.frontier_chart`)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jinja2


def text(value: Any) -> str:
    """A table cell for people: ``None → '–'``, a whole float without its ``.0``, others to 4 places.

    >>> text(None), text(3.0), text(0.54091), text(0.000123), text("x")
    ('–', '3', '0.5409', '0.000123', 'x')
    """
    if value is None:
        return "–"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e6:
            return str(int(value))
        return f"{value:.4g}" if abs(value) < 1e-3 else f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


def percent(value: float | None) -> str:
    """A share as a percentage for people: ``0.5409 → '54.1 %'``, ``1.0 → '100 %'``."""
    if value is None:
        return "–"
    digits = f"{100 * value:.1f}".rstrip("0").rstrip(".")
    return f"{digits} %"


def small(value: float | None) -> str:
    """A distortion to two significant digits: ``0.000111 → '0.00011'``, ``3e-06 → '3e-06'``."""
    if value is None:
        return "–"
    return "0" if value == 0 else f"{value:.2g}"


@lru_cache(maxsize=1)
def templates() -> jinja2.Environment:
    """The games' templates (``games/templates``), HTML-escaped."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("games", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters["text"] = text
    environment.filters["percent"] = percent
    environment.filters["small"] = small
    environment.filters["json"] = lambda value, sort_keys=False: json.dumps(value, sort_keys=sort_keys)
    return environment
