"""A host's Markdown (a competition's description) as HTML that is safe to put in a page.

Two guards, each enough on its own for what it covers: the Markdown parser is told to keep no raw HTML (a
``<script>`` a host types is shown as text), and its output is then cleaned by nh3 (Ammonia) to a small set of
tags, with links limited to http, https and mailto (no ``javascript:``) and marked ``nofollow noopener``.
Headings move one level down, so a description's ``# Title`` sits under the page's own ``<h1>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

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
        link_rel="nofollow noopener noreferrer",
    )
    return mark_safe(cleaned)  # cleaned by nh3 just above
