"""The sybil screen's hold and release with a real Celery worker, the real Redis and PostgreSQL.

The test starts a worker on a fresh PostgreSQL database and runs this module as a scenario in a process of its own
(``python -m tests.site.test_screening_integration``), as ``tests/site/test_integration.py`` does: two accounts
send complementary probes into a competition behind a fixed Ladder with the screen in hold mode, an honest account
a model's output; the worker holds the probes (scored, nothing released, no Ladder state), releases the honest
one, and the host's dismissal has the worker release the held ones, in upload order, through the Ladder. A held
submission cannot be selected as a final; released, it can.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

WAIT_SECONDS = 40.0


def _wait(ids: list[int], done: Any) -> dict[int, Any]:
    from leaderboard.submissions.models import Submission

    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        rows = {row.pk: row for row in Submission.objects.filter(pk__in=ids)}
        if all(done(rows[pk]) for pk in ids) or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def scenario() -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    import django

    django.setup()
    import numpy as np
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection

    from leaderboard.competitions.services import competition_create
    from leaderboard.errors import SelectionError
    from leaderboard.screening.models import SuspectCluster
    from leaderboard.screening.services import HELD_MESSAGE, cluster_dismiss, screen_settings_update
    from leaderboard.submissions.models import DefenseState
    from leaderboard.submissions.selectors import submission_review
    from leaderboard.submissions.services import submission_create, submission_select_final
    from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv

    started = time.monotonic()
    call_command("migrate", verbosity=0, interactive=False)
    migrated = time.monotonic()
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    host = User.objects.create_user("screen-host")
    sybil_1, sybil_2, honest = (User.objects.create_user(name) for name in ("sybil-1", "sybil-2", "honest"))
    competition = competition_create(slug="screened", labels_csv=labels_csv(labels), host=host, daily_limit=None,
                                     defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.05}])
    screen_settings_update(competition=competition, mode="hold")

    def probe(rows: list[int]) -> bytes:
        values = np.full(N_ROWS, 0.5)
        for j, row in enumerate(rows):
            values[row] = 1.0 / (1.0 + np.exp(-(2.0**j)))
        return predictions_csv(competition, values)

    def upload(user: Any, data: bytes) -> int:
        return int(submission_create(competition=competition, participant=user, data=data).pk)

    def ladder_states(user: Any) -> list[Any]:
        return [row.state for row in DefenseState.objects.filter(participant=user) if row.state]

    report: dict[str, Any] = {"vendor": connection.vendor, "migrate_seconds": migrated - started}
    first = upload(sybil_1, probe([0, 1, 2]))
    report["alone"] = _wait([first], lambda row: row.is_terminal)[first].public_score_text
    report["first_seconds"] = time.monotonic() - migrated
    held = [upload(sybil_2, probe([3, 4, 5])), upload(sybil_1, probe([6, 7, 8]))]
    fair = upload(honest, predictions_csv(competition, np.random.default_rng(5).uniform(0.05, 0.95, N_ROWS)))
    rows = _wait([*held, fair], lambda row: row.is_terminal)
    report["held"] = [(rows[pk].status, rows[pk].public_score_text, rows[pk].public_message == HELD_MESSAGE)
                      for pk in held]
    report["fair"] = rows[fair].public_score_text
    report["sybil_2_states_held"] = ladder_states(sybil_2)
    report["review_held"] = submission_review(rows[held[0]])
    try:
        submission_select_final(submission=rows[held[0]], participant=sybil_2, selected=True)
        report["final_while_held"] = "selected"
    except SelectionError as exc:
        report["final_while_held"] = exc.message
    cluster = SuspectCluster.objects.get(competition=competition)
    report["cluster"] = [cluster.names, cluster.status]
    cluster_dismiss(cluster_id=cluster.pk, host=host)  # committed: the worker gets the release task
    rows = _wait(held, lambda row: bool(row.public_score_text))
    report["released"] = [(rows[pk].status, bool(rows[pk].public_score_text), rows[pk].public_message)
                          for pk in held]
    report["in_order"] = rows[held[0]].finished_at <= rows[held[1]].finished_at
    report["sybil_2_states_released"] = bool(ladder_states(sybil_2))
    report["review_released"] = submission_review(rows[held[0]])
    report["final_released"] = submission_select_final(
        submission=rows[held[0]], participant=sybil_2, selected=True).selected_for_final
    report["total_seconds"] = time.monotonic() - started
    return report


@pytest.fixture
def postgres_url() -> Iterator[str]:
    import psycopg

    from stack.processes import POSTGRES_ADMIN_URL, fresh_postgres

    try:
        with fresh_postgres("lbl_screen") as url:
            yield url
    except psycopg.OperationalError as exc:
        pytest.fail(f"this test needs PostgreSQL at {POSTGRES_ADMIN_URL}: {exc}")


@pytest.mark.integration
def test_a_real_worker_holds_a_probe_cluster_and_releases_it_in_order_when_dismissed(
    postgres_url: str, tmp_path: Path
) -> None:
    from stack.processes import REDIS_URL, REPO, celery_worker, process_environment, redis_available, unique_queue

    if not redis_available():
        pytest.fail(f"this test needs Redis at {REDIS_URL}")
    env = process_environment(postgres_url, unique_queue())
    log = tmp_path / "worker.log"
    with celery_worker(env, log):
        done = subprocess.run([sys.executable, "-m", "tests.site.test_screening_integration"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("SCENARIO-RESULT ")]
    assert done.returncode == 0 and lines, f"scenario failed:\n{done.stderr[-4000:]}\n{log.read_text()[-4000:]}"
    result = json.loads(lines[-1].removeprefix("SCENARIO-RESULT "))
    assert result["vendor"] == "postgresql"
    assert result["alone"]  # one account alone is no cluster: released
    assert result["held"] == [["scored", "", True], ["scored", "", True]], log.read_text()[-3000:]
    assert result["fair"]  # the honest account beside the cluster is released
    assert result["sybil_2_states_held"] == []  # a held submission spends no defense state
    assert result["cluster"] == [["sybil-1", "sybil-2"], "open"]
    assert result["released"] == [["scored", True, ""], ["scored", True, ""]]
    assert result["in_order"] and result["sybil_2_states_released"]
    assert result["review_held"] == "held" and "held for review" in result["final_while_held"]
    assert result["review_released"] == "" and result["final_released"] is True


if __name__ == "__main__":
    print("SCENARIO-RESULT " + json.dumps(scenario(), default=str))
