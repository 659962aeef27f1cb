"""A real browser against a live site: Playwright for Python driving Debian's Chromium (``/usr/bin/chromium``,
installed by ``scripts/install-chromium``, which ``.ci/run`` and ``./scripts/test`` call; Playwright's own
browser download is never used), and a site started by :func:`stack.processes.running_stack` on a fresh SQLite
file with a Redis server of its own, ``collectstatic`` run as the demo does.

Each test module gets one site and one browser. A screenshot of every page a test looks at is kept under
``var/test-artifacts/browser/`` (``LEADERBOARD_BROWSER_ARTIFACTS`` overrides it) for a person to look at.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import requests
from playwright.sync_api import Browser, Page, Route, sync_playwright

from stack.processes import REPO, Stack, running_stack, unique_queue

CHROMIUM = Path(os.environ.get("LEADERBOARD_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(os.environ.get("LEADERBOARD_BROWSER_ARTIFACTS", REPO / "var" / "test-artifacts" / "browser"))
N_ROWS = 60
SLUG = "browser-cancer"
TITLE = "Browser cancer"
DECIMALS = 4
CHAIN = '[{"name": "noise", "kind": "laplace", "scale": 0.001}]'
HOST, HOST_PASSWORD = "hana-host", "hana-host-password"  # throwaway accounts in a throwaway database
PARTICIPANT, PARTICIPANT_PASSWORD = "alice", "alice-password-1"
OTHER = "bob"
INVITE_CODE = "browser-class-2027"  # the site signs people up by invitation (LEADERBOARD_SIGNUP=invite)
DESCRIPTION = "## The task\nPredict the **probability of label 1** for each row; see the [rules](https://example.org)."
# The competition's one data file (participants download it from its Data page).
TRAIN_CSV = b"id,f1,label\n" + b"".join(f"t{i},{i / 8},{i % 2}\n".encode() for i in range(8))
WIDTH, HEIGHT = 1280, 800

TINY_GAME = """
[game]
name = "tiny"
description = "Forty balanced rows, two chains, two attacks at budgets of 50 and 1,000 submissions, one seed."
seeds = [0]
budgets = [50, 1000]

[[datasets]]
name = "balanced-40"
source = "balanced"
n_rows = 40

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "laplace-0.01"
chain = [{name = "noise", kind = "laplace", scale = 0.01}]

[[attacks]]
name = "capacity"

