"""Reads of the sybil screen, for the competition's host only: the suspected clusters with their held counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q

from leaderboard.competitions.models import Competition
from leaderboard.screening.models import HoldState, SuspectCluster


@dataclass(frozen=True)
class ClusterView:
    """One cluster as the host's page and API show it."""

    cluster: SuspectCluster
    held: int  # submissions waiting for the host's decision
    released: int  # held, then released by a decision
    withheld: int  # kept back for good (disqualified or banned)

    @property
    def is_open(self) -> bool:
        return self.cluster.status == "open"

    def as_dict(self) -> dict[str, Any]:
        cluster = self.cluster
        return {
            "id": cluster.pk, "status": cluster.status, "accounts": list(cluster.names),
            "suspicion": cluster.suspicion, "evidence": list(cluster.evidence),
            "held": self.held, "released": self.released, "withheld": self.withheld,
            "first_seen_at": cluster.first_seen_at, "last_seen_at": cluster.last_seen_at,
            "decided_at": cluster.decided_at, "decision_note": cluster.decision_note,
        }


def clusters_for_host(*, competition: Competition) -> list[ClusterView]:
    """Every cluster of the competition, open ones first, newest first; with its held counts (one query)."""
    rows = (
        SuspectCluster.objects.filter(competition=competition)
        .annotate(
            n_held=Count("holds", filter=Q(holds__state=HoldState.HELD)),
            n_released=Count("holds", filter=Q(holds__state__in=[HoldState.RELEASING, HoldState.RELEASED])),
            n_withheld=Count("holds", filter=Q(holds__state=HoldState.WITHHELD)),
        )
        .order_by("-first_seen_at", "-id")
    )
    views = [ClusterView(row, row.n_held, row.n_released, row.n_withheld) for row in rows]  # type: ignore[attr-defined]
    return sorted(views, key=lambda view: not view.is_open)
