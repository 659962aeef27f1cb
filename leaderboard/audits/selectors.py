"""Reads on audits (host only: every caller checks ``competition_is_host`` first)."""

from __future__ import annotations

from leaderboard.audits.models import Audit
from leaderboard.competitions.models import Competition


def audit_latest(*, competition: Competition) -> Audit | None:
    """The competition's most recent audit, or ``None``."""
    return Audit.objects.filter(competition=competition).select_related("competition").first()


def audit_get(*, competition: Competition, audit_id: int) -> Audit:
    """One audit of ``competition``; raises ``Audit.DoesNotExist`` (a 404) for another competition's."""
    return Audit.objects.select_related("competition").get(competition=competition, pk=audit_id)
