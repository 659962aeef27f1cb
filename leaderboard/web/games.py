"""Reads on game reports: the directories the game runner writes under ``LEADERBOARD_GAMES_DIR``.

Every lookup resolves the requested path and refuses anything outside the games directory, so a crafted
name (``..``, an absolute path, a symlink pointing out) can never serve another file of the machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

REPORT_NAME = "report.html"
_GAME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class GameNotFound(Exception):
    """No such game or file (or a path that escapes the games directory)."""


@dataclass(frozen=True)
class GameSummary:
    name: str
    modified_at: datetime
    has_report: bool


@dataclass(frozen=True)
class GameFile:
    path: str  # relative to the game's directory, with forward slashes
    size: int


def games_root() -> Path:
    return Path(getattr(settings, "LEADERBOARD_GAMES_DIR", settings.VAR_DIR / "games"))


def _inside(root: Path, candidate: Path) -> Path:
    resolved_root = root.resolve()
    resolved = candidate.resolve()
    if resolved != resolved_root and not resolved.is_relative_to(resolved_root):
        raise GameNotFound("outside the games directory")
    return resolved


def game_list(*, root: Path | None = None) -> list[GameSummary]:
    """Every game directory, newest first."""
    root = root or games_root()
    if not root.is_dir():
        return []
    games = []
    for entry in root.iterdir():
        if not entry.is_dir() or not _GAME_NAME.match(entry.name):
            continue
        try:
            _inside(root, entry)
        except GameNotFound:
            continue
        modified = datetime.fromtimestamp(entry.stat().st_mtime, tz=UTC)
        games.append(GameSummary(entry.name, modified, (entry / REPORT_NAME).is_file()))
    return sorted(games, key=lambda game: (game.modified_at, game.name), reverse=True)


def game_directory(*, name: str, root: Path | None = None) -> Path:
    root = root or games_root()
    if not _GAME_NAME.match(name):
        raise GameNotFound(name)
    directory = _inside(root, root / name)
    if not directory.is_dir():
        raise GameNotFound(name)
    return directory


def game_files(*, name: str, root: Path | None = None) -> list[GameFile]:
    """The files of one game (recursively, hidden files skipped), the report first."""
    directory = game_directory(name=name, root=root)
    files = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        try:
            _inside(directory, path)
        except GameNotFound:
            continue
        files.append(GameFile(relative.as_posix(), path.stat().st_size))
    return sorted(files, key=lambda f: (f.path != REPORT_NAME, f.path))


def game_file_path(*, name: str, path: str, root: Path | None = None) -> Path:
    """The file ``path`` of game ``name``; raises :class:`GameNotFound` for anything else."""
    directory = game_directory(name=name, root=root)
    relative = Path(path)
    if relative.is_absolute() or any(part in {"", ".", ".."} or part.startswith(".") for part in relative.parts):
        raise GameNotFound(path)
    target = _inside(directory, directory / relative)
    if not target.is_file():
        raise GameNotFound(path)
    return target
