"""No leaks through the HTML pages: crawl every participant-visible page (breadth-first from ``/`` plus the
known URLs) as a participant, another participant and anonymously, under several defense chains, and show
that no hidden label, raw score, extra digit of precision, secret, undisclosed defense or other participant's
submission (ids, files, errors, non-best scores) appears. The API gets the same crawl in ``test_no_leaks.py``.
"""

from __future__ import annotations

import html
import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

import defenses
from games import audit as audit_core
from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.services import api_token_issue
from leaderboard.audits.models import Audit
from leaderboard.audits.services import audit_setup
from leaderboard.competitions.models import Competition, HiddenTestData
from leaderboard.competitions.services import add_data_file
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.selectors import leaderboard_rows
from leaderboard.submissions.services import submission_select_final
from tests.site.factories import N_ROWS
from tests.site.kaggle_calls import kaggle_answers, kaggle_refs

pytestmark = pytest.mark.django_db

CHAINS: dict[str, list[dict[str, Any]]] = {
    "no defense": [],
    "laplace noise then rounding": [
        {"name": "noise", "kind": "laplace", "scale": 1e-3},
        {"name": "rounding", "decimals": 3},
    ],
    "subsetting": [{"name": "subsetting", "fraction": 0.5}],
    "randomized response": [{"name": "randomized_response", "p": 0.1, "mode": "fresh"}],
    "ladder fixed": [{"name": "ladder", "mode": "fixed", "eta": 0.01}],
    "ladder parameter-free": [{"name": "ladder", "mode": "parameter_free"}],
    "thresholdout": [{"name": "thresholdout", "reference_fraction": 0.5}],
    "privacy budget": [
        {"name": "noise", "kind": "laplace", "epsilon": 1.0},
        {"name": "privacy_budget", "epsilon": 1.5, "composition": "basic"},
    ],
    "probe detector": [{"name": "probe_detector", "reject": True}],
    # Hard-label feedback (issue 12): only a label is released, so not even the released digits may show.
    "badge threshold": [{"name": "threshold", "t": 0.7}],
    "rank only": [{"name": "rank"}],
    "board rank": [{"name": "rank", "among": "board"}],
    "ladder accept/reject": [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}],
}
DISCLOSED = "Scores go through the host's defenses before release."
# Words of the undisclosed chains' JSON that no participant page may show; a chain step's name as JSON or a Python
# dict renders it (a bare "name" key is no leak: a data file has a name).
CHAIN_WORDS = (
    "laplace", "subsetting", "randomized_response", "thresholdout", "parameter_free", "probe_detector",
    '"scale"', '"eta"',
    *sorted({rendering for chain in CHAINS.values() for step in chain for rendering in (
        f'"name": "{step["name"]}"', f'"name":"{step["name"]}"', f"'name': '{step['name']}'")}),
)
MAX_PAGES = 400
HOST_ONLY_FIELDS = ("raw_", "raw score", "defense_notes", "claim_token")
# Any number with six or more decimals is more than the boards release (score_decimals = 5 here); the
# fractional seconds of a timestamp (after a colon) are not a score.
OVERPRECISE = re.compile(r"(?<![\w.:])\d+\.\d{6,}")
NUMBER = re.compile(r"-?\d+(\.\d+)?")


@dataclass
class Forbidden:
    """What one viewer must never see."""

    strings: dict[str, str] = field(default_factory=dict)  # text -> why it is forbidden
    submission_ids: set[int] = field(default_factory=set)

    def add(self, text: str, why: str) -> None:
        if text:
            self.strings[text] = why


def shown_submission_ids(page: str) -> set[int]:
    """Submission ids a page shows: as ``#123`` (not a CSS colour like ``#1f5fbf``) or in a submission URL."""
    shown = re.findall(r"#(\d+)(?!\w)", page) + re.findall(r"/submissions/(\d+)/", page)
    return {int(pk) for pk in shown}


def _shown(text: str, body: str) -> bool:
    """``text`` appears in ``body``; a number only as the start of a number (``0.96867`` inside a timestamp's
    ``…:10.968671`` is not that score: there it follows a digit)."""
    if NUMBER.fullmatch(text):
        return re.search(r"(?<!\d)" + re.escape(text), body) is not None
    return text in body


