"""The default mail backend: a file per message under ``var/mail/``, readable by the site's user only.

A message holds a password-reset link (a login for whoever reads it), so the folder is made 0700 and each file
0600 whatever the umask; Django's own file backend leaves both to the umask (0755 and 0644 by default).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from django.core.mail.backends import filebased


class PrivateFileEmailBackend(filebased.EmailBackend):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with contextlib.suppress(PermissionError):  # a folder someone else owns keeps its own mode
            os.chmod(self.file_path, 0o700)

    def open(self) -> bool:
        if self.stream is None:
            fd = os.open(self._get_filename(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self.stream = os.fdopen(fd, "ab")
            return True
        return False
