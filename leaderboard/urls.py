"""Top-level routes: the admin, the REST API with its OpenAPI schema and docs, and the web pages."""

from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView

from leaderboard.web.api_docs import RedocDocsView, SwaggerDocsView

urlpatterns: list[URLPattern | URLResolver] = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("leaderboard.api.urls")),
    # Kaggle's competition API for the official `kaggle` command line (docs/kaggle_cli.md).
    path("api/v1/", include("leaderboard.api.kaggle_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Served with every asset from the site (drf-spectacular-sidecar), under a policy that allows nothing else.
    path("api/docs/", SwaggerDocsView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", RedocDocsView.as_view(url_name="schema"), name="api-redoc"),
    path("", include("leaderboard.web.urls")),
]
