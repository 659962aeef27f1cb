"""Checkpoints of a bot run, and ``ReplayOracle``, which resumes an interrupted run without re-submitting.

A checkpoint is a JSON Lines file: a header line (competition, site, when) and then one line per query,
written and flushed right after the query is answered: the SHA-256 of the submitted predictions, the
released score exactly as released (text), or the failure message. Appending one line per query keeps the
cost per query constant (rewriting a whole JSON file each time would be quadratic over 2,500 queries), and a
line torn by a kill mid-write is simply dropped on reading (that query is then asked again).

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
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import numpy as np

from attacks.oracle import Oracle, Released
from bot.http_oracle import SubmissionFailed, exact_text

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
    kind: str  # "float" | "decimal" | "failed"
    submission_id: int | None = None

    def value(self) -> Released:
        if self.kind == "failed":
            raise SubmissionFailed(self.submission_id or 0, self.released or "failed")
        if self.released is None:
            return None
        return Decimal(self.released) if self.kind == "decimal" else float(self.released)


class Checkpoint:
    """An append-only record of a run's queries at ``path`` (created on the first write)."""

    def __init__(self, path: Path, header: dict[str, Any], entries: list[Entry] | None = None) -> None:
        self.path = path
        self.header = header
        self.entries: list[Entry] = entries or []
        self._handle: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, header: dict[str, Any], *, restart: bool = False) -> Checkpoint:
        """The checkpoint at ``path`` if one exists for the same competition (``header["competition"]`` and
        ``header["n_rows"]``), else a new one; ``restart`` discards an existing one."""
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
        entries = [
            Entry(r["sha256"], r.get("released"), r["kind"], r.get("submission_id")) for r in records[1:]
        ]
        checkpoint = cls(path, old, entries)
        # Rewrite without a torn tail so that appends start on a fresh line.
        checkpoint._rewrite()
        return checkpoint

    def append(self, entry: Entry) -> None:
        if self._handle is None:
            if not self.path.exists():
                self._rewrite()
            self._handle = self.path.open("a")
        record = {"i": len(self.entries), "sha256": entry.digest, "released": entry.released, "kind": entry.kind}
        if entry.submission_id is not None:
            record["submission_id"] = entry.submission_id
        self._handle.write(json.dumps(record) + "\n")
        self._handle.flush()
        self.entries.append(entry)

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
                record = {"i": i, "sha256": entry.digest, "released": entry.released, "kind": entry.kind}
                if entry.submission_id is not None:
                    record["submission_id"] = entry.submission_id
                handle.write(json.dumps(record) + "\n")
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

    Every attribute other than ``submit``/``queries`` is the inner oracle's (metadata, ``ids``, ...).
    ``budget`` caps the run's total queries, replayed ones included: the query past it raises
    :class:`BudgetExhausted` before anything is sent. ``on_query(replayed)`` is called after every query
    (e.g. to advance a progress bar).

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

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set in __init__: the inner oracle's metadata. ``submit_all`` is not
        # passed through: a checkpoint entry records one released value, so a multi-metric query would escape
        # the checkpoint and the budget; attacks that need it (auc_logloss) then say the oracle lacks it.
        if name in ("inner", "submit_all"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def fresh(self) -> int:
        """Queries actually sent to the inner oracle by this run."""
        return self.queries - self.replayed

    def submit(self, predictions: Any) -> Released:
        if self.budget is not None and self.queries >= self.budget:
            raise BudgetExhausted(f"the query budget of {self.budget} is used up")
        digest = prediction_digest(predictions)
        index = self.queries
        if index < len(self.checkpoint.entries):
            entry = self.checkpoint.entries[index]
            if entry.digest != digest:
                raise CheckpointMismatch(
                    f"query {index + 1} differs from the one recorded in {self.checkpoint.path}: the attack, its "
                    "parameters or seed changed since the checkpoint was written; use --restart (or another "
                    "--checkpoint) to start over"
                )
            self.queries += 1
            self.replayed += 1
            self.last_released_text = entry.released if entry.kind != "failed" else None
            if self.on_query is not None:
                self.on_query(True)
            return entry.value()
        try:
            value = self.inner.submit(predictions)
        except SubmissionFailed as exc:
            self.checkpoint.append(Entry(digest, exc.message, "failed", exc.submission_id))
            self.queries += 1
            if self.on_query is not None:
                self.on_query(False)
            raise
        text = released_text(value, getattr(self.inner, "last_released_text", None))
        kind = "decimal" if isinstance(value, Decimal) else "float"
        self.checkpoint.append(Entry(digest, text, kind, getattr(self.inner, "last_submission_id", None)))
        self.queries += 1
        self.last_released_text = text
        if self.on_query is not None:
            self.on_query(False)
        return value
