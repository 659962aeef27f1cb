"""``HttpOracle``: the :class:`~attacks.oracle.Oracle` protocol over a live site's public REST API (``/api/v1/``).

It knows only what a participant knows (the competition's public metadata, the sample submission's ids and
header, the released public score of its own submissions) and authenticates with an API token. Pure client
code: ``requests``, no Django.

One ``submit`` is one submission: upload (JSON positional list or CSV, values written exactly: ``repr`` of
floats, decimal text for MPFR competitions), then poll ``GET /api/v1/submissions/{id}/`` with a short
exponential backoff until it is ``scored`` or ``failed``. Transient HTTP trouble (connection errors,
timeouts, 5xx) is retried with exponential backoff; an upload is never sent twice when the first attempt
may have reached the server (a multipart upload carries a unique file name, looked up before a retry).
Over quota (HTTP 429), the oracle either waits for the UTC reset time the server names or raises
:class:`QuotaExceeded`, by option (``on_quota="wait"`` or ``"stop"``); the clock and the sleep are
injectable so tests can pin them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
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

Released = float | Decimal | None

#: Status codes worth another attempt: the server or a proxy in front of it is briefly unavailable.
TRANSIENT_STATUS = frozenset({500, 502, 503, 504})


class HttpOracleError(RuntimeError):
    """The site answered something the oracle cannot use (a 4xx other than 429, a malformed body, ...)."""


class SubmissionFailed(HttpOracleError):
    """The site accepted the upload but could not score it; ``message`` is the site's own explanation."""

    def __init__(self, submission_id: int, message: str) -> None:
        super().__init__(f"submission {submission_id} failed: {message}")
        self.submission_id = submission_id
        self.message = message


class QuotaExceeded(HttpOracleError):
    """Over the daily or total submission limit. ``resets_at`` is the UTC time the daily counter restarts
    (``None`` when only the total limit is left, which never resets)."""

    def __init__(self, message: str, resets_at: datetime | None) -> None:
        super().__init__(message)
        self.message = message
        self.resets_at = resets_at


class TransientHttpError(HttpOracleError):
    """Every retry of a transient failure (connection error, timeout, 5xx) failed."""


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
class OracleStats:
    """Where the time goes, for profiling a live attack."""

    posts: int = 0
    polls: int = 0
    retries: int = 0
    post_seconds: float = 0.0
    poll_seconds: float = 0.0
    encode_seconds: float = 0.0
    quota_waits: float = 0.0


