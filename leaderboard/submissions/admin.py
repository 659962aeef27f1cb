"""Django admin for hosts: submissions with raw and released scores, and defense states (read-only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from leaderboard.submissions.models import (
    CompetitionDefenseState,
    DefenseState,
    Invitation,
    Participation,
    Submission,
    Team,
    TeamDefenseState,
)


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = (
        "id", "competition", "participant", "status", "public_score_text", "raw_public_text",
        "private_score_text", "raw_private_text", "selected_for_final", "created_at",
    )
    list_filter = ("status", "competition", "selected_for_final")
    search_fields = ("participant__username", "competition__slug")
    exclude = ("upload", "predictions_npy")
    # Results are written by the worker only; editing them here would bypass the state machine.
    readonly_fields = tuple(
        f.name for f in Submission._meta.get_fields() if f.concrete and f.name not in {"upload", "predictions_npy"}
    )

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(DefenseState)
class DefenseStateAdmin(admin.ModelAdmin):
    list_display = ("competition", "participant", "split", "updated_at")
    list_filter = ("competition", "split")
    readonly_fields = ("competition", "participant", "split", "state", "updated_at")

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(TeamDefenseState)
class TeamDefenseStateAdmin(admin.ModelAdmin):
    """The chain's team-scoped state (one Ladder, one budget per team; a participant without a team owns their
    own rows), read-only."""

    list_display = ("competition", "team", "participant", "split", "updated_at")
    list_filter = ("competition", "split")
    readonly_fields = ("competition", "team", "participant", "split", "state", "updated_at")

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(CompetitionDefenseState)
class CompetitionDefenseStateAdmin(admin.ModelAdmin):
    """The chain's competition-scoped state (one Ladder, one budget for the whole board), read-only."""

    list_display = ("competition", "split", "updated_at")
    list_filter = ("competition", "split")
    readonly_fields = ("competition", "split", "state", "updated_at")

    def has_add_permission(self, request: Any) -> bool:
        return False


class MembershipInline(admin.TabularInline):
    """A team's members, read-only: joining, leaving and merging go through the team rules (the API)."""

    model = Participation
    fields = ("participant", "joined_team_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "competition", "created_by", "created_at")
    list_filter = ("competition",)
    search_fields = ("name", "competition__slug", "memberships__participant__username")
    readonly_fields = ("competition", "created_by", "created_at")
    inlines = [MembershipInline]

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ("id", "team", "invitee", "invited_by", "status", "created_at", "answered_at")
    list_filter = ("status", "team__competition")
    search_fields = ("team__name", "invitee__username")
    readonly_fields = ("team", "invitee", "invited_by", "created_at", "answered_at")

    def has_add_permission(self, request: Any) -> bool:
        return False
