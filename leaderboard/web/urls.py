"""Routes of the HTML pages, mounted at the site root."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from leaderboard.web import accounts, data_files, hosting, views
from leaderboard.web.inversion import host_inversion
from leaderboard.web.screening import host_screen, host_screen_decide

app_name = "web"

urlpatterns = [
    path("", views.competitions, name="competition-list"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("accounts/login/", accounts.login_page, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="web:competition-list"), name="logout"),
    path("accounts/signup/", accounts.sign_up, name="signup"),
    path("accounts/profile/", accounts.profile, name="profile"),
    path("accounts/profile/token/", accounts.token_regenerate, name="token-regenerate"),
    path("accounts/password/change/", accounts.password_change, name="password-change"),
    path("accounts/password/change/done/", accounts.password_change_done, name="password-change-done"),
    path("accounts/password/reset/", accounts.password_reset, name="password-reset"),
    path("accounts/password/reset/sent/", accounts.password_reset_done, name="password-reset-done"),
    path("accounts/password/reset/<uidb64>/<token>/", accounts.password_reset_confirm, name="password-reset-confirm"),
    path("accounts/password/reset/done/", accounts.password_reset_complete, name="password-reset-complete"),
    path("c/<slug:slug>/", views.competition_detail, name="competition-detail"),
    path("c/<slug:slug>/sample-submission.csv", views.sample_submission, name="sample-submission"),
    path("c/<slug:slug>/data/", data_files.competition_data, name="competition-data"),
    path("c/<slug:slug>/data/<str:name>", data_files.data_file_download, name="data-file"),
    path("c/<slug:slug>/submit/", views.submission_upload, name="submit"),
    path("c/<slug:slug>/submissions/", views.my_submissions, name="my-submissions"),
    path("c/<slug:slug>/submissions/<int:submission_id>/final/", views.submission_final, name="submission-final"),
    path("c/<slug:slug>/team/", views.team_page, name="team"),
    path("c/<slug:slug>/leaderboard/<str:board>/", views.leaderboard, name="leaderboard"),
    path("c/<slug:slug>/leaderboard/<str:board>.csv", views.leaderboard_export, name="leaderboard-csv"),
    path("c/<slug:slug>/host/", views.host_submissions, name="host-submissions"),
    path("c/<slug:slug>/host/audit/", views.host_audit, name="host-audit"),
    path("c/<slug:slug>/host/inversion/", host_inversion, name="host-inversion"),
    path("c/<slug:slug>/host/screen/", host_screen, name="host-screen"),
    path("c/<slug:slug>/host/screen/<int:cluster_id>/<str:action>/", host_screen_decide, name="host-screen-decide"),
    path("c/<slug:slug>/host/edit/", hosting.host_competition_edit, name="host-competition-edit"),
    path("c/<slug:slug>/host/data/", data_files.host_data, name="host-data"),
    path("c/<slug:slug>/host/data/<str:name>/remove/", data_files.host_data_remove, name="host-data-remove"),
    path("host/competitions/new/", hosting.host_competition_create, name="host-competition-create"),
    path("host/competitions/validate/", hosting.host_competition_validate, name="host-competition-validate"),
    path("games/", views.games, name="games"),
    path("games/<str:name>/", views.game_detail, name="game-detail"),
    path("games/<str:name>/files/<path:path>", views.game_file, name="game-file"),
]
