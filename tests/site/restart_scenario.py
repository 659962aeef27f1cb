"""One phase of the worker-restart scenario, in a process of its own (the database is ``DATABASE_URL``):
``first`` migrates, creates a competition defended by the fixed-step Ladder and has a participant submit a
good model; ``second`` has the same participant submit a clearly worse one. Each phase waits until the real
worker (started by the test, a different process for each phase) has scored, and prints one JSON line."""

from __future__ import annotations

import json
import os
import sys
import time

import django

LADDER = [{"name": "ladder", "mode": "fixed", "eta": 0.05}]


def main(phase: str) -> dict[str, object]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    django.setup()
    import numpy as np
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from leaderboard.competitions.models import Competition
    from leaderboard.competitions.services import competition_create
    from leaderboard.submissions.models import TERMINAL_STATUSES, DefenseState, Submission
    from leaderboard.submissions.services import submission_create
    from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv

    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    if phase == "first":
        call_command("migrate", verbosity=0, interactive=False)
        competition = competition_create(
            slug="restart", labels_csv=labels_csv(labels), daily_limit=None, defenses=LADDER, public_fraction=0.5
        )
        User.objects.create_user("restart-user")
    competition = Competition.objects.get(slug="restart")
    user = User.objects.get(username="restart-user")
    confidence = 0.8 if phase == "first" else 0.6  # the second model is clearly worse (higher log loss)
    values = np.where(labels == 1, confidence, 1 - confidence)
    submission = submission_create(competition=competition, participant=user, data=predictions_csv(competition, values))
    deadline = time.monotonic() + 40
    while Submission.objects.get(pk=submission.pk).status not in TERMINAL_STATUSES and time.monotonic() < deadline:
        time.sleep(0.1)
    submission.refresh_from_db()
    states = {s.split: s.state for s in DefenseState.objects.filter(competition=competition, participant=user)}
    return {
        "status": submission.status,
        "public_score_text": submission.public_score_text,
        "raw_public": submission.raw_public,
        "states": states,
    }


if __name__ == "__main__":
    sys.stdout.write("SCENARIO-RESULT " + json.dumps(main(sys.argv[1])) + "\n")
