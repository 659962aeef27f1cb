"""The journal of a game run: every finished unit's result, one JSON line each, keyed by unit, so a run that
was interrupted (Ctrl-C, a lost machine, a dead broker) resumes without playing a finished cell again.

A key is a digest of what the unit's result depends on (:func:`games.units.unit_key`), so the same journal
serves a game that grew (more seeds, attacks, defenses: only the new cells are played) and never hands back a
cell whose game entries changed. The first line gives the journal's format; one of another format is refused.
Each line is flushed and synced before the unit counts as done, and a torn last line (the process died
mid-write) is dropped, so the journal never holds half a result.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from games.gamefile import GameFileError

FILENAME = "journal.jsonl"
#: The journal's format, with :data:`games.units.FORMAT` inside every key.
VERSION = 1


class Journal:
    """Append-only results keyed by unit (:func:`games.units.unit_key`); ``fresh`` discards what is there."""

    def __init__(self, path: str | Path, *, fresh: bool = False) -> None:
        self.path = Path(path)
        self.done: dict[str, dict[str, Any]] = {}
        if fresh and self.path.exists():
            self.path.unlink()
        if self.path.exists():
            self._read()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        if new:
            self._write({"journal": VERSION})

    def _read(self) -> None:
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            # The process died mid-write: cut the torn line, so the next append starts a line of its own.
            data = data[: data.rfind(b"\n") + 1]
            self.path.write_bytes(data)
        lines = data.decode("utf-8").splitlines()
        if not lines:
            return
        try:
            header = json.loads(lines[0])
        except json.JSONDecodeError:
            header = {}
        if not isinstance(header, dict) or header.get("journal") != VERSION:
            raise GameFileError(
                f"{self.path} is not a game journal of version {VERSION}; give another --out, or --fresh to discard it"
            )
        for line in lines[1:]:
            entry = json.loads(line)
            self.done[entry["key"]] = entry["result"]

    def add(self, key: str, result: dict[str, Any]) -> None:
        """Record a finished unit (durably: flushed and synced before returning)."""
        self.done[key] = result
        self._write({"key": key, "result": result})

    def _write(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
