"""Routes of Kaggle's competition API (``leaderboard.api.kaggle``), under ``/api/v1/`` as ``kagglesdk`` builds
them, and the upload and download URLs its answers point to."""

from __future__ import annotations

from django.urls import path

from leaderboard.api import kaggle

urlpatterns = [
    path(f"{kaggle.SERVICE}/<str:method>", kaggle.CompetitionApiService.as_view(), name="kaggle-service"),
    path(f"{kaggle.OAUTH_SERVICE}/IntrospectToken", kaggle.IntrospectTokenApi.as_view(), name="kaggle-introspect"),
    path("kaggle/uploads/<str:token>", kaggle.KaggleUploadApi.as_view(), name="kaggle-upload"),
    path("kaggle/competitions/<slug:slug>/files/<str:name>", kaggle.KaggleDataFileApi.as_view(),
         name="kaggle-data-file"),
    path("kaggle/competitions/<slug:slug>/<str:bundle>.zip", kaggle.KaggleDataBundleApi.as_view(),
         name="kaggle-data-bundle"),
]