def parse_utc(text: str | None) -> datetime | None:
    """An ISO 8601 UTC time as the site writes it (``2026-11-22T00:00:00Z``), or ``None``.

    >>> parse_utc("2026-11-22T00:00:00Z")
    datetime.datetime(2026, 11, 22, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


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

    ``on_quota``: ``"wait"`` sleeps until the reset time a 429 names (then resubmits), ``"stop"`` raises
    :class:`QuotaExceeded`; a total limit, which never resets, always raises. ``upload``: ``"json"`` (a
    positional list in sample-submission order) or ``"csv"`` (multipart file named uniquely per upload, so a
    retried upload can be recognised and never counted twice). ``clock`` returns the current UTC time and
    ``sleep`` waits; both are injectable for tests. ``on_wait(seconds, reason)`` is told before every wait on
    a quota, e.g. to show it on a progress bar.

    Exposes what a participant may know: ``n_rows``, ``n_classes``, ``metric``, ``eps``, ``decimals``,
    ``arithmetic``, ``public_fraction`` (``None`` when every row is public, as for a :class:`LocalOracle`
    without a split), ``ids`` (sample-submission order), ``columns``, ``metadata`` (the whole answer), and
    ``queries`` (submissions made through this oracle). ``last_released_text`` is the released score of the
    latest submission exactly as the site wrote it.
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
        self.session = session or requests.Session()
        self.session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})
        self.stats = OracleStats()
        self.queries = 0
        self.last_released_text: str | None = None
        self.last_submission_id: int | None = None
        self.submission_ids: list[int] = []

        self.metadata: dict[str, Any] = self._get_json(f"/api/v1/competitions/{self.slug}/")
        meta = self.metadata
        self.n_rows = int(meta["n_rows"])
        self.n_classes = int(meta["n_classes"])
        self.metric = str(meta["metric"])
        self.eps = float(meta["eps"])
        self.decimals: int | None = None if meta.get("score_decimals") is None else int(meta["score_decimals"])
        self.arithmetic = str(meta.get("arithmetic") or "float64")
        fraction = float(meta.get("public_fraction", 1.0))
        self.public_fraction: float | None = None if fraction >= 1.0 else fraction
        self.daily_limit: int | None = meta.get("daily_limit")
        self.total_limit: int | None = meta.get("total_limit")
        self.disclosed_defenses = str(meta.get("disclosed_defenses") or "")
        # Metrics the site releases beside the primary one (paper 004, Section 3); see submit_all.
        self.also_report: tuple[str, ...] = tuple(meta.get("also_report") or ())
        header, ids = self._sample_submission()
        self.columns: list[str] = header
        self.ids: tuple[str, ...] = tuple(ids)
        if len(self.ids) != self.n_rows:
            raise HttpOracleError(
                f"the sample submission lists {len(self.ids)} ids but the metadata says n_rows={self.n_rows}"
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
        body, content_type, name = self._encode(predictions)
        self.stats.encode_seconds += time.perf_counter() - started
        submission_id = self._post_submission(body, content_type, name)
        self.queries += 1
        self.last_submission_id = submission_id
        self.submission_ids.append(submission_id)
        detail = self._wait_scored(submission_id)
        if detail["status"] == "failed":
            raise SubmissionFailed(submission_id, str(detail.get("error") or "no reason given"))
        text = str(detail.get("public_score_text") or "")
        self.last_released_text = text or None
        released: dict[str, Released] = {self.metric: self.released_value(text) if text else None}
        extra = detail.get("extra_scores") or {}
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
        return self._get_json(f"/api/v1/competitions/{self.slug}/quota/")

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

    def _encode(self, predictions: Any) -> tuple[bytes, str, str]:
        texts = self._values_text(predictions)
        multi = bool(texts) and isinstance(texts[0], list)
        if self.upload == "json":
            # JSON numbers are written as their exact text; MPFR texts may carry more digits than a float,
            # which JSON allows and the site reads as text (so nothing is rounded on the way).
            items = ",".join("[" + ",".join(row) + "]" for row in texts) if multi else ",".join(texts)  # type: ignore[arg-type]
            return ('{"predictions":[' + items + "]}").encode(), "application/json", ""
        cells = [",".join(row) for row in texts] if multi else texts
        body = self._csv_header + "\n".join(map(operator.add, self._csv_prefixes, cells)) + "\n"  # type: ignore[arg-type]
        return body.encode(), "text/csv", f"bot-{uuid.uuid4().hex}.csv"

    # --- HTTP -------------------------------------------------------------------------------------------

    def _sample_submission(self) -> tuple[list[str], list[str]]:
        response = self._request("GET", f"/api/v1/competitions/{self.slug}/sample-submission/")
        reader = csv.reader(io.StringIO(response.content.decode("utf-8-sig")))
        header = next(reader, None)
        if not header:
            raise HttpOracleError("the sample submission is empty")
        ids = [row[0].strip() for row in reader if row]
        return [h.strip() for h in header], ids

    def _get_json(self, path: str) -> dict[str, Any]:
        response = self._request("GET", path)
        try:
            data = response.json()
        except ValueError:
            raise HttpOracleError(f"GET {path}: the answer is not JSON: {response.text[:200]!r}") from None
        if not isinstance(data, dict):
            raise HttpOracleError(f"GET {path}: expected a JSON object")
        return data

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One request with retries on transient failures; a non-transient 4xx raises a readable error."""
        url = self.base + path
        for attempt in range(self.backoff.retries + 1):
            try:
                response = self.session.request(method, url, timeout=self.timeout, **kwargs)
            except (requests.ConnectionError, requests.Timeout) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code in TRANSIENT_STATUS or (method == "GET" and response.status_code == 429):
                    problem = f"HTTP {response.status_code}"
                    retry_after = _retry_after(response)
                    if retry_after is not None and attempt < self.backoff.retries:
                        self.stats.retries += 1
                        self.sleep(min(max(retry_after, self.backoff.delay(attempt)), self.backoff.maximum))
                        continue
                elif response.status_code >= 400:
                    raise HttpOracleError(f"{method} {path}: HTTP {response.status_code}: {_detail(response)}")
                else:
                    return response
            if attempt == self.backoff.retries:
                raise TransientHttpError(f"{method} {path}: gave up after {attempt + 1} attempts ({problem})")
            self.stats.retries += 1
            self.sleep(self.backoff.delay(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _post_submission(self, body: bytes, content_type: str, name: str) -> int:
        """POST the upload; the new submission's id. Waits or stops on 429; retries transient failures, and
        before re-sending an upload that may have arrived, looks it up by its unique name (CSV uploads)."""
        path = f"/api/v1/competitions/{self.slug}/submissions/"
        attempt = 0
        while True:
            started = time.perf_counter()
            may_have_arrived = False
            try:
                if name:
                    response = self.session.post(
                        self.base + path, files={"file": (name, body, "text/csv")}, timeout=self.timeout
                    )
                else:
                    response = self.session.post(
                        self.base + path, data=body, headers={"Content-Type": content_type}, timeout=self.timeout
                    )
            except (requests.ConnectionError, requests.Timeout) as exc:
                problem = f"{type(exc).__name__}: {exc}"
                may_have_arrived = not _never_sent(exc)
            else:
                self.stats.post_seconds += time.perf_counter() - started
                self.stats.posts += 1
                if response.status_code == 202:
                    return int(response.json()["id"])
                if response.status_code == 429:
                    self._quota_wait(response)
                    continue
                if response.status_code not in TRANSIENT_STATUS:
                    raise HttpOracleError(f"POST {path}: HTTP {response.status_code}: {_detail(response)}")
                problem = f"HTTP {response.status_code}"
                may_have_arrived = response.status_code in (500, 502, 504)
            if may_have_arrived and name:
                found = self._find_upload(name)
                if found is not None:
                    return found
            if attempt >= self.backoff.retries:
                raise TransientHttpError(f"POST {path}: gave up after {attempt + 1} attempts ({problem})")
            self.stats.retries += 1
            self.sleep(self.backoff.delay(attempt))
            attempt += 1

    def _find_upload(self, name: str) -> int | None:
        """The id of our own submission uploaded under ``name``, if the site has it."""
        try:
            response = self._request("GET", f"/api/v1/competitions/{self.slug}/submissions/")
        except HttpOracleError:
            return None
        for item in response.json():
            if item.get("upload_name") == name:
                return int(item["id"])
        return None

    def _quota_wait(self, response: requests.Response) -> None:
        """A 429: stop (raise) or sleep until the UTC reset the site named, plus a little slack."""
        body: dict[str, Any] = {}
        with contextlib.suppress(ValueError):
            body = response.json()
        message = str(body.get("detail") or "over the submission quota")
        resets_at = parse_utc(body.get("resets_at"))
        if self.on_quota == "stop" or resets_at is None:
            if resets_at is None and self.on_quota == "wait":
                message += " (the total limit never resets, so waiting would not help)"
            raise QuotaExceeded(message, resets_at)
        seconds = (resets_at - self.clock()).total_seconds()
        retry_after = _retry_after(response)
        if seconds <= 0 and retry_after is not None:
            seconds = retry_after
        seconds = max(seconds, 0.0) + 1.0  # a second of slack past midnight, so the new day has begun
        if seconds > self.max_quota_wait:
            raise QuotaExceeded(f"{message} (the reset is {seconds:.0f} s away, over the wait limit)", resets_at)
        if self.on_wait is not None:
            self.on_wait(seconds, message)
        self.stats.quota_waits += seconds
        self.sleep(seconds)

    def _wait_scored(self, submission_id: int) -> dict[str, Any]:
        """Poll until the submission is terminal. The first poll waits about 70 % of the recent scoring
        latency (an early poll only costs the busy server CPU it needs for scoring), then polls speed up
        geometrically from ``poll.initial`` up to ``poll.maximum``."""
        path = f"/api/v1/submissions/{submission_id}/"
        started = time.perf_counter()
        delay = self.poll.initial
        if self._latency is not None:
            self.sleep(min(0.7 * self._latency, self.poll.maximum))
        while True:
            detail = self._get_json(path)
            self.stats.polls += 1
            elapsed = time.perf_counter() - started
            if detail.get("status") in ("scored", "failed"):
                self.stats.poll_seconds += elapsed
                self._latency = elapsed if self._latency is None else 0.8 * self._latency + 0.2 * elapsed
                return detail
            if elapsed >= self.poll.timeout:
                raise HttpOracleError(
                    f"submission {submission_id} is still {detail.get('status')!r} after {elapsed:.0f} s; "
                    "is a worker running?"
                )
            self.sleep(delay)
            delay = min(delay * self.poll.factor, self.poll.maximum)

def _float_texts(values: np.ndarray) -> list[str]:
    """``repr`` of every float (exact round trip), computed once per distinct value: attack vectors hold a
    handful of distinct values (most rows at 1/2), so this is several times faster than ``map(repr, ...)``.

    >>> _float_texts(np.array([0.5, 0.1, 0.5]))
    ['0.5', '0.1', '0.5']
    """
    distinct, inverse = np.unique(values, return_inverse=True)
    texts = np.array([repr(v) for v in distinct.tolist()], dtype=object)
    return list(texts[inverse.reshape(-1)].tolist())


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _detail(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict) and "detail" in body:
        line = body.get("line")
        return str(body["detail"]) + (f" (line {line})" if line is not None else "")
    return json.dumps(body)[:300]


def _never_sent(exc: Exception) -> bool:
    """Whether a connection error happened before any byte of the request left (connection refused, DNS),
    so re-sending cannot duplicate a submission."""
    text = repr(exc)
    return isinstance(exc, requests.ConnectTimeout) or "NewConnectionError" in text or "Connection refused" in text

