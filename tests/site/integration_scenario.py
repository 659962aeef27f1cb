"""The site's asynchronous path end to end in a process of its own, against the database named by
``DATABASE_URL`` and the Redis named by ``REDIS_URL``, while a real Celery worker (started by the test) scores.

Run by ``tests/site/test_integration.py`` as ``python -m tests.site.integration_scenario``; prints one JSON
object with what it observed. Steps: migrate; create a competition; 20 parallel uploads from 20 threads (own
database connections) against a daily limit of 5; wait until the worker has scored them; re-deliver every task
and check nothing changes; strand a submission in ``scoring`` and check the sweep gets it scored.
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from datetime import timedelta
from typing import Any

import django

WAIT_SECONDS = float(os.environ.get("SCENARIO_WAIT_SECONDS", "40"))


def _wait_until_terminal(ids: list[int]) -> dict[int, str]:
    from leaderboard.submissions.models import TERMINAL_STATUSES, Submission

    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        statuses = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "status"))
        if all(statuses.get(pk) in TERMINAL_STATUSES for pk in ids) or time.monotonic() > deadline:
            return statuses
        time.sleep(0.1)


def main() -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    django.setup()
    import numpy as np
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from leaderboard.competitions.selectors import competition_scoring_spec
    from leaderboard.competitions.services import competition_create
    from leaderboard.errors import QuotaExceeded
    from leaderboard.submissions.models import Status, Submission
    from leaderboard.submissions.services import submission_create, submission_enqueue, submissions_sweep
    from scoring import evaluate
    from scoring.parsing import ParsedPredictions
    from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv

    call_command("migrate", verbosity=0, interactive=False)
    report: dict[str, Any] = {"vendor": connection.vendor}
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    host = User.objects.create_user("it-host")
    racer = User.objects.create_user("it-racer")
    competition = competition_create(slug="it", labels_csv=labels_csv(labels), host=host, daily_limit=5)
    rng = np.random.default_rng(5)
    uploads = [rng.uniform(0.05, 0.95, N_ROWS) for _ in range(20)]
    files = [predictions_csv(competition, values) for values in uploads]

    # --- 20 parallel uploads, each thread with its own connection, against a limit of 5.
    barrier = threading.Barrier(len(files))
    outcomes: list[str] = []
    lock = threading.Lock()

    def race(data: bytes) -> None:
        try:
            barrier.wait()
            try:
                submission_create(competition=competition, participant=racer, data=data)
                outcome = "created"
            except QuotaExceeded:
                outcome = "quota"
            except Exception as exc:  # reported, so the test shows what went wrong
                outcome = f"error: {type(exc).__name__}: {exc}"
            with lock:
                outcomes.append(outcome)
        finally:
            from django.db import connections

            connections.close_all()

    threads = [threading.Thread(target=race, args=(data,)) for data in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report["race"] = sorted(outcomes)
    created = list(Submission.objects.filter(participant=racer).order_by("pk").values_list("pk", flat=True))
    report["created"] = len(created)

    # --- The worker scores them (the on-commit hook published one task each).
    statuses = _wait_until_terminal(created)
    report["statuses"] = sorted(statuses.values())
    spec = competition_scoring_spec(competition=competition)
    mismatches = []
    for submission in Submission.objects.filter(pk__in=created):
        parsed = ParsedPredictions(np.load(io.BytesIO(bytes(submission.predictions_npy))))
        expected = evaluate(spec, parsed, submission_id=submission.pk).results
        if submission.public_score_text != expected["public"].released_text:
            mismatches.append(submission.pk)
    report["score_mismatches"] = mismatches

    # --- Re-deliver every task: nothing may change.
    fields = ("pk", "status", "public_score_text", "finished_at")
    before = list(Submission.objects.filter(pk__in=created).values_list(*fields))
    for pk in created:
        submission_enqueue(submission_id=pk)
    time.sleep(1.5)
    after = list(Submission.objects.filter(pk__in=created).values_list(*fields))
    report["redelivery_changed"] = before != after

    # --- A submission stranded in 'scoring' by a lost worker is recovered by the sweep.
    stranded = Submission.objects.create(
        competition=competition,
        participant=host,
        upload=files[0],
        predictions_npy=Submission.objects.get(pk=created[0]).predictions_npy,
        status=Status.SCORING,
        claim_token="lost-worker",
        scoring_started_at=timezone.now() - timedelta(hours=1),
        enqueued_at=timezone.now() - timedelta(hours=1),
    )
    swept = submissions_sweep(stuck_after=timedelta(minutes=5))
    report["swept"] = swept.requeued == [stranded.pk]
    report["stranded_status"] = _wait_until_terminal([stranded.pk]).get(stranded.pk)
    return report


if __name__ == "__main__":
    result = main()
    sys.stdout.write("SCENARIO-RESULT " + json.dumps(result) + "\n")