[[attacks]]
name = "boosting-30"
attack = "boosting"
params = {budget = 30}
"""


@dataclass
class BrowserSite:
    """The live site and what the set-up created on it."""

    stack: Stack
    var: Path  # the site's LEADERBOARD_VAR_DIR (game reports under games/)
    ids: list[str]
    other_score_text: str  # bob's released public score, scored before any test runs
    shots: Path
    taken: list[Path] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.stack.url

    def predictions_csv(self, seed: int) -> bytes:
        values = np.random.default_rng(seed).uniform(0.05, 0.95, len(self.ids))
        return ("id,target\n" + "".join(f"{i},{v:.6f}\n" for i, v in zip(self.ids, values, strict=True))).encode()


def screenshot(site: BrowserSite, page: Page, name: str, *, full_page: bool = True) -> Path:
    """Keep a picture of what the browser shows now as ``<module>/<name>.png`` (names are unique per module, so
    tests split over pytest-xdist workers never overwrite each other's pictures)."""
    path = site.shots / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    site.taken.append(path)
    return path


def _create_people_and_competition(stack: Stack, labels_path: Path, train_path: Path) -> str:
    """The site's own management commands, run in one process (each ``manage.py`` start costs a second or two);
    returns bob's API token (create_participant makes an API-only account, as a host does for a bot)."""
    competition = [SLUG, "--labels", str(labels_path), "--title", TITLE, "--host", HOST, "--decimals", str(DECIMALS),
                   "--daily-limit", "1", "--defenses", CHAIN, "--disclose", "Scores carry a little noise.",
                   "--description", DESCRIPTION, "--data-file", str(train_path), "Training rows with their label"]
    script = "\n".join([
        "from django.core.management import call_command",
        f"call_command('createsuperuser', '--noinput', '--username', {HOST!r})",
        f"call_command('create_competition', *{competition!r})",
        f"call_command('create_participant', {OTHER!r})",  # its token is the last line printed
    ])
    return stack.manage("shell", "-c", script).strip().splitlines()[-1]


def sign_up_over_http(url: str, username: str, password: str) -> None:
    """Sign ``username`` up through the site's own sign-up page, as a browser would post it (CSRF included)."""
    with requests.Session() as session:
        session.get(f"{url}/accounts/signup/", timeout=10).raise_for_status()
        answer = session.post(
            f"{url}/accounts/signup/",
            data={
                "csrfmiddlewaretoken": session.cookies["csrftoken"], "username": username,
                "email": f"{username}@example.org", "password1": password, "password2": password,
                "invite_code": INVITE_CODE,
            },
            allow_redirects=False,
            timeout=10,
        )
    assert answer.status_code == 302 and answer.headers["Location"] == "/accounts/profile/", answer.text[-2000:]


def _wait_scored(url: str, token: str, submission_id: int, timeout: float = 30.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, object] = requests.get(
            f"{url}/api/v1/submissions/{submission_id}/", headers={"Authorization": f"Token {token}"}, timeout=5
        ).json()
        if body["status"] in {"scored", "failed"}:
            return body
        assert time.monotonic() < deadline, f"submission {submission_id} still {body['status']}"
        time.sleep(0.1)


def play_tiny_game(site: BrowserSite) -> str:
    """Play :data:`TINY_GAME` offline into the site's games directory (the site lists it at once); its name."""
    from games import parse_game, run_game
    from games.report import write_report

    write_report(run_game(parse_game(TINY_GAME)), site.var / "games" / "tiny")
    return "tiny"


@pytest.fixture(scope="module")
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserSite]:
    """A live site with a competition (Laplace noise, 4 released decimals, one upload a day), its host (staff,
    with a password), alice (signed up on the sign-up page, by invitation) and bob (a token from
    create_participant, one submission already scored)."""
    root = tmp_path_factory.mktemp("browser")
    var = root / "var"
    env = {key: value for key, value in os.environ.items() if key not in {"REDIS_URL", "DATABASE_URL"}}
    env.update(
        LEADERBOARD_VAR_DIR=str(var),
        DJANGO_SUPERUSER_PASSWORD=HOST_PASSWORD,
        DJANGO_SUPERUSER_EMAIL="host@example.org",
        LEADERBOARD_SIGNUP="invite",
        LEADERBOARD_INVITE_CODE=INVITE_CODE,
    )
    ids = [f"r{i:03d}" for i in range(N_ROWS)]
    labels = np.random.default_rng(11).integers(0, 2, N_ROWS)
    labels_path = root / "labels.csv"
    labels_path.write_text("id,label\n" + "".join(f"{i},{y}\n" for i, y in zip(ids, labels, strict=True)))
    (root / "train.csv").write_bytes(TRAIN_CSV)
    shots = ARTIFACTS / re.sub(r"^test_", "", request.module.__name__.rsplit(".", 1)[-1])
    shots.mkdir(parents=True, exist_ok=True)
    with running_stack(
        logs_dir=root / "logs", env=env, database_url=f"sqlite:///{root / 'site.sqlite3'}",
        queue=unique_queue("leaderboard-browser"), web_threads=4, collectstatic=True,
    ) as stack:
        token = _create_people_and_competition(stack, labels_path, root / "train.csv")
        sign_up_over_http(stack.url, PARTICIPANT, PARTICIPANT_PASSWORD)
        browser_site = BrowserSite(stack, var, ids, "", shots)
        answer = requests.post(
            f"{stack.url}/api/v1/competitions/{SLUG}/submissions/",
            headers={"Authorization": f"Token {token}"},
            files={"file": ("bob.csv", browser_site.predictions_csv(99), "text/csv")},
            timeout=10,
        )
        assert answer.status_code == 202, answer.text
        scored = _wait_scored(stack.url, token, int(answer.json()["id"]))
        assert scored["status"] == "scored", (scored, stack.logs())
        browser_site.other_score_text = str(scored["public_score_text"])
        yield browser_site


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium under Playwright, one per module."""
    if not CHROMIUM.exists():
        pytest.fail(f"the browser tests need Debian's Chromium at {CHROMIUM}: run scripts/install-chromium (as root)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def foreign_requests() -> list[str]:
    """Every request a test's pages tried to send anywhere but the site (each was aborted)."""
    return []


@pytest.fixture
def page(browser: Browser, site: BrowserSite, foreign_requests: list[str]) -> Iterator[Page]:
    """A fresh browser context (no cookies) at 1280 × 800 that may only talk to the site: any other request is
    aborted and recorded in ``foreign_requests``, so a page that needs a CDN shows up blank and fails."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, base_url=site.url)

    def only_the_site(route: Route) -> None:
        url = route.request.url
        if url.startswith((site.url + "/", "data:")):
            route.continue_()
        else:
            foreign_requests.append(url)
            route.abort()

    context.route("**/*", only_the_site)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    try:
        yield tab
    finally:
        context.close()
