"""What a data file may be called and hold: the name's rules, the content checks, and how it is served.

A name reaches a participant's disk (the download's file name), a URL path and a shell command line, so it is
refused, not rewritten, when it could mean anything but one plain file name.
"""

from __future__ import annotations

import unicodedata
import zipfile
from io import BytesIO

from django.http import FileResponse

from leaderboard.competitions.models import DATA_FILE_NAME_MAX_LENGTH, DataFile
from leaderboard.competitions.selectors import open_data_file
from leaderboard.errors import DataFileError

#: The most data files one competition may have.
MAX_DATA_FILES = 50
#: The longest description of one data file.
MAX_DESCRIPTION_LENGTH = 2000
#: Characters no file name on Windows may hold (so a download keeps its name on every participant's disk).
_RESERVED = set('<>:"|?*')
#: Unicode categories refused: controls, format characters (right-to-left overrides that disguise an extension),
#: surrogates, private-use and unassigned code points, line and paragraph separators.
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}

_CONTENT_TYPES = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".txt": "text/plain",
    ".json": "application/json",
    ".parquet": "application/vnd.apache.parquet",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".npy": "application/octet-stream",
}


def data_file_name(name: str) -> str:
    """The name checked (NFC, surrounding spaces dropped); raises :class:`DataFileError` saying what is wrong.

    >>> data_file_name(" train.csv ")
    'train.csv'
    """
    if not isinstance(name, str):
        raise DataFileError("a data file's name must be text")
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not cleaned:
        raise DataFileError("a data file needs a name")
    if len(cleaned) > DATA_FILE_NAME_MAX_LENGTH:
        raise DataFileError(f"the name is {len(cleaned)} characters long; at most {DATA_FILE_NAME_MAX_LENGTH}")
    for char in cleaned:
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise DataFileError(f"the name {cleaned!r} holds the control character U+{ord(char):04X}")
    if "/" in cleaned or "\\" in cleaned:
        raise DataFileError(f"the name {cleaned!r} is a path: give a plain file name (no / or \\)")
    if cleaned.startswith("."):
        raise DataFileError(f"the name {cleaned!r} starts with a dot: give a plain file name")
    reserved = sorted(set(cleaned) & _RESERVED)
    if reserved:
        raise DataFileError(f"the name {cleaned!r} holds {''.join(reserved)!r}, which file names on Windows cannot")
    return cleaned


def data_file_description(description: str | None) -> str:
    """The description checked: plain text, at most :data:`MAX_DESCRIPTION_LENGTH` characters."""
    text = (description or "").strip()
    if len(text) > MAX_DESCRIPTION_LENGTH:
        raise DataFileError(f"the description is {len(text)} characters long; at most {MAX_DESCRIPTION_LENGTH}")
    if any(unicodedata.category(char) == "Cc" and char not in "\n\t" for char in text):
        raise DataFileError("the description holds a control character")
    return text


def check_data_file_content(name: str, content: bytes) -> None:
    """Refuse an empty file, and a zip or Parquet file that is not one (a participant would find out too late)."""
    if not content:
        raise DataFileError(f"{name}: the file is empty")
    lower = name.lower()
    if lower.endswith(".zip") and not zipfile.is_zipfile(BytesIO(content)):
        raise DataFileError(f"{name}: the name says zip but the file is not a zip archive")
    if lower.endswith(".parquet") and not (len(content) >= 8 and content[:4] == content[-4:] == b"PAR1"):
        raise DataFileError(f"{name}: the name says Parquet but the file is not a Parquet file (no PAR1 marks)")


def data_file_content_type(name: str) -> str:
    """The type a download is served as (always as an attachment, never sniffed)."""
    lower = name.lower()
    for suffix, content_type in _CONTENT_TYPES.items():
        if lower.endswith(suffix):
            return content_type
    return "application/octet-stream"


def data_file_response(data_file: DataFile) -> FileResponse:
    """The download: always an attachment (a browser never renders it on the site's origin), its type never
    sniffed, the name encoded by Django (RFC 6266), the SHA-256 as the entity tag."""
    response = FileResponse(
        open_data_file(data_file), as_attachment=True, filename=data_file.name,
        content_type=data_file_content_type(data_file.name),
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["ETag"] = f'"{data_file.sha256}"'
    response["Cache-Control"] = "private, max-age=0"
    # A file is a static document: nothing in one may run as the site (an HTML file opened by a mistaken proxy).
    response["Content-Security-Policy"] = "sandbox"
    return response
