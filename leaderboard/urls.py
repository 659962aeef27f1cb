"""Top-level routes: the admin, the REST API with its OpenAPI schema and docs, and the web pages."""

from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

urlpatterns: list[URLPattern | URLResolver] = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("leaderboard.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    # Our template: the package's loads web fonts from a CDN.
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema", template_name="web/redoc.html"),
         name="api-redoc"),
    path("", include("leaderboard.web.urls")),
]
