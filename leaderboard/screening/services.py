"""Writes of the sybil screen: record how accounts sign up, keep each competition's screen settings, run the
screen (``defenses.sybil_screen``) when the worker scores a submission, hold a flagged account's submissions in
hold mode, and carry out the host's decision on a cluster (dismiss, merge into a team, disqualify, ban).

The hold is decided from the screen alone — the competition's uploads and how its accounts signed up — before
the worker reads a label, so whether a submission is held says nothing about the hidden labels. A held submission
ends ``scored`` with nothing released and no defense state spent (it never went through the release); the
participant sees :data:`HELD_MESSAGE`. Released by the host, it goes back to ``queued`` and through the normal
release, in upload order (:func:`held_release`).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.db import InterfaceError, OperationalError, transaction
from django.http import HttpRequest
from django.utils import timezone

from defenses.sybil_screen import AccountTrace, Cluster, ScreenConfig, SubmissionTrace, screen
from leaderboard.celery import app as celery_app
from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.errors import ApplicationError
from leaderboard.screening.models import (
    BoardExclusion,
    ClusterStatus,
    HeldSubmission,
    HoldState,
    ScreenMode,
    ScreenSettings,
    SignupSource,
    SignupTrace,
    SuspectCluster,
)
from leaderboard.security import client_address
from leaderboard.submissions.models import Participation, Status, Submission, Team, UploadKind
from leaderboard.submissions.teams import invitation_accept, team_create, team_invite, team_merge
from scoring.pipeline import ScoringSpec, parse

logger = logging.getLogger(__name__)

#: The release task's registered name (:mod:`leaderboard.screening.tasks`, which imports this module).
RELEASE_TASK = "leaderboard.screening.tasks.held_release"
#: What a participant sees instead of a score while their submission is held.
HELD_MESSAGE = "held for review by the host; no score is released until the host decides"
#: What a participant sees on a submission the host's disqualification (or ban) keeps back.
WITHHELD_MESSAGE = "not released: the host disqualified this account in this competition"
#: The cap on the screen's work per scored submission: the latest this many uploads of each account (a team
#: counts as one account) ...
LATEST_PER_ACCOUNT = 3
#: ... of at most this many accounts, the most recently active first (the submitting account always included) ...
MAX_ACCOUNTS = 200
#: ... found among the competition's latest this many uploads; and at most this many prediction values in memory
#: (80 MB of float64: on a test set of a million rows, the latest 3 uploads of 2 or 3 accounts).
MAX_SCANNED = 5_000
MAX_CELLS = 10_000_000
USER_AGENT_MAX_LENGTH = 400
#: A decision's release still not done after this long is published again when the host looks at the page.
RESUME_AFTER = timedelta(seconds=60)


class ScreenConflict(ApplicationError):
    """A decision on a cluster that is no longer open, or that cannot be carried out (e.g. banning staff)."""

    status_code = 409


class ScreenSettingsError(ApplicationError):
    """An invalid screen setting (unknown mode, threshold outside 0..1)."""


# --- Sign-up traces -------------------------------------------------------------------------------------


def request_trace(request: HttpRequest) -> dict[str, str]:
    """The sign-up trace of a request: its client address (behind the trusted proxies only, as every limit
    counts it) and user agent, as keyword arguments of the account services."""
    return {
        "address": client_address(request),
        "user_agent": str(request.META.get("HTTP_USER_AGENT", ""))[:USER_AGENT_MAX_LENGTH],
    }


def signup_trace_record(
    *, user: Any, source: str, address: str = "", user_agent: str = "", provisioned_by: Any = None,
    at: datetime | None = None,
) -> SignupTrace:
    """Remember how ``user`` signed up (once: a later call keeps the first trace)."""
    trace, _ = SignupTrace.objects.get_or_create(
        user=user,
        defaults={
            "source": source, "address": address[:64], "user_agent": user_agent[:USER_AGENT_MAX_LENGTH],
            "provisioned_by": provisioned_by, "signed_up_at": at or timezone.now(),
        },
    )
    return trace


# --- Settings -------------------------------------------------------------------------------------------


def screen_settings_get(*, competition: Competition) -> ScreenSettings:
    """The competition's screen settings (``off`` with the default threshold when never set)."""
    found = ScreenSettings.objects.filter(competition=competition).first()
    return found or ScreenSettings(competition=competition)


