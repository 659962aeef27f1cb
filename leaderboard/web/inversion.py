"""The host's page of a model-inversion challenge: the reference attack's reconstructions and each
participant's best one, drawn as SVG on the server, with the evaluator's verdict per class."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_get, competition_is_host
from leaderboard.inversion.models import PredictionBudget
from leaderboard.inversion.selectors import (
    inversion_best_submissions,
    inversion_of,
    inversion_pictures,
    inversion_reconstructions,
)
from leaderboard.web.views import participant_login_required
from scoring.inversion import evaluate_reconstructions


def _safe(pictures: list[Any]) -> list[dict[str, Any]]:
    # The SVG is built from validated floats and escaped captions only (attacks.inversion.pictures).
    return [{"caption": p.caption, "svg": mark_safe(p.svg)} for p in pictures]


@participant_login_required
def host_inversion(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        competition = competition_get(slug=slug)
    except Competition.DoesNotExist as exc:
        raise Http404("no such competition") from exc
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may see the reconstructions")
    challenge = inversion_of(competition=competition)
    if challenge is None:
        raise Http404("this competition is not a model-inversion challenge")
    reference = None
    if challenge.reference is not None:
        hits = list(evaluate_reconstructions(challenge.evaluator, challenge.reference).hits)
        reference = {"pictures": _safe(inversion_pictures(challenge=challenge, images=challenge.reference, hits=hits)),
                     "recovered": sum(hits), "note": challenge.reference_note}
    rows = []
    for submission, hits in inversion_best_submissions(challenge=challenge):
        images = inversion_reconstructions(submission=submission)
        if images is None:
            continue
        rows.append({"submission": submission, "recovered": sum(hits),
                     "pictures": _safe(inversion_pictures(challenge=challenge, images=images, hits=hits))})
    budgets = PredictionBudget.objects.filter(challenge=challenge).select_related("participant").order_by("-used")
    return render(request, "web/host_inversion.html", {
        "competition": competition, "challenge": challenge, "reference": reference, "rows": rows,
        "budgets": budgets, "n_classes": challenge.task.n_classes,
    })
