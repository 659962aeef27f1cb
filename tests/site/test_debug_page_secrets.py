"""With ``DJANGO_DEBUG=1`` the technical error pages (a bad Host header's 400, any 500) show no secret setting."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from django.test import Client, RequestFactory
from django.views.debug import technical_500_response

INVITE = "invite-code-0451"
BROKER = "redis://:broker-pass-77@redis.internal:6379/0"
CACHE = "redis://cache-user:cache-pass-88@cache.internal:6379/1"
DATABASE_PASSWORD = "db-pass-99"
API_TOKEN = "tok-0123456789abcdef"
DATABASE_URL = f"postgres://lab:{DATABASE_PASSWORD}@db.internal/lab"
SECRETS = [
    INVITE, "broker-pass-77", "cache-pass-88", DATABASE_PASSWORD, API_TOKEN, "redis.internal", "cache.internal",
    "db.internal",
]


@pytest.fixture
def debug_site(settings: Any) -> Any:
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.LEADERBOARD_INVITE_CODE = INVITE
    settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = settings.REDIS_URL = BROKER
    settings.CACHES = {
        **settings.CACHES, "sessions": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": CACHE}
    }
    settings.DATABASES["default"]["PASSWORD"] = DATABASE_PASSWORD
    settings.SOME_SERVICE = f"https://bot:{API_TOKEN}@api.example/"
    return settings


def _assert_no_secret(page: str) -> None:
    for secret in SECRETS:
        assert secret not in page, secret


@pytest.mark.django_db
def test_a_bad_host_header_shows_no_secret_on_the_debug_page(debug_site: Any) -> None:
    response = Client().get("/", HTTP_HOST="evil.example", REDIS_URL=BROKER, LEADERBOARD_INVITE_CODE=INVITE)
    page = response.content.decode()
    assert response.status_code == 400 and "DisallowedHost" in page and "Settings" in page
    _assert_no_secret(page)
    assert "LEADERBOARD_INVITE_CODE" in page and "CELERY_BROKER_URL" in page  # named, value hidden


def test_the_technical_500_page_shows_no_secret_setting_or_environment_value(debug_site: Any) -> None:
    request = RequestFactory().get("/", DATABASE_URL=DATABASE_URL, SOME_DSN=BROKER)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "boom" in page and "TIME_ZONE" in page  # the page is there, harmless settings shown
    _assert_no_secret(page)