def screen_settings_update(
    *, competition: Competition, mode: str | None = None, threshold: float | None = None
) -> ScreenSettings:
    if mode is not None and mode not in ScreenMode.values:
        raise ScreenSettingsError(f"unknown screen mode {mode!r}; use one of {', '.join(ScreenMode.values)}")
    if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
        raise ScreenSettingsError("the threshold is a suspicion between 0 and 1")
    row, _ = ScreenSettings.objects.get_or_create(competition=competition)
    if mode is not None:
        row.mode = mode
    if threshold is not None:
        row.threshold = float(threshold)
    row.save()
    return row


# --- Account keys ---------------------------------------------------------------------------------------


def account_keys(*, competition: Competition) -> dict[int, str]:
    """The screen's key of every participant who is in a team of the competition (``team:<id>``: a team is
    one account, since its members share a quota and may submit alike); anyone else is ``user:<id>``."""
    return {
        user_id: f"team:{team_id}"
        for user_id, team_id in Participation.objects.filter(competition=competition, team__isnull=False)
        .values_list("participant_id", "team_id")
    }


def _key_of(keys: dict[int, str], user_id: int) -> str:
    return keys.get(user_id, f"user:{user_id}")


def key_users(*, competition: Competition, keys: Iterable[str]) -> dict[str, list[int]]:
    """The user ids behind each key (a team's members now)."""
    users: dict[str, list[int]] = {}
    team_ids = {int(key.split(":", 1)[1]): key for key in keys if key.startswith("team:")}
    for key in keys:
        if key.startswith("user:"):
            users[key] = [int(key.split(":", 1)[1])]
        else:
            users.setdefault(key, [])
    for user_id, team_id in Participation.objects.filter(
        competition=competition, team_id__in=list(team_ids)
    ).values_list("participant_id", "team_id"):
        users[team_ids[team_id]].append(user_id)
    return users


