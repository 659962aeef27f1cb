"""Submission uploads streamed to a temporary file in bounded memory, hashed as they arrive, refused at the limit.

A multipart upload goes through :class:`SubmissionUploadHandler` (installed by :class:`StreamedUploadMiddleware`
on the views marked with :func:`streams_uploads`, before the CSRF check reads the form): a body whose declared
length is over the limit is refused before a byte of it is read; otherwise the file is written 64 KB at a time
to a temporary file and SHA-256 hashed on the way, and a file that still turns out larger stops the upload at
the limit. A raw CSV body is copied the same way by :func:`stream_body`. The service then reads the file through
a read-only ``mmap`` (:func:`upload_bytes`): Arrow parses it where it lies, so a web worker holds no copy of the
body in its own memory (Django spooled files over 10 MB to disk before, and the view read them back whole).
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopFutureHandlers, StopUpload
from django.http import HttpRequest, QueryDict
from django.utils.datastructures import MultiValueDict

from leaderboard.errors import InvalidUpload

#: What a multipart body may hold beside its file (boundaries, part headers, a CSRF token field).
MULTIPART_SLACK = 64 * 1024
#: Bytes read from a raw body at a time.
CHUNK = 1 << 20

F = TypeVar("F", bound=Callable[..., Any])


def upload_limit() -> int:
    return int(settings.LEADERBOARD_MAX_UPLOAD_BYTES)


def too_large(size: int, limit: int, *, at_least: bool = False) -> InvalidUpload:
    return InvalidUpload(
        f"the file is {'over ' if at_least else ''}{size} bytes, over the limit of {limit} bytes; "
        "nothing was stored"
    )


class StreamedUploadedFile(UploadedFile):
    """An upload kept in an anonymous temporary file, with its SHA-256 computed while it arrived (when the request
    carries an Idempotency-Key, the one reader of the digest; else ``None``)."""

    def __init__(self, file: IO[bytes], name: str, content_type: str | None, size: int, charset: str | None,
                 sha256: str | None) -> None:
        super().__init__(file, name, content_type, size, charset)
        self.sha256 = sha256


class _Spool:
    """A temporary file being written, with the running size and, when it will be read, the running hash."""

    def __init__(self, hashed: bool) -> None:
        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="lbl-upload-")  # noqa: SIM115 - closed by its owner
        # Only an Idempotency-Key compares uploads by digest: 50 MB hashed for nothing was ~0.1 s of a web worker.
        self.hash = hashlib.sha256() if hashed else None
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.hash is not None:
            self.hash.update(chunk)
        self.file.write(chunk)

    def finish(self, name: str, content_type: str | None = None, charset: str | None = None) -> StreamedUploadedFile:
        self.file.flush()
        self.file.seek(0)
        digest = self.hash.hexdigest() if self.hash is not None else None
        return StreamedUploadedFile(self.file, name, content_type, self.size, charset, digest)


def _hashed(request: HttpRequest | None) -> bool:
    return request is not None and "HTTP_IDEMPOTENCY_KEY" in request.META


class SubmissionUploadHandler(FileUploadHandler):
    """Django upload handler for a submission's multipart ``file``: temporary file, running hash, hard limit.

    ``refused`` holds the size that broke the limit (``None``: within it); the view turns it into the 400.
    """

    def __init__(self, request: HttpRequest | None = None, limit: int | None = None) -> None:
        super().__init__(request)
        self.limit = upload_limit() if limit is None else limit
        self.refused: int | None = None
        self.refused_early = False
        self._spool: _Spool | None = None

    def handle_raw_input(self, input_data: Any, META: Any, content_length: int, boundary: Any,
                         encoding: str | None = None) -> tuple[QueryDict, MultiValueDict[str, Any]] | None:
        if content_length > self.limit + MULTIPART_SLACK:
            # Declared too large: answer now, reading nothing (the parser takes this as the whole form).
            self.refused, self.refused_early = content_length, True
            return QueryDict(encoding=encoding), MultiValueDict()
        return None

    def new_file(self, field_name: str, *args: Any, **kwargs: Any) -> None:
        super().new_file(field_name, *args, **kwargs)
        self._spool = _Spool(_hashed(self.request))
        raise StopFutureHandlers()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        assert self._spool is not None
        if self._spool.size + len(raw_data) > self.limit:
            self.refused = self._spool.size + len(raw_data)
            self._spool.file.close()
            self._spool = None
            # The body was declared within the limit and the slack, so draining the rest reads little.
            raise StopUpload(connection_reset=False)
        self._spool.write(raw_data)
        return None

    def file_complete(self, file_size: int) -> StreamedUploadedFile | None:
        if self._spool is None:
            return None
        spool, self._spool = self._spool, None
        return spool.finish(self.file_name or "", self.content_type, self.charset)


def streams_uploads(view: F) -> F:
    """Mark a view (function, or DRF ``APIView`` class) whose multipart uploads go through
    :class:`SubmissionUploadHandler`."""
    view.streams_uploads = True  # type: ignore[attr-defined]
    return view


class StreamedUploadMiddleware:
    """Installs :class:`SubmissionUploadHandler` on the marked views; listed before ``CsrfViewMiddleware``, whose
    check may read the form (and so parse the upload) before the view runs."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func: Any, view_args: Any, view_kwargs: Any) -> None:
        marked = getattr(view_func, "streams_uploads", False) or getattr(
            getattr(view_func, "cls", None), "streams_uploads", False
        )
        if marked and request.method == "POST":
            request.upload_handlers = [SubmissionUploadHandler(request)]


def upload_refusal(request: Any) -> InvalidUpload | None:
    """The 400 for a multipart upload the handler stopped at the limit, if it did."""
    for handler in getattr(request, "upload_handlers", ()):
        if isinstance(handler, SubmissionUploadHandler) and handler.refused is not None:
            return too_large(handler.refused, handler.limit, at_least=not handler.refused_early)
    return None


def stream_body(request: HttpRequest, *, name: str = "body") -> StreamedUploadedFile:
    """A raw request body copied to a temporary file a megabyte at a time; a body declared over the limit is
    refused before any of it is read."""
    limit = upload_limit()
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise too_large(declared, limit)
    spool = _Spool(_hashed(request))
    try:
        while chunk := request.read(CHUNK):
            if spool.size + len(chunk) > limit:  # pragma: no cover - the stream is cut at the declared length
                raise too_large(spool.size + len(chunk), limit, at_least=True)
            spool.write(chunk)
    except BaseException:
        spool.file.close()
        raise
    return spool.finish(name)


@contextlib.contextmanager
def upload_bytes(upload: Any) -> Iterator[bytes | mmap.mmap]:
    """The upload's content: a read-only ``mmap`` of a streamed upload's file (no copy in this process's
    memory), the bytes of any other uploaded file."""
    if isinstance(upload, StreamedUploadedFile) and upload.size and upload.file is not None:
        mapped = mmap.mmap(upload.file.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mapped
        finally:
            # An error's traceback may still hold an Arrow view of the map; it is then unmapped when freed.
            with contextlib.suppress(BufferError):
                mapped.close()
        return
    upload.seek(0)
    yield upload.read()