def leaks(body: str, forbidden: Forbidden) -> list[str]:
    found = [f"{why}: {text!r}" for text, why in forbidden.strings.items() if _shown(text, body)]
    others = shown_submission_ids(body) & forbidden.submission_ids
    found += [f"another participant's submission id {pk}" for pk in sorted(others)]
    found += [f"{number} has more digits than released" for number in OVERPRECISE.findall(body)]
    found += [f"host-only field {name}" for name in HOST_ONLY_FIELDS if name in body]
    return found


def label_renderings(ids: list[str], labels: np.ndarray) -> list[str]:
    values = [str(int(y)) for y in labels]
    return [
        "".join(values),
        ",".join(values),
        ", ".join(values),
        " ".join(values),
        json.dumps([int(y) for y in labels]),
        *(f"{row_id},{value}\n" for row_id, value in zip(ids, values, strict=True)),
    ]


@dataclass
class Scenario:
    open_competition: Competition
    closed_competition: Competition
    users: dict[str, Any]
    hidden_labels: np.ndarray
    games_dir: Path
    tokens: dict[str, str] = field(default_factory=dict)  # username -> API token, as given at its creation

    @property
    def competitions(self) -> list[Competition]:
        return [self.open_competition, self.closed_competition]

    def known_urls(self) -> list[str]:
        urls = ["/", "/games/", "/games/standard/", "/games/standard/files/report.html", "/accounts/login/",
                "/api/docs/", "/api/redoc/", "/favicon.ico", "/c/no-such-competition/", *ACCOUNT_PAGES]
        for competition in self.competitions:
            base = f"/c/{competition.slug}/"
            urls += [
                base,
                f"{base}sample-submission.csv",
                f"{base}data/",
                f"{base}data/test.csv",
                f"{base}host/data/",
                f"{base}submit/",
                f"{base}submissions/",
                f"{base}host/",
                f"{base}host/audit/",
                *(f"{base}leaderboard/{board}/" for board in ("public", "private")),
                *(f"{base}leaderboard/{board}.csv" for board in ("public", "private")),
            ]
            api = f"/api/v1/competitions/{competition.slug}/"
            urls += [api, f"{api}sample-submission/", f"{api}submissions/", f"{api}quota/", f"{api}data/",
                     f"{api}data/test.csv", f"/api/v1/host/competitions/{competition.slug}/data/"]
            boards = ("public", "private")
            urls += [f"{api}leaderboard/?board={board}{fmt}" for board in boards for fmt in ("", "&format=csv")]
            urls += [f"/api/v1/host/competitions/{competition.slug}/audit/",
                     *(f"/api/v1/host/competitions/{competition.slug}/audit/{pk}/"
                       for pk in Audit.objects.filter(competition=competition).values_list("pk", flat=True))]
            for pk in Submission.objects.filter(competition=competition).values_list("pk", flat=True):
                urls += [f"{base}submissions/{pk}/final/", f"/api/v1/submissions/{pk}/"]
        return [*urls, "/api/v1/competitions/"]

    def board_texts(self) -> set[str]:
        texts = set()
        for competition in self.competitions:
            boards = ["public", "private"] if competition.is_closed() else ["public"]
            for board in boards:
                texts |= {row.score_text for row in leaderboard_rows(competition=competition, board=board)}
        return texts

    def forbidden_for(self, viewer: str) -> Forbidden:
        forbidden = Forbidden()
        me = self.users.get(viewer)
        allowed_texts = self.board_texts()
        for submission in Submission.objects.select_related("competition"):
            mine = me is not None and submission.participant_id == me.pk
            closed = submission.competition.is_closed()
            if mine:
                allowed_texts.add(submission.public_score_text)
                if closed:
                    allowed_texts.add(submission.private_score_text)
        for submission in Submission.objects.select_related("competition"):
            mine = me is not None and submission.participant_id == me.pk
            hard_label = submission.competition.feedback["kind"] != "score"
            for raw in (submission.raw_public, submission.raw_private):
                if raw is not None and hard_label:
                    # A hard-label board releases no digit of the score: not even at the board's usual precision.
                    for places in (3, 4, 5):
                        forbidden.add(f"{raw:.{places}f}", f"a digit of the score of #{submission.pk} (hard label)")
                if raw is not None:
                    forbidden.add(f"{raw:.7f}", f"raw score of #{submission.pk} rounded past the released digits")
                    digits = repr(raw)
                    if "." in digits and "e" not in digits:
                        forbidden.add(digits[: digits.index(".") + 8], f"raw score of #{submission.pk}")
            for text in (submission.public_score_text, submission.private_score_text):
                # A hard label ("0", "1", a rank) is a small integer every page shows elsewhere; what it must not
                # carry (the score's digits) is forbidden above.
                if text not in allowed_texts and not hard_label:
                    forbidden.add(text, f"unreleased or another participant's score of #{submission.pk}")
            if not mine:
                forbidden.submission_ids.add(submission.pk)
                forbidden.add(submission.upload_name, f"another participant's file name (#{submission.pk})")
                forbidden.add(submission.error, f"another participant's error message (#{submission.pk})")
        for competition in self.competitions:
            hidden = HiddenTestData.objects.get(competition=competition)
            forbidden.add(hidden.secret, "the competition secret")
            forbidden.add(str(hidden.secret_int), "the competition secret")
            for rendering in label_renderings(list(hidden.ids), hidden.labels):
                forbidden.add(rendering, "the hidden labels")
        for word in CHAIN_WORDS:
            forbidden.add(word, "the undisclosed defense chain")
        for username, token in self.tokens.items():  # the viewer's own too: only its creation answer shows it
            forbidden.add(token, f"the API token of {username}")
        return forbidden