def key_names(keys: Iterable[str]) -> dict[str, str]:
    """A person's name for each key: the username, or "team <name>"."""
    keys = list(keys)
    user_ids = [int(key.split(":", 1)[1]) for key in keys if key.startswith("user:")]
    team_ids = [int(key.split(":", 1)[1]) for key in keys if key.startswith("team:")]
    users = dict(get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username"))
    teams = dict(Team.objects.filter(pk__in=team_ids).values_list("pk", "name"))
    names = {}
    for key in keys:
        kind, number = key.split(":", 1)
        found = users.get(int(number)) if kind == "user" else teams.get(int(number))
        names[key] = (str(found) if kind == "user" else f"team {found}") if found is not None else key
    return names


# --- The screen (worker side) ---------------------------------------------------------------------------


def _vector(spec: ScoringSpec, predictions: Any, upload: Any, kind: str) -> np.ndarray | None:
    """A stored submission's predictions as the worker reads them: the validated array, else the kept upload."""
    if predictions is not None:
        return np.load(io.BytesIO(bytes(predictions)), allow_pickle=False)
    if upload:
        return parse(spec, bytes(upload), as_json=kind == UploadKind.JSON).values
    return None


def _submission_traces(
    competition: Competition, keys: dict[int, str], current: Submission, values: np.ndarray
) -> list[SubmissionTrace]:
    """The latest :data:`LATEST_PER_ACCOUNT` uploads of up to :data:`MAX_ACCOUNTS` accounts (the current
    submission's always; fewer accounts when their vectors would pass :data:`MAX_CELLS`), among the
    competition's latest :data:`MAX_SCANNED`."""
    current_key = _key_of(keys, current.participant_id)
    max_accounts = max(2, min(MAX_ACCOUNTS, MAX_CELLS // max(1, values.size * LATEST_PER_ACCOUNT)))
    chosen: dict[str, list[int]] = {current_key: []}
    rows = (
        Submission.objects.filter(competition=competition)
        .exclude(pk=current.pk).exclude(upload_kind=UploadKind.ONNX)
        .order_by("-created_at", "-id").values_list("pk", "participant_id")[:MAX_SCANNED]
    )
    for pk, user_id in rows:
        key = _key_of(keys, user_id)
        if key not in chosen:
            if len(chosen) >= max_accounts:
                continue
            chosen[key] = []
        # The current submission takes one of its account's places.
        if len(chosen[key]) < LATEST_PER_ACCOUNT - (key == current_key):
            chosen[key].append(pk)
    account_of = {pk: key for key, pks in chosen.items() for pk in pks}
    spec = competition_scoring_spec(competition=competition)
    traces = [SubmissionTrace(account=current_key, at=current.created_at.timestamp(), vector=values)]
    stored = list(
        Submission.objects.filter(pk__in=list(account_of)).values_list("pk", "created_at", "predictions_npy",
                                                                         "upload_kind")
    )
    # The upload itself only where no validated array was kept (φ-bit arithmetic): it may be large.
    uploads = dict(
        Submission.objects.filter(pk__in=[row[0] for row in stored if row[2] is None]).values_list("pk", "upload")
    )
    for pk, created_at, predictions, kind in stored:
        try:
            vector = _vector(spec, predictions, uploads.get(pk), kind)
        except Exception:  # an upload that no longer parses (the worker failed it) says nothing here
            continue
        if vector is not None and vector.shape == values.shape:
            traces.append(SubmissionTrace(account=account_of[pk], at=created_at.timestamp(), vector=vector))
    return traces


def _account_traces(competition: Competition, keys: dict[int, str], accounts: set[str]) -> list[AccountTrace]:
    """How each account signed up. A team's is its earliest member's. An account a host made carries that
    host's request's address and agent — evidence between accounts of another competition's host, none in the
    host's own competition, where a class's accounts all come from the host's machine (left out there)."""
    users = key_users(competition=competition, keys=accounts)
    all_ids = [user_id for ids in users.values() for user_id in ids]
    traces = {trace.user_id: trace for trace in SignupTrace.objects.filter(user_id__in=all_ids)}
    joined = dict(get_user_model().objects.filter(pk__in=all_ids).values_list("pk", "date_joined"))
    result = []
    for key in sorted(accounts):
        candidates = []
        for user_id in users.get(key, []):
            trace = traces.get(user_id)
            at = trace.signed_up_at if trace is not None else joined.get(user_id)
            if at is not None:
                candidates.append((at, user_id, trace))
        if not candidates:
            continue
        at, _, trace = min(candidates, key=lambda c: (c[0], c[1]))
        address = user_agent = None
        if trace is not None and not (
            trace.source == SignupSource.PROVISIONED and trace.provisioned_by_id == competition.host_id
        ):
            address, user_agent = trace.address or None, trace.user_agent or None
        result.append(AccountTrace(account=key, signed_up_at=at.timestamp(), address=address, user_agent=user_agent))
    return result


def _names_in(detail: str, names: dict[str, str]) -> str:
    for key in sorted(names, key=len, reverse=True):  # "user:12" before "user:1"
        detail = detail.replace(key, names[key])
    return detail


def _store(competition: Competition, clusters: list[Cluster], now: datetime) -> None:
    """Keep what the screen flagged: a cluster with the same accounts is updated (whatever its status, so a
    dismissed one stays dismissed); one that grows an open cluster replaces its accounts; else a new open one."""
    if not clusters:
        return
    known = list(SuspectCluster.objects.filter(competition=competition))
    names = key_names({key for cluster in clusters for key in cluster.accounts})
    for cluster in clusters:
        accounts = sorted(cluster.accounts)
        evidence = [
            {"kind": item.kind, "accounts": [names.get(key, key) for key in item.accounts],
             "detail": _names_in(item.detail, names)}
            for item in cluster.evidence
        ]
        same = next((row for row in known if sorted(row.accounts) == accounts), None)
        if same is None:
            same = next(
                (row for row in known if row.status == ClusterStatus.OPEN and set(row.accounts) & set(accounts)), None
            )
        values = {
            "accounts": accounts, "names": [names.get(key, key) for key in accounts],
            "suspicion": float(cluster.suspicion), "evidence": evidence, "last_seen_at": now,
        }
        if same is None:
            known.append(SuspectCluster.objects.create(competition=competition, first_seen_at=now, **values))
        else:
            for name, value in values.items():
                setattr(same, name, value)
            same.save(update_fields=list(values))


def submission_screen(*, submission: Submission, values: np.ndarray, claim: str) -> str | None:
    """The worker's hook, called with the predictions just before the release (no label read yet).

    Nothing happens without screen settings (the default: no query at all). Otherwise: a submission the host
    already released goes on to the release; a disqualified account's is kept back; with the screen on, the
    screen runs over the competition's accounts and uploads (capped: :data:`LATEST_PER_ACCOUNT`,
    :data:`MAX_ACCOUNTS`) and stores what it flags; in hold mode an account in an open cluster has this
    submission held. Returns ``"held"`` (stored as held, scored with nothing released), ``"skipped"`` (the
    claim was lost meanwhile) or ``None`` (release it as usual)."""
    competition = submission.competition
    try:
        screen_row = competition.screen_settings
    except ObjectDoesNotExist:
        return None
    hold = HeldSubmission.objects.filter(submission_id=submission.pk).first()
    if hold is not None and hold.state in (HoldState.RELEASING, HoldState.RELEASED):
        if hold.state == HoldState.RELEASING:
            HeldSubmission.objects.filter(pk=hold.pk).update(state=HoldState.RELEASED, released_at=timezone.now())
        return None
    now = timezone.now()
    with transaction.atomic():
        # One screen of a competition at a time, so two workers never store the same cluster twice.
        screen_row = ScreenSettings.objects.select_for_update().get(pk=screen_row.pk)
        excluded = BoardExclusion.objects.filter(competition=competition, participant_id=submission.participant_id)
        cluster: SuspectCluster | None = None
        if excluded.exists():
            state, message = HoldState.WITHHELD, WITHHELD_MESSAGE
        elif screen_row.mode != ScreenMode.OFF and submission.upload_kind != UploadKind.ONNX:
            keys = account_keys(competition=competition)
            try:
                _run(competition, screen_row, keys, submission, values, now)
            except (OperationalError, InterfaceError):
                raise  # transient: the worker releases its claim and retries
            except Exception:  # a bug in the screen must not stop scoring: release, and tell the log
                logger.exception("submission %s: the sybil screen failed; released unscreened", submission.pk)
                return None
            if screen_row.mode != ScreenMode.HOLD:
                return None
            key = _key_of(keys, submission.participant_id)
            # Locked, as a decision locks it: a dismissal made meanwhile either waits for this hold (and releases
            # it) or is seen here (and nothing is held).
            open_clusters = SuspectCluster.objects.select_for_update().filter(
                competition=competition, status=ClusterStatus.OPEN
            ).order_by("first_seen_at", "id")
            cluster = next((row for row in open_clusters if key in row.accounts), None)
            if cluster is None:
                return None
            state, message = HoldState.HELD, HELD_MESSAGE
        else:
            return None
        note = f"held by the sybil screen (cluster {cluster.pk})" if cluster else "withheld: disqualified"
        updated = Submission.objects.filter(pk=submission.pk, status=Status.SCORING, claim_token=claim).update(
            status=Status.SCORED, finished_at=now, claim_token="", error="", public_message=message,
            defense_notes=[note],
        )
        if updated != 1:
            transaction.set_rollback(True)
            return "skipped"
        HeldSubmission.objects.update_or_create(
            submission=submission, defaults={"cluster": cluster, "state": state, "held_at": now}
        )
    return "held"


def _run(
    competition: Competition, screen_row: ScreenSettings, keys: dict[int, str], submission: Submission,
    values: np.ndarray, now: datetime,
) -> None:
    traces = _submission_traces(competition, keys, submission, values)
    accounts = _account_traces(competition, keys, {trace.account for trace in traces})
    clusters = screen(accounts, traces, ScreenConfig(threshold=float(screen_row.threshold), mode=screen_row.mode))
    _store(competition, clusters, now)


# --- The host's decisions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    cluster: SuspectCluster
    released: int  # submissions now on their way through the release
    withheld: int  # submissions kept back for good


def _open_cluster(cluster_id: int, competition: Competition | None = None) -> SuspectCluster:
    found = SuspectCluster.objects.select_for_update().filter(pk=cluster_id)
    if competition is not None:
        found = found.filter(competition=competition)
    cluster = found.first()
    if cluster is None:
        raise SuspectCluster.DoesNotExist(f"no cluster {cluster_id}")
    if cluster.status != ClusterStatus.OPEN:
        raise ScreenConflict(f"this cluster was already {cluster.status}; a decision is taken once")
    return cluster


def _decide(cluster: SuspectCluster, status: str, host: Any, note: str = "") -> None:
    cluster.status = status
    cluster.decided_at = timezone.now()
    cluster.decided_by = host
    cluster.decision_note = note[:400]
    cluster.save(update_fields=["status", "decided_at", "decided_by", "decision_note"])


def _release_holds(cluster: SuspectCluster) -> int:
    """Mark the cluster's held submissions for release and publish the release task once committed."""
    released = HeldSubmission.objects.filter(cluster=cluster, state=HoldState.HELD).update(state=HoldState.RELEASING)
    if released:
        transaction.on_commit(partial(_publish_release, cluster.competition_id))
    return int(released)


def _publish_release(competition_id: int) -> None:
    try:
        celery_app.tasks[RELEASE_TASK].apply_async(args=(competition_id,))
    except Exception as exc:  # the broker is down: the held rows stay "releasing"; the next decision retries
        logger.error("could not publish the release of competition %s: %s", competition_id, exc)


def cluster_dismiss(*, cluster_id: int, host: Any, competition: Competition | None = None) -> Decision:
    """Not one person after all: the cluster stays dismissed (a new screen with the same accounts does not
    reopen it) and its held submissions go through the release, in upload order."""
    with transaction.atomic():
        cluster = _open_cluster(cluster_id, competition)
        _decide(cluster, ClusterStatus.DISMISSED, host)
        released = _release_holds(cluster)
    return Decision(cluster=cluster, released=released, withheld=0)


def cluster_merge(*, cluster_id: int, host: Any, competition: Competition | None = None) -> Decision:
    """One person or one group: the cluster's accounts become one team (the teams' own rules: merger deadline,
    one team's quota), then their held submissions are released. The first team among them keeps its name; with
    no team, one is made by the earliest account."""
    with transaction.atomic():
        cluster = _open_cluster(cluster_id, competition)
        competition = cluster.competition
        users = key_users(competition=competition, keys=cluster.accounts)
        people = {user.pk: user for user in get_user_model().objects.filter(
            pk__in=[user_id for ids in users.values() for user_id in ids])}
        teams = [key for key in cluster.accounts if key.startswith("team:") and users.get(key)]
        solos = [key for key in cluster.accounts if key.startswith("user:") and users[key][0] in people]
        if len(teams) + len(solos) < 2:
            raise ScreenConflict("fewer than two of the cluster's accounts are left to merge; dismiss it instead")
        if teams:
            target = Team.objects.get(pk=int(teams[0].split(":", 1)[1]))
            anchor = people[users[teams[0]][0]]
        else:
            anchor = people[users[solos.pop(0)][0]]
            target = team_create(competition=competition, user=anchor, name=_team_name(competition, cluster))
        for key in teams[1:]:
            other = Team.objects.get(pk=int(key.split(":", 1)[1]))
            team_merge(team=other, other_id=target.pk, user=people[users[key][0]])
            team_merge(team=target, other_id=other.pk, user=anchor)
        for key in solos:
            invitee = people[users[key][0]]
            invitation = team_invite(team=target, inviter=anchor, username=invitee.get_username())
            invitation_accept(invitation_id=invitation.pk, user=invitee)
        _decide(cluster, ClusterStatus.MERGED, host, note=f"merged into team {target.name}")
        released = _release_holds(cluster)
    return Decision(cluster=cluster, released=released, withheld=0)


def _team_name(competition: Competition, cluster: SuspectCluster) -> str:
    base = " + ".join(cluster.names)[:50] or f"cluster {cluster.pk}"
    name, n = base, 1
    while Team.objects.filter(competition=competition, name__iexact=name).exists():
        n += 1
        name = f"{base} ({n})"
    return name


def _exclude(cluster: SuspectCluster, reason: str, host: Any) -> tuple[list[int], int]:
    users = key_users(competition=cluster.competition, keys=cluster.accounts)
    user_ids = sorted({user_id for ids in users.values() for user_id in ids})
    for user_id in user_ids:
        BoardExclusion.objects.update_or_create(
            competition=cluster.competition, participant_id=user_id, defaults={"cluster": cluster, "reason": reason}
        )
    held = HeldSubmission.objects.filter(cluster=cluster, state=HoldState.HELD)
    Submission.objects.filter(pk__in=held.values("submission_id")).update(public_message=WITHHELD_MESSAGE)
    withheld = held.update(state=HoldState.WITHHELD)
    _decide(cluster, reason, host)
    return user_ids, int(withheld)


def cluster_disqualify(*, cluster_id: int, host: Any, competition: Competition | None = None) -> Decision:
    """The cluster's accounts are off this competition's boards; held submissions are never released, nor is
    anything they submit here later."""
    with transaction.atomic():
        cluster = _open_cluster(cluster_id, competition)
        _, withheld = _exclude(cluster, ClusterStatus.DISQUALIFIED, host)
    return Decision(cluster=cluster, released=0, withheld=withheld)


def cluster_ban(*, cluster_id: int, host: Any, competition: Competition | None = None) -> Decision:
    """Disqualified, and the accounts deactivated (no login, no API token). Refused when one of them is staff
    or the competition's host."""
    with transaction.atomic():
        cluster = _open_cluster(cluster_id, competition)
        users = key_users(competition=cluster.competition, keys=cluster.accounts)
        user_ids = {user_id for ids in users.values() for user_id in ids}
        accounts = get_user_model().objects.filter(pk__in=user_ids)
        privileged = [user for user in accounts if getattr(user, "is_staff", False)
                      or getattr(user, "is_superuser", False) or user.pk == cluster.competition.host_id]
        if privileged:
            raise ScreenConflict("a staff account or the host cannot be banned from here; disqualify instead")
        _, withheld = _exclude(cluster, ClusterStatus.BANNED, host)
        accounts.update(is_active=False)
    return Decision(cluster=cluster, released=0, withheld=withheld)


DECISIONS = {
    "dismiss": cluster_dismiss,
    "merge": cluster_merge,
    "disqualify": cluster_disqualify,
    "ban": cluster_ban,
}


def held_release_order(*, competition_id: int) -> list[int]:
    """The submissions a decision let go, oldest upload first: the order the release task takes them."""
    return list(
        HeldSubmission.objects.filter(submission__competition_id=competition_id, state=HoldState.RELEASING)
        .order_by("submission__created_at", "submission_id").values_list("submission_id", flat=True)
    )


def held_release_resume(*, competition: Competition, older_than: timedelta = RESUME_AFTER) -> bool:
    """Publish the release task again when a decision older than ``older_than`` left submissions ``releasing``
    (its publish failed, or its worker died): the host's page calls it. Returns whether it published."""
    stuck = HeldSubmission.objects.filter(
        submission__competition=competition, state=HoldState.RELEASING,
        submission__status=Status.SCORED, submission__public_message=HELD_MESSAGE,
        cluster__decided_at__lt=timezone.now() - older_than,
    )
    if not stuck.exists():
        return False
    _publish_release(competition.pk)
    return True


def held_requeue(*, submission_id: int) -> bool:
    """Put one released hold back to ``queued`` (only while it is still held: scored with nothing released),
    so the normal path claims and releases it."""
    return Submission.objects.filter(
        pk=submission_id, status=Status.SCORED, public_message=HELD_MESSAGE, public_score_text="",
        screen_hold__state=HoldState.RELEASING,
    ).update(status=Status.QUEUED, public_message="", finished_at=None, enqueued_at=timezone.now()) == 1
