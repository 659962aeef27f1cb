"""Admin of model-inversion challenges: the settings and the budgets; the models' arrays stay out of forms."""

from __future__ import annotations

from django.contrib import admin

from leaderboard.inversion.models import InversionChallenge, PredictionBudget


@admin.register(InversionChallenge)
class InversionChallengeAdmin(admin.ModelAdmin):
    list_display = ("competition", "query_budget", "n_features", "max_batch")
    exclude = ("target_npz", "evaluator_npz", "reference_npy")
    readonly_fields = ("competition", "n_features", "image_height", "image_width")


@admin.register(PredictionBudget)
class PredictionBudgetAdmin(admin.ModelAdmin):
    list_display = ("challenge", "participant", "used", "updated_at")
    list_filter = ("challenge",)