def page_text(response: Any) -> str:
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    return html.unescape(raw.decode("utf-8", errors="replace"))


def links(body: str) -> list[str]:
    found = []
    for target in re.findall(r'(?:href|src|action)="([^"]+)"', body):
        target = html.unescape(target).split("#")[0]
        if target.startswith("/") and not target.startswith("//"):
            found.append(target)
    return found


NOT_CRAWLED = ("/admin/", "/accounts/logout/", "/static/", "/api/schema/")
# Every account page (a password-reset link that is not valid is one, too); the crawl finds them by links as well.
ACCOUNT_PAGES = (
    "/accounts/signup/", "/accounts/profile/", "/accounts/profile/token/", "/accounts/password/change/",
    "/accounts/password/change/done/", "/accounts/password/reset/", "/accounts/password/reset/sent/",
    "/accounts/password/reset/MQ/not-a-token/", "/accounts/password/reset/done/",
)


def crawl(
    client: Client, start: list[str], pages: dict[str, tuple[int, str]] | None = None
) -> dict[str, tuple[int, str]]:
    """Every page reachable from ``start`` (same site, no admin, no logout; no static files and no OpenAPI
    schema: documents generated from code, the same for everyone, see ``test_the_api_docs_hold_no_data``), with
    its status and text; ``pages`` already crawled are not fetched again."""
    pages = dict(pages or {})
    queue = deque(start)
    while queue and len(pages) < MAX_PAGES:
        url = queue.popleft()
        if url in pages or url.startswith(NOT_CRAWLED):
            continue
        response = client.get(url)
        body = page_text(response)
        pages[url] = (response.status_code, body)
        queue.extend(link for link in links(body) if link not in pages)
    assert len(pages) < MAX_PAGES, "the crawl did not finish; is a page generating endless links?"
    return pages


# Every chain on the log loss, and paper 001's metrics (logits included) on the plain and the noisy board.
PAPER_001 = ("kl", "itakura_saito", "brier", "norm_like:2.5", "softmax_ce", "sigmoid_ce")
SCENARIOS = [
    *((chain, "binary_logloss") for chain in sorted(CHAINS)),
    *(("no defense", metric) for metric in PAPER_001),
    ("laplace noise then rounding", "sigmoid_ce"),
    ("laplace noise then rounding", "itakura_saito"),
]


