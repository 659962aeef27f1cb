"""A text progress bar for long games: done / total cells, the rate, the time left.

On a terminal the bar redraws one line in place; elsewhere (a log, a CI job) it prints one line per cell, so a
log still says what each cell did.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


def bar(done: int, total: int, width: int = 24) -> str:
    """``[#########...............]``: the finished share of ``width`` characters.

    >>> bar(1, 4, width=8)
    '[##......]'
    """
    filled = 0 if total <= 0 else min(width, done * width // total)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def duration(seconds: float) -> str:
    """``1:05:09``, ``3:07``.

    >>> duration(3909), duration(187.4)
    ('1:05:09', '3:07')
    """
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressBar:
    """Counts ``what`` (cells, boards) towards ``total``; ``resumed`` of them were done before this run (not in
    the rate)."""

    def __init__(self, total: int, *, resumed: int = 0, what: str = "cells", stream: TextIO | None = None,
                 tty: bool | None = None) -> None:
        self.total = total
        self.what = what
        self.resumed = resumed
        self.done = resumed
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.started = time.perf_counter()

    def line(self, message: str = "") -> str:
        """The status line: bar, count, rate of this run, time left, and ``message`` (the last cell)."""
        played = self.done - self.resumed
        elapsed = time.perf_counter() - self.started
        rate = played / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = f", {duration(left / rate)} left" if rate > 0 and left else ""
        resumed = f" ({self.resumed} resumed)" if self.resumed else ""
        text = (f"{bar(self.done, self.total)} {self.done}/{self.total} {self.what}{resumed}, "
                f"{rate:.2f} {self.what}/s{eta}")
        return f"{text} · {message}" if message else text

    def advance(self, message: str = "") -> None:
        """One more cell done; redraw (terminal) or print a line (anything else)."""
        self.done += 1
        self.show(message)

    def show(self, message: str = "") -> None:
        text = self.line(message)
        if self.tty:
            width = shutil.get_terminal_size((120, 20)).columns
            self.stream.write("\r" + text[: width - 1].ljust(width - 1))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
