"""Template filters of the web pages."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.utils.safestring import SafeString

from leaderboard.web.description import render_markdown

register = template.Library()


@register.filter
def utc(moment: datetime | None) -> str:
    """A date-time in UTC to the second (no microseconds: nothing on a page carries more digits than needed)."""
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@register.filter
def plain(number: float | None) -> str:
    """A setting's number as written (``1e-15``), not Django's localised fixed-point expansion."""
    return "" if number is None else format(number, "g")


@register.filter
def sig(number: float | None, digits: int = 3) -> str:
    """A host-side measurement to ``digits`` significant digits (``0.000123``, ``1.2e-07``); empty for ``None``."""
    return "" if number is None else format(number, f".{digits}g")


@register.filter
def markdown(text: str | None) -> SafeString:
    """A host's Markdown as sanitized HTML (no raw HTML, no script links): see ``leaderboard.web.description``."""
    return render_markdown(text or "")


@register.filter
def percent(share: float | None) -> str:
    """A share as a percentage the way the audit's verdict writes it (never rounded up to 100 %); ``–`` for
    ``None``."""
    from games.audit import percent as audit_percent

    return "–" if share is None else audit_percent(float(share))
