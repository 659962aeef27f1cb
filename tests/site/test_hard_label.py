"""Hard-label feedback on the site (issue 12, item 1): the host chooses it in the defense chain; the competition
page and the API metadata say what a released value is; every surface (submission API, boards, CSV export,
pages) shows the label and nothing more precise; the boards rank labels in their own direction."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.test import Client

from leaderboard.submissions.models import Submission
from tests.site.conftest import api_client
from tests.site.factories import N_ROWS

pytestmark = pytest.mark.django_db

CHAINS: dict[str, list[dict[str, Any]]] = {
    "threshold": [{"name": "threshold", "t": 0.6}],
    "rank": [{"name": "rank"}],
    "accept_reject": [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}],
}


def _main(html: str) -> str:
    """A page's content, without the stylesheet in its head (its sizes, 1.15rem, are no scores)."""
    return html[html.index("<main"):]


def _good_and_bad(hidden_labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    good = np.where(hidden_labels == 1, 0.8, 0.2)  # log loss 0.223: beats 0.6
    bad = np.where(hidden_labels == 1, 0.3, 0.7)  # log loss 1.204: does not
    return good, bad


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_the_metadata_and_the_page_tell_the_feedback_and_nothing_else_is_released(
    kind: str, make_competition: Callable[..., Any], participant: Any, other_participant: Any, submit: Any,
    score_all: Any, hidden_labels: np.ndarray,
) -> None:
    competition = make_competition(defenses=CHAINS[kind], daily_limit=None)
    good, bad = _good_and_bad(hidden_labels)
    mine = [submit(competition, participant, values).pk for values in (bad, good, bad)]
    submit(competition, other_participant, np.full(N_ROWS, 0.5))
    assert score_all() == ["scored"] * 4
    client = api_client(participant)
    meta = client.get(f"/api/v1/competitions/{competition.slug}/").json()
    assert meta["feedback"]["kind"] == kind and meta["released_decimals"] == 0
    texts = [client.get(f"/api/v1/submissions/{pk}/").json()["public_score_text"] for pk in mine]
    expected = {"threshold": ["0", "1", "0"], "rank": ["1", "1", "3"], "accept_reject": ["1", "1", "0"]}[kind]
    assert texts == expected
    board = client.get(f"/api/v1/competitions/{competition.slug}/leaderboard/").json()
    assert board["feedback"]["kind"] == kind
    assert {row["score_text"] for row in board["rows"]} <= {"0", "1", "2", "3"}
    csv_text = client.get(f"/api/v1/competitions/{competition.slug}/leaderboard/?format=csv").content.decode()
    page = Client()
    page.force_login(participant)
    detail = _main(page.get(f"/c/{competition.slug}/").content.decode())
    assert "the score itself is never shown" in detail
    boards = _main(page.get(f"/c/{competition.slug}/leaderboard/public/").content.decode())
    for body in (csv_text, boards, detail, str(meta), str(board)):
        # No number with two or more decimals: the raw scores (0.22…, 1.20…, 0.69…) never appear.
        assert not re.search(r"(?<![\w.:-])[01]\.\d{2,}", body), body
    raw = Submission.objects.get(pk=mine[1]).raw_public
    assert raw is not None and f"{raw:.3f}" not in csv_text + boards + detail


def test_a_badge_board_ranks_badge_holders_first_on_a_loss_metric(
    make_competition: Callable[..., Any], participant: Any, other_participant: Any, submit: Any, score_all: Any,
    hidden_labels: np.ndarray,
) -> None:
    competition = make_competition(defenses=CHAINS["threshold"])
    good, bad = _good_and_bad(hidden_labels)
    submit(competition, participant, bad)
    submit(competition, other_participant, good)
    assert score_all() == ["scored", "scored"]
    rows = api_client(None).get(f"/api/v1/competitions/{competition.slug}/leaderboard/").json()["rows"]
    assert [(row["participant"], row["score_text"]) for row in rows] == [("bob", "1"), ("alice", "0")]


def test_the_host_chooses_the_feedback_through_the_chain_and_a_bad_one_is_refused(
    make_competition: Callable[..., Any], host: Any
) -> None:
    competition = make_competition()
    client = api_client(host)
    url = f"/api/v1/host/competitions/{competition.slug}/defenses/"
    refused = client.put(url, {"defenses": [{"name": "accept_reject"}]}, format="json")
    assert refused.status_code == 400 and "needs a 'ladder'" in refused.content.decode()
    accepted = client.put(url, {"defenses": [{"name": "threshold", "t": [0.3, 0.5]}]}, format="json")
    assert accepted.status_code == 200
    meta = api_client(None).get(f"/api/v1/competitions/{competition.slug}/").json()
    assert meta["feedback"] == {"kind": "threshold", "t": [0.3, 0.5], "released": "how many cut-offs the score beats"}
    page = _main(Client().get(f"/c/{competition.slug}/").content.decode())
    assert "the number of cut-offs the score beats (0.3, 0.5)" in page


def test_a_board_rank_places_each_submission_among_the_other_participants_bests(
    make_competition: Callable[..., Any], participant: Any, other_participant: Any, submit: Any, score_all: Any,
    hidden_labels: np.ndarray,
) -> None:
    competition = make_competition(defenses=[{"name": "rank", "among": "board"}], daily_limit=None)
    good, bad = _good_and_bad(hidden_labels)
    middling = np.full(N_ROWS, 0.5)  # log loss 0.693: between good (0.223) and bad (1.204)
    order = [(participant, bad), (other_participant, middling), (participant, good), (other_participant, bad)]
    pks = []
    for who, values in order:  # scored one at a time: each sees the rivals' bests so far
        pks.append(submit(competition, who, values).pk)
        assert score_all() == ["scored"]
    client = api_client(participant)
    texts = [Submission.objects.get(pk=pk).public_score_text for pk in pks]
    # alice alone: 1; bob's 0.693 beats alice's 1.204: 1; alice's 0.223 beats bob: 1; bob's 1.204 ties alice's
    # old best but alice's best is now 0.223: 2.
    assert texts == ["1", "1", "1", "2"]
    meta = client.get(f"/api/v1/competitions/{competition.slug}/").json()
    assert meta["feedback"]["among"] == "board"
    page = _main(Client().get(f"/c/{competition.slug}/").content.decode())
    assert "among the other participants" in page
