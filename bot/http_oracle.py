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

``submit_many`` (:func:`attacks.oracle.submit_many`) is the pipelined path: independent queries are encoded,
uploaded and polled by up to ``window`` threads at once (each with a client and connection of its own, each
upload under its own ``Idempotency-Key``), never more at once than the quota the site says is left, and
answered in order. The attack stays sequential; only the waiting overlaps.

Several accounts: given a list of tokens (one participant each), the oracle has ``accounts`` and a settable
``account``, exactly as :class:`~attacks.oracle.LocalOracle`: each submission is made with the token of the
current account, through that account's own client (so a 429 waits for, or stops on, that participant's quota
only), and ``queries_by_account`` counts each one's submissions. Tokens are never printed, logged or written.
"""

from __future__ import annotations

import contextlib
import operator
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
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
    "Answer",
    "Backoff",
    "HttpOracle",
    "HttpOracleError",
    "NotSent",
    "OracleStats",
    "PollSchedule",
    "QuotaExceeded",
    "Released",
    "SubmissionFailed",
    "TransientHttpError",
    "account_tokens",
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


#: The default number of submissions in flight at once (``--window``): the site is a two-stage pipeline (the
#: web server takes the upload, the worker scores it), so a few in flight keep both stages busy; more only deepen
#: the worker's queue, which drains unused at the end of every round of the attack (measured live, N = 10,000:
#: 4 in flight beat 1 and 8 on SQLite and on PostgreSQL; ``benchmarks/bot_pipelined.py``).
DEFAULT_WINDOW = 4


@dataclass(frozen=True)
class Answer:
    """One query's outcome on the site: its submission id (``None`` when the upload itself failed), every
    released public value (``None`` on failure), the primary metric's text exactly as released, the
    error (:class:`SubmissionFailed`, :class:`QuotaExceeded`, …) that stopped it, if any, and the account
    (index into the oracle's tokens) it was made as."""

    submission_id: int | None
    released: dict[str, Released] | None
    text: str | None
    error: BaseException | None = None
    account: int = 0


class NotSent(ClientError):
    """A query of a pipelined batch that was never uploaded: an earlier one failed first."""


class Turnstile:
    """Uploads in query order: position ``k`` uploads only after position ``k − 1`` has (or has been skipped),
    so the site numbers, scores and charges the submissions in the order the attack asked them — a stateful
    defense (a Ladder, noise seeded by the submission id) sees exactly a one-at-a-time run. Encoding before the
    turn and scoring and polling after it still overlap. After a failed upload (:meth:`turn` raising) or
    :meth:`stop`, waiting positions are turned away (``False``) instead of uploading."""

    def __init__(self) -> None:
        self._next = 0
        self._stopped = False
        self._changed = threading.Condition()

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()

    @contextlib.contextmanager
    def turn(self, position: int) -> Iterator[bool]:
        """Wait for ``position``'s turn; yields ``False`` when stopped before it came (nothing to upload)."""
        with self._changed:
            self._changed.wait_for(lambda: self._stopped or self._next == position)
            go = not self._stopped
        try:
            yield go
        except BaseException:
            self.stop()
            raise
        finally:
            with self._changed:
                self._next = max(self._next, position + 1)
                self._changed.notify_all()


class InOrderPolls:
    """Polling in query order, one submission at a time: the site scores uploads in order, so while query
    ``k`` is not scored, polling ``k + 1`` would only cost the site a request. Position ``k`` polls once ``k − 1``
    is answered, first waiting about 70 % of the usual time between two answers (less the time already gone
    since the last one), so a pipelined run asks about one poll per submission of the site's web server, no
    more than a sequential run does."""

    def __init__(self) -> None:
        self.turns = Turnstile()
        self._lock = threading.Lock()
        self._last: float | None = None
        self._interval: float | None = None

    def first_delay(self) -> float | None:
        """The wait before the first poll (``None`` before two answers: the oracle's latency-based default)."""
        with self._lock:
            if self._last is None or self._interval is None:
                return None
            return max(0.0, 0.7 * self._interval - (time.perf_counter() - self._last))

    def answered(self) -> None:
        now = time.perf_counter()
        with self._lock:
            if self._last is not None:
                gap = now - self._last
                self._interval = gap if self._interval is None else 0.8 * self._interval + 0.2 * gap
            self._last = now


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


def account_tokens(token: str | Sequence[str]) -> tuple[str, ...]:
    """The tokens of the accounts an oracle plays, in order: one token, or a list of them (account ``i`` is
    ``tokens[i]``). An empty list, an empty token or a token given twice is refused; the message names the
    positions, never a token.

    >>> account_tokens("abc"), account_tokens(["abc", "def"])
    (('abc',), ('abc', 'def'))
    >>> account_tokens(["abc", "def", "abc"])
    Traceback (most recent call last):
    ...
    ValueError: token 3 repeats token 1: each account needs a token of its own
    """
    tokens = (token,) if isinstance(token, str) else tuple(token)
    if not tokens:
        raise ValueError("no API token: an oracle needs at least one account")
    first: dict[str, int] = {}
    for position, value in enumerate(tokens, start=1):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"token {position} is empty")
        if value in first:
            raise ValueError(f"token {position} repeats token {first[value]}: each account needs a token of its own")
        first[value] = position
    return tokens


