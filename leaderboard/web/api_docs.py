"""The API's documentation pages (Swagger UI and ReDoc) with every asset served by the site itself.

drf-spectacular-sidecar ships the scripts; these views add a Content-Security-Policy that lets the browser load
nothing from elsewhere, so what the packages would still fetch from a CDN on their own (ReDoc's "API docs by
Redocly" logo) is never requested and the pages work offline.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response

# Inline script and styles: the packages' page templates use them. Workers from blob: URLs: ReDoc's search.
SITE_ONLY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "worker-src 'self' blob:",
    "connect-src 'self'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])


class SiteOnlyMixin:
    """Adds :data:`SITE_ONLY_POLICY` to every answer (``get`` stays the package's, excluded from the schema)."""

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        response["Content-Security-Policy"] = SITE_ONLY_POLICY
        return response


class SwaggerDocsView(SiteOnlyMixin, SpectacularSwaggerView):
    template_name = "web/swagger_ui.html"  # the package's page under the site's bar


class RedocDocsView(SiteOnlyMixin, SpectacularRedocView):
    template_name = "web/redoc.html"  # the package's loads web fonts from a CDN; ours does not
