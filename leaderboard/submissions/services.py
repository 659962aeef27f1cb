"""Writes on submissions: accept an upload under the quota, score it (the worker's side), select finals, and
sweep stuck rows.

States move queued → scoring → scored | failed and never leave a terminal state: every status change is a
conditional UPDATE on the expected current state, so a re-delivered task, a duplicate message from the sweep
or a stale worker can never duplicate or change a stored result.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from defenses import DefenseConfigError
from leaderboard.blobs import blob_read, blob_write
from leaderboard.celery import app as celery_app
from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.errors import CompetitionNotOpen, IdempotencyKeyReused, InvalidUpload, QuotaExceeded, SelectionError
from leaderboard.inversion.selectors import inversion_of
from leaderboard.screening.services import submission_screen
from leaderboard.submissions.model_runs import ModelRunFailed, model_predictions, model_validate
from leaderboard.submissions.models import (
    CompetitionDefenseState,
    DefenseState,
    Participation,
    Status,
    Submission,
    Team,
    UploadKind,
)
from leaderboard.submissions.selectors import (
    REVIEW_HELD,
    REVIEW_RELEASING,
    REVIEW_WITHHELD,
    QuotaStatus,
    quota_status,
    submission_review,
    team_submissions,
)
from leaderboard.submissions.teams import team_states_lock
from scoring import ConfigurationError, NonFiniteScoreError, ScoringError, SubmissionError
from scoring.arithmetic import ScoringWorkExceeded
from scoring.fast_csv import BytesLike
from scoring.inversion import parse_reconstructions
from scoring.parsing import ParsedPredictions
from scoring.pipeline import SPLITS, ScoringSpec, parse
from scoring.release import release_submission

logger = logging.getLogger(__name__)

#: The scoring task's registered name (:mod:`leaderboard.submissions.tasks`, which imports this module).
SCORE_TASK = "leaderboard.submissions.tasks.submission_score"
MAX_FINALS = 2
#: Up to this many bytes of upload and array are written by the INSERT itself (as an SQL literal on PostgreSQL:
#: 25,000 rows are 200 kB); above it they follow as raw bytes (leaderboard.blobs), where hex would cost more.
INLINE_BLOB_BYTES = 1 << 20
# A submission whose scoring was interrupted this many times (worker killed by the hard time limit, machine
# lost, ...) is failed instead of being retried for ever.
MAX_ATTEMPTS = 5


class TransientScoringError(Exception):
    """Scoring hit a database or broker hiccup; the claim was released so a retry can score it."""


def _transient_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [OperationalError, InterfaceError]
    try:
        from kombu.exceptions import OperationalError as KombuOperationalError

        errors.append(KombuOperationalError)
    except ImportError:  # pragma: no cover - kombu ships with celery
        pass
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        errors += [RedisConnectionError, RedisTimeoutError]
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


TRANSIENT_ERRORS = _transient_errors()


# --- Upload ---------------------------------------------------------------------------------------------


def _check_open(competition: Competition, now: datetime) -> None:
    if now < competition.opens_at:
        raise CompetitionNotOpen(
            f"the competition opens at {_utc(competition.opens_at)}; submissions are not accepted yet",
            extra={"opens_at": _utc(competition.opens_at)},
        )
    if competition.closes_at is not None and now >= competition.closes_at:
        raise CompetitionNotOpen(
            f"the competition closed at {_utc(competition.closes_at)}; submissions are no longer accepted",
            extra={"closes_at": _utc(competition.closes_at)},
        )


def _check_quota(status: QuotaStatus) -> None:
    if status.remaining_total == 0:
        raise QuotaExceeded(
            f"{'your team has' if status.in_team else 'you have'} used all {status.total_limit} submissions of "
            "this competition",
            resets_at=None,
            remaining_today=status.remaining_today,
        )
    if status.remaining_today == 0:
        raise QuotaExceeded(
            f"your team has used {status.used_today} of {status.daily_limit} submissions today; the daily limit "
            f"resets at {_utc(status.resets_at)}" if status.in_team else
            f"daily limit of {status.daily_limit} submissions reached; it resets at {_utc(status.resets_at)}",
            resets_at=status.resets_at,
        )


def submission_admissible(*, competition: Competition, participant: Any, now: datetime | None = None) -> None:
    """Raise what :func:`submission_create` would raise now for a closed competition or a spent quota, before an
    upload is sent (a client that uploads first, as the ``kaggle`` command line does, is told before, not after);
    :func:`submission_create` checks again, under its lock."""
    now = now or timezone.now()
    _check_open(competition, now)
    _check_quota(quota_status(competition=competition, participant=participant, now=now))


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _npy(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(values, dtype=np.float64), allow_pickle=False)
    return buffer.getvalue()


def submission_upload_kind(*, competition: Competition, kind: str) -> str:
    """The kind an upload is stored as: a model competition takes ONNX files (sent as a file or a raw body)
    and refuses JSON predictions; a prediction competition takes CSV or JSON."""
    if not competition.takes_models:
        if kind == UploadKind.ONNX:
            raise InvalidUpload("this competition takes prediction files (CSV or JSON), not models")
        return kind
    if kind == UploadKind.JSON:
        raise InvalidUpload(
            "this competition takes an ONNX model, run on hidden features you do not see; upload the .onnx file "
            "(multipart field 'file'), not predictions"
        )
    return UploadKind.ONNX


def submission_parse(*, competition: Competition, data: BytesLike, kind: str = UploadKind.CSV) -> ParsedPredictions:
    """Validate an upload with the scoring core; raises :class:`InvalidUpload` naming the line and the problem.

    On a model-inversion challenge the upload is the reconstructions (JSON), kept as the array scoring reads."""
    spec = competition_scoring_spec(competition=competition)
    challenge = inversion_of(competition=competition)
    if challenge is not None:
        # Read as JSON whatever the transport (a JSON body, or a .json file through the web form's file field).
        try:
            return ParsedPredictions(values=parse_reconstructions(challenge.task, bytes(data)))
        except SubmissionError as exc:
            raise InvalidUpload(str(exc)) from None
    if len(data) > spec.max_bytes:
        # Checked here too so a JSON body gets the same message as a CSV file.
        raise InvalidUpload(f"the file is {len(data)} bytes, over the limit of {spec.max_bytes} bytes")
    try:
        return parse(spec, data, as_json=kind == UploadKind.JSON)
    except SubmissionError as exc:
        raise InvalidUpload(str(exc), line=exc.line) from None
    except json.JSONDecodeError as exc:
        raise InvalidUpload(f"the body is not valid JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise InvalidUpload("the JSON body is nested too deeply") from None


def submission_create(
    *,
    competition: Competition,
    participant: Any,
    data: BytesLike,
    kind: str = UploadKind.CSV,
    filename: str = "",
    now: datetime | None = None,
    idempotency_key: str | None = None,
    sha256: str | None = None,
) -> Submission:
    """Validate an upload, check the quota atomically, store it queued and enqueue scoring on commit.

    The quota check locks the participant's :class:`Participation` row (``SELECT ... FOR UPDATE``; SQLite's
    IMMEDIATE transactions serialise the same way), so parallel uploads cannot all read "4 used" and all
    insert. A rejected upload raises before anything is written, so it never counts.

    With an ``idempotency_key`` (the API's ``Idempotency-Key`` header), an upload repeating a key this
    participant already used on this competition returns that earlier submission as it is now (marked
    ``replayed``), without charging the quota or validating again; the same key with a different upload
    raises :class:`IdempotencyKeyReused`. Two concurrent uploads with one key create one submission: the second
    finds the first under the participation lock, and the unique constraint backs that up.

    ``data`` may be a read-only ``mmap`` of a streamed upload's file (:mod:`leaderboard.uploads`), parsed in
    place; ``sha256``, when given, is its digest computed as it arrived.
    """
    now = now or timezone.now()
    if sha256 is None and idempotency_key:
        sha256 = hashlib.sha256(data).hexdigest()
    if competition.takes_models and kind != UploadKind.JSON:
        kind = UploadKind.ONNX  # stored (and compared for an Idempotency-Key) as a model
    if idempotency_key and (
        earlier := _submission_for_key(competition, participant, idempotency_key, data, kind, sha256)
    ):
        return earlier
    _check_open(competition, now)
    # An unlocked look first, so an over-quota participant gets 429 without us parsing a large file.
    _check_quota(quota_status(competition=competition, participant=participant, now=now))
    kind = submission_upload_kind(competition=competition, kind=kind)
    if kind == UploadKind.ONNX:
        # Checked here (nothing runs) so a refused model is a 400 naming the problem; the worker runs it.
        data = bytes(data)  # a model is small (the sandbox's limit) and onnx reads bytes
        model_validate(competition=competition, data=data)
        parsed = None
    else:
        parsed = submission_parse(competition=competition, data=data, kind=kind)
    float64 = competition_scoring_spec(competition=competition).arithmetic.is_float64
    # A model is run from its bytes, so it always keeps them.
    keep_upload = (not float64 or parsed is None
                   or bool(getattr(settings, "LEADERBOARD_KEEP_UPLOADS", False)))
    # Only a replay under the same Idempotency-Key compares uploads (82 ms per 27 MB otherwise spent for nothing).
    digest = (sha256 or "") if idempotency_key else ""
    with transaction.atomic():
        _lock_participation(competition, participant)
        if idempotency_key and (
            earlier := _submission_for_key(competition, participant, idempotency_key, data, kind, sha256)
        ):
            return earlier
        _check_quota(quota_status(competition=competition, participant=participant, now=now))
        try:
            # A savepoint only when a key may collide, so a lost race leaves the outer transaction usable.
            with transaction.atomic() if idempotency_key else contextlib.nullcontext():
                predictions = _npy(parsed.values) if float64 and parsed is not None else None
                upload = (data if isinstance(data, bytes) else bytes(data)) if keep_upload else b""
                # Small columns ride in the INSERT (one statement); large ones follow as raw bytes (leaderboard.blobs).
                inline = len(upload) + len(predictions or b"") <= INLINE_BLOB_BYTES
                submission = Submission.objects.create(
                    competition=competition,
                    participant=participant,
                    upload=upload if inline else b"",
                    predictions_npy=predictions if inline else None,
                    upload_kind=kind,
                    upload_name=filename[:255],
                    upload_size=len(data),
                    upload_sha256=digest,
                    created_at=now,
                    enqueued_at=now,
                    idempotency_key=idempotency_key or None,
                )
                # φ-bit arithmetic reads the submitted decimal text, so it keeps the upload; float64 scores the
                # validated array and keeps only that.
                if not inline:
                    blob_write(Submission, submission.pk, upload=upload, predictions_npy=predictions)
        except IntegrityError:
            if not idempotency_key:
                raise
            earlier = _submission_for_key(competition, participant, idempotency_key, data, kind, sha256)
            if earlier is None:
                raise
            return earlier
        transaction.on_commit(partial(submission_enqueue, submission_id=submission.pk))
    return submission


def _lock_participation(competition: Competition, participant: Any) -> None:
    """Lock the participant's :class:`Participation` row (created on the first upload): one ``SELECT ... FOR
    UPDATE`` once it exists; then, for a member of a team, the :class:`Team` row, which every member's upload
    and every change of the team's members (join, leave, merge) locks, so the team's quota is checked
    atomically as one participant's is. Always participation first, team second (the team services too)."""
    team_ids = list(
        Participation.objects.select_for_update().filter(competition=competition, participant=participant)
        .values_list("team_id", flat=True)
    )
    if not team_ids:
        Participation.objects.get_or_create(competition=competition, participant=participant)
        team_ids = list(
            Participation.objects.select_for_update().filter(competition=competition, participant=participant)
            .values_list("team_id", flat=True)
        )
    if team_ids and team_ids[0] is not None:
        list(Team.objects.select_for_update().filter(pk=team_ids[0]).values_list("pk", flat=True))


def _submission_for_key(
    competition: Competition, participant: Any, key: str, data: BytesLike, kind: str, sha256: str | None = None
) -> Submission | None:
    """The participant's earlier submission under ``key`` on this competition, marked ``replayed``; raises
    :class:`IdempotencyKeyReused` when that key came with a different upload."""
    earlier = Submission.objects.filter(competition=competition, participant=participant, idempotency_key=key).first()
    if earlier is None:
        return None
    same = (
        earlier.upload_sha256 == (sha256 or hashlib.sha256(data).hexdigest()) if earlier.upload_sha256
        else bytes(earlier.upload) == bytes(data)  # a row stored before uploads had a digest
    )
    if earlier.upload_kind != kind or earlier.upload_size != len(data) or not same:
        raise IdempotencyKeyReused(
            f"the Idempotency-Key {key!r} was already used for a different upload (submission {earlier.pk}); "
            "send a new key for a new upload"
        )
    earlier.replayed = True
    return earlier


def submission_enqueue(*, submission_id: int) -> None:
    """Publish the scoring task. A broker outage must not lose the upload, nor leave it waiting for the sweep.

    When the publish fails the row is marked unpublished (``enqueued_at`` empty) and handed to this process's
    :class:`Republisher`, which retries with backoff; the next successful publish from this process, any
    worker's start (:func:`submissions_recover`) and the sweep also publish it. A message that did reach the
    broker despite an error is harmless twice: scoring claims the row with a conditional update.
    """
    if _publish(submission_id):
        REPUBLISHER.flush()  # the broker answers again: publish what an outage left behind, now
        return
    logger.error("could not enqueue submission %s; retrying in the background", submission_id)
    with contextlib.suppress(*TRANSIENT_ERRORS):
        Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(enqueued_at=None)
    REPUBLISHER.add(submission_id)


def _publish(submission_id: int) -> bool:
    # Looked up by name: the task module imports this one (the app's ready() imports it, which registers it).
    submission_score_task = celery_app.tasks[SCORE_TASK]
    try:
        submission_score_task.apply_async(args=(submission_id,))
    except Exception as exc:  # any broker failure: the row must survive it
        logger.warning("publishing submission %s failed: %s: %s", submission_id, type(exc).__name__, exc)
        return False
    return True


def _mark_published(ids: list[int]) -> None:
    Submission.objects.filter(pk__in=ids, status=Status.QUEUED, enqueued_at__isnull=True).update(
        enqueued_at=timezone.now()
    )


class Republisher:
    """Submissions of this process whose publish failed, published again with backoff by a daemon thread.

    Delays double from 1 s to 30 s; after ``LEADERBOARD_PUBLISH_RETRY_FOR`` seconds (default 600; 0: no
    thread) the rows are left to a worker's start and the sweep, which publish every unpublished row.
    """

    def __init__(self) -> None:
        self._pending: set[int] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> set[int]:
        with self._lock:
            return set(self._pending)

    def add(self, submission_id: int) -> None:
        with self._lock:
            self._pending.add(submission_id)
            start = self._thread is None or not self._thread.is_alive()
            retry_for = float(getattr(settings, "LEADERBOARD_PUBLISH_RETRY_FOR", 600))
            if start and retry_for > 0:
                self._thread = threading.Thread(
                    target=self._run, args=(retry_for,), name="leaderboard-republisher", daemon=True
                )
                self._thread.start()

    def flush(self) -> list[int]:
        """Publish every pending submission now; returns the ids published (the rest stay pending)."""
        with self._lock:
            pending = sorted(self._pending)
        if not pending:
            return []
        done = [pk for pk in pending if _publish(pk)]
        with self._lock:
            self._pending.difference_update(done)
        if done:
            with contextlib.suppress(*TRANSIENT_ERRORS):
                _mark_published(done)
            logger.info("published %d submission(s) after a broker outage: %s", len(done), done)
        return done

    def _run(self, retry_for: float) -> None:
        from django.db import connections

        deadline = time.monotonic() + retry_for
        delay = 1.0
        try:
            while time.monotonic() < deadline:
                self._wake.wait(delay)
                self._wake.clear()
                self.flush()
                with self._lock:
                    if not self._pending:
                        return
                delay = min(delay * 2, 30.0)
            logger.error("gave up publishing %s; a worker's start or the sweep will", sorted(self.pending))
            with self._lock:
                self._pending.clear()
        finally:
            connections.close_all()


REPUBLISHER = Republisher()


# --- Scoring (worker side) ------------------------------------------------------------------------------


@dataclass
class ScoreResult:
    """What :func:`submission_score` did: ``action`` is ``scored``, ``failed``, ``skipped``, ``held`` (scored with
    nothing released: the sybil screen holds it for the host) or ``busy`` (another live worker holds the claim:
    ask again in ``retry_after`` seconds, when a dead claim would be stale)."""

    action: str
    detail: str = ""
    notes: list[str] = field(default_factory=list)
    retry_after: float = 0.0


@dataclass(frozen=True)
class Claimant:
    """Who scores: the Celery node name (empty outside a worker), the machine and the process."""

    node: str
    host: str
    pid: int

    @classmethod
    def current(cls) -> Claimant:
        node = ""
        with contextlib.suppress(Exception):
            from celery import current_task

            if current_task is not None and current_task.request is not None:
                node = current_task.request.hostname or ""
        return cls(node=node, host=socket.gethostname(), pid=os.getpid())

    def __str__(self) -> str:
        return f"{self.node or '-'} {self.host} {self.pid}"[:255]

    @classmethod
    def parse(cls, text: str) -> Claimant | None:
        parts = text.split(" ")
        if len(parts) != 3 or not parts[2].isdigit():
            return None
        return cls(node="" if parts[0] == "-" else parts[0], host=parts[1], pid=int(parts[2]))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _stale_after() -> timedelta:
    return timedelta(seconds=settings.LEADERBOARD_CLAIM_STALE_AFTER)


def _claim_is_dead(
    row: dict[str, Any], now: datetime, me: Claimant | None = None, started_at: datetime | None = None
) -> str | None:
    """Why the worker holding a ``scoring`` row's claim is gone (``None``: it may still be scoring).

    Gone: no sign of life (heartbeat, else the claim's start) for ``LEADERBOARD_CLAIM_STALE_AFTER``; the claim
    is older than the hard time limit by that much again (a worker enforcing the limit killed that task); the
    claimant is a process of this machine that no longer exists (a killed prefork child or worker); or the
    claimant is this Celery node before it (re)started (``started_at``: a worker restarted under its name).
    """
    stale = _stale_after()
    last_sign = row["heartbeat_at"] or row["scoring_started_at"]
    if last_sign is None or last_sign < now - stale:
        return "no heartbeat"
    started = row["scoring_started_at"]
    hard = timedelta(seconds=settings.LEADERBOARD_SCORING_HARD_TIME_LIMIT)
    if started is not None and started < now - hard - stale:
        return "older than the hard time limit"
    holder = Claimant.parse(row["claimed_by"] or "")
    if holder is None or me is None:
        return None
    if holder.host == me.host and holder.pid != me.pid and not _pid_alive(holder.pid):
        return "its process is gone"
    if holder.node and holder.node == me.node and started_at is not None and started is not None and (
        started < started_at
    ):
        return "its worker restarted"
    return None


_CLAIM_FIELDS = ("status", "claim_token", "claimed_by", "heartbeat_at", "scoring_started_at")


def _claim(submission_id: int, me: Claimant) -> tuple[str | None, ScoreResult | None]:
    """Claim the row: a queued one, or a ``scoring`` one whose worker is gone (taken over). Returns the claim
    token, or the result to report when there is nothing to claim."""
    now = timezone.now()
    claim = uuid.uuid4().hex
    values: dict[str, Any] = {
        "status": Status.SCORING, "claim_token": claim, "claimed_by": str(me), "scoring_started_at": now,
        "heartbeat_at": now, "attempts": F("attempts") + 1,
    }
    # The common case first, in one statement: a queued row is claimed by the conditional UPDATE alone.
    if Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(**values) == 1:
        return claim, None
    row = Submission.objects.filter(pk=submission_id).values(*_CLAIM_FIELDS).first()
    if row is None:
        return None, ScoreResult("skipped", "not queued (missing)")
    busy = ScoreResult("busy", "another worker is scoring it", retry_after=_until_stale(row, now))
    if row["status"] == Status.SCORING:
        why = _claim_is_dead(row, now, me)
        if why is None:
            return None, busy
        if not _take_over(submission_id, row["claim_token"], **values):
            return None, busy  # its worker holds the row lock: alive, writing its result
        logger.warning("submission %s: took over the claim of %s (%s)", submission_id, row["claimed_by"], why)
        return claim, None
    if row["status"] != Status.QUEUED:
        return None, ScoreResult("skipped", "not queued (already finished)")
    if Submission.objects.filter(pk=submission_id, status=Status.QUEUED).update(**values) != 1:
        return None, ScoreResult("skipped", "not queued (claimed by another worker meanwhile)")
    return claim, None


def _until_stale(row: dict[str, Any], now: datetime) -> float:
    """Seconds until a live-looking claim would be stale (when to ask again), at least one."""
    last_sign = row["heartbeat_at"] or row["scoring_started_at"] or now
    return max(1.0, (last_sign + _stale_after() - now).total_seconds() + 1.0)


def _take_over(submission_id: int, token: str, **values: Any) -> bool:
    """Replace the claim ``token`` of a ``scoring`` row with ``values`` — unless its worker holds the row lock.

    A worker writes its result under a lock on its row (``_score_claimed``), and its heartbeat, an ``UPDATE`` of
    the same row, waits for that lock meanwhile: a claim can look silent and be alive. A dead worker holds no
    lock (PostgreSQL ends a transaction whose client is gone), so a locked row is skipped (``SKIP LOCKED``),
    never taken. SQLite has no row locks; there the takeover waits for the database lock instead.
    """
    with transaction.atomic():
        unlocked = (
            Submission.objects.select_for_update(skip_locked=True)
            .filter(pk=submission_id, status=Status.SCORING, claim_token=token)
            .values_list("pk", flat=True)
        )
        if not list(unlocked):
            return False
        return Submission.objects.filter(pk=submission_id, status=Status.SCORING, claim_token=token).update(
            **values
        ) == 1


class _Heartbeat:
    """Refresh the claim's ``heartbeat_at`` every ``LEADERBOARD_CLAIM_HEARTBEAT`` seconds from a thread of
    its own (own database connection) while the claim is scored, so a live worker's claim never looks stale."""

    def __init__(self, submission_id: int, claim: str) -> None:
        self.submission_id, self.claim = submission_id, claim
        self.interval = float(settings.LEADERBOARD_CLAIM_HEARTBEAT)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _Heartbeat:
        if self.interval > 0:
            self._thread = threading.Thread(target=self._run, name=f"heartbeat-{self.submission_id}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 35)

    def _run(self) -> None:
        from django.db import connections

        try:
            while not self._stop.wait(self.interval):
                try:
                    alive = Submission.objects.filter(
                        pk=self.submission_id, status=Status.SCORING, claim_token=self.claim
                    ).update(heartbeat_at=timezone.now())
                except Exception as exc:  # a missed beat is retried at the next one
                    logger.info("submission %s: heartbeat failed: %s", self.submission_id, exc)
                    continue
                if not alive:
                    return
        finally:
            connections.close_all()


def submission_score(*, submission_id: int) -> ScoreResult:
    """Claim a submission, score it and store the outcome; a no-op unless the row was queued or its claim's
    worker is gone (then the claim is taken over: see :func:`_claim_is_dead`).

    Permanent problems (a malformed stored file, a non-finite score, a misconfigured competition, a defense's
    rejection, the soft time limit) fail the submission at once with a readable message. Transient ones
    (database or broker, the claim itself included) release the claim and raise
    :class:`TransientScoringError` for the task to retry. A claim held by a live worker answers ``busy``.
    """
    me = Claimant.current()
    try:
        claim, outcome = _claim(submission_id, me)
    except TRANSIENT_ERRORS as exc:
        raise TransientScoringError(f"submission {submission_id}: claim: {type(exc).__name__}: {exc}") from exc
    if claim is None:
        assert outcome is not None
        return outcome
    try:
        with _Heartbeat(submission_id, claim):
            return _score_claimed(submission_id, claim)
    except TRANSIENT_ERRORS as exc:
        _release_claim(submission_id, claim)
        raise TransientScoringError(f"submission {submission_id}: {type(exc).__name__}: {exc}") from exc
    except ModelRunFailed as exc:
        # Decided before any label is read: the outcome depends on the model and the hidden features only.
        return _finish_failed(submission_id, claim, str(exc), host_note=f"model run failed: {exc.host_detail}")
    except SubmissionError as exc:
        return _finish_failed(submission_id, claim, f"the stored upload is invalid: {exc}")
    except NonFiniteScoreError:
        return _finish_failed(submission_id, claim, "the score is not a finite number, so nothing was released")
    except ScoringWorkExceeded as exc:  # decided from the upload's shape and the settings, before any label
        return _finish_failed(submission_id, claim, f"this submission was not scored: {exc}")
    except (ConfigurationError, DefenseConfigError, ScoringError) as exc:
        logger.error("submission %s: competition misconfigured: %s", submission_id, exc)
        return _finish_failed(
            submission_id, claim, "the competition's scoring is misconfigured; the host has been told",
            host_note=f"configuration error: {exc}",
        )
    except SoftTimeLimitExceeded:
        limit = settings.LEADERBOARD_SCORING_SOFT_TIME_LIMIT
        return _finish_failed(submission_id, claim, f"scoring took longer than the {limit} s limit")
    except Exception as exc:
        # A bug would fail the same way again; fail now with a safe message rather than retry for ever.
        logger.exception("submission %s: unexpected error while scoring", submission_id)
        return _finish_failed(
            submission_id, claim, "an internal error stopped scoring; the host has been told",
            host_note=f"internal error: {type(exc).__name__}: {exc}",
        )


def _load_predictions(spec: ScoringSpec, submission: Submission) -> tuple[ParsedPredictions, list[str]]:
    """The predictions to score and host notes about how they were obtained (a model run's isolation)."""
    challenge = inversion_of(competition=submission.competition)
    if challenge is not None:
        # The evaluator's class of each reconstruction, one-hot: the accuracy metric then counts the classes
        # recognised, and nothing of the evaluator but its decision enters the score.
        stored = blob_read(Submission, submission.pk, "predictions_npy")
        if stored is None:
            raise SubmissionError("the stored reconstructions are missing")
        reconstructions = np.load(io.BytesIO(stored), allow_pickle=False)
        predicted = challenge.evaluator.predict(reconstructions)
        return ParsedPredictions(values=np.eye(challenge.task.n_classes)[predicted]), []
    if submission.upload_kind == UploadKind.ONNX:
        model = blob_read(Submission, submission.pk, "upload") or b""
        parsed, note = model_predictions(competition=submission.competition, spec=spec, data=model)
        return parsed, [note]
    return _load_file_predictions(spec, submission), []


def _load_file_predictions(spec: ScoringSpec, submission: Submission) -> ParsedPredictions:
    if spec.arithmetic.is_float64:
        stored = blob_read(Submission, submission.pk, "predictions_npy")
        if stored is not None:
            return ParsedPredictions(values=np.load(io.BytesIO(stored), allow_pickle=False))
    upload = blob_read(Submission, submission.pk, "upload") or b""
    return parse(spec, upload, as_json=submission.upload_kind == UploadKind.JSON)


def _lock_states(competition: Competition, participant_id: int, splits: tuple[str, ...]) -> dict[str, DefenseState]:
    for split in splits:
        DefenseState.objects.get_or_create(competition=competition, participant_id=participant_id, split=split)
    # Always in the same (split name) order, so two workers never wait on each other in a cycle.
    locked = DefenseState.objects.select_for_update().filter(
        competition=competition, participant_id=participant_id, split__in=splits
    ).order_by("split")
    return {state.split: state for state in locked}


def _lock_shared_states(competition: Competition, splits: tuple[str, ...]) -> dict[str, CompetitionDefenseState]:
    """The competition's shared defense states (``scope: "competition"``), locked: every submission of the
    competition waits here for the one before it, as one participant's do on :func:`_lock_states`. Taken before
    the participant's rows, always, so two workers never wait on each other in a cycle."""
    for split in splits:
        CompetitionDefenseState.objects.get_or_create(competition=competition, split=split)
    locked = CompetitionDefenseState.objects.select_for_update().filter(
        competition=competition, split__in=splits
    ).order_by("split")
    return {state.split: state for state in locked}


def _score_claimed(submission_id: int, claim: str) -> ScoreResult:
    # The raw upload is only read when the stored array cannot serve (MPFR arithmetic reads the decimal text).
    submission = (
        Submission.objects.select_related("competition", "competition__inversion", "competition__screen_settings")
        .defer("upload", "predictions_npy").get(pk=submission_id)
    )
    if submission.attempts > MAX_ATTEMPTS:
        return _finish_failed(
            submission_id, claim, f"scoring was interrupted {submission.attempts - 1} times; giving up"
        )
    competition = submission.competition
    spec = competition_scoring_spec(competition=competition)
    # A model runs here, outside the row lock: it may take up to the model wall-time limit.
    parsed, run_notes = _load_predictions(spec, submission)
    # The sybil screen may hold it back; decided from uploads and sign-ups alone, before any label is read.
    if (screened := submission_screen(submission=submission, values=parsed.values, claim=claim)) is not None:
        return ScoreResult(screened)
    # A split without rows (public fraction 0 or 1) has nothing to score or release.
    splits = tuple(split for split in SPLITS if len(spec.split_rows[split]))
    stateful = bool(len(spec.chain))
    with transaction.atomic():
        # Lock our row and re-check the claim: if the sweep handed the row to another worker, we must not write.
        # Only a chain with state needs the lock held while it reads and writes that state; without one, the
        # conditional UPDATE that stores the result re-checks the claim by itself (one statement fewer).
        mine = not stateful or (
            Submission.objects.select_for_update()
            .filter(pk=submission_id, status=Status.SCORING, claim_token=claim)
            .exists()
        )
        if not mine:
            return ScoreResult("skipped", "the claim was lost to the sweep")
        # One participant's submissions are scored one at a time: stateful defenses (the Ladder, budgets)
        # need each submission to see the state the previous one left. An empty chain has no state, so it
        # skips the lock and its three queries (the common, no-defense case stays fast).
        keys = {(name, split): _state_key(spec, name, split) for name in spec.reported_metrics for split in splits}
        # A competition-scoped defense (one Ladder, one budget for the board) serialises the whole competition.
        shared_rows = _lock_shared_states(competition, tuple(keys.values())) if spec.chain.has_shared_state else {}
        # A team-scoped defense (one Ladder, one budget per team) serialises the team's members.
        team_rows = team_states_lock(competition=competition, participant_id=submission.participant_id,
                                     keys=tuple(keys.values())) if spec.chain.has_team_state else {}
        states = _lock_states(competition, submission.participant_id, tuple(keys.values())) if stateful else {}
        given: dict[str, dict[str, list[dict[str, Any]]]] = {}
        shared: dict[str, dict[str, list[dict[str, Any]]]] = {}
        team: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for (name, split), key in keys.items():
            if key in states and states[key].state:
                given.setdefault(name, {})[split] = states[key].state
            if key in shared_rows and shared_rows[key].state:
                shared.setdefault(name, {})[split] = shared_rows[key].state
            if key in team_rows and team_rows[key].state:
                team.setdefault(name, {})[split] = team_rows[key].state
        peers = _peer_states(competition, submission.participant_id, keys) if spec.needs_peers else None
        release = release_submission(
            spec, parsed, submission_id=submission_id, states=given, splits=splits, peers=peers, shared=shared,
            team=team if spec.chain.has_team_state else None,
        )
        primary = release.primary
        notes = [*run_notes, *(f"{split}: {note}" for split, result in primary.items() for note in result.notes)]
        if release.reject is not None:
            host_note = "; ".join(notes) or f"rejected by a defense: {release.reject}"
            return _finish_failed(submission_id, claim, release.reject, host_note=host_note, charged=True)
        for (name, split), key in keys.items():
            state = states.get(key)
            if state is None:
                continue
            new_state = release.states.get(name, {}).get(split, state.state)
            if new_state != state.state:
                state.state = new_state
                state.save(update_fields=["state", "updated_at"])
        for (name, split), key in keys.items():
            board_state = shared_rows.get(key)
            if board_state is None:
                continue
            new_board_state = release.shared.get(name, {}).get(split, board_state.state)
            if new_board_state != board_state.state:
                board_state.state = new_board_state
                board_state.save(update_fields=["state", "updated_at"])
        for (name, split), key in keys.items():
            team_state = team_rows.get(key)
            if team_state is not None and release.team.get(name, {}).get(split, team_state.state) != team_state.state:
                team_state.state = release.team[name][split]
                team_state.save(update_fields=["state", "updated_at"])
        # A metric of also_report that released nothing (undefined on the rows, e.g. AUC on one class) shows "".
        extra_scores = {
            name: {split: release.released_text(name, split) or "" for split in splits} for name in spec.also_report
        }
        values: dict[str, Any] = {"defense_notes": notes, "extra_scores": extra_scores}
        for split in splits:
            result = primary[split]
            values[f"raw_{split}"] = float(result.raw)
            values[f"raw_{split}_text"] = str(result.raw) if not isinstance(result.raw, float) else repr(result.raw)
            values[f"{split}_score"] = result.released
            values[f"{split}_score_text"] = result.released_text or ""
        values["public_message"] = (primary["public"].message or "") if "public" in splits else ""
        updated = Submission.objects.filter(pk=submission_id, status=Status.SCORING, claim_token=claim).update(
            status=Status.SCORED, finished_at=timezone.now(), claim_token="", error="", **values
        )
        if updated != 1:
            if not stateful:  # the sweep took the claim meanwhile: its new worker writes the result
                return ScoreResult("skipped", "the claim was lost to the sweep")
            raise RuntimeError("lost the claim while holding the row lock")  # pragma: no cover - a bug
    return ScoreResult("scored", notes=notes)


def _peer_states(
    competition: Competition, participant_id: int, keys: dict[tuple[str, str], str]
) -> dict[str, dict[str, list[list[dict[str, Any]]]]]:
    """The other participants' chain states, ``{metric: {split: [state, ...]}}``, for a chain whose release
    depends on them (a board rank). A snapshot without locks: a rival scored at the same moment may or may not
    be counted, as on any live board."""
    by_key = {key: name_split for name_split, key in keys.items()}
    peers: dict[str, dict[str, list[list[dict[str, Any]]]]] = {}
    rows = (
        DefenseState.objects.filter(competition=competition, split__in=list(by_key))
        .exclude(participant_id=participant_id)
        .values_list("split", "state")
    )
    for key, state in rows:
        if state:
            name, split = by_key[key]
            peers.setdefault(name, {}).setdefault(split, []).append(state)
    return peers


def _state_key(spec: ScoringSpec, metric: str, split: str) -> str:
    """The ``DefenseState.split`` a metric's chain state is stored under: ``"public"`` for the primary metric,
    ``"public@auc"`` for a metric of ``also_report``."""
    return split if metric == spec.metric_name else f"{split}@{metric}"


def _finish_failed(
    submission_id: int, claim: str, message: str, *, host_note: str | None = None, charged: bool = False
) -> ScoreResult:
    values: dict[str, Any] = {"charged": True} if charged else {}
    if host_note:
        values["defense_notes"] = [host_note]
    Submission.objects.filter(pk=submission_id, status=Status.SCORING, claim_token=claim).update(
        status=Status.FAILED, error=message, finished_at=timezone.now(), claim_token="", **values
    )
    return ScoreResult("failed", message)


def _release_claim(submission_id: int, claim: str) -> None:
    try:
        Submission.objects.filter(pk=submission_id, status=Status.SCORING, claim_token=claim).update(
            status=Status.QUEUED, claim_token="", enqueued_at=timezone.now()
        )
    except TRANSIENT_ERRORS:
        logger.warning("submission %s: could not release the claim; the sweep will requeue it", submission_id)


# --- Final selection ------------------------------------------------------------------------------------


def submission_select_final(
    *, submission: Submission, participant: Any, selected: bool | None = None, now: datetime | None = None
) -> Submission:
    """Select (or unselect) a submission for the private board; ``selected=None`` toggles. At most two per team;
    only a scored submission, and not one the sybil screen holds for the host's review (or the host withheld)."""
    now = now or timezone.now()
    competition = submission.competition
    if submission.participant_id != participant.pk:
        raise SelectionError("you can only select your own submissions")
    if competition.is_closed(now):
        raise SelectionError("final submissions cannot be changed after the competition closes")
    with transaction.atomic():
        _lock_participation(competition, participant)
        current = Submission.objects.get(pk=submission.pk)
        target = (not current.selected_for_final) if selected is None else selected
        if target and not current.selected_for_final:
            # A hold is made only while a row is being scored, so a scored row without one never gets one later.
            review = submission_review(current)
            if review in (REVIEW_HELD, REVIEW_RELEASING):
                raise SelectionError(
                    f"submission #{current.pk} is held for review by the host and cannot be selected as final; "
                    "it can be once the host releases it and its score is released"
                )
            if review == REVIEW_WITHHELD:
                raise SelectionError(
                    f"submission #{current.pk} cannot be selected as final: the host disqualified this account in "
                    "this competition, so it is never released"
                )
            if current.status != Status.SCORED:
                raise SelectionError("only a scored submission can be selected as final")
            # One set of finals per team: a teammate's selections count.
            others = team_submissions(competition=competition, participant=participant).filter(
                selected_for_final=True
            ).count()
            if others >= MAX_FINALS:
                raise SelectionError(
                    f"at most {MAX_FINALS} final submissions per team; unselect one first"
                )
        Submission.objects.filter(pk=submission.pk).update(selected_for_final=target)
    submission.selected_for_final = target
    return submission


# --- Sweep ----------------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    requeued: list[int]  # were scoring with a lost worker, now queued again
    reenqueued: list[int]  # every queued row whose message is presumed lost, published again


def _requeue_dead_claims(
    now: datetime, *, me: Claimant | None = None, started_at: datetime | None = None,
    stuck_after: timedelta | None = None,
) -> list[int]:
    """Put ``scoring`` rows whose worker is gone back to ``queued`` (clearing the claim, so a slow worker that
    wakes up can no longer write); with ``stuck_after``, also those without a sign of life for that long."""
    requeued: list[int] = []
    for row in Submission.objects.filter(status=Status.SCORING).values("pk", *_CLAIM_FIELDS):
        last_sign = row["heartbeat_at"] or row["scoring_started_at"]
        silent = stuck_after is not None and (last_sign is None or last_sign < now - stuck_after)
        if not silent and _claim_is_dead(row, now, me, started_at) is None:
            continue
        if _take_over(row["pk"], row["claim_token"], status=Status.QUEUED, claim_token="", enqueued_at=now):
            requeued.append(row["pk"])
    return requeued


def submissions_sweep(*, now: datetime | None = None, stuck_after: timedelta | None = None) -> SweepResult:
    """Re-enqueue submissions whose claim's worker is gone (see :func:`_claim_is_dead`: no heartbeat for
    ``LEADERBOARD_CLAIM_STALE_AFTER`` seconds, ...) or silent for ``stuck_after``, and queued ones waiting
    longer than ``stuck_after`` (default ``LEADERBOARD_STUCK_AFTER``) or never published.

    A duplicate message is harmless because scoring claims the row with a conditional update.
    """
    now = now or timezone.now()
    cutoff = now - (stuck_after if stuck_after is not None else timedelta(seconds=settings.LEADERBOARD_STUCK_AFTER))
    requeued = _requeue_dead_claims(now, stuck_after=stuck_after)
    reenqueued: list[int] = list(requeued)
    stale_queued = Submission.objects.filter(status=Status.QUEUED, enqueued_at__lt=cutoff) | Submission.objects.filter(
        status=Status.QUEUED, enqueued_at__isnull=True
    )
    for pk in list(stale_queued.values_list("pk", flat=True)):
        if Submission.objects.filter(pk=pk, status=Status.QUEUED).exclude(enqueued_at__gte=cutoff).update(
            enqueued_at=now
        ):
            reenqueued.append(pk)
    for pk in reenqueued:
        transaction.on_commit(partial(submission_enqueue, submission_id=pk))
    return SweepResult(requeued=requeued, reenqueued=reenqueued)


def submissions_recover(*, node: str = "", started_at: datetime | None = None) -> SweepResult:
    """What a worker does when it starts (no beat needed): take back the claims of workers that are gone —
    its own earlier self (same Celery ``node`` name, claim older than this worker's ``started_at``), dead
    processes of this machine, and claims without a heartbeat — and publish every queued row whose publish
    failed (a broker outage at upload time)."""
    now = timezone.now()
    me = Claimant(node=node, host=socket.gethostname(), pid=os.getpid())
    requeued = _requeue_dead_claims(now, me=me, started_at=started_at)
    never_published = Submission.objects.filter(status=Status.QUEUED, enqueued_at__isnull=True)
    unpublished = [
        pk for pk in list(never_published.values_list("pk", flat=True))
        # Marked published first; a failed publish marks it back (submission_enqueue).
        if Submission.objects.filter(pk=pk, status=Status.QUEUED, enqueued_at__isnull=True).update(enqueued_at=now)
    ]
    for pk in [*requeued, *unpublished]:
        submission_enqueue(submission_id=pk)
    if requeued or unpublished:
        logger.warning("recovered at worker start: requeued %s, published %s", requeued, unpublished)
    return SweepResult(requeued=requeued, reenqueued=[*requeued, *unpublished])
