"""Reconstructions as SVG, drawn server-side from numbers only (one ``<rect>`` per pixel, no dependency).

The text is built from floats and ints the caller validated, plus captions it escapes, so it is safe to embed
in a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np


def image_svg(image: np.ndarray, shape: tuple[int, int], *, low: float = 0.0, high: float = 16.0,
              pixel: int = 8, caption: str = "") -> str:
    """One grey-scale image (dark = high, as the digits are drawn) as an ``<svg>`` element.

    >>> svg = image_svg(np.array([0.0, 16.0]), (1, 2), pixel=2)
    >>> svg.count("<rect"), 'fill="#000000"' in svg, 'fill="#ffffff"' in svg
    (2, True, True)
    """
    height, width = shape
    values = np.clip((np.asarray(image, dtype=np.float64).reshape(height, width) - low) / (high - low), 0.0, 1.0)
    extra = 14 if caption else 0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * pixel}" height="{height * pixel + extra}" '
        f'viewBox="0 0 {width * pixel} {height * pixel + extra}" role="img" aria-label="{escape(caption)}">'
    ]
    for row in range(height):
        for col in range(width):
            grey = round(255 * (1.0 - values[row, col]))
            parts.append(f'<rect x="{col * pixel}" y="{row * pixel}" width="{pixel}" height="{pixel}" '
                         f'fill="#{grey:02x}{grey:02x}{grey:02x}"/>')
    if caption:
        parts.append(f'<text x="0" y="{height * pixel + 11}" font-size="10" font-family="sans-serif">'
                     f"{escape(caption)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def gallery_svg(rows: Sequence[tuple[str, Sequence[tuple[np.ndarray, str]]]], shape: tuple[int, int], *,
                low: float = 0.0, high: float = 16.0, pixel: int = 8) -> str:
    """A grid: each row a label and its images with captions, as one standalone SVG document."""
    height, width = shape
    cell_w, cell_h, label_w = width * pixel + 10, height * pixel + 24, 150
    n_cols = max((len(images) for _, images in rows), default=0)
    total_w, total_h = label_w + n_cols * cell_w, len(rows) * cell_h
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
             f'viewBox="0 0 {total_w} {total_h}">']
    for r, (label, images) in enumerate(rows):
        y = r * cell_h
        parts.append(f'<text x="0" y="{y + height * pixel // 2 + 4}" font-size="11" font-family="sans-serif">'
                     f"{escape(label)}</text>")
        for c, (image, caption) in enumerate(images):
            inner = image_svg(image, shape, low=low, high=high, pixel=pixel, caption=caption)
            parts.append(f'<g transform="translate({label_w + c * cell_w},{y})">{inner}</g>')
    parts.append("</svg>")
    return "".join(parts)
