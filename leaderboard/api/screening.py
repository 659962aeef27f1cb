"""The sybil screen's host API: a competition's screen settings, its suspected clusters, and the host's decision
on one."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_get, competition_is_host
from leaderboard.screening.models import ScreenMode, SuspectCluster
from leaderboard.screening.selectors import ClusterView, clusters_for_host
from leaderboard.screening.services import DECISIONS, screen_settings_get, screen_settings_update


class ClusterSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text="open, dismissed, merged, disqualified or banned")
    accounts = serializers.ListField(child=serializers.CharField(), help_text="usernames, or 'team <name>'")
    suspicion = serializers.FloatField()
    evidence = serializers.ListField(child=serializers.DictField(), help_text="[{kind, accounts, detail}]")
    held = serializers.IntegerField(help_text="submissions held, waiting for a decision")
    released = serializers.IntegerField()
    withheld = serializers.IntegerField()
    first_seen_at = serializers.DateTimeField()
    last_seen_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_note = serializers.CharField()


def _data(view: ClusterView) -> dict[str, object]:
    return dict(ClusterSerializer(view.as_dict()).data)


class ScreenSettingsSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=ScreenMode.values, required=False, help_text="off, flag or hold")
    threshold = serializers.FloatField(min_value=0.0, max_value=1.0, required=False,
                                       help_text="a cluster is flagged from this suspicion (0 to 1) up")


def _hosted(request: Request, slug: str) -> Competition:
    competition = competition_get(slug=slug)
    if not competition_is_host(user=request.user, competition=competition):
        raise PermissionDenied("only the competition's host (or staff) may do this")
    return competition


class HostScreenSettingsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="The sybil screen's settings (host only)", responses=ScreenSettingsSerializer)
    def get(self, request: Request, slug: str) -> Response:
        current = screen_settings_get(competition=_hosted(request, slug))
        return Response({"mode": current.mode, "threshold": current.threshold})

    @extend_schema(
        summary="Change the sybil screen's settings (host only)",
        request=ScreenSettingsSerializer,
        responses={200: ScreenSettingsSerializer, 400: OpenApiResponse(description="an invalid setting")},
    )
    def patch(self, request: Request, slug: str) -> Response:
        competition = _hosted(request, slug)
        payload = ScreenSettingsSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        current = screen_settings_update(competition=competition, **payload.validated_data)
        return Response({"mode": current.mode, "threshold": current.threshold})


class HostScreenClustersApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="The sybil screen's suspected clusters (host only)",
        responses={200: ClusterSerializer(many=True), 403: OpenApiResponse(description="not the host")},
    )
    def get(self, request: Request, slug: str) -> Response:
        competition = _hosted(request, slug)
        return Response([_data(view) for view in clusters_for_host(competition=competition)])


class HostScreenDecisionApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Decide on a suspected cluster: dismiss, merge, disqualify or ban (host only)",
        request=None,
        responses={
            200: ClusterSerializer,
            404: OpenApiResponse(description="no such cluster, or not the host"),
            409: OpenApiResponse(description="already decided, or not possible (teams' rules, banning staff)"),
        },
    )
    def post(self, request: Request, cluster_id: int, action: str) -> Response:
        decide = DECISIONS.get(action)
        cluster = SuspectCluster.objects.select_related("competition").filter(pk=cluster_id).first()
        if decide is None or cluster is None or not competition_is_host(
            user=request.user, competition=cluster.competition
        ):
            raise NotFound("no such cluster")
        decide(cluster_id=cluster.pk, host=request.user, competition=cluster.competition)
        views = clusters_for_host(competition=cluster.competition)
        view = next(view for view in views if view.cluster.pk == cluster.pk)
        return Response(_data(view))
