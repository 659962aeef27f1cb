"""Django admin: leakage audits, read-only (they are written by the audit task and the command only)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from leaderboard.audits.models import Audit


@admin.register(Audit)
class AuditAdmin(admin.ModelAdmin):
    list_display = ("id", "competition", "status", "percent", "budget", "accounts", "verdict", "created_at")
    list_filter = ("status", "competition")
    readonly_fields = tuple(f.name for f in Audit._meta.get_fields() if f.concrete)

    def has_add_permission(self, request: Any) -> bool:
        return False
