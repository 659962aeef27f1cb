"""Checkpoints of a bot run, and ``ReplayOracle``, which resumes an interrupted run without re-submitting.

A checkpoint is a JSON Lines file: a header line (competition, site, when) and then one line per query,
written and flushed right after the query is answered: the SHA-256 of the submitted predictions, the
released score exactly as released (text), or the failure message. Appending one line per query keeps the
cost per query constant (rewriting a whole JSON file each time would be quadratic over 2,500 queries), and a
line torn by a kill mid-write is simply dropped on reading (that query is then asked again).

With a pipelined oracle (``--window``), several queries are in flight at once. Their answers are still
written in query order, and as soon as the site accepts an upload a ``posted`` line records its submission id:
a run killed with queries in flight resumes by polling those submissions instead of uploading them again, so
even an interrupted pipelined run never submits a query twice.

With several accounts (the bot given several tokens), each line also records the account the query was made as
(``"account"``, its index in the token list; absent means the first, so checkpoints written before accounts
existed load as account 0). A replayed query must be made as the same account as recorded, or the run is
refused as changed; the header records how many accounts the run plays, and a resume with another number is
refused too. No token is ever written.

Resumption needs no cooperation from the attacks: every attack here is deterministic given its parameters,
seeds and the answers it receives, so on resume :class:`ReplayOracle` answers the first queries from the
checkpoint, in order, checking that each prediction vector hashes to the recorded one (so a changed attack,
parameter or seed is caught instead of silently mixing two runs), and only past the end of the checkpoint
does it ask the real oracle.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import numpy as np

from attacks.oracle import Oracle, Released
from bot.http_oracle import Answer, HttpOracle, SubmissionFailed, exact_text

FORMAT_VERSION = 1


class CheckpointMismatch(RuntimeError):
    """The checkpoint was written by a different run (another competition, attack, parameter or seed)."""


class BudgetExhausted(RuntimeError):
    """The run has used its whole query budget (``--budget``); the checkpoint lets a later run go on."""


def prediction_digest(predictions: Any) -> str:
    """SHA-256 of a prediction vector: of its float64 bytes when it is numeric, else of its exact texts.

    >>> prediction_digest([0.5, 0.5]) == prediction_digest(np.array([0.5, 0.5]))
    True
    >>> prediction_digest([0.5, 0.5]) == prediction_digest([0.5, 0.5000000000000001])
    False
    """
    if isinstance(predictions, bytes):  # a model (a model competition's query): its bytes
        return hashlib.sha256(b"model\n" + predictions).hexdigest()
    array = np.asarray(predictions)
    digest = hashlib.sha256()
    if array.dtype.kind in "biuf":
        values = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(repr(values.shape).encode())
        digest.update(values.tobytes())
    else:
        rows = [row if isinstance(row, list | tuple | np.ndarray) else (row,) for row in predictions]
        digest.update("\n".join(",".join(exact_text(v) for v in row) for row in rows).encode())
    return digest.hexdigest()


def released_text(value: Released, text: str | None = None) -> str | None:
    """How a released value is stored: the site's own text when known, else ``repr``/``str`` of the value."""
    if value is None:
        return None
    if text:
        return text
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Entry:
    """One answered query: the predictions' digest and the released text (``None``: nothing released), or
    the site's failure message."""

    digest: str
    released: str | None
    kind: str  # "float" | "decimal" | "failed" | "posted" (accepted by the site, not answered yet)
    submission_id: int | None = None
    #: The released texts of the board's other metrics (``also_report``), for a query asked through
    #: ``submit_all`` (paper 004's AUC + log-loss attacks); ``None`` for a one-score query.
    extra: dict[str, str | None] | None = None
    #: The account the query was made as (an index into the bot's tokens; 0 for a one-token run).
    account: int = 0

    def record(self, index: int) -> dict[str, Any]:
        """The entry as a line of the file (query number ``index``); the account only when not the first."""
        record: dict[str, Any] = {"i": index, "sha256": self.digest, "released": self.released, "kind": self.kind}
        if self.submission_id is not None:
            record["submission_id"] = self.submission_id
        if self.extra is not None:
            record["extra"] = self.extra
        if self.account:
            record["account"] = self.account
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Entry:
        """An entry read back from a line (no ``account``: the first account, as before accounts existed)."""
        return cls(record["sha256"], record.get("released"), record["kind"], record.get("submission_id"),
                   record.get("extra"), int(record.get("account", 0)))

    def value(self) -> Released:
        if self.kind == "failed":
            raise SubmissionFailed(self.submission_id or 0, self.released or "failed")
        return self._parse(self.released)

    def values(self, metric: str) -> dict[str, Released]:
        """Every released value of a ``submit_all`` query: ``metric`` (the primary) first, then the others."""
        return {metric: self.value(), **{name: self._parse(text) for name, text in (self.extra or {}).items()}}

    def _parse(self, text: str | None) -> Released:
        if text is None:
            return None
        return Decimal(text) if self.kind == "decimal" else float(text)


