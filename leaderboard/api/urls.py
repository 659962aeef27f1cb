"""Routes of ``/api/v1/`` (DESIGN.md's interface contract; extend, never rename)."""

from __future__ import annotations

from django.urls import path

from leaderboard.api import auth, data_files, screening, views

app_name = "api"

urlpatterns = [
    path("auth/token/", auth.TokenLoginApi.as_view(), name="auth-token"),
    path("auth/me/", auth.WhoAmIApi.as_view(), name="auth-me"),
    path("competitions/", views.CompetitionListApi.as_view(), name="competition-list"),
    path("competitions/<slug:slug>/", views.CompetitionDetailApi.as_view(), name="competition-detail"),
    path(
        "competitions/<slug:slug>/sample-submission/",
        views.SampleSubmissionApi.as_view(),
        name="sample-submission",
    ),
    path("competitions/<slug:slug>/data/", data_files.DataFileListApi.as_view(), name="data-files"),
    path("competitions/<slug:slug>/data/<str:name>", data_files.DataFileDownloadApi.as_view(), name="data-file"),
    path("competitions/<slug:slug>/submissions/", views.CompetitionSubmissionsApi.as_view(), name="submissions"),
    path("competitions/<slug:slug>/predict/", views.PredictApi.as_view(), name="predict"),
    path("competitions/<slug:slug>/quota/", views.QuotaApi.as_view(), name="quota"),
    path("competitions/<slug:slug>/leaderboard/", views.LeaderboardApi.as_view(), name="leaderboard"),
    path("competitions/<slug:slug>/teams/", views.CompetitionTeamsApi.as_view(), name="competition-teams"),
    path("competitions/<slug:slug>/screen/clusters/", screening.HostScreenClustersApi.as_view(),
         name="screen-clusters"),
    path("competitions/<slug:slug>/screen/", screening.HostScreenSettingsApi.as_view(), name="screen-settings"),
    path("screen/clusters/<int:cluster_id>/<str:action>/", screening.HostScreenDecisionApi.as_view(),
         name="screen-decision"),
    path("teams/<int:team_id>/", views.TeamDetailApi.as_view(), name="team-detail"),
    path("teams/<int:team_id>/invitations/", views.TeamInvitationsApi.as_view(), name="team-invitations"),
    path("teams/<int:team_id>/leave/", views.TeamLeaveApi.as_view(), name="team-leave"),
    path("teams/<int:team_id>/merge/", views.TeamMergeApi.as_view(), name="team-merge"),
    path("invitations/", views.InvitationListApi.as_view(), name="invitation-list"),
    path("invitations/<int:invitation_id>/accept/", views.InvitationAcceptApi.as_view(), name="invitation-accept"),
    path("invitations/<int:invitation_id>/decline/", views.InvitationDeclineApi.as_view(), name="invitation-decline"),
    path("submissions/<int:submission_id>/", views.SubmissionDetailApi.as_view(), name="submission-detail"),
    path("submissions/<int:submission_id>/select/", views.SubmissionSelectApi.as_view(), name="submission-select"),
    path("host/competitions/", views.HostCompetitionCreateApi.as_view(), name="host-competition-create"),
    path("host/inversion-challenges/", views.HostInversionChallengeCreateApi.as_view(),
         name="host-inversion-challenge-create"),
    path("host/participants/", views.HostParticipantsApi.as_view(), name="host-participants"),
    path("host/games/clean/", views.HostGameCleanApi.as_view(), name="host-games-clean"),
    path("host/competitions/<slug:slug>/", views.HostCompetitionDetailApi.as_view(), name="host-competition"),
    path("host/competitions/<slug:slug>/data/", data_files.HostDataFilesApi.as_view(), name="host-data-files"),
    path("host/competitions/<slug:slug>/data/<str:name>", data_files.HostDataFileApi.as_view(), name="host-data-file"),
    path("host/competitions/<slug:slug>/defenses/", views.HostDefensesApi.as_view(), name="host-defenses"),
    path("host/competitions/<slug:slug>/submissions/", views.HostSubmissionsApi.as_view(), name="host-submissions"),
    path("host/competitions/<slug:slug>/leakage/", views.HostLeakageApi.as_view(), name="host-leakage"),
    path("host/competitions/<slug:slug>/audit/", views.HostAuditApi.as_view(), name="host-audit"),
    path("host/competitions/<slug:slug>/audit/<int:audit_id>/", views.HostAuditDetailApi.as_view(),
         name="host-audit-detail"),
]
