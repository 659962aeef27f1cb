"""``HttpOracle``: the :class:`~attacks.oracle.Oracle` protocol over a live site's public REST API (``/api/v1/``).

It knows only what a participant knows (the competition's public metadata, the sample submission's ids and
header, the released public score of its own submissions) and authenticates with an API token. It speaks
HTTP only through :class:`~bot.client.LeaderboardClient`, the project's one client.

One ``submit`` is one submission: upload (JSON positional list or CSV, values written exactly: ``repr`` of
floats, decimal text for MPFR competitions), then poll ``GET /api/v1/submissions/{id}/`` with a short
exponential backoff until it is ``scored`` or ``failed``. Transient HTTP trouble (connection errors,
timeouts, 5xx) is retried with exponential backoff (or the site's ``Retry-After``); an upload is never counted
twice when the first attempt may have reached the server: every upload carries an ``Idempotency-Key`` that its
retries repeat (and a CSV upload's unique file name is looked up first, for sites without the header).
Over quota (HTTP 429), the oracle either waits for the reset the server names or raises
:class:`QuotaExceeded`, by option (``on_quota="wait"`` or ``"stop"``); the clock and the sleep are
injectable so tests can pin them.
"""

from __future__ import annotations

import operator
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import numpy as np
import requests

from bot.client import (
    RETRY_STATUSES,
    Backoff,
    ClientError,
    LeaderboardClient,
    PollSchedule,
    QuotaExceeded,
    Submission,
    SubmissionFailed,
    TransientError,
    parse_utc,
)

__all__ = [
    "Backoff",
    "HttpOracle",
    "HttpOracleError",
    "OracleStats",
    "PollSchedule",
    "QuotaExceeded",
    "Released",
    "SubmissionFailed",
    "TransientHttpError",
    "exact_text",
    "parse_utc",
]

Released = float | Decimal | None

#: Status codes worth another attempt (kept for callers of the old name).
TRANSIENT_STATUS = RETRY_STATUSES
#: The oracle's errors are the client's: one hierarchy (these names stay for existing callers).
HttpOracleError = ClientError
TransientHttpError = TransientError


@dataclass
class OracleStats:
    """Where the time goes, for profiling a live attack."""

    posts: int = 0
    polls: int = 0
    retries: int = 0
    post_seconds: float = 0.0
    poll_seconds: float = 0.0
    encode_seconds: float = 0.0
    quota_waits: float = 0.0


