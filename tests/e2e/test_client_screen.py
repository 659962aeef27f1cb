"""End to end: the typed client's sybil-screen methods against a live stack (gunicorn, a real Celery worker, the real
Redis, a fresh PostgreSQL database). The host turns the screen to hold and reads it back; two accounts' complementary
probes make a cluster and the second one's submission is held (``review == "held"``, no score, refused as a final);
the host lists the cluster with its evidence and decides over HTTP: dismiss (the worker releases the held submission,
which then is selectable), disqualify (withheld for good), merge (one team, released) and ban (the tokens stop
working); a second decision is a :class:`Conflict`, a participant is refused the host's calls."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from bot.client import (
    BadRequest,
    Conflict,
    Forbidden,
    LeaderboardClient,
    NotAuthenticated,
    NotFound,
    ScreenSettings,
    Submission,
    SuspectCluster,
)
from tests.e2e.bot_support import LiveStack, fresh_postgres, live_stack, redis_available

pytestmark = pytest.mark.e2e

N_ROWS = 100
LABELS = np.random.default_rng(20261128).integers(0, 2, N_ROWS)
WAIT_SECONDS = 60.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    if not redis_available():
        pytest.fail("the client's end-to-end tests need Redis at 127.0.0.1:6379")
    with fresh_postgres("lbl_client_screen") as database_url, \
            live_stack(tmp_path_factory.mktemp("client-screen"), database_url=database_url) as live:
        yield live


def _probe(rows: list[int]) -> str:
    """A multi-account attack's probe: ½ on every row but a few, at binary-spaced logits."""
    values = np.full(N_ROWS, 0.5)
    for j, row in enumerate(rows):
        values[row] = 1.0 / (1.0 + np.exp(-(2.0**j)))
    width = len(str(N_ROWS))
    return "id,target\n" + "".join(f"r{i:0{width}d},{v:.6f}\n" for i, v in enumerate(values))


def _until(client: LeaderboardClient, submission_id: int, done: Callable[[Submission], bool]) -> Submission:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        found = client.submission(submission_id)
        if done(found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def _held_pair(stack: LiveStack, slug: str) -> tuple[LeaderboardClient, LeaderboardClient, int, SuspectCluster]:
    """A competition in hold mode where a second probe account's submission is held; its two accounts' clients,
    the held submission's id and the cluster as the host's client lists it."""
    stack.competition(slug, LABELS, decimals=5)
    assert stack.host.set_screen(slug, mode="hold") == ScreenSettings(mode="hold", threshold=0.5)
    first, second = (stack.client(stack.participant(f"{slug}-{n}")) for n in (1, 2))
    alone = first.submit_csv(slug, _probe([0, 1, 2])).id
    assert first.wait(alone, timeout=WAIT_SECONDS).public_score_text  # one account alone is no cluster
    held_id = second.submit_csv(slug, _probe([3, 4, 5])).id
    held = second.wait(held_id, timeout=WAIT_SECONDS)
    assert (held.status, held.review, held.held, held.public_score, held.public_score_text) == (
        "scored", "held", True, None, "")
    [cluster] = stack.host.screen_clusters(slug)
    return first, second, held_id, cluster


def test_the_host_reads_and_sets_the_screen_and_a_participant_may_not(stack: LiveStack) -> None:
    slug = "screen-settings"
    stack.competition(slug, LABELS)
    host = stack.host
    assert host.screen_settings(slug) == ScreenSettings(mode="off", threshold=0.5)
    assert host.set_screen(slug, mode="flag") == ScreenSettings(mode="flag", threshold=0.5)
    assert host.set_screen(slug, threshold=0.7) == ScreenSettings(mode="flag", threshold=0.7)
    with pytest.raises(BadRequest, match="threshold"):
        host.set_screen(slug, threshold=1.5)
    with pytest.raises(BadRequest, match="mode"):
        host.set_screen(slug, mode="sometimes")
    assert host.screen_settings(slug) == ScreenSettings(mode="flag", threshold=0.7)
    assert host.screen_clusters(slug) == []
    participant = stack.client(stack.participant("screen-outsider"))
    with pytest.raises(Forbidden):
        participant.screen_settings(slug)
    with pytest.raises(Forbidden):
        participant.set_screen(slug, mode="off")
    with pytest.raises(Forbidden):
        participant.screen_clusters(slug)


def test_dismiss_releases_the_held_submission_which_then_may_be_a_final(stack: LiveStack) -> None:
    slug = "screen-dismiss"
    _, second, held_id, cluster = _held_pair(stack, slug)
    assert cluster.is_open and cluster.accounts == (f"{slug}-1", f"{slug}-2") and cluster.held == 1
    assert {"probe_like", "complementary"} <= {item.kind for item in cluster.evidence}
    assert all(item.detail for item in cluster.evidence)
    with pytest.raises(BadRequest, match="held for review by the host and cannot be selected as final"):
        second.select_final(held_id)
    with pytest.raises(NotFound):  # a participant does not learn that the cluster exists
        second.dismiss_cluster(cluster.id)
    with pytest.raises(ValueError, match="unknown decision 'forgive'"):
        stack.host.decide_cluster(cluster.id, "forgive")

    decided = stack.host.dismiss_cluster(cluster.id)
    assert (decided.id, decided.status, decided.decided_at is not None) == (cluster.id, "dismissed", True)
    with pytest.raises(Conflict, match="already dismissed"):
        stack.host.disqualify_cluster(cluster.id)
    released = _until(second, held_id, lambda found: found.review is None and bool(found.public_score_text))
    assert released.status == "scored" and released.public_message == ""
    assert second.select_final(held_id).selected_for_final
    assert stack.host.screen_clusters(slug)[0].released == 1


def test_disqualify_withholds_for_good(stack: LiveStack) -> None:
    slug = "screen-disqualify"
    _, second, held_id, cluster = _held_pair(stack, slug)
    decided = stack.host.disqualify_cluster(cluster.id)
    assert (decided.status, decided.held, decided.withheld) == ("disqualified", 0, 1)
    withheld = second.submission(held_id)
    assert (withheld.review, withheld.public_score, withheld.finished) == ("withheld", None, True)
    with pytest.raises(BadRequest, match="never released"):
        second.select_final(held_id)
    assert [row.participant for row in stack.host.leaderboard(slug).rows] == []


def test_merge_makes_one_team_and_ban_stops_the_tokens(stack: LiveStack) -> None:
    slug = "screen-merge"
    first, second, held_id, cluster = _held_pair(stack, slug)
    decided = stack.host.merge_cluster(cluster.id)
    assert decided.status == "merged" and decided.decision_note.startswith("merged into team")
    [team] = first.teams(slug)
    assert set(team.members) == {f"{slug}-1", f"{slug}-2"}
    assert _until(second, held_id, lambda found: bool(found.public_score_text)).review is None

    slug = "screen-ban"
    first, second, _, cluster = _held_pair(stack, slug)
    assert stack.host.ban_cluster(cluster.id).status == "banned"
    for client in (first, second):
        with pytest.raises(NotAuthenticated):
            client.quota(slug)
