"""Admin of model-inversion challenges: the settings and the budgets; the models' arrays stay out of forms.

"Add" is a form of files (target, evaluator, optional public images) that goes through the same strict readers
and service as the command and the host API."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from leaderboard.errors import CompetitionConfigError
from leaderboard.inversion.models import InversionChallenge, PredictionBudget
from leaderboard.inversion.services import inversion_custom_create, parse_image_shape, split_class_names
from scoring.inversion_files import MAX_MODEL_BYTES, MAX_PUBLIC_BYTES


class CustomChallengeForm(forms.Form):
    slug = forms.SlugField(max_length=64)
    title = forms.CharField(required=False)
    query_budget = forms.IntegerField(min_value=1, max_value=10_000_000, initial=5000)
    target = forms.FileField(help_text="the target model's .npz: its predicted class is all the endpoint releases")
    evaluator = forms.FileField(help_text="the evaluation model's .npz: judges the reconstructions, kept private")
    public = forms.FileField(required=False, help_text="optional public images for the reference attack")
    image_shape = forms.CharField(required=False, help_text="HEIGHTxWIDTH (default: square, else one row)")
    pixel_low = forms.FloatField(initial=0.0)
    pixel_high = forms.FloatField(initial=1.0)
    class_names = forms.CharField(required=False, help_text="comma-separated, one per class, in order")


def _read(upload: Any, limit: int) -> bytes:
    data = upload.read(limit + 1)
    if len(data) > limit:
        raise CompetitionConfigError(f"{upload.name}: larger than the {limit} bytes allowed")
    return bytes(data)


@admin.register(InversionChallenge)
class InversionChallengeAdmin(admin.ModelAdmin):
    list_display = ("competition", "query_budget", "n_features", "max_batch")
    exclude = ("target_npz", "evaluator_npz", "reference_npy")
    readonly_fields = ("competition", "n_features", "image_height", "image_width")

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied("not allowed to add model-inversion challenges")
        form = CustomChallengeForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                challenge = inversion_custom_create(
                    slug=data["slug"], title=data["title"], query_budget=data["query_budget"], host=request.user,
                    target_npz=_read(data["target"], MAX_MODEL_BYTES),
                    evaluator_npz=_read(data["evaluator"], MAX_MODEL_BYTES),
                    public=None if data["public"] is None else _read(data["public"], MAX_PUBLIC_BYTES),
                    target_name=f"target ({data['target'].name})",
                    evaluator_name=f"evaluator ({data['evaluator'].name})",
                    public_name="public" if data["public"] is None else f"public ({data['public'].name})",
                    image_shape=parse_image_shape(data["image_shape"]) if data["image_shape"] else None,
                    pixel_range=(data["pixel_low"], data["pixel_high"]),
                    class_names=split_class_names([data["class_names"]] if data["class_names"] else None),
                )
            except CompetitionConfigError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"created {challenge.competition.slug}: {challenge.reference_note}")
                return HttpResponseRedirect(reverse("admin:inversion_inversionchallenge_changelist"))
        context = {**self.admin_site.each_context(request), "form": form, "opts": self.model._meta,
                   "title": "Add a model-inversion challenge"}
        return TemplateResponse(request, "admin/inversion/create_from_files.html", context)


@admin.register(PredictionBudget)
class PredictionBudgetAdmin(admin.ModelAdmin):
    list_display = ("challenge", "participant", "used", "updated_at")
    list_filter = ("challenge",)
