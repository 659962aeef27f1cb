"""``LeaderboardClient``: the one typed HTTP client of a Leaderboard Lab site's REST API (``/api/v1/``).

Everything outside the site that talks to a site goes through it: the bot's :class:`~bot.http_oracle.HttpOracle`,
live games, the demo, the end-to-end tests and the benchmarks. Pure client code (``requests``, no Django).

Participant side: :meth:`~LeaderboardClient.competitions`, :meth:`~LeaderboardClient.competition`,
:meth:`~LeaderboardClient.sample_submission`, :meth:`~LeaderboardClient.submit_csv`,
:meth:`~LeaderboardClient.submit_json`, :meth:`~LeaderboardClient.submission`, :meth:`~LeaderboardClient.wait`,
:meth:`~LeaderboardClient.quota`, :meth:`~LeaderboardClient.leaderboard`, :meth:`~LeaderboardClient.select_final`,
:meth:`~LeaderboardClient.data_files`, :meth:`~LeaderboardClient.download_data_file`.
Host side (a staff token, or a user allowed to add competitions): :meth:`~LeaderboardClient.create_competition`,
:meth:`~LeaderboardClient.add_data_file`, :meth:`~LeaderboardClient.set_defenses`,
:meth:`~LeaderboardClient.host_submissions` (raw next to released), :meth:`~LeaderboardClient.leakage`,
:meth:`~LeaderboardClient.create_participant` (a new account and its token).

Failures raise one hierarchy rooted at :class:`ClientError`: :class:`UploadRejected` (the server's 400 message
and line), :class:`QuotaExceeded` (the UTC reset time and ``Retry-After``), :class:`NotFound`,
:class:`Forbidden`, :class:`NotAuthenticated`, :class:`Conflict`, :class:`SubmissionFailed`,
:class:`WaitTimeout` and :class:`TransientError` (every retry of a transient failure failed).

Retries: connection errors, timeouts and HTTP 500/502/503/504 are retried with exponential backoff
(:class:`Backoff`); a ``Retry-After`` header (seconds or an HTTP date) replaces the backoff delay, and a rate
limit's 429 is retried after it too. A 429 on an upload that names ``resets_at`` is the submission quota: the
client waits for the reset (``on_quota="wait"``) or raises :class:`QuotaExceeded` (``"stop"``), as the caller
chooses. Every upload carries an ``Idempotency-Key`` header,
a fresh UUID per logical upload reused on each of its retries, so a retried POST — CSV or JSON — whose first
attempt did reach the site returns the original submission instead of creating (and charging) a second one.
"""

from __future__ import annotations

import csv
import email.utils
import hashlib
import io
import json
import math
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from attacks.result import SubmissionRefused

#: Status codes worth another attempt: the server or a proxy in front of it is briefly unavailable.
RETRY_STATUSES = frozenset({500, 502, 503, 504})
#: Of those, the ones after which the request may nevertheless have been processed.
AMBIGUOUS_STATUSES = frozenset({500, 502, 504})
#: The request header that makes an upload idempotent (the site stores it with the submission).
IDEMPOTENCY_HEADER = "Idempotency-Key"
BOARDS = ("public", "private")


# --- Errors ---------------------------------------------------------------------------------------------