@pytest.fixture(params=SCENARIOS, ids=[f"{chain}@{metric}" for chain, metric in SCENARIOS])
def scenario(
    request: pytest.FixtureRequest,
    make_competition: Callable[..., Any],
    participant: Any,
    other_participant: Any,
    host: Any,
    submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
    hidden_labels: np.ndarray,
    settings: Any,
    tmp_path: Path,
) -> Scenario:
    chain_name, metric = request.param
    chain = CHAINS[chain_name]
    missing = sorted({step["name"] for step in chain} - set(defenses.available()))
    if missing:
        pytest.skip(f"defenses {missing} are not registered in defenses.available() yet")
    common = {"defenses": chain, "disclosed_defenses": DISCLOSED, "daily_limit": 10, "metric": metric}
    open_competition = make_competition(slug="leaky-open", **common)
    closed_competition = make_competition(slug="leaky-closed", closes_at=timezone.now() + timedelta(days=1), **common)
    rng = np.random.default_rng(7)
    for competition in (open_competition, closed_competition):
        for who, user, count in (("alice", participant, 3), ("bob", other_participant, 2)):
            for n in range(count):
                submit(competition, user, rng.uniform(0.02, 0.98, N_ROWS), filename=f"{who}-private-name-{n}.csv")
        assert set(score_all()) <= {"scored", "failed"}
        for who, user in (("alice", participant), ("bob", other_participant)):
            failed = submit(competition, user, rng.uniform(0.02, 0.98, N_ROWS), filename=f"{who}-failed.csv")
            Submission.objects.filter(pk=failed.pk).update(status=Status.FAILED, error=f"{who}-private-error-text")
        score_all()
    scored = Submission.objects.filter(competition=closed_competition, participant=participant, status=Status.SCORED)
    submission_select_final(submission=scored.order_by("-pk")[0], participant=participant, selected=True)
    Competition.objects.filter(pk=closed_competition.pk).update(closes_at=timezone.now() - timedelta(seconds=1))
    closed_competition.refresh_from_db()
    assert Submission.objects.filter(status=Status.SCORED).exclude(public_score_text="").exists()

    # A finished leakage audit (the host's only): neither its page nor its API answer may reach a participant.
    report = audit_core.audit(audit_setup(competition=open_competition), budget=12,
                              quota=audit_core.Quota(total_limit=10), attack_names=["auto"], honest_models=2,
                              accounts=(1, 2))  # the accounts axis and its screened replay, at their smallest
    Audit.objects.create(competition=open_competition, status="done", progress=1.0, result=report.as_dict())

    # Data files as a host publishes them: the test ids with a feature, never their labels (the crawl downloads them).
    for competition in (open_competition, closed_competition):
        ids = HiddenTestData.objects.get(competition=competition).ids
        add_data_file(competition, "test.csv", ("id,f1\n" + "".join(f"{i},0.5\n" for i in ids)).encode(),
                      description="the test features")

    # Every cast member has a token; no page shows it after the answer that made it (not even to its owner).
    tokens = {user.get_username(): api_token_issue(user=user) for user in (participant, other_participant, host)}

    games_dir = tmp_path / "games"
    (games_dir / "standard").mkdir(parents=True)
    (games_dir / "standard" / "report.html").write_text("<h1>A game on public data</h1>")
    settings.LEADERBOARD_GAMES_DIR = games_dir
    return Scenario(
        open_competition,
        closed_competition,
        {"participant": participant, "other": other_participant},
        hidden_labels,
        games_dir,
        tokens,
    )


def test_the_crawl_covers_every_registered_defense() -> None:
    crawled = {step["name"] for chain in CHAINS.values() for step in chain}
    assert set(defenses.available()) - {"rounding"} <= crawled, "add a chain for each new defense"


@pytest.mark.parametrize("viewer", ["participant", "other", "anonymous"])
def test_no_participant_visible_page_leaks(scenario: Scenario, viewer: str) -> None:
    client = Client()
    if viewer in scenario.users:
        client.force_login(scenario.users[viewer])
    forbidden = scenario.forbidden_for(viewer)
    from_root = crawl(client, ["/"])
    pages = crawl(client, scenario.known_urls(), from_root)
    reached = set(from_root)
    for competition in scenario.competitions:
        # Following links alone reaches every competition's pages and boards.
        assert {f"/c/{competition.slug}/", f"/c/{competition.slug}/leaderboard/public/"} <= reached
    assert "/games/standard/files/report.html" in reached
    for url, (status, body) in pages.items():
        assert status < 500, (viewer, url)
        found = leaks(body, forbidden)
        assert not found, f"{viewer} sees on {url}: {found[:5]}"
    if scenario.open_competition.metric == "binary_logloss":  # test_no_leaks.py reads them on every metric
        kaggle_reads_leak_nothing(scenario, viewer, forbidden)
    if viewer in scenario.users:
        me = scenario.users[viewer]
        own = Submission.objects.filter(participant=me, competition=scenario.open_competition)
        status, mine = pages[f"/c/{scenario.open_competition.slug}/submissions/"]
        assert status == 200 and shown_submission_ids(mine) == set(own.values_list("pk", flat=True))
        assert all(s.upload_name in mine for s in own)
        status, profile = pages["/accounts/profile/"]
        assert status == 200 and ApiToken.objects.get(user=me).prefix in profile  # of the token, its prefix only
        assert set(ACCOUNT_PAGES) - {"/accounts/profile/token/"} <= {url for url in pages if pages[url][0] < 400}
    else:
        status, _ = pages[f"/c/{scenario.open_competition.slug}/submissions/"]
        assert status == 302


