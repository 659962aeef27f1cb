"""Writes on audits: request one (validated, one active per competition, enqueued on commit), run one (the
Celery task's body and ``manage.py audit_competition``'s), and fail the ones whose worker is gone.

The audit itself is :func:`games.audit.audit`, pure; this module hands it the competition's configuration
(:func:`audit_setup`) and the participants' quota (:func:`audit_quota`), reports its progress into the row and
stores its result. Every way out of :func:`audit_run` leaves the row ``done`` or ``failed`` with a message; a
worker killed mid-audit stops the heartbeat, and :func:`audits_expire` fails the row on the next read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from games import audit_limits
from leaderboard.audits.models import ACTIVE_STATUSES, Audit, AuditStatus
from leaderboard.celery import app as celery_app
from leaderboard.competitions.models import Competition, HiddenTestData
from leaderboard.errors import AuditBusy, AuditRequestError

if TYPE_CHECKING:
    from games import audit as audit_core

logger = logging.getLogger(__name__)

#: The audit task's registered name (:mod:`leaderboard.audits.tasks`, which imports this module).
AUDIT_TASK = "leaderboard.audits.tasks.audit_run"
#: Most accounts one count of the accounts axis may give the attacker (the quota is per account).
MAX_ACCOUNTS = audit_limits.MAX_ACCOUNTS
#: The account counts an audit tries when the host names none.
DEFAULT_ACCOUNTS = list(audit_limits.DEFAULT_ACCOUNTS)
MAX_BUDGET = audit_limits.MAX_BUDGET
#: Progress is written at most this often (seconds), besides the start and the end.
PROGRESS_EVERY = 0.5


def audit_setup(*, competition: Competition) -> audit_core.AuditSetup:
    """The competition's scoring configuration as the audit core takes it (labels, split, secret, chain, ...).

    A solution file's Ignored rows are left out: no query can read them, so the audit attacks the scored rows
    (an attacker who cannot tell them apart spends a little more than the audit counts)."""
    from games import audit as audit_core  # here: it loads every attack (see games.audit_limits)

    hidden = HiddenTestData.objects.get(competition_id=competition.pk)
    ignored = hidden.ignored_mask
    scored = slice(None) if ignored is None else ~ignored
    features = hidden.features if competition.takes_models else None
    return audit_core.AuditSetup(
        labels=hidden.labels[scored],
        metric=competition.metric,
        eps=competition.eps,
        decimals=competition.score_decimals,
        defenses=list(competition.defenses or []),
        public_fraction=competition.public_fraction,
        secret=hidden.secret_int,
        arithmetic=competition.arithmetic,
        n_classes=competition.n_classes,
        same_file_same_score=competition.same_file_same_score,
        also_report=tuple(competition.also_report) if isinstance(competition.also_report, list) else (),
        public_mask=hidden.public_mask[scored],
        features=None if features is None else features[scored],
    )


def audit_quota(*, competition: Competition, now: datetime | None = None) -> audit_core.Quota:
    """What one participant who starts now can still submit: the daily limit on every UTC day left until the
    close (from the opening, if it is later), and the total limit."""
    from games import audit as audit_core

    return audit_core.quota_from_schedule(
        daily_limit=competition.daily_limit, total_limit=competition.total_limit, opens_at=competition.opens_at,
        closes_at=competition.closes_at, now=now or timezone.now(),
    )


def _whole(value: object, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _check_options(budget: int | None, accounts: int | Sequence[int]) -> list[int]:
    """The account counts, checked (smallest first); raises :class:`AuditRequestError` naming the bad option."""
    if budget is not None and not _whole(budget, 1, MAX_BUDGET):
        raise AuditRequestError(f"budget must be a whole number of submissions from 1 to {MAX_BUDGET}",
                                extra={"field": "budget"})
    from games import audit as audit_core

    try:
        return audit_core.account_counts(accounts)
    except audit_core.AuditError as exc:
        raise AuditRequestError(str(exc), extra={"field": "accounts"}) from None


def audit_request(
    *, competition: Competition, user: Any = None, budget: int | None = None,
    accounts: int | Sequence[int] | None = None, seed: int = 0, enqueue: bool = True,
) -> Audit:
    """A new queued audit of ``competition``, published to the workers when the transaction commits.

    ``accounts``: one account count or the counts of the accounts axis (default :data:`DEFAULT_ACCOUNTS`).
    Raises :class:`AuditRequestError` for a budget or account count out of range and :class:`AuditBusy` while
    another audit of the competition is queued or running (an audit takes up to a minute of a worker).
    ``enqueue=False`` leaves the row for the caller to run (the management command runs it in process).
    """
    counts = _check_options(budget, DEFAULT_ACCOUNTS if accounts is None else accounts)
    audits_expire(competition=competition)
    with transaction.atomic():
        Competition.objects.select_for_update().filter(pk=competition.pk).first()  # one request at a time
        active = Audit.objects.filter(competition=competition, status__in=ACTIVE_STATUSES).first()
        if active is not None and enqueue:
            raise AuditBusy(
                f"audit {active.pk} of this competition is still {active.status}; wait for it to finish",
                extra={"id": active.pk, "url": audit_api_url(active)},
            )
        audit = Audit.objects.create(
            competition=competition, requested_by=user if getattr(user, "is_authenticated", False) else None,
            budget=budget, accounts=counts[0], account_counts=counts, seed=seed,
        )
        if enqueue:
            transaction.on_commit(partial(audit_enqueue, audit_id=audit.pk))
    return audit


def audit_api_url(audit: Audit) -> str:
    return f"/api/v1/host/competitions/{audit.competition.slug}/audit/{audit.pk}/"


def audit_enqueue(*, audit_id: int) -> None:
    """Publish the audit task; when the broker cannot be reached, fail the audit saying so (the host asks
    again) rather than leave it queued."""
    # Looked up by name: the task module imports this one (the app's ready() imports it, which registers it).
    audit_run_task = celery_app.tasks[AUDIT_TASK]
    try:
        audit_run_task.apply_async(args=(audit_id,))
    except Exception as exc:  # any broker failure
        logger.warning("publishing audit %s failed: %s: %s", audit_id, type(exc).__name__, exc)
        _finish(audit_id, AuditStatus.FAILED, error="the task queue could not be reached; start the audit again",
                from_statuses=(AuditStatus.QUEUED,))


def audit_run(*, audit_id: int, echo: Callable[[float, str], None] | None = None) -> str:
    """Run a queued audit: claim it (``queued`` → ``running``, so a task delivered twice runs it once), play
    the battery with progress written to the row, store the result. Returns ``done``, ``failed`` or
    ``skipped`` (not queued: another run has it, or it is finished)."""
    from games import audit as audit_core

    now = timezone.now()
    claimed = Audit.objects.filter(pk=audit_id, status=AuditStatus.QUEUED).update(
        status=AuditStatus.RUNNING, started_at=now, heartbeat_at=now, progress=0.0, step="starting"
    )
    if not claimed:
        return "skipped"
    heartbeat = _Heartbeat(audit_id)
    try:
        audit = Audit.objects.select_related("competition").get(pk=audit_id)
        competition = audit.competition
        report = audit_core.audit(
            audit_setup(competition=competition), budget=audit.budget, accounts=audit.counts, seed=audit.seed,
            quota=audit_quota(competition=competition, now=now), progress=_Reporter(audit_id, echo),
            time_limit=float(settings.LEADERBOARD_AUDIT_TIME_LIMIT),
        )
    except audit_core.AuditError as exc:
        _finish(audit_id, AuditStatus.FAILED, error=str(exc))
        return "failed"
    except Exception as exc:  # whatever went wrong, the row must not stay "running"
        logger.exception("audit %s crashed", audit_id)
        _finish(audit_id, AuditStatus.FAILED, error=f"the audit stopped on an error: {type(exc).__name__}: {exc}")
        return "failed"
    finally:
        heartbeat.stop()
    _finish(audit_id, AuditStatus.DONE, result=report.as_dict())
    return "done"


def _finish(
    audit_id: int, status: str, *, error: str = "", result: dict[str, Any] | None = None,
    from_statuses: tuple[str, ...] = (AuditStatus.RUNNING,),
) -> None:
    changes: dict[str, Any] = {"status": status, "finished_at": timezone.now(), "error": error[:4000]}
    if status == AuditStatus.DONE:
        changes.update(progress=1.0, step="done", result=result)
    Audit.objects.filter(pk=audit_id, status__in=from_statuses).update(**changes)


def audits_expire(*, competition: Competition | None = None, now: datetime | None = None) -> int:
    """Fail the audits no worker will finish: running with a heartbeat older than
    ``LEADERBOARD_AUDIT_STALE_AFTER`` (its worker died) and queued for longer than
    ``LEADERBOARD_AUDIT_QUEUED_EXPIRES`` (no worker took it). Returns how many were failed."""
    now = now or timezone.now()
    audits = Audit.objects.all() if competition is None else Audit.objects.filter(competition=competition)
    stale = now - timedelta(seconds=settings.LEADERBOARD_AUDIT_STALE_AFTER)
    lost = audits.filter(status=AuditStatus.RUNNING, heartbeat_at__lt=stale).update(
        status=AuditStatus.FAILED, finished_at=now,
        error="the worker running this audit stopped (its heartbeat went silent); start the audit again",
    )
    waited = now - timedelta(seconds=settings.LEADERBOARD_AUDIT_QUEUED_EXPIRES)
    lost += audits.filter(status=AuditStatus.QUEUED, created_at__lt=waited).update(
        status=AuditStatus.FAILED, finished_at=now,
        error="no worker picked this audit up in time (is a Celery worker running?); start the audit again",
    )
    return lost


class _Reporter:
    """The audit core's progress callback: writes progress and step into the row, at most every
    :data:`PROGRESS_EVERY` seconds (and always at the end), and echoes them (the management command)."""

    def __init__(self, audit_id: int, echo: Callable[[float, str], None] | None) -> None:
        self.audit_id = audit_id
        self.echo = echo
        self.last = 0.0

    def __call__(self, fraction: float, step: str) -> None:
        if self.echo is not None:
            self.echo(fraction, step)
        clock = time.monotonic()
        if fraction < 1.0 and clock - self.last < PROGRESS_EVERY:
            return
        self.last = clock
        Audit.objects.filter(pk=self.audit_id, status=AuditStatus.RUNNING).update(
            progress=max(0.0, min(1.0, fraction)), step=step[:200], heartbeat_at=timezone.now()
        )


class _Heartbeat:
    """Refreshes ``heartbeat_at`` every ``LEADERBOARD_AUDIT_HEARTBEAT`` seconds from a thread of its own, so a
    long attack run between two progress reports does not look like a dead worker. Not started inside a
    transaction (a test's): another connection could not see the row before it commits."""

    def __init__(self, audit_id: int) -> None:
        self.audit_id = audit_id
        self.every = float(settings.LEADERBOARD_AUDIT_HEARTBEAT)
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        if self.every > 0 and not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._beat, name=f"audit-{audit_id}-heartbeat", daemon=True)
            self.thread.start()

    def _beat(self) -> None:
        from django.db import connections

        try:
            while not self.stopped.wait(self.every):
                try:
                    Audit.objects.filter(pk=self.audit_id, status=AuditStatus.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except Exception:  # a database hiccup: the next beat tries again
                    logger.warning("audit %s: heartbeat failed", self.audit_id, exc_info=True)
        finally:
            connections.close_all()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=10)
