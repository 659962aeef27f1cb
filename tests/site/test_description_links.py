"""A description's links must be absolute http, https or mailto: no relative, scheme-relative or script links."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from leaderboard.web.description import render_markdown

HOSTILE_LINKS = [
    "//evil.example/steal",
    "///evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "https:/\\evil.example",
    "http:evil.example",
    "http:///evil.example",
    "/api/v1/submissions/1/select/",
    "../../accounts/token/",
    "relative/page",
    "?next=//evil.example",
    "#top",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "&#106;avascript:alert(1)",
    "&#x6A;&#x61;vascript:alert(1)",
    "java&#x09;script:alert(1)",
    "&#47;&#47;evil.example",
    "%2F%2Fevil.example",
    "data:text/html;base64,PHNjcmlwdD4=",
    "vbscript:msgbox(1)",
    "mailto:",
]
ALLOWED_LINKS = [
    "https://example.org/rules", "http://example.org", "HTTPS://Example.org/x?y=1#z", "mailto:host@example.org"
]


class _Hrefs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.append(dict(attrs))


def _parse(markdown_text: str) -> _Hrefs:
    parser = _Hrefs()
    parser.feed(str(render_markdown(markdown_text)))
    return parser


@pytest.mark.parametrize("url", HOSTILE_LINKS)
@pytest.mark.parametrize("form", ["[click]({url})", "[click][ref]\n\n[ref]: {url}", "<{url}>"])
def test_it_drops_the_address_of_every_link_that_is_not_absolute_http_or_mailto(url: str, form: str) -> None:
    parsed = _parse(form.format(url=url))
    assert all("href" not in link for link in parsed.links), (url, parsed.links)


@pytest.mark.parametrize("url", [*HOSTILE_LINKS, "https://example.org/pixel.png"])
def test_it_shows_no_image_whatever_its_address(url: str) -> None:
    assert "img" not in _parse(f"![pixel]({url})").tags


@pytest.mark.parametrize("url", ALLOWED_LINKS)
def test_it_keeps_absolute_http_https_and_mailto_links(url: str) -> None:
    assert [link["href"] for link in _parse(f"[ok]({url})").links] == [url]
