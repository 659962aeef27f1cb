"""Phases of the recovery scenarios (``tests/site/test_integration.py``), each in a process of its own against
the database named by ``DATABASE_URL`` and the broker named by ``REDIS_URL``, while real Celery workers (started
and killed by the test) score. Each phase prints one ``SCENARIO-RESULT`` JSON line.

* ``prepare`` — migrate, create a competition whose scoring takes seconds (MPFR arithmetic on many rows, so a
  worker can be killed mid-score) with a stateful chain (noise + privacy budget: its state counts releases),
  and upload one submission (its message waits for a worker).
* ``kill-when-scoring ID PID`` — wait until the submission is being scored, then ``kill -9`` process ``PID``.
* ``wait ID SECONDS`` — wait until the submission is scored or failed; report how, how often it was claimed,
  how many releases the defense state counted, and how long it took.
* ``upload-and-wait SECONDS`` — upload (the broker may be down), print ``UPLOADED <id>`` at once, then wait.
* ``locked-claim`` — a silent claim whose worker holds its row lock is left alone, then taken over.
* ``mpfr-text`` — score, in this process, a submission of a competition in ``mpfr:4000`` arithmetic with full
  precision (a raw text of ~1,200 digits).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import django

ROWS = int(os.environ.get("SCENARIO_ROWS", "100000"))
BITS = int(os.environ.get("SCENARIO_BITS", "1200"))
CHAIN = [{"name": "noise", "kind": "laplace", "epsilon": 1.0}, {"name": "privacy_budget", "epsilon": 1000.0}]


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    django.setup()


def _upload(slug: str = "slow") -> int:
    import numpy as np
    from django.contrib.auth.models import User

    from leaderboard.competitions.models import Competition
    from leaderboard.submissions.services import submission_create
    from tests.site.factories import predictions_csv

    competition = Competition.objects.get(slug=slug)
    user, _ = User.objects.get_or_create(username="slow-user")
    values = np.random.default_rng(3).uniform(0.05, 0.95, competition.n_rows)
    data = predictions_csv(competition, values)
    return int(submission_create(competition=competition, participant=user, data=data).pk)


def prepare(*, upload: bool = True) -> dict[str, Any]:
    import numpy as np
    from django.core.management import call_command

    from leaderboard.competitions.services import competition_create
    from tests.site.factories import labels_csv

    call_command("migrate", verbosity=0, interactive=False)
    labels = np.random.default_rng(7).integers(0, 2, ROWS)
    competition_create(
        slug="slow", labels_csv=labels_csv(labels), arithmetic=f"mpfr:{BITS}", daily_limit=None, defenses=CHAIN,
    )
    return {"id": _upload() if upload else None}


def _row(pk: int) -> dict[str, Any]:
    from leaderboard.submissions.models import Submission

    names = {f.attname for f in Submission._meta.concrete_fields}  # (also runs against older schemas)
    wanted = ("status", "attempts", "claimed_by", "public_score_text", "error", "participant_id", "competition_id")
    row = dict(Submission.objects.filter(pk=pk).values(*[n for n in wanted if n in names]).get())
    return {"claimed_by": "", **row}


def kill_when_scoring(pk: int, pid: int) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while _row(pk)["status"] != "scoring":
        if time.monotonic() > deadline:
            raise SystemExit(f"submission {pk} was never claimed: {_row(pk)}")
        time.sleep(0.05)
    time.sleep(0.5)  # well inside the scoring
    row = _row(pk)
    os.kill(pid, signal.SIGKILL)
    return {"status_at_kill": row["status"], "attempts": row["attempts"], "claimed_by": row["claimed_by"]}


def wait(pk: int, seconds: float) -> dict[str, Any]:
    from leaderboard.submissions.models import DefenseState

    started = time.monotonic()
    while _row(pk)["status"] not in ("scored", "failed") and time.monotonic() - started < seconds:
        time.sleep(0.1)
    row = _row(pk)
    states = DefenseState.objects.filter(competition_id=row["competition_id"], participant_id=row["participant_id"])
    releases = {state.split: state.state[1]["releases"] for state in states if state.state}
    return {**row, "seconds": time.monotonic() - started, "releases": releases}


def upload_and_wait(seconds: float) -> dict[str, Any]:
    pk = _upload()
    sys.stdout.write(f"UPLOADED {pk}\n")
    sys.stdout.flush()
    return wait(pk, seconds)


def mpfr_text() -> dict[str, Any]:
    import numpy as np
    from django.core.management import call_command
    from django.db import connection

    from leaderboard.competitions.services import competition_create
    from leaderboard.submissions import services
    from leaderboard.submissions.services import submission_score
    from tests.site.factories import labels_csv

    call_command("migrate", verbosity=0, interactive=False)
    labels = np.random.default_rng(7).integers(0, 2, 30)
    competition_create(slug="precise", labels_csv=labels_csv(labels), arithmetic="mpfr:4000", score_decimals=None)
    services.submission_enqueue = lambda *, submission_id: None  # type: ignore[assignment]  # scored right here
    pk = _upload("precise")
    action = submission_score(submission_id=pk).action
    from leaderboard.submissions.models import Submission

    scored = Submission.objects.get(pk=pk)
    return {"vendor": connection.vendor, "action": action, "status": scored.status, "error": scored.error,
            "raw_chars": len(scored.raw_public_text), "released_chars": len(scored.public_score_text)}


def locked_claim() -> dict[str, Any]:
    """A claim silent for a minute whose worker holds the row lock (writing its result; its heartbeat waits for
    that lock) is not taken over; once the lock is gone, it is."""
    import threading
    from datetime import timedelta

    from django.db import connections, transaction
    from django.utils import timezone

    from leaderboard.submissions import services
    from leaderboard.submissions.models import Status, Submission

    services.submission_enqueue = lambda *, submission_id: None  # type: ignore[assignment]
    pk = prepare()["id"]
    old = timezone.now() - timedelta(seconds=60)
    Submission.objects.filter(pk=pk).update(status=Status.SCORING, claim_token="live", heartbeat_at=old,
                                            scoring_started_at=old, claimed_by="w@far far 1", attempts=1)
    locked, release = threading.Event(), threading.Event()

    def live_worker() -> None:
        try:
            with transaction.atomic():
                Submission.objects.select_for_update().filter(pk=pk).exists()
                locked.set()
                release.wait(30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=live_worker)
    thread.start()
    locked.wait(10)
    while_locked = services.submission_score(submission_id=pk).action
    swept_while_locked = services.submissions_sweep().requeued
    release.set()
    thread.join()
    after = services.submission_score(submission_id=pk).action
    return {"while_locked": while_locked, "swept_while_locked": swept_while_locked, "after": after,
            "attempts": _row(pk)["attempts"]}


def main(argv: list[str]) -> dict[str, Any]:
    _setup()
    phase, *args = argv
    if phase == "prepare":
        return prepare(upload=not args or args[0] != "--no-upload")
    if phase == "kill-when-scoring":
        return kill_when_scoring(int(args[0]), int(args[1]))
    if phase == "wait":
        return wait(int(args[0]), float(args[1]))
    if phase == "upload-and-wait":
        return upload_and_wait(float(args[0]))
    if phase == "mpfr-text":
        return mpfr_text()
    if phase == "locked-claim":
        return locked_claim()
    raise SystemExit(f"unknown phase {phase!r}")


if __name__ == "__main__":
    sys.stdout.write("SCENARIO-RESULT " + json.dumps(main(sys.argv[1:]), default=str) + "\n")
