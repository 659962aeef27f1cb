"""JSON request bodies held to the CSV path's bounds: a structural pre-check before ``json.loads``.

``json.loads`` of a 50 MB ``{"predictions": [[], [], ...]}`` builds 17 million lists (about 1.6 GB) before any
validation can look at them. :func:`json_shape_refusal` measures the body's shape first, at C speed and in one
extra copy of the body at most: strings are blanked by one regular-expression substitution (so brackets and commas
inside ids do not count), then ``bytes.count`` counts containers (``[``, ``{``) and separators (``,``, ``:``),
and the nesting depth is the maximum of a cumulative sum over the brackets alone (numpy). A body over a bound is
refused with a message naming the bound; the bounds of an upload come from its competition (rows and columns),
the other endpoints' from :class:`JsonBounds` on the view (:class:`BoundedJSONParser`).

>>> json_shape_refusal(b'{"predictions": [0.1, 0.9]}', JsonBounds(containers=2, separators=2, depth=2)) is None
True
>>> json_shape_refusal(b'{"predictions": [[], [], []]}', JsonBounds(containers=3, separators=10, depth=4))
'the JSON body has 5 arrays and objects; at most 3 are expected here'
>>> json_shape_refusal(b'{"a": "[[[[,,,,"}', JsonBounds(containers=1, separators=1, depth=1)) is None
True
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# A JSON string, escapes included, in the unrolled form (no backtracking per character).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


@dataclass(frozen=True)
class JsonBounds:
    """The most arrays+objects (``containers``), commas+colons (``separators``) and nesting ``depth`` allowed."""

    containers: int
    separators: int
    depth: int


# Control bodies (select a final, teams, host settings, a defense chain): generous for them, tiny in memory.
DEFAULT_BOUNDS = JsonBounds(containers=10_000, separators=100_000, depth=32)


def submission_bounds(*, n_rows: int, n_values: int) -> JsonBounds:
    """What any accepted ``{"predictions": ...}`` shape can need for ``n_rows`` rows of ``n_values`` values: a list or
    object per row at most, an id and the values per row, three levels (body, predictions, row), plus slack."""
    per_row = 2 * (n_values + 1) + 1  # a colon and a comma per field (id + values), a comma to the next row
    return JsonBounds(containers=n_rows + 16, separators=n_rows * per_row + 64, depth=6)


def json_shape_refusal(body: bytes, bounds: JsonBounds) -> str | None:
    """Why ``body`` is refused before parsing (its shape is over ``bounds``), or ``None``."""
    bare = _STRING.sub(b'""', body) if b'"' in body else body
    containers = bare.count(b"[") + bare.count(b"{")
    if containers > bounds.containers:
        return f"the JSON body has {containers} arrays and objects; at most {bounds.containers} are expected here"
    separators = bare.count(b",") + bare.count(b":")
    if separators > bounds.separators:
        return f"the JSON body has {separators} values; at most {bounds.separators} are expected here"
    brackets = np.frombuffer(bare.translate(None, _NOT_BRACKETS), dtype=np.uint8)
    if brackets.size:
        opening = (brackets == ord("[")) | (brackets == ord("{"))
        depth = int(np.cumsum(np.where(opening, 1, -1), dtype=np.int64).max())
        if depth > bounds.depth:
            return f"the JSON body nests {depth} levels deep; at most {bounds.depth} are expected here"
    return None


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser behind :func:`json_shape_refusal`, with the view's ``json_bounds`` (else the defaults)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        body = stream.read() if stream is not None else b""
        view = (parser_context or {}).get("view")
        refusal = json_shape_refusal(body, getattr(view, "json_bounds", DEFAULT_BOUNDS))
        if refusal is not None:
            raise ParseError(refusal)
        return super().parse(io.BytesIO(body), media_type, parser_context)