class ClientError(RuntimeError):
    """The site answered something the client cannot use, or could not be reached.

    ``status`` is the HTTP status (``None`` when there was no answer), ``detail`` the site's own message and
    ``body`` the decoded error body (``None`` when it was not JSON).
    """

    def __init__(self, message: str, *, status: int | None = None, detail: str = "", body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail or message
        self.body = body


class TransientError(ClientError):
    """Every retry of a transient failure (connection error, timeout, 5xx, rate limit) failed."""


class BadRequest(ClientError):
    """HTTP 400: the request was malformed; ``detail`` is the site's precise message."""


class UploadRejected(BadRequest):
    """HTTP 400 on an upload: the site refused the file; ``line`` names the offending line when it can."""

    def __init__(self, message: str, *, detail: str, line: int | None, body: Any = None) -> None:
        super().__init__(message, status=400, detail=detail, body=body)
        self.line = line


class NotAuthenticated(ClientError):
    """HTTP 401: no token, or a token the site does not know."""


class Forbidden(ClientError):
    """HTTP 403: not allowed (not the host, the competition is not open, the private board before the close)."""


class NotFound(ClientError):
    """HTTP 404: no such competition or submission (or not one of yours)."""


class Conflict(ClientError):
    """HTTP 409 or 422: the request conflicts with the site's state (a taken username, an ``Idempotency-Key``
    reused with a different upload)."""


class QuotaExceeded(ClientError):
    """Over the daily or total submission limit. ``resets_at`` is the UTC time the daily counter restarts
    (``None`` when only the total limit is left, which never resets); ``retry_after`` the seconds the site's
    ``Retry-After`` header asked for (``None`` without one)."""

    def __init__(self, message: str, resets_at: datetime | None, retry_after: float | None = None) -> None:
        super().__init__(message, status=429, detail=message)
        self.message = message
        self.resets_at = resets_at
        self.retry_after = retry_after


class QueryBudgetExhausted(ClientError):
    """A model-inversion challenge's prediction endpoint refused a request over the budget (``queries_left``)."""

    def __init__(self, message: str, *, queries_left: int) -> None:
        super().__init__(message, status=429, detail=message)
        self.queries_left = queries_left


class SubmissionFailed(ClientError, SubmissionRefused):
    """The site accepted the upload but could not score it; ``message`` is the site's own explanation. It is
    the attacks' :class:`~attacks.result.SubmissionRefused`, so a probe the site refuses is seen as such."""

    def __init__(self, submission_id: int, message: str) -> None:
        super().__init__(f"submission {submission_id} failed: {message}", detail=message)
        self.submission_id = submission_id
        self.message = message


class WaitTimeout(ClientError):
    """A submission was still not scored when the wait gave up (is a worker running?)."""


# --- Policies -------------------------------------------------------------------------------------------


@dataclass
class Backoff:
    """Exponential backoff for retries: ``initial · factor^attempt``, capped at ``maximum``, ``retries`` tries.

    >>> [Backoff(initial=0.5, factor=2.0, maximum=3.0).delay(a) for a in range(4)]
    [0.5, 1.0, 2.0, 3.0]
    """

    initial: float = 0.25
    factor: float = 2.0
    maximum: float = 30.0
    retries: int = 8

    def delay(self, attempt: int) -> float:
        return min(self.initial * self.factor**attempt, self.maximum)


@dataclass
class PollSchedule:
    """How often to ask whether a submission is scored: start fast (a scoring takes milliseconds on a warm
    worker), grow geometrically, never wait more than ``maximum`` between polls, give up after ``timeout``."""

    initial: float = 0.002
    factor: float = 1.5
    maximum: float = 0.25
    timeout: float = 600.0


@dataclass
class ClientStats:
    """What the client did: requests sent, retries, polls, and the seconds it slept (backoff and quota)."""

    requests: int = 0
    retries: int = 0
    polls: int = 0
    slept: float = 0.0
    quota_waits: float = 0.0


# --- Typed results --------------------------------------------------------------------------------------


def parse_utc(text: str | None) -> datetime | None:
    """An ISO 8601 UTC time as the site writes it (``2026-11-22T00:00:00Z``), or ``None``.

    >>> parse_utc("2026-11-22T00:00:00Z")
    datetime.datetime(2026, 11, 22, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110, 10.2.3).

    >>> now = datetime(2026, 11, 21, 23, 58, tzinfo=UTC)
    >>> retry_after_seconds("120", now), retry_after_seconds("Sun, 22 Nov 2026 00:00:00 GMT", now)
    (120.0, 120.0)
    >>> retry_after_seconds("soon", now) is None, retry_after_seconds("Sat, 21 Nov 2026 00:00:00 GMT", now)
    (True, 0.0)
    """
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return max((moment - now).total_seconds(), 0.0)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class CompetitionSummary:
    """One row of ``GET competitions/``. ``data`` is the whole answer (fields added later included)."""

    slug: str
    title: str
    task: str
    metric: str
    n_rows: int
    n_classes: int
    opens_at: datetime | None
    closes_at: datetime | None
    is_open: bool
    data: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def _fields(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "slug": str(data["slug"]), "title": str(data.get("title") or ""), "task": str(data.get("task") or ""),
            "metric": str(data["metric"]), "n_rows": int(data["n_rows"]), "n_classes": int(data["n_classes"]),
            "opens_at": parse_utc(data.get("opens_at")), "closes_at": parse_utc(data.get("closes_at")),
            "is_open": bool(data.get("is_open", True)), "data": dict(data),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompetitionSummary:
        return cls(**cls._fields(data))


@dataclass(frozen=True)
class Competition(CompetitionSummary):
    """``GET competitions/{slug}/``: what a participant may know of a competition."""

    description: str = ""
    higher_is_better: bool = False
    score_decimals: int | None = None
    released_decimals: int | None = None
    eps: float = 1e-15
    arithmetic: str = "float64"
    public_fraction: float = 1.0
    daily_limit: int | None = None
    total_limit: int | None = None
    disclosed_defenses: str = ""
    also_report: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    #: Features per hidden row of a model competition (participants upload ONNX models: :meth:`submit_model`).
    n_features: int = 0

    @property
    def takes_models(self) -> bool:
        return self.n_features > 0

    @classmethod
    def _fields(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        fields = CompetitionSummary._fields(data)
        fields.update(
            description=str(data.get("description") or ""),
            higher_is_better=bool(data.get("higher_is_better", False)),
            score_decimals=_int(data.get("score_decimals")),
            # A site that predates the field releases at its displayed decimals.
            released_decimals=_int(data.get("released_decimals", data.get("score_decimals"))),
            eps=float(data.get("eps", 1e-15)),
            arithmetic=str(data.get("arithmetic") or "float64"),
            public_fraction=float(data.get("public_fraction", 1.0)),
            daily_limit=_int(data.get("daily_limit")),
            total_limit=_int(data.get("total_limit")),
            disclosed_defenses=str(data.get("disclosed_defenses") or ""),
            also_report=tuple(data.get("also_report") or ()),
            columns=tuple((data.get("submission_format") or {}).get("columns") or ()),
            n_features=int(data.get("n_features") or 0),
        )
        return fields

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Competition:
        return cls(**cls._fields(data))


@dataclass(frozen=True)
class HostCompetition(Competition):
    """The host's view of a competition: the metadata plus its defense chain (never its secret or labels)."""

    defenses: tuple[dict[str, Any], ...] = ()
    same_file_same_score: bool = False
    host: str | None = None
    listed: bool = True

    @classmethod
    def _fields(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        fields = Competition._fields(data)
        fields.update(
            defenses=tuple(data.get("defenses") or ()),
            same_file_same_score=bool(data.get("same_file_same_score", False)),
            host=data.get("host"),
            listed=bool(data.get("listed", True)),
        )
        return fields

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HostCompetition:
        return cls(**cls._fields(data))


@dataclass(frozen=True)
class SampleSubmission:
    """The CSV template: its header, the hidden ids in order, and the text itself."""

    header: tuple[str, ...]
    ids: tuple[str, ...]
    text: str

    @classmethod
    def parse(cls, text: str) -> SampleSubmission:
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if not header:
            raise ClientError("the sample submission is empty")
        ids = tuple(row[0].strip() for row in reader if row)
        return cls(tuple(h.strip() for h in header), ids, text)


@dataclass(frozen=True)
class DataFile:
    """A file the host attached to a competition: what a participant downloads (``url``, signed in)."""

    name: str
    size: int
    sha256: str
    description: str
    created_at: datetime | None
    url: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DataFile:
        return cls(str(data["name"]), int(data["size"]), str(data["sha256"]), str(data.get("description", "")),
                   parse_utc(data.get("created_at")), str(data.get("url", "")))


def _plain_file_name(name: str) -> str:
    """``name`` if it names one file in a directory (never a path out of it), else :class:`ClientError`."""
    if not name or name in {".", ".."} or name.startswith(".") or "/" in name or "\\" in name or "\x00" in name:
        raise ClientError(f"the site names a data file {name!r}, which is not a plain file name")
    return name


@dataclass(frozen=True)
class Quota:
    """``GET competitions/{slug}/quota/``: used and remaining submissions, and the next UTC reset."""

    daily_limit: int | None
    used_today: int
    remaining_today: int | None
    total_limit: int | None
    used_total: int
    remaining_total: int | None
    resets_at: datetime | None
    data: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Quota:
        return cls(
            daily_limit=_int(data.get("daily_limit")), used_today=int(data.get("used_today", 0)),
            remaining_today=_int(data.get("remaining_today")), total_limit=_int(data.get("total_limit")),
            used_total=int(data.get("used_total", 0)), remaining_total=_int(data.get("remaining_total")),
            resets_at=parse_utc(data.get("resets_at")), data=dict(data),
        )


@dataclass(frozen=True)
class Upload:
    """The answer to an accepted upload: the submission's ``id`` and status, the quota after it, and whether
    the site recognised a repeated ``Idempotency-Key`` (``replayed``: no new submission, nothing charged)."""

    id: int
    status: str
    url: str
    quota: Quota | None
    replayed: bool
    idempotency_key: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, key: str, replayed: bool = False) -> Upload:
        quota = data.get("quota")
        return cls(
            id=int(data["id"]), status=str(data.get("status") or ""), url=str(data.get("url") or ""),
            quota=Quota.from_json(quota) if isinstance(quota, Mapping) else None,
            replayed=bool(data.get("replayed", replayed)), idempotency_key=key,
        )


@dataclass(frozen=True)
class Submission:
    """``GET submissions/{id}/``: one of your submissions, released scores only."""

    id: int
    competition: str
    status: str
    public_score: float | None
    public_score_text: str
    public_message: str
    private_score: float | None
    private_score_text: str
    extra_scores: dict[str, dict[str, str]]
    error: str
    selected_for_final: bool
    upload_name: str
    created_at: datetime | None
    finished_at: datetime | None
    data: dict[str, Any] = field(repr=False, compare=False)
    #: The sybil screen's hold: ``"held"`` (held for the host's review: scored, no score released, not selectable as
    #: a final), ``"releasing"`` (the host let it go; its score follows), ``"withheld"`` (never released); else None.
    review: str | None = None

    @property
    def finished(self) -> bool:
        """Scored or failed: the status will not change any more (a held submission the host just released is
        scored again, so it is not finished until then)."""
        return self.status in ("scored", "failed") and self.review != "releasing"

    @property
    def held(self) -> bool:
        """Held for the host's review (or on its way out of the hold): no score yet, whatever the status says."""
        return self.review in ("held", "releasing")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Submission:
        return cls(
            id=int(data["id"]), competition=str(data.get("competition") or ""), status=str(data.get("status") or ""),
            public_score=_float(data.get("public_score")), public_score_text=str(data.get("public_score_text") or ""),
            public_message=str(data.get("public_message") or ""), private_score=_float(data.get("private_score")),
            private_score_text=str(data.get("private_score_text") or ""),
            extra_scores=dict(data.get("extra_scores") or {}), error=str(data.get("error") or ""),
            selected_for_final=bool(data.get("selected_for_final", False)),
            upload_name=str(data.get("upload_name") or ""), created_at=parse_utc(data.get("created_at")),
            finished_at=parse_utc(data.get("finished_at")), data=dict(data),
            review=None if data.get("review") is None else str(data["review"]),
        )


@dataclass(frozen=True)
class Prediction:
    """The label-only endpoint's answer: the predicted class of each input and the budget."""

    labels: list[int]
    queries_used: int
    queries_left: int
    query_budget: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Prediction:
        return cls([int(v) for v in data.get("labels", [])], int(data.get("queries_used", 0)),
                   int(data.get("queries_left", 0)), int(data.get("query_budget", 0)))


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    participant: str
    score: float
    score_text: str
    entries: int
    submitted_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LeaderboardRow:
        return cls(
            rank=int(data["rank"]), participant=str(data["participant"]), score=float(data["score"]),
            score_text=str(data["score_text"]), entries=int(data.get("entries", 0)),
            submitted_at=parse_utc(data.get("submitted_at")),
        )


@dataclass(frozen=True)
class Leaderboard:
    """``GET competitions/{slug}/leaderboard/?board=…``: the released board."""

    competition: str
    board: str
    metric: str
    higher_is_better: bool
    closed: bool
    rows: tuple[LeaderboardRow, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Leaderboard:
        return cls(
            competition=str(data["competition"]), board=str(data["board"]), metric=str(data["metric"]),
            higher_is_better=bool(data["higher_is_better"]), closed=bool(data["closed"]),
            rows=tuple(LeaderboardRow.from_json(row) for row in data["rows"]),
        )


@dataclass(frozen=True)
class TeamInvitation:
    """A team's invitation (``POST teams/{id}/invitations/``, ``GET invitations/``)."""

    id: int
    team: int
    team_name: str
    competition: str
    invitee: str
    status: str
    created_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TeamInvitation:
        return cls(
            id=int(data["id"]), team=int(data["team"]), team_name=str(data.get("team_name", "")),
            competition=str(data.get("competition", "")), invitee=str(data.get("invitee", "")),
            status=str(data.get("status", "")), created_at=parse_utc(data.get("created_at")),
        )


@dataclass(frozen=True)
class Team:
    """A team of a competition: its members (public) and, for its members, its pending invitations."""

    id: int
    competition: str
    name: str
    members: tuple[str, ...]
    created_at: datetime | None
    is_member: bool = False
    invitations: tuple[TeamInvitation, ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Team:
        return cls(
            id=int(data["id"]), competition=str(data.get("competition", "")), name=str(data["name"]),
            members=tuple(str(m) for m in data.get("members", [])), created_at=parse_utc(data.get("created_at")),
            is_member=bool(data.get("is_member", False)),
            invitations=tuple(TeamInvitation.from_json(i) for i in data.get("invitations", [])),
        )


@dataclass(frozen=True)
class TeamMerge:
    """``POST teams/{id}/merge/``: ``merged`` is False while the other team has not agreed yet."""

    merged: bool
    team: Team

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TeamMerge:
        return cls(merged=bool(data["merged"]), team=Team.from_json(data["team"]))


@dataclass(frozen=True)
class HostSubmission:
    """Host only: one submission of any participant, raw scores next to released ones."""

    id: int
    participant: str
    status: str
    raw_public: float | None
    raw_public_text: str
    public_score: float | None
    public_score_text: str
    raw_private: float | None
    raw_private_text: str
    private_score: float | None
    private_score_text: str
    defense_notes: list[Any]
    error: str
    selected_for_final: bool
    attempts: int
    created_at: datetime | None
    finished_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HostSubmission:
        return cls(
            id=int(data["id"]), participant=str(data["participant"]), status=str(data["status"]),
            raw_public=_float(data.get("raw_public")), raw_public_text=str(data.get("raw_public_text") or ""),
            public_score=_float(data.get("public_score")), public_score_text=str(data.get("public_score_text") or ""),
            raw_private=_float(data.get("raw_private")), raw_private_text=str(data.get("raw_private_text") or ""),
            private_score=_float(data.get("private_score")),
            private_score_text=str(data.get("private_score_text") or ""),
            defense_notes=list(data.get("defense_notes") or []), error=str(data.get("error") or ""),
            selected_for_final=bool(data.get("selected_for_final", False)), attempts=int(data.get("attempts", 0)),
            created_at=parse_utc(data.get("created_at")), finished_at=parse_utc(data.get("finished_at")),
        )


@dataclass(frozen=True)
class ScreenSettings:
    """Host only: a competition's sybil screen (``mode`` ``off``, ``flag`` or ``hold``; a cluster is flagged from
    ``threshold`` suspicion up)."""

    mode: str
    threshold: float

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScreenSettings:
        return cls(mode=str(data["mode"]), threshold=float(data["threshold"]))


@dataclass(frozen=True)
class ScreenEvidence:
    """One of the screen's reasons for a cluster: its kind (``probe_like``, ``complementary``, ``near_identical``,
    ``same_address``, ...), the accounts it links and a sentence; never a label or a score."""

    kind: str
    accounts: tuple[str, ...]
    detail: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ScreenEvidence:
        return cls(kind=str(data.get("kind", "")), accounts=tuple(str(a) for a in data.get("accounts") or ()),
                   detail=str(data.get("detail", "")))


#: The host's decisions on a suspected cluster (``POST screen/clusters/{id}/{decision}/``).
SCREEN_DECISIONS = ("dismiss", "merge", "disqualify", "ban")


@dataclass(frozen=True)
class SuspectCluster:
    """Host only: accounts the sybil screen suspects of being one person, why, and what became of their
    submissions (``held`` waiting for a decision, ``released`` by one, ``withheld`` for good)."""

    id: int
    status: str  # open, dismissed, merged, disqualified or banned
    accounts: tuple[str, ...]  # usernames, or "team <name>"
    suspicion: float
    evidence: tuple[ScreenEvidence, ...]
    held: int
    released: int
    withheld: int
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    decided_at: datetime | None
    decision_note: str

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SuspectCluster:
        return cls(
            id=int(data["id"]), status=str(data["status"]), accounts=tuple(str(a) for a in data.get("accounts") or ()),
            suspicion=float(data.get("suspicion", 0.0)),
            evidence=tuple(ScreenEvidence.from_json(item) for item in data.get("evidence") or ()),
            held=int(data.get("held", 0)), released=int(data.get("released", 0)),
            withheld=int(data.get("withheld", 0)), first_seen_at=parse_utc(data.get("first_seen_at")),
            last_seen_at=parse_utc(data.get("last_seen_at")), decided_at=parse_utc(data.get("decided_at")),
            decision_note=str(data.get("decision_note") or ""),
        )


@dataclass(frozen=True)
class Leakage:
    """Host only: per participant, submissions and the gap between released and raw scores."""

    participant: str
    submissions: int
    scored: int
    failed: int
    mean_abs_public_error: float | None
    max_abs_public_error: float | None
    mean_abs_private_error: float | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Leakage:
        return cls(
            participant=str(data["participant"]), submissions=int(data["submissions"]), scored=int(data["scored"]),
            failed=int(data["failed"]), mean_abs_public_error=_float(data.get("mean_abs_public_error")),
            max_abs_public_error=_float(data.get("max_abs_public_error")),
            mean_abs_private_error=_float(data.get("mean_abs_private_error")),
        )


@dataclass(frozen=True)
class Audit:
    """Host only: a leakage audit of a competition (``host/competitions/{slug}/audit/``): its status
    (``queued``, ``running``, ``done``, ``failed``), progress in percent, the verdict and, once done, the full
    result (curves per attack, quota, majority rate, honest utility)."""

    id: int
    status: str
    progress: int
    step: str
    verdict: str
    error: str
    url: str
    result: dict[str, Any] | None

    @property
    def finished(self) -> bool:
        return self.status in {"done", "failed"}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Audit:
        result = data.get("result")
        return cls(
            id=int(data["id"]), status=str(data["status"]), progress=int(data.get("progress") or 0),
            step=str(data.get("step") or ""), verdict=str(data.get("verdict") or ""),
            error=str(data.get("error") or ""), url=str(data["url"]),
            result=dict(result) if isinstance(result, Mapping) else None,
        )


@dataclass(frozen=True)
class Participant:
    """``POST host/participants/``: the account's name and API token; ``created`` is false when the site
    returned an account the same host had made before."""

    username: str
    token: str
    created: bool


class _Unset:
    """The type of :data:`UNSET`: an option the caller did not give (the site's default applies)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()

Labels = str | bytes | Mapping[str, int] | Iterable[tuple[str, int]]


def labels_csv(labels: Labels) -> bytes:
    """A host's labels as the site's ``id,label`` CSV: CSV text or bytes as given, else ``(id, label)`` pairs
    (or a mapping id → label).

    >>> labels_csv([("a", 1), ("b", 0)])
    b'id,label\\na,1\\nb,0\\n'
    """
    if isinstance(labels, bytes):
        return labels
    if isinstance(labels, str):
        return labels.encode()
    pairs = labels.items() if isinstance(labels, Mapping) else labels
    return ("id,label\n" + "".join(f"{row_id},{int(label)}\n" for row_id, label in pairs)).encode()


# --- The client -----------------------------------------------------------------------------------------


@dataclass
class _Retry:
    """One failed attempt worth another: why, the delay the server asked for, and whether it may have been
    processed anyway (the answer was lost, not refused)."""

    problem: str
    delay: float | None
    ambiguous: bool


class LeaderboardClient:
    """One site (``url``, e.g. ``http://127.0.0.1:8000``), seen with one API ``token`` (``None``: anonymous).

    ``timeout`` (seconds, per request), ``retries`` (overrides ``backoff.retries``) and ``backoff`` shape the
    retries of transient failures; ``max_retry_after`` is the longest ``Retry-After`` honoured on a 5xx or a
    rate limit (a longer one gives up at once). ``on_quota`` (``"wait"`` or ``"stop"``) is what an upload does
    on a 429, overridable per call; ``max_quota_wait`` is the longest quota wait, and ``on_wait(seconds,
    reason)`` is told before each. ``clock`` (the current UTC time) and ``sleep`` are injectable for tests;
    ``session`` may be a prepared :class:`requests.Session`.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int | None = None,
        backoff: Backoff | None = None,
        poll: PollSchedule | None = None,
        on_quota: str = "stop",
        max_quota_wait: float = 36 * 3600.0,
        max_retry_after: float = 600.0,
        retry_statuses: Iterable[int] = RETRY_STATUSES,
        session: requests.Session | None = None,
        clock: Callable[[], datetime] | None = None,
        sleep: Callable[[float], None] | None = None,
        on_wait: Callable[[float, str], None] | None = None,
    ) -> None:
        _check_on_quota(on_quota)
        self.base = url.rstrip("/")
        self.timeout = timeout
        self.backoff = backoff or Backoff()
        if retries is not None:
            self.backoff = Backoff(self.backoff.initial, self.backoff.factor, self.backoff.maximum, retries)
        self.poll = poll or PollSchedule()
        self.on_quota = on_quota
        self.max_quota_wait = max_quota_wait
        self.max_retry_after = max_retry_after
        self.retry_statuses = frozenset(retry_statuses)
        self.clock = clock or (lambda: datetime.now(UTC))
        self._sleep = sleep or time.sleep
        self.on_wait = on_wait
        self.session = session or requests.Session()
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Token {token}"
        self.stats = ClientStats()

    def __repr__(self) -> str:
        return f"LeaderboardClient({self.base!r})"

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> LeaderboardClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- participant side -------------------------------------------------------------------------------

    def competitions(self) -> list[CompetitionSummary]:
        """Every competition's public summary."""
        return [CompetitionSummary.from_json(item) for item in self._get_list("/api/v1/competitions/")]

    def competition(self, slug: str) -> Competition:
        """A competition's public metadata (:class:`NotFound` when there is none)."""
        return Competition.from_json(self._get_object(f"/api/v1/competitions/{slug}/"))

    def sample_submission(self, slug: str) -> SampleSubmission:
        """The CSV template: header and hidden ids, in the order uploads are expected."""
        response = self._request("GET", f"/api/v1/competitions/{slug}/sample-submission/")
        return SampleSubmission.parse(response.content.decode("utf-8-sig"))

    def data_files(self, slug: str) -> list[DataFile]:
        """The competition's data files (name, size, SHA-256, description), by name."""
        return [DataFile.from_json(item) for item in self._get_list(f"/api/v1/competitions/{slug}/data/")]

    def download_data_file(self, slug: str, name: str, dest: str | os.PathLike[str] = ".") -> Path:
        """Download one data file (signed in) to ``dest``: a directory (the file keeps its name there) or a file
        path. Streamed to a temporary file beside it, checked against the SHA-256 the site states, then moved into
        place, so ``dest`` is never a partial file. Returns the path written."""
        from urllib.parse import quote

        target = Path(dest)
        if target.is_dir():
            target = target / _plain_file_name(name)
        path = f"/api/v1/competitions/{slug}/data/{quote(name, safe='')}"
        response = self._request("GET", path, stream=True, headers={"Accept": "*/*"})
        digest = hashlib.sha256()
        handle, temporary = tempfile.mkstemp(prefix=".download-", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as out, response:
                for chunk in response.iter_content(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
            stated = response.headers.get("ETag", "").strip('"')
            if stated and stated != digest.hexdigest():
                raise ClientError(f"GET {path}: the file's SHA-256 is {digest.hexdigest()}, the site stated {stated}")
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target

    def submit_csv(
        self,
        slug: str,
        data: bytes | str,
        *,
        filename: str | None = None,
        idempotency_key: str | None = None,
        on_quota: str | None = None,
        recover_by_name: bool = False,
    ) -> Upload:
        """Upload a CSV file (multipart ``file``); the accepted submission (status ``queued``).

        ``filename`` defaults to ``upload-<key>.csv``. ``idempotency_key`` defaults to a fresh UUID; pass your
        own to make a later call a retry of this one. ``recover_by_name``: after an answer lost in transit,
        first look among your submissions for this upload's (unique!) file name before sending it again — for
        sites that predate the ``Idempotency-Key`` header. Raises :class:`UploadRejected` (400),
        :class:`QuotaExceeded` (429 with ``on_quota="stop"``), :class:`Forbidden` (not open), ...
        """
        key = idempotency_key or str(uuid.uuid4())
        name = filename or f"upload-{key}.csv"
        body = data.encode() if isinstance(data, str) else data
        return self._upload(
            slug, key, on_quota, {"files": {"file": (name, body, "text/csv")}}, name if recover_by_name else None
        )

    def submit_model(
        self,
        slug: str,
        data: bytes,
        *,
        filename: str | None = None,
        idempotency_key: str | None = None,
        on_quota: str | None = None,
    ) -> Upload:
        """Upload an ONNX model to a model competition (multipart ``file``); the site runs it on the hidden
        features. A refused graph is :class:`UploadRejected` naming the problem. Otherwise as :meth:`submit_csv`."""
        key = idempotency_key or str(uuid.uuid4())
        name = filename or f"model-{key}.onnx"
        return self._upload(
            slug, key, on_quota, {"files": {"file": (name, data, "application/octet-stream")}}, None
        )

    def submit_json(
        self, slug: str, predictions: Any, *, idempotency_key: str | None = None, on_quota: str | None = None
    ) -> Upload:
        """Upload JSON predictions: ``predictions`` is sent as ``{"predictions": predictions}`` (a positional
        list, ``{id: value}``, or a list of row objects), or as is when it is ``bytes`` (an encoded document,
        e.g. numbers written with more digits than a float carries). Otherwise as :meth:`submit_csv`."""
        key = idempotency_key or str(uuid.uuid4())
        body = predictions if isinstance(predictions, bytes) else json.dumps({"predictions": predictions}).encode()
        return self._upload(slug, key, on_quota, {"data": body, "headers": {"Content-Type": "application/json"}}, None)

    def inversion_terms(self, slug: str) -> dict[str, Any]:
        """A model-inversion challenge's public terms (the detail's ``model_inversion``; :class:`NotFound` for
        any other competition)."""
        terms = self._get_object(f"/api/v1/competitions/{slug}/").get("model_inversion")
        if not isinstance(terms, dict):
            raise NotFound(f"{slug} is not a model-inversion challenge", status=404)
        return terms

    def predict(self, slug: str, inputs: Any) -> Prediction:
        """Ask a model-inversion challenge's label-only endpoint for the predicted class of each input (one
        query of your budget each). Raises :class:`QueryBudgetExhausted` when the budget cannot cover them. A
        request whose answer was lost is not re-sent (it may have been charged): :class:`TransientError`."""
        path = f"/api/v1/competitions/{slug}/predict/"
        body = {"inputs": inputs.tolist() if hasattr(inputs, "tolist") else inputs}
        attempt = 0
        while True:
            outcome = self._attempt("POST", path, quota=True, json=body)
            if isinstance(outcome, requests.Response):
                data = self._object(outcome, path) if outcome.status_code != 429 else _body(outcome)
                if outcome.status_code == 429:
                    data = data if isinstance(data, dict) else {}
                    raise QueryBudgetExhausted(str(data.get("detail") or "query budget exhausted"),
                                               queries_left=_int(data.get("queries_left")) or 0)
                return Prediction.from_json(data)
            if outcome.ambiguous:
                raise TransientError(f"POST {path}: {outcome.problem}; not re-sent (it may have been charged)")
            self._pause(attempt, outcome, "POST", path)
            attempt += 1

    def submission(self, submission_id: int) -> Submission:
        """One of your submissions: its status and released scores."""
        return Submission.from_json(self._get_object(f"/api/v1/submissions/{submission_id}/"))

    def submissions(self, slug: str) -> list[Submission]:
        """Your submissions to a competition, newest first."""
        return [Submission.from_json(item) for item in self._get_list(f"/api/v1/competitions/{slug}/submissions/")]

    def wait(
        self,
        submission_id: int,
        *,
        timeout: float | None = None,
        schedule: PollSchedule | None = None,
        first_delay: float = 0.0,
        raise_on_failure: bool = False,
    ) -> Submission:
        """Poll a submission until it is scored or failed (``schedule``: the client's :class:`PollSchedule`;
        ``timeout`` overrides its limit; ``first_delay`` waits before the first poll). Raises
        :class:`WaitTimeout` when it takes longer, and :class:`SubmissionFailed` on a failure if asked to."""
        schedule = schedule or self.poll
        limit = schedule.timeout if timeout is None else timeout
        started = time.perf_counter()
        if first_delay > 0:
            self.sleep(first_delay)
        delay = schedule.initial
        while True:
            found = self.submission(submission_id)
            self.stats.polls += 1
            if found.finished:
                if raise_on_failure and found.status == "failed":
                    raise SubmissionFailed(submission_id, found.error or "no reason given")
                return found
            elapsed = time.perf_counter() - started
            if elapsed >= limit:
                raise WaitTimeout(
                    f"submission {submission_id} is still {found.status!r} after {elapsed:.0f} s; is a worker running?"
                )
            self.sleep(delay)
            delay = min(delay * schedule.factor, schedule.maximum)

    def quota(self, slug: str) -> Quota:
        """Your used and remaining submissions and the next UTC reset."""
        return Quota.from_json(self._get_object(f"/api/v1/competitions/{slug}/quota/"))

    def leaderboard(self, slug: str, board: str = "public") -> Leaderboard:
        """A released board (``private`` only after the close, or for the host), every row: the site answers a
        page of rows at a time and this follows the ``Link`` header's ``next``."""
        page: str | None = f"/api/v1/competitions/{slug}/leaderboard/?board={_board(board)}"
        first: dict[str, Any] | None = None
        rows: list[Any] = []
        seen: set[str] = set()
        while page is not None and page not in seen:
            seen.add(page)
            response = self._request("GET", page)
            data = self._object(response, page)
            first = first or data
            rows.extend(data.get("rows") or [])
            page = _next_page(response, self.base)
        assert first is not None
        return Leaderboard.from_json({**first, "rows": rows})

    def leaderboard_csv(self, slug: str, board: str = "public") -> str:
        """A released board as the site's CSV export."""
        path = f"/api/v1/competitions/{slug}/leaderboard/?board={_board(board)}&format=csv"
        return self._request("GET", path, headers={"Accept": "text/csv"}).content.decode("utf-8-sig")

    def select_final(self, submission_id: int, selected: bool | None = True) -> Submission:
        """Select (``True``), unselect (``False``) or toggle (``None``) a scored submission for the private
        board (at most two)."""
        path = f"/api/v1/submissions/{submission_id}/select/"
        return Submission.from_json(self._object(self._request("POST", path, json={"selected": selected}), path))

    # --- teams ------------------------------------------------------------------------------------------
    # Not retried blindly: a POST whose answer was lost may have landed, which the site then reports as a
    # :class:`Conflict` (the name taken, the invitation pending or answered).

    def whoami(self) -> str:
        """``GET auth/me/``: the username behind this client's token (:class:`NotAuthenticated` for a bad one)."""
        return str(self._get_object("/api/v1/auth/me/")["username"])

    def teams(self, slug: str) -> list[Team]:
        """The competition's teams and their members."""
        return [Team.from_json(row) for row in self._get_list(f"/api/v1/competitions/{slug}/teams/")]

    def team(self, team_id: int) -> Team:
        """One team (its pending invitations only when you are a member)."""
        return Team.from_json(self._get_object(f"/api/v1/teams/{int(team_id)}/"))

    def create_team(self, slug: str, name: str) -> Team:
        """Create a team in a competition, with you as its first member (:class:`Conflict` when the name is
        taken or you are already in a team there)."""
        path = f"/api/v1/competitions/{slug}/teams/"
        return Team.from_json(self._object(self._request("POST", path, json={"name": name}), path))

    def invite(self, team_id: int, username: str) -> TeamInvitation:
        """Invite a user to your team (members only)."""
        path = f"/api/v1/teams/{int(team_id)}/invitations/"
        return TeamInvitation.from_json(self._object(self._request("POST", path, json={"username": username}), path))

    def invitations(self) -> list[TeamInvitation]:
        """Your pending invitations, in every competition."""
        return [TeamInvitation.from_json(row) for row in self._get_list("/api/v1/invitations/")]

    def accept_invitation(self, invitation_id: int) -> Team:
        """Join the inviting team (:class:`Conflict` when you have submissions that do not fit its quota,
        :class:`Forbidden` after the merger deadline)."""
        path = f"/api/v1/invitations/{int(invitation_id)}/accept/"
        return Team.from_json(self._object(self._request("POST", path), path))

    def decline_invitation(self, invitation_id: int) -> TeamInvitation:
        path = f"/api/v1/invitations/{int(invitation_id)}/decline/"
        return TeamInvitation.from_json(self._object(self._request("POST", path), path))

    def leave_team(self, team_id: int) -> None:
        """Leave a team before its first submission."""
        self._request("POST", f"/api/v1/teams/{int(team_id)}/leave/")

    def merge_teams(self, team_id: int, other_team_id: int) -> TeamMerge:
        """Ask to merge team ``other_team_id`` into your team ``team_id``, or agree to its request."""
        path = f"/api/v1/teams/{int(team_id)}/merge/"
        return TeamMerge.from_json(self._object(self._request("POST", path, json={"team": int(other_team_id)}), path))

    # --- host side --------------------------------------------------------------------------------------

    def add_data_file(
        self, slug: str, data: bytes | str | os.PathLike[str], *, name: str | None = None, description: str = "",
        replace: bool = False,
    ) -> DataFile:
        """``POST host/competitions/{slug}/data/``: attach a file participants download. ``data`` is the bytes
        or a path (``name`` defaults to its file name). Every signed-in participant may read it."""
        if isinstance(data, (str, os.PathLike)) and not isinstance(data, bytes):
            source = Path(data)
            content, name = source.read_bytes(), name or source.name
        else:
            content = data
        if not name:
            raise ClientError("name the data file (name=...)")
        path = f"/api/v1/host/competitions/{slug}/data/"
        response = self._request("POST", path, files={"file": (name, content)},
                                 data={"name": name, "description": description, "replace": json.dumps(replace)})
        return DataFile.from_json(self._object(response, path))

    def remove_data_file(self, slug: str, name: str) -> None:
        """``DELETE host/competitions/{slug}/data/{name}``."""
        from urllib.parse import quote

        self._request("DELETE", f"/api/v1/host/competitions/{slug}/data/{quote(name, safe='')}")

    def create_competition(
        self,
        slug: str,
        labels: Labels,
        *,
        title: str | _Unset = UNSET,
        description: str | _Unset = UNSET,
        metric: str | _Unset = UNSET,
        eps: float | _Unset = UNSET,
        score_decimals: int | _Unset | None = UNSET,
        public_fraction: float | _Unset = UNSET,
        daily_limit: int | _Unset | None = UNSET,
        total_limit: int | _Unset | None = UNSET,
        opens_at: datetime | _Unset | None = UNSET,
        closes_at: datetime | _Unset | None = UNSET,
        arithmetic: str | _Unset = UNSET,
        defenses: list[dict[str, Any]] | _Unset = UNSET,
        disclosed_defenses: str | _Unset = UNSET,
        same_file_same_score: bool | _Unset = UNSET,
        also_report: Iterable[str] | _Unset = UNSET,
        secret: int | _Unset | None = UNSET,
        features: bytes | str | None = None,
        listed: bool | _Unset = UNSET,
        exist_ok: bool = False,
    ) -> HostCompetition:
        """``POST host/competitions/``: a competition over ``labels`` (CSV text or bytes with header
        ``id,label``, ``(id, label)`` pairs, or a mapping), hosted by this client's user. With ``features``
        (an ``id,f1,...,fd`` CSV of the same ids) it is a model competition: participants upload ONNX models.

        Every option left out takes the site's default; ``None`` means none (full precision, no limit, never
        closes). ``listed=False`` keeps it off the competition lists (reached by its URL only). ``secret`` fixes the
        competition's secret seed (its public/private split and defense
        randomness, e.g. to replay an offline game cell); the site never shows it back. With ``exist_ok``, a
        competition of that slug this host may see is returned as it is instead of being created.
        """
        if exist_ok:
            try:
                return self.host_competition(slug)
            except NotFound:
                pass
        options: dict[str, Any] = {
            "title": title, "description": description, "metric": metric, "eps": eps,
            "score_decimals": score_decimals, "public_fraction": public_fraction, "daily_limit": daily_limit,
            "total_limit": total_limit, "opens_at": opens_at, "closes_at": closes_at, "arithmetic": arithmetic,
            "defenses": defenses, "disclosed_defenses": disclosed_defenses,
            "same_file_same_score": same_file_same_score, "secret": secret, "listed": listed,
        }
        form: list[tuple[str, str]] = [("slug", slug)]
        for name, value in options.items():
            if not isinstance(value, _Unset):
                form.append((name, _form_value(value)))
        if not isinstance(also_report, _Unset):
            form.extend(("also_report", str(metric_name)) for metric_name in also_report)
        path = "/api/v1/host/competitions/"
        files = {"labels": ("labels.csv", labels_csv(labels), "text/csv")}
        if features is not None:
            body = features.encode() if isinstance(features, str) else features
            files["features"] = ("features.csv", body, "text/csv")
        response = self._request("POST", path, data=form, files=files)
        return HostCompetition.from_json(self._object(response, path))

    def host_competition(self, slug: str) -> HostCompetition:
        """The host's view of one of its competitions (:class:`Forbidden` for someone else's)."""
        return HostCompetition.from_json(self._get_object(f"/api/v1/host/competitions/{slug}/"))

    def clean_games(self, *, dry_run: bool = False) -> dict[str, Any]:
        """``POST host/games/clean/``: remove the competitions this host's live games made, their submissions and
        attacker accounts; the answer lists them (``competitions``, ``submissions``, ``accounts``, ``summary``)."""
        path = "/api/v1/host/games/clean/"
        return self._object(self._request("POST", path, json={"dry_run": dry_run}), path)

    def update_competition(self, slug: str, **settings: Any) -> HostCompetition:
        """``PATCH host/competitions/{slug}/``: change the settings given (``closes_at``, ``listed``, ``daily_limit``,
        ...; the site validates them as at creation and :class:`BadRequest` names a refused one)."""
        path = f"/api/v1/host/competitions/{slug}/"
        body = {name: value.isoformat() if isinstance(value, datetime) else value for name, value in settings.items()}
        return HostCompetition.from_json(self._object(self._request("PATCH", path, json=body), path))

    def set_defenses(
        self, slug: str, defenses: list[dict[str, Any]], *, disclosed_defenses: str | None = None
    ) -> HostCompetition:
        """Replace the defense chain (validated by the site; :class:`BadRequest` names the problem), and
        optionally what participants are told about it."""
        path = f"/api/v1/host/competitions/{slug}/defenses/"
        body: dict[str, Any] = {"defenses": defenses}
        if disclosed_defenses is not None:
            body["disclosed_defenses"] = disclosed_defenses
        return HostCompetition.from_json(self._object(self._request("PUT", path, json=body), path))

    def host_submissions(self, slug: str) -> list[HostSubmission]:
        """Every submission of the competition, raw scores next to released ones, newest first."""
        return [HostSubmission.from_json(i) for i in self._get_list(f"/api/v1/host/competitions/{slug}/submissions/")]

    def leakage(self, slug: str) -> list[Leakage]:
        """Per participant: submissions, failures and the released-vs-raw gap."""
        return [Leakage.from_json(item) for item in self._get_list(f"/api/v1/host/competitions/{slug}/leakage/")]

    def start_audit(
        self, slug: str, *, budget: int | None = None, accounts: int | Sequence[int] | None = None, seed: int = 0
    ) -> Audit:
        """``POST host/competitions/{slug}/audit/``: queue a leakage audit (a :class:`Conflict` while another
        audit of the competition is queued or running); poll :meth:`audit` with its id until it is finished.
        ``accounts``: the account counts to audit, one or several (default: the site's axis, 1 to 1,000)."""
        path = f"/api/v1/host/competitions/{slug}/audit/"
        body: dict[str, Any] = {"seed": seed}
        if accounts is not None:
            body["accounts"] = accounts if isinstance(accounts, int) else [int(a) for a in accounts]
        if budget is not None:
            body["budget"] = budget
        return Audit.from_json(self._object(self._request("POST", path, json=body), path))

    def audit(self, slug: str, audit_id: int | None = None) -> Audit:
        """One leakage audit of ``slug`` (the latest when ``audit_id`` is ``None``; :class:`NotFound` if none)."""
        suffix = "" if audit_id is None else f"{int(audit_id)}/"
        return Audit.from_json(self._get_object(f"/api/v1/host/competitions/{slug}/audit/{suffix}"))

    # --- the sybil screen (host side) -------------------------------------------------------------------

    def screen_settings(self, slug: str) -> ScreenSettings:
        """``GET competitions/{slug}/screen/``: the competition's sybil screen (host only: :class:`Forbidden`)."""
        return ScreenSettings.from_json(self._get_object(f"/api/v1/competitions/{slug}/screen/"))

    def set_screen(self, slug: str, *, mode: str | None = None, threshold: float | None = None) -> ScreenSettings:
        """``PATCH competitions/{slug}/screen/``: change the mode (``off``, ``flag``, ``hold``) and/or the
        threshold (0 to 1); what is left out stays. :class:`BadRequest` names a refused value. Changing the mode
        releases nothing: held submissions wait for a decision on their cluster."""
        body: dict[str, Any] = {}
        if mode is not None:
            body["mode"] = mode
        if threshold is not None:
            body["threshold"] = threshold
        path = f"/api/v1/competitions/{slug}/screen/"
        return ScreenSettings.from_json(self._object(self._request("PATCH", path, json=body), path))

    def screen_clusters(self, slug: str) -> list[SuspectCluster]:
        """``GET competitions/{slug}/screen/clusters/``: the suspected clusters with their evidence, open ones
        first, newest first (host only: :class:`Forbidden`)."""
        rows = self._get_list(f"/api/v1/competitions/{slug}/screen/clusters/")
        return [SuspectCluster.from_json(row) for row in rows]

    def decide_cluster(self, cluster_id: int, decision: str) -> SuspectCluster:
        """``POST screen/clusters/{id}/{decision}/``: one of :data:`SCREEN_DECISIONS` on an open cluster; the
        cluster after it. ``dismiss`` and ``merge`` (into one team) have the worker release its held submissions,
        in upload order; ``disqualify`` takes its accounts off the boards and never releases them; ``ban`` also
        deactivates them. :class:`Conflict` when the cluster was already decided or the decision cannot be carried
        out (the teams' rules for a merge, banning staff or the host); :class:`NotFound` for a cluster that is
        not yours. A transient failure is retried: when the lost answer's decision had landed, the retry answers
        :class:`Conflict` (already decided)."""
        if decision not in SCREEN_DECISIONS:
            raise ValueError(f"unknown decision {decision!r}; use one of {', '.join(SCREEN_DECISIONS)}")
        path = f"/api/v1/screen/clusters/{int(cluster_id)}/{decision}/"
        return SuspectCluster.from_json(self._object(self._request("POST", path), path))

    def dismiss_cluster(self, cluster_id: int) -> SuspectCluster:
        """Not one person after all: release the cluster's held submissions (:meth:`decide_cluster`)."""
        return self.decide_cluster(cluster_id, "dismiss")

    def merge_cluster(self, cluster_id: int) -> SuspectCluster:
        """One person or group: make the cluster's accounts one team, then release (:meth:`decide_cluster`)."""
        return self.decide_cluster(cluster_id, "merge")

    def disqualify_cluster(self, cluster_id: int) -> SuspectCluster:
        """Off this competition's boards; held submissions never released (:meth:`decide_cluster`)."""
        return self.decide_cluster(cluster_id, "disqualify")

    def ban_cluster(self, cluster_id: int) -> SuspectCluster:
        """Disqualify and deactivate the cluster's accounts (:meth:`decide_cluster`)."""
        return self.decide_cluster(cluster_id, "ban")

    def create_participant(self, username: str, *, email: str = "") -> Participant:
        """``POST host/participants/``: a new participant account and its API token (the site shows a token only
        when it makes it). Asking again for an account this host made returns it (``created`` false) with a new
        token, and the account's old token stops working; a name taken otherwise is a :class:`Conflict`."""
        path = "/api/v1/host/participants/"
        body: dict[str, Any] = {"username": username}
        if email:
            body["email"] = email
        response = self._request("POST", path, json=body)
        data = self._object(response, path)
        return Participant(str(data["username"]), str(data["token"]), bool(data.get("created", True)))

    # --- HTTP -------------------------------------------------------------------------------------------

    def sleep(self, seconds: float) -> None:
        """Wait (through the injected ``sleep``), counting the time in :attr:`stats`."""
        self.stats.slept += seconds
        self._sleep(seconds)

    def _get_object(self, path: str) -> dict[str, Any]:
        return self._object(self._request("GET", path), path)

    def _get_list(self, path: str) -> list[dict[str, Any]]:
        """Every row of a list endpoint: its pages in turn, following the ``Link`` header's ``next`` (a path on
        this site; a site without pages answers the whole list at once)."""
        rows: list[dict[str, Any]] = []
        seen: set[str] = set()
        page: str | None = path
        while page is not None and page not in seen:
            seen.add(page)
            response = self._request("GET", page)
            data = _decode(response, "GET", page)
            if not isinstance(data, list):
                raise ClientError(f"GET {page}: expected a JSON list")
            rows.extend(data)
            page = _next_page(response, self.base)
        return rows

    @staticmethod
    def _object(response: requests.Response, path: str) -> dict[str, Any]:
        data = _decode(response, response.request.method or "", path)
        if not isinstance(data, dict):
            raise ClientError(f"{response.request.method} {path}: expected a JSON object")
        return data

    def _attempt(self, method: str, path: str, *, quota: bool = False, upload: bool = False, **kwargs: Any
                 ) -> requests.Response | _Retry:
        """One request: the response (2xx/3xx, or a quota 429 when ``quota``), a :class:`_Retry` for a
        transient failure (a rate limit's 429 included), or a raised :class:`ClientError` for anything else."""
        self.stats.requests += 1
        try:
            response = self.session.request(method, self.base + path, timeout=self.timeout, **kwargs)
        except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
            return _Retry(f"{type(exc).__name__}: {exc}", None, ambiguous=not _never_sent(exc))
        status = response.status_code
        if status < 400 or (status == 429 and quota and _is_quota(response)):
            return response
        if status in self.retry_statuses or status == 429:
            delay = retry_after_seconds(response.headers.get("Retry-After"), self.clock())
            return _Retry(f"HTTP {status}", delay, ambiguous=status in AMBIGUOUS_STATUSES)
        raise error_for(method, path, response, upload=upload)

    def _pause(self, attempt: int, retry: _Retry, method: str, path: str) -> None:
        """Sleep before attempt ``attempt + 1``: the server's ``Retry-After`` when it gave one, else the
        backoff; raise :class:`TransientError` when the attempts are used up or the wait is too long."""
        if attempt >= self.backoff.retries:
            raise TransientError(f"{method} {path}: gave up after {attempt + 1} attempts ({retry.problem})")
        delay = self.backoff.delay(attempt) if retry.delay is None else retry.delay
        if delay > self.max_retry_after:
            raise TransientError(
                f"{method} {path}: {retry.problem}, and the site asks to retry after {delay:.0f} s, over the "
                f"{self.max_retry_after:.0f} s this client waits"
            )
        self.stats.retries += 1
        self.sleep(delay)

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request with retries on transient failures (safe for GET and PUT; for host POSTs a lost answer
        may mean the first attempt landed, which the host calls report as a :class:`Conflict`/400)."""
        attempt = 0
        while True:
            outcome = self._attempt(method, path, **kwargs)
            if isinstance(outcome, requests.Response):
                return outcome
            self._pause(attempt, outcome, method, path)
            attempt += 1

    def _upload(
        self, slug: str, key: str, on_quota: str | None, send: dict[str, Any], recover_name: str | None
    ) -> Upload:
        policy = self.on_quota if on_quota is None else on_quota
        _check_on_quota(policy)
        path = f"/api/v1/competitions/{slug}/submissions/"
        headers = {IDEMPOTENCY_HEADER: key, **send.pop("headers", {})}
        attempt = 0
        while True:
            outcome = self._attempt("POST", path, quota=True, upload=True, headers=headers, **send)
            if isinstance(outcome, requests.Response):
                if outcome.status_code == 429:
                    self._quota_wait(outcome, policy)
                    continue
                replayed = outcome.headers.get("Idempotent-Replayed", "").lower() == "true"
                return Upload.from_json(self._object(outcome, path), key=key, replayed=replayed)
            if outcome.ambiguous and recover_name is not None:
                found = self._find_upload(slug, recover_name, key)
                if found is not None:
                    return found
            self._pause(attempt, outcome, "POST", path)
            attempt += 1

    def _find_upload(self, slug: str, name: str, key: str) -> Upload | None:
        """Our own submission uploaded under the unique file ``name``, if the site has it."""
        try:
            mine = self.submissions(slug)
        except ClientError:
            return None
        for item in mine:
            if item.upload_name == name:
                url = f"/api/v1/submissions/{item.id}/"
                return Upload(item.id, item.status, url, None, replayed=True, idempotency_key=key)
        return None

    def _quota_wait(self, response: requests.Response, policy: str) -> None:
        """A 429 on an upload: raise (``stop``), or sleep until the reset — the ``Retry-After`` delay, else the
        UTC ``resets_at`` the site named — plus a second of slack, so the new day has begun."""
        error = quota_error(response, self.clock())
        if policy == "stop":
            raise error
        if error.retry_after is None and error.resets_at is None:
            raise QuotaExceeded(f"{error.message} (the total limit never resets, so waiting would not help)", None)
        if error.retry_after is not None:
            seconds = error.retry_after
        else:
            assert error.resets_at is not None
            seconds = (error.resets_at - self.clock()).total_seconds()
        seconds = max(seconds, 0.0) + 1.0
        if seconds > self.max_quota_wait:
            raise QuotaExceeded(
                f"{error.message} (the reset is {seconds:.0f} s away, over the wait limit)", error.resets_at,
                error.retry_after,
            )
        if self.on_wait is not None:
            self.on_wait(seconds, error.message)
        self.stats.quota_waits += seconds
        self.sleep(seconds)


def _check_on_quota(value: str) -> None:
    if value not in ("wait", "stop"):
        raise ValueError(f"on_quota must be 'wait' or 'stop', got {value!r}")


def _board(board: str) -> str:
    if board not in BOARDS:
        raise ValueError(f"board must be 'public' or 'private', got {board!r}")
    return board


def _next_page(response: requests.Response, base: str) -> str | None:
    """The path of the next page a list answer links to (``Link: <...>; rel="next"``), or ``None``; a link to
    another site is not followed."""
    target = (response.links.get("next") or {}).get("url")
    if not target:
        return None
    if target.startswith(base + "/"):
        target = target[len(base):]
    return target if target.startswith("/") and not target.startswith("//") else None


def _form_value(value: Any) -> str:
    """A multipart form value as the host API reads it: ``""`` for none, JSON for a chain, ISO 8601 UTC."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, list | tuple | dict):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _decode(response: requests.Response, method: str, path: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ClientError(
            f"{method} {path}: the answer is not JSON: {response.text[:200]!r}", status=response.status_code
        ) from None


def _body(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def detail_of(response: requests.Response) -> str:
    """The site's message in an error answer (``detail``, with the line when it names one)."""
    body = _body(response)
    if body is None:
        return response.text[:300]
    if isinstance(body, dict) and "detail" in body:
        line = body.get("line")
        detail = body["detail"]
        text = "; ".join(map(str, detail)) if isinstance(detail, list) else str(detail)
        return text + (f" (line {line})" if line is not None else "")
    return json.dumps(body)[:300]


def _is_quota(response: requests.Response) -> bool:
    """Whether a 429 is the submission quota (its body names ``resets_at``, ``null`` for the total limit)
    rather than a rate limit (a throttle in front of the API), which is retried after its ``Retry-After``."""
    body = _body(response)
    # A prediction endpoint's budget (queries_left) is no rate limit either: waiting would not refill it.
    return isinstance(body, dict) and ("resets_at" in body or "queries_left" in body)


def quota_error(response: requests.Response, now: datetime) -> QuotaExceeded:
    """The :class:`QuotaExceeded` a 429 describes: the site's message, ``resets_at`` and ``Retry-After``."""
    body = _body(response)
    data = body if isinstance(body, dict) else {}
    message = str(data.get("detail") or "over the submission quota")
    try:
        resets_at = parse_utc(data.get("resets_at"))
    except (TypeError, ValueError):
        resets_at = None
    return QuotaExceeded(message, resets_at, retry_after_seconds(response.headers.get("Retry-After"), now))


def error_for(method: str, path: str, response: requests.Response, *, upload: bool = False) -> ClientError:
    """The :class:`ClientError` subclass for an error answer, its message ``METHOD PATH: HTTP n: detail``."""
    status = response.status_code
    detail = detail_of(response)
    body = _body(response)
    message = f"{method} {path}: HTTP {status}: {detail}"
    if status == 400 and upload:
        line = body.get("line") if isinstance(body, dict) else None
        plain = str(body.get("detail")) if isinstance(body, dict) and "detail" in body else detail
        return UploadRejected(message, detail=plain, line=_int(line), body=body)
    kinds: dict[int, type[ClientError]] = {
        400: BadRequest, 401: NotAuthenticated, 403: Forbidden, 404: NotFound, 409: Conflict, 422: Conflict,
    }
    return kinds.get(status, ClientError)(message, status=status, detail=detail, body=body)


def _never_sent(exc: Exception) -> bool:
    """Whether a connection error happened before any byte of the request left (connection refused, DNS),
    so re-sending cannot duplicate anything."""
    text = repr(exc)
    return isinstance(exc, requests.ConnectTimeout) or "NewConnectionError" in text or "Connection refused" in text
