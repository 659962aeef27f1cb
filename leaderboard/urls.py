"""Top-level routes: the admin, the REST API with its OpenAPI schema and docs, and (when present) the web pages."""

from __future__ import annotations

from pathlib import Path

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

urlpatterns: list[URLPattern | URLResolver] = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("leaderboard.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
]

# The HTML pages are another app (leaderboard.web) that lands separately; mount it once it exists.
if (Path(__file__).resolve().parent / "web" / "urls.py").exists():
    urlpatterns.append(path("", include("leaderboard.web.urls")))