class HttpOracle:
    """A competition on a live Leaderboard Lab site, seen by one participant (its ``token``), or by several
    (a list of tokens: one account each, :attr:`account` picks the one the next submission is made as).

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

    ``window`` (default 1: one query at a time) is how many submissions :meth:`submit_many` keeps in flight.

    ``accounts`` (the number of tokens) and ``account`` (default 0; set by attacks that play several accounts,
    e.g. ``fresh_accounts``) are those of :class:`~attacks.oracle.LocalOracle`: ``queries`` counts every
    account's submissions, ``queries_by_account`` each one's; a batch of :meth:`submit_many` is made as the
    account current when it starts. The metadata is read with the first token. ``session`` (optional) is the
    first account's; the others get sessions of their own (their own ``Authorization`` and cookies) over the
    same connection pool.
    """

    def __init__(
        self,
        url: str,
        competition: str,
        token: str | Sequence[str],
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
        window: int = 1,
    ) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be a positive integer, got {window!r}")
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
        self.window = window
        self._tokens = account_tokens(token)
        self.accounts = len(self._tokens)
        #: The participant the next submission is made as (``0 .. accounts − 1``), as ``LocalOracle.account``.
        self.account = 0
        self.queries_by_account = [0] * self.accounts
        self._lock = threading.Lock()
        # One client per account (made when the account first submits), all on the first one's connection pool.
        self._clients: dict[int, LeaderboardClient] = {0: self._new_client(0, session)}
        self.session = self._clients[0].session
        # Clients of the pipelined path (one per thread in flight, each with its own connection), per account,
        # made lazily.
        self._spare_clients: dict[int, queue.SimpleQueue[LeaderboardClient]] = {}
        self._extra_clients: list[LeaderboardClient] = []
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
        # What the host tells participants of the chain (attacks read it through BoardFacts.disclosed).
        self.disclosed: dict[str, Any] = {"text": self.disclosed_defenses} if self.disclosed_defenses else {}
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
        # A model competition (paper 001, Section 5): a query is an ONNX model's bytes (``auto`` and ``mutnet``
        # build them: attacks.mutnet); a prediction vector is carried by a MutNet model on a linear base, whose
        # ranked head emits the predictions on the hidden rows in a feature order; rows are then ranks, not ids.
        self.takes_models = competition_meta.takes_models
        self.n_features = competition_meta.n_features
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
        account = self._current_account()
        try:
            answer = self._answer(predictions, self.client_of(account), account=account)
        finally:
            self._sync_stats()
        return self.take(answer)

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """Independent queries (:func:`attacks.oracle.submit_many`), up to ``window`` of them in flight; their
        released public scores in order. After a failure no further query is sent; the ones already sent are
        answered and counted, then the first failure is raised."""
        answers = self.answers(predictions)
        taken: list[Released] = []
        error: BaseException | None = None
        for answer in answers:
            try:
                taken.append(self.take(answer)[self.metric])
            except BaseException as exc:  # re-raised below, once every query sent is counted
                error = error or exc
        if error is not None:
            raise error
        return taken

    def answers(
        self,
        predictions: Sequence[Any],
        *,
        known: dict[int, int] | None = None,
        on_posted: Callable[[int, int], None] | None = None,
        on_answer: Callable[[int, Answer], None] | None = None,
    ) -> list[Answer]:
        """The pipelined path under :meth:`submit_many`: every query's :class:`Answer`, in order, with up to
        ``window`` in flight. ``known`` maps a query's position to a submission already made for it (a resumed
        run then polls it instead of uploading again). ``on_posted(position, submission_id)`` is told as soon
        as the site has accepted an upload and ``on_answer(position, answer)`` each answer in order, both in the
        calling thread (e.g. to checkpoint them at once). Once a query fails, no further one is sent; the list
        then ends with the last query sent. ``queries`` and the ids are counted by :meth:`submit_many`, not here.

        Quota: with a daily or total limit, no more uploads are in flight than the site says are left (asked
        once, then counted down; asked again when it reaches 0); at 0 one upload goes alone, so the client's
        429 handling (wait for the reset, or stop) applies to it as to a sequential run. Every query of the batch
        is made as the account current when it starts, and the quota is that account's."""
        vectors = list(predictions)
        known = dict(known or {})
        delivered: list[Answer] = []
        if not vectors:
            return delivered
        account = self._current_account()
        posted: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
        turnstile = Turnstile()
        polls = InOrderPolls()
        results: dict[int, Answer] = {}
        in_flight: dict[Future[Answer], int] = {}
        # A lone query needs no gate: it goes and meets the 429, if any, as a sequential run's does.
        quota_left = self._quota_left(account) if min(self.window, len(vectors) - len(known)) > 1 else None
        launched = 0
        stopped = False

        def report_posted() -> None:
            while not posted.empty():
                position, submission_id = posted.get()
                if on_posted is not None:
                    on_posted(position, submission_id)

        workers = min(self.window, len(vectors))
        try:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="http-oracle") as pool:
                try:
                    while len(delivered) < launched or (launched < len(vectors) and not stopped):
                        while not stopped and launched < len(vectors) and len(in_flight) < self.window:
                            uploads = launched not in known
                            if uploads and quota_left is not None:
                                if quota_left <= 0 and in_flight:
                                    break  # wait for the answers in flight before asking the site again
                                if quota_left <= 0:
                                    # at 0, one goes and meets the 429
                                    quota_left = max(self._quota_left(account) or 0, 1)
                                quota_left -= 1
                            future = pool.submit(
                                self._pipelined, vectors[launched], launched, known.get(launched), posted, turnstile,
                                polls, account,
                            )
                            in_flight[future] = launched
                            launched += 1
                        if not in_flight:
                            break  # what is left was never sent (NotSent) or never launched
                        done, _ = wait(in_flight, timeout=0.05, return_when=FIRST_COMPLETED)
                        report_posted()
                        for future in done:
                            position = in_flight.pop(future)
                            answer = future.result()
                            results[position] = answer
                            if answer.error is not None:
                                stopped = True
                                turnstile.stop()
                        while len(delivered) in results and not isinstance(results[len(delivered)].error, NotSent):
                            answer = results.pop(len(delivered))
                            if on_answer is not None:
                                on_answer(len(delivered), answer)
                            delivered.append(answer)
                    report_posted()
                finally:
                    turnstile.stop()  # interrupted: a query still waiting for its turn is not uploaded
                    polls.turns.stop()  # and the queries already uploaded poll at once, so the pool can close
        finally:
            report_posted()  # even when interrupted: an accepted upload is then polled on resume, not re-sent
        self._sync_stats()
        return delivered

    def _pipelined(
        self,
        predictions: Any,
        position: int,
        submission_id: int | None,
        posted: queue.SimpleQueue[tuple[int, int]],
        turnstile: Turnstile,
        polls: InOrderPolls,
        account: int,
    ) -> Answer:
        """One query of the pipelined path, in a worker thread with a client of its own (``account``'s): encode
        and upload in its turn (:class:`Turnstile`), then poll in its turn (:class:`InOrderPolls`) while later
        queries upload."""
        client = self._borrow_client(account)
        try:
            with turnstile.turn(position) as go:
                if not go:
                    return Answer(None, None, None, NotSent(f"query {position + 1} not sent: an earlier one failed"),
                                  account)
                if submission_id is None:
                    # Encoded in its turn, not ahead: one thread at a time does CPU work under the GIL, so the
                    # others' socket I/O is not held up behind it.
                    started = time.perf_counter()
                    body = self._encode(predictions)
                    self._add("encode_seconds", time.perf_counter() - started)
                    submission_id = self._post_submission(body, client, account)
                    posted.put((position, submission_id))
            assert submission_id is not None
            with polls.turns.turn(position):  # after a stop (a failure) the rest poll at once: still answered
                # One at a time, a query's wait is its own latency: the oracle's default applies.
                first = polls.first_delay() if self.window > 1 else None
                answer = self._answer(predictions, client, submission_id=submission_id, first_delay=first,
                                      account=account)
                polls.answered()
                return answer
        except (ClientError, ValueError) as exc:
            return Answer(submission_id, None, None, exc, account)
        finally:
            self._spares(account).put(client)

    def _answer(
        self,
        predictions: Any,
        client: LeaderboardClient,
        *,
        submission_id: int | None = None,
        on_posted: Callable[[int], None] | None = None,
        first_delay: float | None = None,
        account: int = 0,
    ) -> Answer:
        """Upload as ``account`` through its ``client`` (unless ``submission_id`` names the submission already
        made for it), wait until scored (``first_delay`` before the first poll; default from the recent
        latency), and read every released public value; a failed scoring is an :class:`Answer` with its error."""
        if submission_id is None:
            started = time.perf_counter()
            body = self._encode(predictions)
            self._add("encode_seconds", time.perf_counter() - started)
            submission_id = self._post_submission(body, client, account)
            if on_posted is not None:
                on_posted(submission_id)
        detail = self._wait_scored(submission_id, client, first_delay)
        if detail.status == "failed":
            return Answer(submission_id, None, None, SubmissionFailed(submission_id, detail.error or "no reason given"),
                          account)
        text = detail.public_score_text
        released: dict[str, Released] = {self.metric: self.released_value(text) if text else None}
        extra = detail.extra_scores
        for metric in self.also_report:
            extra_text = str((extra.get(metric) or {}).get("public_score_text") or "")
            released[metric] = self.released_value(extra_text) if extra_text else None
        return Answer(submission_id, released, text or None, None, account)

    def take(self, answer: Answer) -> dict[str, Released]:
        """Count an answered query (when a submission was made; in ``queries`` and its account's
        ``queries_by_account``) and return its values, or raise its error."""
        if answer.submission_id is not None:
            self.queries += 1
            self.queries_by_account[answer.account] += 1
            self.last_submission_id = answer.submission_id
            self.submission_ids.append(answer.submission_id)
        if answer.error is not None:
            raise answer.error
        assert answer.released is not None
        self.last_released_text = answer.text
        return answer.released

    def released_value(self, text: str) -> Released:
        """The released text as a number: ``Decimal`` when the site releases more than float64 carries (MPFR
        arithmetic with every digit), else ``float``."""
        if not self._float64 and self.decimals is None:
            return Decimal(text)
        return float(text)

    def quota(self) -> dict[str, Any]:
        """``GET …/quota/``: the current account's used and remaining submissions and the next UTC reset."""
        return self.client.quota(self.slug).data

    def _quota_left(self, account: int) -> int | None:
        """Submissions the site lets ``account`` make now (``None``: no limit)."""
        if self.daily_limit is None and self.total_limit is None:
            return None
        quota = self.client_of(account).quota(self.slug)
        left = [n for n in (quota.remaining_today, quota.remaining_total) if n is not None]
        return min(left) if left else None

    # --- clients ----------------------------------------------------------------------------------------

    @property
    def client(self) -> LeaderboardClient:
        """The current account's :class:`~bot.client.LeaderboardClient` (its token)."""
        return self.client_of(self._current_account())

    def client_of(self, account: int) -> LeaderboardClient:
        """Account ``account``'s client, made on first use: a session of its own (its ``Authorization``
        header, its cookies) over the first account's connection pool, so a thousand accounts share a few
        connections."""
        with self._lock:
            client = self._clients.get(account)
            if client is None:
                client = self._clients[account] = self._new_client(account, self._sibling_session())
            return client

    def _sibling_session(self) -> requests.Session:
        """A new session that sends its requests through the first account's adapters (connection pools) and
        settings, without its credentials or cookies."""
        first = self._clients[0].session
        session = requests.Session()
        session.headers.update({k: v for k, v in first.headers.items() if k.lower() != "authorization"})
        session.verify, session.cert, session.proxies, session.trust_env = (
            first.verify, first.cert, dict(first.proxies), first.trust_env)
        for prefix, adapter in first.adapters.items():
            session.mount(prefix, adapter)
        return session

    def _current_account(self) -> int:
        """The current account, checked as ``LocalOracle`` checks it before a submission."""
        account = self.account
        if isinstance(account, bool) or not isinstance(account, int | np.integer) or not 0 <= account < self.accounts:
            raise ValueError(f"account {account} does not exist: this board has {self.accounts} account(s)")
        return int(account)

    def _new_client(self, account: int, session: requests.Session | None = None) -> LeaderboardClient:
        return LeaderboardClient(
            self.base, self._tokens[account], timeout=self.timeout, backoff=self.backoff, poll=self.poll,
            on_quota=self.on_quota, max_quota_wait=self.max_quota_wait, session=session,
            clock=lambda: self.clock(), sleep=lambda seconds: self.sleep(seconds), on_wait=self.on_wait,
        )

    def _spares(self, account: int) -> queue.SimpleQueue[LeaderboardClient]:
        with self._lock:
            return self._spare_clients.setdefault(account, queue.SimpleQueue())

    def _borrow_client(self, account: int) -> LeaderboardClient:
        try:
            return self._spares(account).get_nowait()
        except queue.Empty:
            client = self._new_client(account)
            with self._lock:
                self._extra_clients.append(client)
            return client

    def _add(self, name: str, value: float) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + value)

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
        if self.takes_models and isinstance(predictions, bytes):
            return predictions  # a query that is a model already (attacks.mutnet's ModelOracle built it)
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

    def _post_submission(self, body: bytes, client: LeaderboardClient, account: int) -> int:
        """Upload through ``client``, ``account``'s (which waits or stops on its 429 and retries transient
        failures under one Idempotency-Key); the submission's id. With several accounts, a quota stop names
        its token's position in the list (never the token)."""
        started = time.perf_counter()
        slept = client.stats.slept
        try:
            if self.takes_models:
                upload = client.submit_model(self.slug, body)
            elif self.upload == "json":
                upload = client.submit_json(self.slug, body)
            else:
                # A unique name, looked up before re-sending, also keeps a site without Idempotency-Key safe.
                name = f"bot-{uuid.uuid4().hex}.csv"
                upload = client.submit_csv(self.slug, body, filename=name, recover_by_name=True)
        except QuotaExceeded as exc:
            if self.accounts == 1:
                raise
            raise QuotaExceeded(f"token {account + 1} of {self.accounts}: {exc.message}", exc.resets_at,
                                exc.retry_after) from None
        # Time on the wire only: the client's backoff and quota sleeps are not the site's latency.
        self._add("post_seconds", max(0.0, time.perf_counter() - started - (client.stats.slept - slept)))
        self._add("posts", 1)
        return upload.id

    def _wait_scored(
        self, submission_id: int, client: LeaderboardClient | None = None, first_delay: float | None = None
    ) -> Submission:
        """Poll until the submission is terminal. The first poll waits ``first_delay``, by default about 70 %
        of the recent scoring latency (an early poll only costs the busy server CPU it needs for scoring), then
        polls speed up geometrically from ``poll.initial`` up to ``poll.maximum``."""
        client = client or self.client
        started = time.perf_counter()
        polls = client.stats.polls
        own_latency = first_delay is None
        first = first_delay if first_delay is not None else (
            0.0 if self._latency is None else min(0.7 * self._latency, self.poll.maximum))
        try:
            detail = client.wait(submission_id, schedule=self.poll, first_delay=first)
        finally:
            self._add("polls", client.stats.polls - polls)
        elapsed = time.perf_counter() - started
        self._add("poll_seconds", elapsed)
        if own_latency:  # an in-order poll's wait is the gap between answers, not the upload-to-scored latency
            with self._lock:
                self._latency = elapsed if self._latency is None else 0.8 * self._latency + 0.2 * elapsed
        return detail

    def _sync_stats(self) -> None:
        with self._lock:
            clients = [*self._clients.values(), *self._extra_clients]
        self.stats.retries = sum(c.stats.retries for c in clients)
        self.stats.quota_waits = sum(c.stats.quota_waits for c in clients)


def _float_texts(values: np.ndarray) -> list[str]:
    """``repr`` of every float (exact round trip), computed once per distinct value: attack vectors hold a
    handful of distinct values (most rows at 1/2), so this is several times faster than ``map(repr, ...)``.

    >>> _float_texts(np.array([0.5, 0.1, 0.5]))
    ['0.5', '0.1', '0.5']
    """
    distinct, inverse = np.unique(values, return_inverse=True)
    texts = np.array([repr(v) for v in distinct.tolist()], dtype=object)
    return list(texts[inverse.reshape(-1)].tolist())
