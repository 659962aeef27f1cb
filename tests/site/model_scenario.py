"""Integration scenario of model competitions, run beside a real Celery worker by
``tests/site/test_model_integration.py`` as ``python -m tests.site.model_scenario``: an honest ONNX model is
scored and an endless one fails at the time limit, in the worker's own sandboxed child processes. Prints one
JSON line ``SCENARIO-RESULT {...}``."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import django

WAIT_SECONDS = float(os.environ.get("SCENARIO_WAIT_SECONDS", "90"))


def main() -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from sklearn.naive_bayes import GaussianNB

    from leaderboard.competitions.services import competition_create
    from leaderboard.submissions.models import TERMINAL_STATUSES, Submission
    from leaderboard.submissions.services import submission_create
    from tests.sandbox import hostile
    from tests.site.factories import features_csv, labels_csv

    call_command("migrate", verbosity=0, interactive=False)
    features, labels = hostile.breast_cancer()
    host, player = User.objects.create_user("it-host"), User.objects.create_user("it-player")
    competition = competition_create(
        slug="it-models", host=host, labels_csv=labels_csv(labels[300:]), features_csv=features_csv(features[300:]),
    )
    honest = hostile.sklearn_onnx(GaussianNB().fit(features[:300], labels[:300]), features)
    ids = [
        submission_create(competition=competition, participant=player, data=data).pk
        for data in (honest, hostile.endless_loop())
    ]
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        rows = {row["pk"]: row for row in Submission.objects.filter(pk__in=ids).values("pk", "status", "error",
                                                                                      "public_score_text")}
        if all(rows[pk]["status"] in TERMINAL_STATUSES for pk in ids):
            break
        time.sleep(0.2)
    return {"honest": rows[ids[0]], "endless": rows[ids[1]]}


if __name__ == "__main__":
    sys.stdout.write("SCENARIO-RESULT " + json.dumps(main(), default=str) + "\n")