def kaggle_reads_leak_nothing(scenario: Scenario, viewer: str, forbidden: Forbidden) -> None:
    """Every read of Kaggle's API (the kaggle command line's) under the same checks, downloads followed and zips
    unpacked, and no submission number but the viewer's own."""
    me = scenario.users.get(viewer)
    auth = (me.get_username(), scenario.tokens[me.get_username()]) if me is not None else None
    own = set(Submission.objects.filter(participant=me).values_list("pk", flat=True)) if me is not None else set()
    answers = kaggle_answers(Client(), [competition.slug for competition in scenario.competitions], auth,
                             list(Submission.objects.values_list("pk", flat=True)))
    # A data file's "name" field names no defense.
    checked = Forbidden({text: why for text, why in forbidden.strings.items() if text != '"name"'},
                        forbidden.submission_ids)
    for call, (status, body) in answers.items():
        assert status < 500, (viewer, call)
        found = leaks(body, checked) + [f"another participant's submission {ref}" for ref in kaggle_refs(body) - own]
        assert not found, f"{viewer} sees through Kaggle's {call}: {found[:5]}"
    if me is not None:  # the calls read what they must not leak beside
        listed = kaggle_refs(answers[f"ListSubmissions {scenario.open_competition.slug}"][1])
        assert listed == own & set(Submission.objects.filter(competition=scenario.open_competition).values_list(
            "pk", flat=True))


def test_the_detector_finds_what_the_host_page_shows(scenario: Scenario, host: Any) -> None:
    """The crawl can fail: the host's raw-vs-released page holds exactly what participants must not see."""
    client = Client()
    client.force_login(host)
    body = page_text(client.get(f"/c/{scenario.open_competition.slug}/host/"))
    found = leaks(body, scenario.forbidden_for("participant"))
    assert any("raw score" in item for item in found), found
    assert any("another participant's submission id" in item for item in found), found


def test_the_detector_finds_a_token_on_the_answer_that_made_it(scenario: Scenario) -> None:
    """The crawl can fail on tokens too: the answer that makes alice a new token shows it, once; her profile
    afterwards shows only its prefix."""
    client = Client()
    client.force_login(scenario.users["participant"])
    made = page_text(client.post("/accounts/profile/token/"))
    shown = re.search(r'<code id="api-token">([^<]+)</code>', made)
    assert shown is not None
    scenario.tokens["alice"] = shown.group(1)
    for viewer in ("participant", "other", "anonymous"):
        assert any("the API token of alice" in item for item in leaks(made, scenario.forbidden_for(viewer))), viewer
    assert leaks(page_text(client.get("/accounts/profile/")), scenario.forbidden_for("participant")) == []


def test_the_api_docs_hold_no_data(scenario: Scenario, host: Any) -> None:
    """The OpenAPI schema the docs pages read is generated from code: the same for every viewer, host included,
    and free of any label, secret, score, file name or error. (It names host-only fields: it documents the host
    API, which is why the crawl above does not read it.)"""
    schemas = set()
    for user in (None, *scenario.users.values(), host):
        client = Client()
        if user is not None:
            client.force_login(user)
        response = client.get("/api/schema/")
        assert response.status_code == 200
        schemas.add(page_text(response))
    assert len(schemas) == 1
    schema = schemas.pop()
    data_only = Forbidden(
        {text: why for text, why in scenario.forbidden_for("anonymous").strings.items() if "chain" not in why}
    )
    found = [f"{why}: {text!r}" for text, why in data_only.strings.items() if text in schema]
    found += [f"{number} has more digits than released" for number in OVERPRECISE.findall(schema)]
    assert not found, found[:5]


def test_on_a_hard_label_board_the_detector_flags_the_scores_usual_digits(scenario: Scenario) -> None:
    """Where only a label is released, even the 5-decimal score a Kaggle board would show counts as a leak."""
    if scenario.open_competition.feedback["kind"] == "score":
        pytest.skip("a score board releases these digits for the scores on its board")
    for submission in Submission.objects.filter(competition=scenario.open_competition, status=Status.SCORED):
        assert submission.raw_public is not None
        found = leaks(f"<td>{submission.raw_public:.5f}</td>", scenario.forbidden_for("participant"))
        assert any("hard label" in item for item in found), found
