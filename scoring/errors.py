"""Errors raised by the pure scoring core.

A :class:`SubmissionError` is a *permanent* problem with what a participant uploaded: the message names the
line (or JSON item) and the problem, and it is safe to show to that participant — it never contains a hidden
label, a score or another participant's data.
"""

from __future__ import annotations


class ScoringError(Exception):
    """Base class of every error the scoring core raises on purpose."""


class SubmissionError(ScoringError, ValueError):
    """A malformed upload. ``line`` is 1-based (the header is line 1) or ``None`` for file-level problems."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.line = line
        self.problem = message
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ConfigurationError(ScoringError, ValueError):
    """A competition set-up the core cannot score (unknown metric, labels out of range, ...)."""


class NonFiniteScoreError(ScoringError, ArithmeticError):
    """A metric produced NaN or an infinity; such a score is a failure, never a stored number."""
