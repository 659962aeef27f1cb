"""Submission services: upload under the quota, scoring, idempotent re-delivery, failures, finals, sweep."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.db import OperationalError
from django.utils import timezone

from defenses import REGISTRY, Defense, Stage
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.competitions.services import competition_set_defenses
from leaderboard.errors import CompetitionNotOpen, InvalidUpload, QuotaExceeded, SelectionError
from leaderboard.submissions import services
from leaderboard.submissions.models import DefenseState, Status, Submission
from leaderboard.submissions.selectors import quota_status
from scoring import evaluate
from scoring.parsing import ParsedPredictions
from tests.site.conftest import N_ROWS, predictions_csv

pytestmark = pytest.mark.django_db

Submit = Callable[..., Any]


def _probs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, N_ROWS)


def test_it_stores_a_valid_upload_as_queued_and_enqueues_it(competition, participant, submit, enqueued) -> None:
    submission = submit(competition, participant, _probs(1))
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED
    assert enqueued == [submission.pk]
    assert submission.predictions_npy is not None
    # Float64 scoring reads the validated array only: the upload's bytes are not kept, its size is (and, for an
    # upload with an Idempotency-Key, its digest).
    assert bytes(submission.upload) == b"" and submission.upload_sha256 == ""
    data = predictions_csv(competition, _probs(1))
    assert submission.upload_size == len(data)
    keyed = submit(competition, participant, _probs(3), idempotency_key="k")
    assert keyed.upload_sha256 == hashlib.sha256(predictions_csv(competition, _probs(3))).hexdigest()


def test_the_host_may_keep_every_upload(competition, participant, submit, settings) -> None:
    settings.LEADERBOARD_KEEP_UPLOADS = True
    submission = submit(competition, participant, _probs(1))
    submission.refresh_from_db()
    assert bytes(submission.upload) == predictions_csv(competition, _probs(1))


def test_it_scores_with_the_pure_core_and_stores_raw_and_released(
    competition, participant, submit, score_all
) -> None:
    values = _probs(2)
    submission = submit(competition, participant, values)
    assert score_all() == ["scored"]
    submission.refresh_from_db()
    spec = competition_scoring_spec(competition=competition)
    expected = evaluate(spec, ParsedPredictions(values), submission_id=submission.pk)
    assert submission.status == Status.SCORED
    assert submission.public_score_text == expected.results["public"].released_text
    assert submission.private_score_text == expected.results["private"].released_text
    assert submission.raw_public == pytest.approx(float(expected.results["public"].raw), rel=0, abs=0)
    assert len(submission.public_score_text.split(".")[1]) == 5  # five decimals released
    assert submission.finished_at is not None and submission.error == ""


def test_a_redelivered_task_changes_nothing(competition, participant, submit, score_all) -> None:
    submission = submit(competition, participant, _probs(3))
    score_all()
    submission.refresh_from_db()
    before = (submission.status, submission.public_score_text, submission.raw_public, submission.finished_at)
    for _ in range(3):
        assert services.submission_score(submission_id=submission.pk).action == "skipped"
    submission.refresh_from_db()
    assert (submission.status, submission.public_score_text, submission.raw_public, submission.finished_at) == before
    assert Submission.objects.count() == 1


def test_a_task_for_a_missing_submission_is_a_no_op(db) -> None:
    assert services.submission_score(submission_id=999_999).action == "skipped"


def test_a_stale_worker_cannot_write_after_its_claim_was_swept(
    make_competition, participant, submit, monkeypatch
) -> None:
    # A stateful chain (the Ladder), so the test can also check that the state advanced exactly once.
    competition = make_competition(daily_limit=5, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}])
    submission = submit(competition, participant, _probs(4))
    real_load = services._load_predictions

    def slow_load(*args: Any, **kwargs: Any) -> Any:
        # While this worker is busy, the sweep decides it is lost and another worker scores the row.
        monkeypatch.setattr(services, "_load_predictions", real_load)
        Submission.objects.filter(pk=submission.pk).update(status=Status.QUEUED, claim_token="")
        assert services.submission_score(submission_id=submission.pk).action == "scored"
        return real_load(*args, **kwargs)

    monkeypatch.setattr(services, "_load_predictions", slow_load)
    scored = Submission.objects.get(pk=submission.pk)
    result = services.submission_score(submission_id=submission.pk)
    assert result.action == "skipped" and "claim" in result.detail
    after = Submission.objects.get(pk=submission.pk)
    assert after.status == Status.SCORED
    assert after.attempts == 2
    assert scored.public_score_text == "" and after.public_score_text != ""
    assert DefenseState.objects.filter(participant=participant).count() == 2  # public and private, once


def test_transient_errors_release_the_claim_for_a_retry(competition, participant, submit, monkeypatch) -> None:
    submission = submit(competition, participant, _probs(5))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("database is locked")

    monkeypatch.setattr(services, "_load_predictions", broken)
    with pytest.raises(services.TransientScoringError):
        services.submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == Status.QUEUED and submission.claim_token == ""
    monkeypatch.undo()
    assert services.submission_score(submission_id=submission.pk).action == "scored"


def test_permanent_errors_fail_at_once_with_a_safe_message(competition, participant, submit, monkeypatch) -> None:
    submission = submit(competition, participant, _probs(6))

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("labels are [0, 1, 1] and raw is 0.1234567")

    monkeypatch.setattr(services, "release_submission", boom)
    assert services.submission_score(submission_id=submission.pk).action == "failed"
    submission.refresh_from_db()
    assert submission.status == Status.FAILED
    assert "internal error" in submission.error
    assert "0.1234567" not in submission.error and "labels" not in submission.error
    # Terminal: a later delivery does not restart it.
    monkeypatch.undo()
    assert services.submission_score(submission_id=submission.pk).action == "skipped"
    submission.refresh_from_db()
    assert submission.status == Status.FAILED


class _RejectEverything(Defense):
    name = "test_reject_everything"
    stage = Stage.RELEASE

    def after_metric(self, score: Any, view: Any, ctx: Any) -> Any:
        ctx.reject = "this looks like a crafted probe"
        ctx.notes.append("probe detected")
        return None


class _CountCalls(Defense):
    name = "test_count_calls"
    stage = Stage.RELEASE

    def initial_state(self) -> dict[str, Any]:
        return {"calls": 0}

    def after_metric(self, score: Any, view: Any, ctx: Any) -> Any:
        ctx.state["calls"] += 1
        return score


def test_a_defense_rejection_fails_the_submission_and_keeps_the_state(
    competition, participant, submit, monkeypatch
) -> None:
    monkeypatch.setitem(REGISTRY, _RejectEverything.name, _RejectEverything)
    competition_set_defenses(competition=competition, defenses=[{"name": _RejectEverything.name}])
    submission = submit(competition, participant, _probs(7))
    assert services.submission_score(submission_id=submission.pk).action == "failed"
    submission.refresh_from_db()
    assert submission.error == "this looks like a crafted probe"
    assert submission.public_score is None and submission.public_score_text == ""
    assert submission.defense_notes  # host-only


def test_a_probe_rejection_counts_against_the_quota(competition, participant, submit, score_all) -> None:
    """A rejection is an answer about the submission: free, it was a free query (11 of 20 in the finding)."""
    competition_set_defenses(competition=competition, defenses=[{"name": "probe_detector", "reject": True}])
    probe = np.full(N_ROWS, 0.5)
    probe[:6] = [1 / (1 + q) for q in (2, 3, 5, 7, 11, 13)]  # paper 000, Algorithm 1
    for _ in range(3):
        submit(competition, participant, probe)
    submit(competition, participant, _probs(3))
    assert score_all() == ["failed", "failed", "failed", "scored"]
    assert Submission.objects.filter(participant=participant, status=Status.FAILED, charged=True).count() == 3
    status = quota_status(competition=competition, participant=participant)
    assert status.used_today == 4 and status.remaining_today == 1
    submit(competition, participant, probe)
    with pytest.raises(QuotaExceeded):
        submit(competition, participant, _probs(4))


def test_defense_state_is_persisted_per_participant_and_split(
    competition, participant, other_participant, submit, score_all, monkeypatch
) -> None:
    monkeypatch.setitem(REGISTRY, _CountCalls.name, _CountCalls)
    competition_set_defenses(competition=competition, defenses=[{"name": _CountCalls.name}])
    for seed in range(3):
        submit(competition, participant, _probs(10 + seed))
    submit(competition, other_participant, _probs(20))
    score_all()
    state = DefenseState.objects.get(competition=competition, participant=participant, split="public")
    assert state.state == [{"calls": 3}]
    assert DefenseState.objects.get(competition=competition, participant=other_participant, split="private").state == [
        {"calls": 1}
    ]


def test_malformed_uploads_raise_naming_the_line_and_never_count(competition, participant, submit) -> None:
    lines = predictions_csv(competition, _probs(8)).decode().splitlines()
    lines[2] = lines[2].split(",")[0] + ",banana"
    with pytest.raises(InvalidUpload) as info:
        submit(competition, participant, "\n".join(lines).encode())
    assert info.value.line == 3 and "banana" in info.value.message and "line 3" in info.value.message
    assert Submission.objects.count() == 0
    assert quota_status(competition=competition, participant=participant).used_today == 0


def test_the_daily_quota_holds_and_failed_submissions_do_not_count(
    competition, participant, other_participant, submit
) -> None:
    first = submit(competition, participant, _probs(30))
    for seed in range(4):
        submit(competition, participant, _probs(31 + seed))
    with pytest.raises(QuotaExceeded) as info:
        submit(competition, participant, _probs(40))
    tomorrow = (timezone.now() + timedelta(days=1)).date()
    assert info.value.resets_at is not None and info.value.resets_at.date() == tomorrow
    assert info.value.resets_at.hour == 0 and info.value.resets_at.minute == 0
    submit(competition, other_participant, _probs(41))  # quotas are per participant
    Submission.objects.filter(pk=first.pk).update(status=Status.FAILED)
    submit(competition, participant, _probs(42))  # the failed one freed a slot
    assert Submission.objects.filter(participant=participant).exclude(status=Status.FAILED).count() == 5


def test_the_daily_counter_resets_at_utc_midnight(make_competition, participant, submit) -> None:
    competition = make_competition(opens_at=timezone.now() - timedelta(days=3))
    yesterday = timezone.now() - timedelta(days=1)
    for seed in range(5):
        submit(competition, participant, _probs(50 + seed), now=yesterday)
    submit(competition, participant, _probs(60))
    status = quota_status(competition=competition, participant=participant)
    assert (status.used_today, status.used_total, status.remaining_today) == (1, 6, 4)


def test_the_total_limit_holds(make_competition, participant, submit) -> None:
    competition = make_competition(daily_limit=None, total_limit=2)
    submit(competition, participant, _probs(1))
    submit(competition, participant, _probs(2))
    with pytest.raises(QuotaExceeded) as info:
        submit(competition, participant, _probs(3))
    assert info.value.resets_at is None


def test_uploads_outside_the_open_window_are_refused(make_competition, participant, submit) -> None:
    now = timezone.now()
    early = make_competition(opens_at=now + timedelta(hours=1))
    late = make_competition(opens_at=now - timedelta(days=2), closes_at=now - timedelta(days=1))
    with pytest.raises(CompetitionNotOpen, match="opens at"):
        submit(early, participant, _probs(1))
    with pytest.raises(CompetitionNotOpen, match="closed at"):
        submit(late, participant, _probs(1))
    assert Submission.objects.count() == 0


def test_mpfr_competitions_score_from_the_submitted_text(make_competition, participant, submit, score_all) -> None:
    competition = make_competition(arithmetic="mpfr:200", score_decimals=None)
    submission = submit(competition, participant, _probs(70))
    assert submission.predictions_npy is None
    submission.refresh_from_db()
    assert bytes(submission.upload).startswith(b"id,target\n")  # the decimal text scoring reads
    assert score_all() == ["scored"]
    submission.refresh_from_db()
    assert len(submission.public_score_text.replace("0.", "", 1)) > 20  # more digits than float64 holds


def test_a_submission_interrupted_too_often_is_failed(competition, participant, submit) -> None:
    submission = submit(competition, participant, _probs(80))
    Submission.objects.filter(pk=submission.pk).update(attempts=services.MAX_ATTEMPTS)
    assert services.submission_score(submission_id=submission.pk).action == "failed"
    submission.refresh_from_db()
    assert "interrupted" in submission.error


def test_sweep_requeues_stuck_scoring_and_reenqueues_stuck_queued(
    competition, participant, submit, enqueued, django_capture_on_commit_callbacks
) -> None:
    stuck_scoring = submit(competition, participant, _probs(90))
    stuck_queued = submit(competition, participant, _probs(91))
    fresh = submit(competition, participant, _probs(92))
    old = timezone.now() - timedelta(hours=1)
    Submission.objects.filter(pk=stuck_scoring.pk).update(
        status=Status.SCORING, scoring_started_at=old, claim_token="dead-worker"
    )
    Submission.objects.filter(pk=stuck_queued.pk).update(enqueued_at=old)
    enqueued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        result = services.submissions_sweep(stuck_after=timedelta(minutes=5))
    assert result.requeued == [stuck_scoring.pk]
    assert sorted(result.reenqueued) == sorted([stuck_scoring.pk, stuck_queued.pk])
    assert sorted(enqueued) == sorted([stuck_scoring.pk, stuck_queued.pk])
    assert fresh.pk not in enqueued
    for pk in enqueued:
        assert services.submission_score(submission_id=pk).action == "scored"
    # A second sweep right away finds nothing, and scored rows are never touched.
    enqueued.clear()
    assert services.submissions_sweep(stuck_after=timedelta(minutes=5)).reenqueued == []


def test_sweep_command_runs(competition, participant, submit, enqueued, django_capture_on_commit_callbacks) -> None:
    from io import StringIO

    from django.core.management import call_command

    submission = submit(competition, participant, _probs(93))
    Submission.objects.filter(pk=submission.pk).update(enqueued_at=timezone.now() - timedelta(hours=2))
    enqueued.clear()
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("sweep_submissions", "--older-than", "60", stdout=out)
    assert "re-enqueued 1" in out.getvalue()
    assert enqueued == [submission.pk]


def test_final_selection_toggles_and_allows_at_most_two(competition, participant, other_participant, submit, score_all):
    subs = [submit(competition, participant, _probs(100 + i)) for i in range(3)]
    pending = submit(competition, participant, _probs(110))
    score_all_ids = [s.pk for s in subs]
    for pk in score_all_ids:
        services.submission_score(submission_id=pk)
    for s in subs:
        s.refresh_from_db()
    services.submission_select_final(submission=subs[0], participant=participant)
    services.submission_select_final(submission=subs[1], participant=participant)
    with pytest.raises(SelectionError, match="at most 2"):
        services.submission_select_final(submission=subs[2], participant=participant)
    services.submission_select_final(submission=subs[0], participant=participant)  # toggle off
    services.submission_select_final(submission=subs[2], participant=participant)
    assert set(Submission.objects.filter(selected_for_final=True).values_list("pk", flat=True)) == {
        subs[1].pk,
        subs[2].pk,
    }
    with pytest.raises(SelectionError, match="scored"):
        services.submission_select_final(submission=pending, participant=participant)
    with pytest.raises(SelectionError, match="your own"):
        services.submission_select_final(submission=subs[1], participant=other_participant)