def exact_text(value: Any) -> str:
    """A prediction value as exact decimal text: ``repr`` of a float (round-trips), ``str`` of anything else
    (``Decimal``, gmpy2 ``mpfr``, numeric strings).

    >>> exact_text(0.1), exact_text(np.float64(1e-15)), exact_text(Decimal("0.3333333333333333333333"))
    ('0.1', '1e-15', '0.3333333333333333333333')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return str(value)


class HttpOracle:
    """A competition on a live Leaderboard Lab site, seen by one participant (its ``token``).

    ``on_quota``: ``"wait"`` sleeps until the reset a 429 names (then resubmits), ``"stop"`` raises
    :class:`QuotaExceeded`; a total limit, which never resets, always raises. ``upload``: ``"json"`` (a
    positional list in sample-submission order) or ``"csv"`` (multipart file named uniquely per upload). Both
    are retried safely: each upload's ``Idempotency-Key`` makes the site return the original submission to a
    repeated POST. ``clock`` returns the current UTC time and ``sleep`` waits; both are injectable for tests.
    ``on_wait(seconds, reason)`` is told before every wait on a quota, e.g. to show it on a progress bar.

    Exposes what a participant may know: ``n_rows``, ``n_classes``, ``metric``, ``eps``, ``decimals``,
    ``feedback`` (a score or a hard label, :mod:`attacks.hard_label`),
    ``arithmetic``, ``public_fraction`` (``None`` when every row is public, as for a :class:`LocalOracle`
    without a split), ``ids`` (sample-submission order), ``columns``, ``metadata`` (the whole answer), and
    ``queries`` (submissions made through this oracle). ``last_released_text`` is the released score of the
    latest submission exactly as the site wrote it. ``client`` is the underlying
    :class:`~bot.client.LeaderboardClient`.
    """

    def __init__(
        self,
        url: str,
        competition: str,
        token: str,
        *,
        on_quota: str = "wait",
        upload: str = "csv",
        backoff: Backoff | None = None,
        poll: PollSchedule | None = None,
        timeout: float = 60.0,
        session: requests.Session | None = None,
        clock: Callable[[], datetime] | None = None,
        sleep: Callable[[float], None] | None = None,
        on_wait: Callable[[float, str], None] | None = None,
        max_quota_wait: float = 36 * 3600.0,
    ) -> None:
        if on_quota not in ("wait", "stop"):
            raise ValueError(f"on_quota must be 'wait' or 'stop', got {on_quota!r}")
        if upload not in ("json", "csv"):
            raise ValueError(f"upload must be 'json' or 'csv', got {upload!r}")
        self.base = url.rstrip("/")
        self.slug = competition
        self.on_quota = on_quota
        self.upload = upload
        self.backoff = backoff or Backoff()
        self.poll = poll or PollSchedule()
        self.timeout = timeout
        self.clock = clock or (lambda: datetime.now(UTC))
        self.sleep = sleep or time.sleep
        self.on_wait = on_wait
        self.max_quota_wait = max_quota_wait
        self.client = LeaderboardClient(
            self.base, token, timeout=timeout, backoff=self.backoff, poll=self.poll, on_quota=on_quota,
            max_quota_wait=max_quota_wait, session=session, clock=lambda: self.clock(),
            sleep=lambda seconds: self.sleep(seconds), on_wait=on_wait,
        )
        self.session = self.client.session
        self.stats = OracleStats()
        self.queries = 0
        self.last_released_text: str | None = None
        self.last_submission_id: int | None = None
        self.submission_ids: list[int] = []

        try:
            competition_meta = self.client.competition(self.slug)
            sample = self.client.sample_submission(self.slug)
        finally:
            self._sync_stats()
        self.metadata: dict[str, Any] = competition_meta.data
        self.n_rows = competition_meta.n_rows
        self.n_classes = competition_meta.n_classes
        self.metric = competition_meta.metric
        self.eps = competition_meta.eps
        self.decimals: int | None = competition_meta.released_decimals
        self.arithmetic = competition_meta.arithmetic
        fraction = competition_meta.public_fraction
        self.public_fraction: float | None = None if fraction >= 1.0 else fraction
        self.daily_limit: int | None = competition_meta.daily_limit
        self.total_limit: int | None = competition_meta.total_limit
        self.disclosed_defenses = competition_meta.disclosed_defenses
        # What a released value is (a score, or a hard label: attacks.hard_label reads it); older sites: a score.
        feedback = self.metadata.get("feedback")
        self.feedback: dict[str, Any] = dict(feedback) if isinstance(feedback, dict) else {"kind": "score"}
        # Metrics the site releases beside the primary one (paper 004, Section 3); see submit_all.
        self.also_report: tuple[str, ...] = competition_meta.also_report
        self.columns: list[str] = list(sample.header)
        self.ids: tuple[str, ...] = sample.ids
        if len(self.ids) != self.n_rows:
            raise HttpOracleError(
                f"the sample submission lists {len(self.ids)} ids but the metadata says n_rows={self.n_rows}"
            )
        # A model competition (paper 001, Section 5): every query is carried by a MutNet model, whose ranked head
        # emits the predictions on the hidden rows in a feature order; rows are then ranks, not ids.
        self.takes_models = competition_meta.takes_models
        self._carrier: Any = None
        if self.takes_models:  # imported here: onnx is only needed against a model competition
            from attacks.mutnet import ModelOracle, linear_base

            self._carrier = ModelOracle(
                linear_base(competition_meta.n_features, self.n_classes), lambda data: None,
                n_rows=self.n_rows, n_features=competition_meta.n_features, n_classes=self.n_classes,
            )
        self._float64 = self.arithmetic == "float64"
        self._csv_header = ",".join(self.columns) + "\n"
        self._csv_prefixes = [row_id + "," for row_id in self.ids]
        self._latency: float | None = None  # moving average of upload-to-scored time, for the first poll

    # --- the Oracle protocol ---------------------------------------------------------------------------

    def submit(self, predictions: Any) -> Released:
        """Upload one submission, wait until it is scored, return its released public score.

        ``None`` when the site releases no public score for it (e.g. an empty public split, a defense that
        shows nothing). Raises :class:`SubmissionFailed` when the site failed it (its message says why),
        :class:`QuotaExceeded` when over quota and ``on_quota="stop"`` (or the total limit is used up).
        """
        return self.submit_all(predictions)[self.metric]

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        """One submission (one query), every released public value: the primary metric first, then each
        metric of ``also_report`` (``None`` where the site released nothing), as ``LocalOracle.submit_all``."""
        started = time.perf_counter()
        body = self._encode(predictions)
        self.stats.encode_seconds += time.perf_counter() - started
        try:
            submission_id = self._post_submission(body)
            self.queries += 1
            self.last_submission_id = submission_id
            self.submission_ids.append(submission_id)
            detail = self._wait_scored(submission_id)
        finally:
            self._sync_stats()
        if detail.status == "failed":
            raise SubmissionFailed(submission_id, detail.error or "no reason given")
        text = detail.public_score_text
        self.last_released_text = text or None
        released: dict[str, Released] = {self.metric: self.released_value(text) if text else None}
        extra = detail.extra_scores
        for metric in self.also_report:
            extra_text = str((extra.get(metric) or {}).get("public_score_text") or "")
            released[metric] = self.released_value(extra_text) if extra_text else None
        return released

    def released_value(self, text: str) -> Released:
        """The released text as a number: ``Decimal`` when the site releases more than float64 carries (MPFR
        arithmetic with every digit), else ``float``."""
        if not self._float64 and self.decimals is None:
            return Decimal(text)
        return float(text)

    def quota(self) -> dict[str, Any]:
        """``GET …/quota/``: used and remaining submissions and the next UTC reset."""
        return self.client.quota(self.slug).data

    # --- encoding ---------------------------------------------------------------------------------------

    def _values_text(self, predictions: Any) -> list[str] | list[list[str]]:
        """One text per row (binary) or one list of K texts per row (multiclass), in sample-submission order."""
        if self._float64:
            array = np.asarray(predictions, dtype=np.float64)
            if array.shape[0] != self.n_rows:
                raise ValueError(f"expected {self.n_rows} rows of predictions, got {array.shape[0]}")
            if array.ndim == 2 and self.n_classes == 2 and array.shape[1] == 1:
                array = array[:, 0]
            if array.ndim == 1:
                return _float_texts(array)
            return [list(map(repr, row)) for row in array.tolist()]
        rows = list(predictions)
        if len(rows) != self.n_rows:
            raise ValueError(f"expected {self.n_rows} rows of predictions, got {len(rows)}")
        if rows and isinstance(rows[0], list | tuple | np.ndarray):
            if self.n_classes == 2 and len(rows[0]) == 1:
                return [exact_text(row[0]) for row in rows]
            return [[exact_text(v) for v in row] for row in rows]
        return [exact_text(v) for v in rows]

    @property
    def row_names(self) -> list[str]:
        """What row ``i`` is: its id, or on a model competition its rank in the MutNet head's feature order."""
        return [f"rank {i}" for i in range(self.n_rows)] if self.takes_models else list(self.ids)

    def _encode(self, predictions: Any) -> bytes:
        if self._carrier is not None:
            return self._carrier.model_for(np.asarray(predictions, dtype=np.float64))
        texts = self._values_text(predictions)
        multi = bool(texts) and isinstance(texts[0], list)
        if self.upload == "json":
            # JSON numbers are written as their exact text; MPFR texts may carry more digits than a float,
            # which JSON allows and the site reads as text (so nothing is rounded on the way).
            items = ",".join("[" + ",".join(row) + "]" for row in texts) if multi else ",".join(texts)  # type: ignore[arg-type]
            return ('{"predictions":[' + items + "]}").encode()
        cells = [",".join(row) for row in texts] if multi else texts
        body = self._csv_header + "\n".join(map(operator.add, self._csv_prefixes, cells)) + "\n"  # type: ignore[arg-type]
        return body.encode()

    # --- HTTP (through the client) ----------------------------------------------------------------------

    def _post_submission(self, body: bytes) -> int:
        """Upload through the client (which waits or stops on 429 and retries transient failures under one
        Idempotency-Key); the submission's id."""
        started = time.perf_counter()
        slept = self.client.stats.slept
        if self.takes_models:
            upload = self.client.submit_model(self.slug, body)
        elif self.upload == "json":
            upload = self.client.submit_json(self.slug, body)
        else:
            # A unique name, looked up before re-sending, also keeps a site without Idempotency-Key safe.
            name = f"bot-{uuid.uuid4().hex}.csv"
            upload = self.client.submit_csv(self.slug, body, filename=name, recover_by_name=True)
        # Time on the wire only: the client's backoff and quota sleeps are not the site's latency.
        self.stats.post_seconds += max(0.0, time.perf_counter() - started - (self.client.stats.slept - slept))
        self.stats.posts += 1
        return upload.id

    def _wait_scored(self, submission_id: int) -> Submission:
        """Poll until the submission is terminal. The first poll waits about 70 % of the recent scoring
        latency (an early poll only costs the busy server CPU it needs for scoring), then polls speed up
        geometrically from ``poll.initial`` up to ``poll.maximum``."""
        started = time.perf_counter()
        polls = self.client.stats.polls
        first = 0.0 if self._latency is None else min(0.7 * self._latency, self.poll.maximum)
        try:
            detail = self.client.wait(submission_id, schedule=self.poll, first_delay=first)
        finally:
            self.stats.polls += self.client.stats.polls - polls
        elapsed = time.perf_counter() - started
        self.stats.poll_seconds += elapsed
        self._latency = elapsed if self._latency is None else 0.8 * self._latency + 0.2 * elapsed
        return detail

    def _sync_stats(self) -> None:
        self.stats.retries = self.client.stats.retries
        self.stats.quota_waits = self.client.stats.quota_waits


def _float_texts(values: np.ndarray) -> list[str]:
    """``repr`` of every float (exact round trip), computed once per distinct value: attack vectors hold a
    handful of distinct values (most rows at 1/2), so this is several times faster than ``map(repr, ...)``.

    >>> _float_texts(np.array([0.5, 0.1, 0.5]))
    ['0.5', '0.1', '0.5']
    """
    distinct, inverse = np.unique(values, return_inverse=True)
    texts = np.array([repr(v) for v in distinct.tolist()], dtype=object)
    return list(texts[inverse.reshape(-1)].tolist())
