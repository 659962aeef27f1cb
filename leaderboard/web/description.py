"""A host's Markdown (a competition's description) as HTML that is safe to put in a page.

Two guards, each enough on its own for what it covers: the Markdown parser is told to keep no raw HTML (a
``<script>`` a host types is shown as text), and its output is then cleaned by nh3 (Ammonia) to a small set of
tags, with links limited to http, https and mailto (no ``javascript:``) and marked ``nofollow noopener``.
A link must be absolute (:func:`allowed_link`): relative (``/x``, ``x``, ``#x``) and scheme-relative
(``//evil.example``) links lose their address, because a description is shown on the site's own pages and a
relative link there reaches the site's own endpoints with the reader's session. Images are not allowed at all.
Headings move one level down, so a description's ``# Title`` sits under the page's own ``<h1>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import urlsplit

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

ALLOWED_TAGS = {
    "p", "br", "hr", "h2", "h3", "h4", "h5", "h6", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "a", "table", "thead", "tbody", "tr", "th", "td",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
_URL_ATTRIBUTES = {("a", "href"), ("img", "src")}
# Whitespace, control characters and backslashes: browsers drop or reinterpret them (``/\\evil`` is ``//evil``).
_UNSAFE_URL_CHARACTERS = re.compile(r"[\x00-\x20\x7f-\x9f\\]")


def allowed_link(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) link to a host, or a mailto link with an address.

    >>> [allowed_link(u) for u in ["https://example.org/x", "mailto:a@b.org", "//evil.example", "/x", "#top"]]
    [True, True, False, False, False]
    >>> [allowed_link(u) for u in ["JaVaScRiPt:alert(1)", "http:evil", "http:///evil", "https:/\\\\evil"]]
    [False, False, False, False]
    """
    if _UNSAFE_URL_CHARACTERS.search(url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme in {"http", "https"}:
        return url.lower().startswith(f"{scheme}://") and bool(parts.hostname)
    return scheme == "mailto" and bool(parts.path)


def _absolute_links_only(tag: str, attribute: str, value: str) -> str | None:
    if (tag, attribute) in _URL_ATTRIBUTES and not allowed_link(value):
        return None
    return value


class _HeadingsOneLevelDown(Treeprocessor):
    def run(self, root: ET.Element) -> None:
        for element in root.iter():
            if element.tag in {"h1", "h2", "h3", "h4", "h5"}:
                element.tag = f"h{int(element.tag[1]) + 1}"


class _NoRawHtml(Extension):
    """Markdown without its raw-HTML pass-through: such text is escaped like any other."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # the library names it so
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_HeadingsOneLevelDown(md), "headings_one_level_down", 0)


def render_markdown(text: str) -> SafeString:
    """``text`` (Markdown) as sanitized HTML.

    >>> str(render_markdown("**Bold** <script>alert(1)</script> [x](javascript:alert(1))"))
    '<p><strong>Bold</strong> &lt;script&gt;alert(1)&lt;/script&gt; <a rel="nofollow noopener noreferrer">x</a></p>'
    """
    html = markdown.markdown(text or "", extensions=[_NoRawHtml(), "tables", "fenced_code", "sane_lists"])
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        attribute_filter=_absolute_links_only,
        link_rel="nofollow noopener noreferrer",
    )
    return mark_safe(cleaned)  # cleaned by nh3 just above
