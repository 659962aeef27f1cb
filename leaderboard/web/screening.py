"""The host's page "Suspected multi-accounts": the sybil screen's clusters of a competition with their evidence
and held submissions, the host's decisions on each (POST), and the screen's settings. Anyone but the
competition's host (or staff) gets 404, as for a page that does not exist."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_get, competition_is_host
from leaderboard.errors import ApplicationError
from leaderboard.screening.models import ClusterStatus, ScreenMode, SuspectCluster
from leaderboard.screening.selectors import clusters_for_host
from leaderboard.screening.services import (
    DECISIONS,
    held_release_resume,
    screen_settings_get,
    screen_settings_update,
)
from leaderboard.web.views import participant_login_required

ACTIONS = (
    ("dismiss", "Dismiss (release held)"),
    ("merge", "Merge into one team"),
    ("disqualify", "Disqualify"),
    ("ban", "Ban the accounts"),
)


class ScreenSettingsForm(forms.Form):
    mode = forms.ChoiceField(choices=ScreenMode.choices)
    threshold = forms.FloatField(min_value=0.0, max_value=1.0)


def _hosted(request: HttpRequest, slug: str) -> Competition:
    try:
        competition = competition_get(slug=slug)
    except Competition.DoesNotExist:
        raise Http404("no such competition") from None
    if not competition_is_host(user=request.user, competition=competition):
        raise Http404("no such page")
    return competition


@participant_login_required
def host_screen(request: HttpRequest, slug: str) -> HttpResponse:
    competition = _hosted(request, slug)
    current = screen_settings_get(competition=competition)
    status = 200
    if request.method == "POST":
        form = ScreenSettingsForm(request.POST)
        if form.is_valid():
            screen_settings_update(competition=competition, **form.cleaned_data)
            messages.success(request, f"The screen is now {form.cleaned_data['mode']}.")
            return redirect("web:host-screen", slug=competition.slug)
        status = 400
    else:
        form = ScreenSettingsForm(initial={"mode": current.mode, "threshold": current.threshold})
    held_release_resume(competition=competition)
    context = {"competition": competition, "form": form, "settings": current, "actions": ACTIONS,
               "clusters": clusters_for_host(competition=competition)}
    return render(request, "web/host_screen.html", context, status=status)


@require_POST
@participant_login_required
def host_screen_decide(request: HttpRequest, slug: str, cluster_id: int, action: str) -> HttpResponse:
    competition = _hosted(request, slug)
    decide = DECISIONS.get(action)
    if decide is None:
        raise Http404("no such decision")
    try:
        decision = decide(cluster_id=cluster_id, host=request.user, competition=competition)
    except SuspectCluster.DoesNotExist:
        raise Http404("no such cluster") from None
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        done = f"Cluster {cluster_id}: {ClusterStatus(decision.cluster.status).label}"
        if decision.released:
            done += f"; {decision.released} held submission(s) released in upload order"
        if decision.withheld:
            done += f"; {decision.withheld} held submission(s) stay unreleased"
        messages.success(request, done + ".")
    return redirect("web:host-screen", slug=competition.slug)