class Checkpoint:
    """An append-only record of a run's queries at ``path`` (created on the first write): ``entries``, the
    answered queries in order, and ``posted``, queries past them that the site accepted but had not answered
    (by query number)."""

    def __init__(
        self, path: Path, header: dict[str, Any], entries: list[Entry] | None = None,
        posted: dict[int, Entry] | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.entries: list[Entry] = entries or []
        self.posted: dict[int, Entry] = posted or {}
        self._handle: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, header: dict[str, Any], *, restart: bool = False) -> Checkpoint:
        """The checkpoint at ``path`` if one exists for the same competition (``header["competition"]`` and
        ``header["n_rows"]``) and, when both headers say, the same number of ``accounts``, else a new one;
        ``restart`` discards an existing one."""
        if restart and path.exists():
            path.unlink()
        if not path.exists():
            return cls(path, header)
        lines = path.read_text().splitlines()
        records: list[dict[str, Any]] = []
        for number, line in enumerate(lines):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                if number == len(lines) - 1:
                    break  # the last line was torn by an interruption: that query is simply asked again
                raise CheckpointMismatch(f"{path}: line {number + 1} is not JSON; is this a bot checkpoint?") from None
        if not records or records[0].get("checkpoint") != FORMAT_VERSION:
            raise CheckpointMismatch(f"{path} is not a leaderboard-bot checkpoint (version {FORMAT_VERSION})")
        old = records[0]
        for key in ("competition", "n_rows"):
            if old.get(key) != header.get(key):
                raise CheckpointMismatch(
                    f"{path} belongs to {key}={old.get(key)!r}, not {header.get(key)!r}; "
                    "use another --checkpoint or --restart"
                )
        if "accounts" in old and "accounts" in header and old["accounts"] != header["accounts"]:
            raise CheckpointMismatch(
                f"{path} was written by a run with {old['accounts']} account(s), this one has {header['accounts']}; "
                "resume with the same tokens in the same order, or use another --checkpoint or --restart"
            )
        answered: dict[int, Entry] = {}
        posted: dict[int, Entry] = {}
        for position, r in enumerate(records[1:]):
            entry = Entry.from_record(r)
            index = int(r.get("i", position))
            (posted if entry.kind == "posted" else answered)[index] = entry
        entries: list[Entry] = []
        while len(entries) in answered:  # answers are written in order: they are the run's first queries
            entries.append(answered[len(entries)])
        pending = {i: entry for i, entry in posted.items() if i >= len(entries)}
        checkpoint = cls(path, old, entries, pending)
        # Rewrite without a torn tail so that appends start on a fresh line.
        checkpoint._rewrite()
        return checkpoint

    def append(self, entry: Entry) -> None:
        """Record the answer of the next query."""
        self._write(entry.record(len(self.entries)))
        self.posted.pop(len(self.entries), None)
        self.entries.append(entry)

    def append_posted(self, index: int, entry: Entry) -> None:
        """Record that the site accepted query ``index`` (not answered yet) as ``entry.submission_id``."""
        self._write(entry.record(index))
        self.posted[index] = entry

    def _write(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            if not self.path.exists():
                self._rewrite()
            self._handle = self.path.open("a")
        self._handle.write(json.dumps(record) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _rewrite(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("w") as handle:
            handle.write(json.dumps({"checkpoint": FORMAT_VERSION, **self.header}) + "\n")
            for i, entry in enumerate(self.entries):
                handle.write(json.dumps(entry.record(i)) + "\n")
            for i, entry in sorted(self.posted.items()):
                handle.write(json.dumps(entry.record(i)) + "\n")
        os.replace(temporary, self.path)


def new_header(competition: str, n_rows: int, url: str, **extra: Any) -> dict[str, Any]:
    return {
        "competition": competition,
        "n_rows": n_rows,
        "url": url,
        "started_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        **extra,
    }


class ReplayOracle:
    """An :class:`Oracle` that answers already-made queries from ``checkpoint`` and records new ones.

    Every attribute other than ``submit``/``queries`` is the inner oracle's (metadata, ``ids``, ``accounts``,
    ...); ``account`` is read from and set on the inner oracle, and every query is recorded with it and replayed
    only as the same account (``queries_by_account`` counts replayed and fresh queries alike). ``budget`` caps
    the run's total queries, replayed ones included: the query past it raises :class:`BudgetExhausted` before
    anything is sent. ``on_query(replayed)`` is called after every query (e.g. to advance a progress bar).

    >>> from attacks import LocalOracle
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "run.checkpoint.jsonl"
    >>> first = ReplayOracle(LocalOracle([0, 1, 1]), Checkpoint.open(path, {"competition": "c", "n_rows": 3}))
    >>> first.submit([0.5, 0.9, 0.9])
    0.30129
    >>> server = LocalOracle([0, 1, 1])
    >>> again = ReplayOracle(server, Checkpoint.open(path, {"competition": "c", "n_rows": 3}))
    >>> again.submit([0.5, 0.9, 0.9]), server.queries, again.replayed
    (0.30129, 0, 1)
    >>> again.checkpoint.close()
    """

    def __init__(
        self,
        inner: Oracle,
        checkpoint: Checkpoint,
        *,
        budget: int | None = None,
        on_query: Any = None,
    ) -> None:
        self.inner = inner
        self.checkpoint = checkpoint
        self.budget = budget
        self.on_query = on_query
        self.n_rows = inner.n_rows
        self.n_classes = inner.n_classes
        self.metric = inner.metric
        self.eps = inner.eps
        self.decimals = inner.decimals
        self.queries = 0
        self.replayed = 0
        self.last_released_text: str | None = None
        self.queries_by_account = [0] * int(getattr(inner, "accounts", 1) or 1)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set in __init__: the inner oracle's metadata.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def account(self) -> int:
        """The account the next query is made as: the inner oracle's (0 for an oracle of one account)."""
        return int(getattr(self.inner, "account", 0))

    @account.setter
    def account(self, value: int) -> None:
        self.inner.account = value  # type: ignore[attr-defined]

    def _count(self, account: int, *, replayed: bool) -> None:
        """One more query, made as ``account``: counted, and reported to ``on_query``."""
        self.queries += 1
        if 0 <= account < len(self.queries_by_account):
            self.queries_by_account[account] += 1
        if replayed:
            self.replayed += 1
        if self.on_query is not None:
            self.on_query(replayed)

    def _recorded(self, digest: str) -> Entry:
        """The checkpoint's entry for the next query, which must be this one (``digest``) made as this account."""
        entry = self.checkpoint.entries[self.queries]
        if entry.digest != digest:
            raise self._mismatch(self.queries)
        if entry.account != self.account:
            raise self._account_mismatch(self.queries, entry.account)
        return entry

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        """One query answering every metric the board releases (``also_report``: paper 004's AUC + log-loss
        attacks), through the checkpoint and the budget like :meth:`submit`: replayed from the checkpoint
        (digest checked) while it lasts, else asked of the inner oracle's ``submit_all`` and recorded with
        every released text."""
        if self.budget is not None and self.queries >= self.budget:
            raise BudgetExhausted(f"the query budget of {self.budget} is used up")
        digest = prediction_digest(predictions)
        if self.queries < len(self.checkpoint.entries):
            entry = self._recorded(digest)
            if entry.extra is None and entry.kind != "failed":
                raise self._mismatch(self.queries)
            self.last_released_text = entry.released if entry.kind != "failed" else None
            self._count(entry.account, replayed=True)
            return entry.values(self.metric)
        account = self.account
        try:
            released = self.inner.submit_all(predictions)  # type: ignore[attr-defined]
        except SubmissionFailed as exc:
            self.checkpoint.append(Entry(digest, exc.message, "failed", exc.submission_id, account=account))
            self._count(account, replayed=False)
            raise
        value = released[self.metric]
        text = released_text(value, getattr(self.inner, "last_released_text", None))
        kind = "decimal" if isinstance(value, Decimal) else "float"
        extra = {name: released_text(other) for name, other in released.items() if name != self.metric}
        self.checkpoint.append(
            Entry(digest, text, kind, getattr(self.inner, "last_submission_id", None), extra, account))
        self.last_released_text = text
        self._count(account, replayed=False)
        return released

    @property
    def fresh(self) -> int:
        """Queries actually sent to the inner oracle by this run."""
        return self.queries - self.replayed

    def submit(self, predictions: Any) -> Released:
        return self.submit_many([predictions])[0]

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """Independent queries (:func:`attacks.oracle.submit_many`): those the checkpoint holds are replayed
        (their digests checked), the rest asked of the inner oracle — through its pipelined path when it is an
        :class:`~bot.http_oracle.HttpOracle`, polling instead of re-uploading a query the checkpoint says the
        site accepted — and recorded in order. Past the budget nothing is sent: the queries that fit are
        answered, then :class:`BudgetExhausted` is raised. A failed query raises (after the queries sent with it
        are recorded), on replay as it did live."""
        vectors = list(predictions)
        fits = vectors if self.budget is None else vectors[: max(0, self.budget - self.queries)]
        if not fits and vectors:
            raise BudgetExhausted(f"the query budget of {self.budget} is used up")
        digests = [prediction_digest(v) for v in fits]
        values: list[Released] = []
        failure: SubmissionFailed | None = None
        position = 0
        while position < len(fits) and self.queries < len(self.checkpoint.entries):
            if failure is not None and self.checkpoint.entries[self.queries].digest != digests[position]:
                break  # the live run sent no more of this batch after the failure
            entry = self._recorded(digests[position])
            position += 1
            self.last_released_text = entry.released if entry.kind != "failed" else None
            self._count(entry.account, replayed=True)
            try:
                values.append(entry.value())
            except SubmissionFailed as exc:
                failure = failure or exc
        if failure is None and position < len(fits):
            values.extend(self._ask(fits[position:], digests[position:]))
        if failure is not None:
            raise failure
        if len(fits) < len(vectors):
            raise BudgetExhausted(f"the query budget of {self.budget} is used up")
        return values

    def _mismatch(self, index: int) -> CheckpointMismatch:
        return CheckpointMismatch(
            f"query {index + 1} differs from the one recorded in {self.checkpoint.path}: the attack, its "
            "parameters or seed changed since the checkpoint was written; use --restart (or another "
            "--checkpoint) to start over"
        )

    def _account_mismatch(self, index: int, recorded: int) -> CheckpointMismatch:
        return CheckpointMismatch(
            f"query {index + 1} was made as account {recorded + 1} (token {recorded + 1}) in "
            f"{self.checkpoint.path}, but this run makes it as account {self.account + 1}: the tokens, the attack "
            "or its parameters changed since the checkpoint was written; use --restart (or another --checkpoint) "
            "to start over"
        )

    def _ask(self, vectors: list[Any], digests: list[str]) -> list[Released]:
        """Queries past the checkpoint, asked of the inner oracle and recorded in order."""
        if not isinstance(self.inner, HttpOracle):
            return [self._ask_one(vector, digest) for vector, digest in zip(vectors, digests, strict=True)]
        start = self.queries
        account = self.account
        known: dict[int, int] = {}
        for offset, digest in enumerate(digests):
            posted = self.checkpoint.posted.get(start + offset)
            if posted is not None:
                if posted.digest != digest:
                    raise self._mismatch(start + offset)
                if posted.account != account:
                    raise self._account_mismatch(start + offset, posted.account)
                assert posted.submission_id is not None
                known[offset] = posted.submission_id

        def record_posted(offset: int, submission_id: int) -> None:
            self.checkpoint.append_posted(
                start + offset, Entry(digests[offset], None, "posted", submission_id, account=account))

        gap = False

        def record_answer(offset: int, answer: Answer) -> None:
            nonlocal gap
            if answer.submission_id is None:
                gap = True  # nothing reached the site (over quota, a refused upload): nothing to record
                return
            if gap:
                # Sent before the gap was known (e.g. another client of the same account took the last quota):
                # its answer cannot follow in order, but a resumed run polls it rather than uploading it again.
                record_posted(offset, answer.submission_id)
                return
            if isinstance(answer.error, SubmissionFailed):
                entry = Entry(digests[offset], answer.error.message, "failed", answer.submission_id,
                              account=answer.account)
            else:
                value = (answer.released or {}).get(self.inner.metric)
                kind = "decimal" if isinstance(value, Decimal) else "float"
                entry = Entry(digests[offset], released_text(value, answer.text), kind, answer.submission_id,
                              account=answer.account)
            self.checkpoint.append(entry)
            self.last_released_text = entry.released if entry.kind != "failed" else None
            self._count(answer.account, replayed=False)

        answers = self.inner.answers(vectors, known=known, on_posted=record_posted, on_answer=record_answer)
        values: list[Released] = []
        error: BaseException | None = None
        for answer in answers:
            try:
                values.append(self.inner.take(answer)[self.inner.metric])
            except BaseException as exc:  # re-raised below, once every query sent is counted
                error = error or exc
        if error is not None:
            raise error
        return values

    def _ask_one(self, predictions: Any, digest: str) -> Released:
        account = self.account
        try:
            value = self.inner.submit(predictions)
        except SubmissionFailed as exc:
            self.checkpoint.append(Entry(digest, exc.message, "failed", exc.submission_id, account=account))
            self._count(account, replayed=False)
            raise
        text = released_text(value, getattr(self.inner, "last_released_text", None))
        kind = "decimal" if isinstance(value, Decimal) else "float"
        self.checkpoint.append(
            Entry(digest, text, kind, getattr(self.inner, "last_submission_id", None), account=account))
        self.last_released_text = text
        self._count(account, replayed=False)
        return value
