"""A CSV renderer so ``?format=csv`` selects the CSV export through DRF's content negotiation."""

from __future__ import annotations

import io
from typing import Any

from rest_framework.renderers import BaseRenderer

from leaderboard.csv_cells import SafeCsvWriter


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        if isinstance(data, str):
            return data.encode(self.charset)
        # Error answers (403, 404) keep their message readable in CSV form.
        out = io.StringIO()
        writer = SafeCsvWriter(out)
        if isinstance(data, dict):
            writer.writerow(list(data))
            writer.writerow([data[k] for k in data])
        return out.getvalue().encode(self.charset)
