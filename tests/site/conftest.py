"""Fixtures of the site tests: a fixed cast (host, participant, another participant, anonymous), a small
binary competition with seeded labels, API clients, and an enqueue recorder instead of a broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv

__all__ = ["LABEL_SEED", "N_ROWS", "labels_csv", "predictions_csv"]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The default PBKDF2 costs ~0.3 s per user; tests are about the site, not password strength.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def hidden_labels() -> np.ndarray:
    return np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)


@pytest.fixture(autouse=True)
def enqueued(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the ids the services would publish to the broker: only integration tests talk to Redis, so a
    unit test can never drop a task into a queue some real worker consumes."""
    published: list[int] = []
    if request.node.get_closest_marker("integration"):
        return published
    # Nor may a background thread publish later, after the test restored the real broker client.
    from django.conf import settings

    monkeypatch.setattr(settings, "LEADERBOARD_PUBLISH_RETRY_FOR", 0, raising=False)
    monkeypatch.setattr(
        "leaderboard.submissions.services.submission_enqueue",
        lambda *, submission_id: published.append(submission_id),
    )
    return published


@pytest.fixture
def host(db: Any) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("hana_host")


@pytest.fixture
def participant(db: Any) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("alice")


@pytest.fixture
def other_participant(db: Any) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("bob")


@pytest.fixture
def make_competition(db: Any, host: Any, hidden_labels: np.ndarray) -> Callable[..., Any]:
    from leaderboard.competitions.services import competition_create

    counter = iter(range(1000))

    def make(**options: Any) -> Any:
        options.setdefault("slug", f"comp-{next(counter)}")
        options.setdefault("host", host)
        labels = options.pop("labels", hidden_labels)
        return competition_create(labels_csv=labels_csv(labels), **options)

    return make


@pytest.fixture
def competition(make_competition: Callable[..., Any]) -> Any:
    return make_competition(slug="breast-cancer", daily_limit=5)


@pytest.fixture
def submit(enqueued: list[int], django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """Create a submission through the service (validated, quota-checked, recorded as enqueued).

    The test's transaction never commits, so the on-commit hook that enqueues is run explicitly.
    """
    from leaderboard.submissions.services import submission_create

    def do(competition: Any, user: Any, values: Any, **options: Any) -> Any:
        data = values if isinstance(values, bytes) else predictions_csv(competition, values)
        with django_capture_on_commit_callbacks(execute=True):
            return submission_create(competition=competition, participant=user, data=data, **options)

    return do


@pytest.fixture
def score_all(enqueued: list[int]) -> Callable[[], list[str]]:
    """Run the worker's service for everything enqueued so far, in order (what a worker would do)."""
    from leaderboard.submissions.services import submission_score

    def run() -> list[str]:
        actions = [submission_score(submission_id=pk).action for pk in enqueued]
        enqueued.clear()
        return actions

    return run


_ISSUED: dict[int, str] = {}  # user id -> the last token issue_token gave it (the database keeps only digests)


def issue_token(user: Any) -> str:
    """An API token of ``user`` that works now: the one given before if it is still the account's (so two clients
    of one user share it), else a new one (which replaces any other)."""
    from leaderboard.accounts.models import ApiToken
    from leaderboard.accounts.services import api_token_issue
    from leaderboard.accounts.tokens import token_digest

    known = _ISSUED.get(user.pk)
    if known is None or not ApiToken.objects.filter(user=user, digest=token_digest(known)).exists():
        known = _ISSUED[user.pk] = api_token_issue(user=user)
    return known


def api_client(user: Any | None) -> Any:
    from rest_framework.test import APIClient

    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {issue_token(user)}")
    return client


@pytest.fixture
def clients(host: Any, participant: Any, other_participant: Any) -> Iterator[dict[str, Any]]:
    """The fixed cast as API clients."""
    yield {
        "host": api_client(host),
        "participant": api_client(participant),
        "other": api_client(other_participant),
        "anonymous": api_client(None),
    }
