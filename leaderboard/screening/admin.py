"""Django admin of the sybil screen: settings per competition, clusters, holds and sign-up traces (read-only)."""

from __future__ import annotations

from django.contrib import admin

from leaderboard.screening.models import BoardExclusion, HeldSubmission, ScreenSettings, SignupTrace, SuspectCluster


@admin.register(ScreenSettings)
class ScreenSettingsAdmin(admin.ModelAdmin):
    list_display = ("competition", "mode", "threshold", "updated_at")
    list_filter = ("mode",)


@admin.register(SuspectCluster)
class SuspectClusterAdmin(admin.ModelAdmin):
    list_display = ("id", "competition", "status", "suspicion", "first_seen_at")
    list_filter = ("status",)
    readonly_fields = ("competition", "accounts", "names", "suspicion", "evidence", "status", "first_seen_at",
                       "last_seen_at", "decided_at", "decided_by", "decision_note")


@admin.register(HeldSubmission)
class HeldSubmissionAdmin(admin.ModelAdmin):
    list_display = ("submission", "cluster", "state", "held_at", "released_at")
    list_filter = ("state",)
    readonly_fields = ("submission", "cluster", "held_at", "released_at")


@admin.register(SignupTrace)
class SignupTraceAdmin(admin.ModelAdmin):
    list_display = ("user", "source", "address", "signed_up_at")
    list_filter = ("source",)
    search_fields = ("user__username", "address")
    readonly_fields = ("user", "source", "address", "user_agent", "signed_up_at", "provisioned_by")


@admin.register(BoardExclusion)
class BoardExclusionAdmin(admin.ModelAdmin):
    list_display = ("competition", "participant", "reason", "created_at")
    list_filter = ("reason",)
