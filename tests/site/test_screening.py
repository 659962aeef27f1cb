"""The sybil screen in the site (``leaderboard.screening``): sign-up traces, flag and hold modes in the worker's
service, the host's decisions, and who may see the clusters. The real worker and PostgreSQL:
``tests/site/test_screening_integration.py``; the host page in Chromium: ``tests/browser/test_screening.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.site.conftest import N_ROWS, api_client

pytestmark = pytest.mark.django_db

LADDER = [{"name": "ladder", "mode": "fixed", "eta": 0.05}]


def probe(rows: list[int]) -> np.ndarray:
    """A multi-account attack's probe: ½ on every row but a few, at binary-spaced logits."""
    values = np.full(N_ROWS, 0.5)
    for j, row in enumerate(rows):
        values[row] = 1.0 / (1.0 + np.exp(-(2.0**j)))
    return values


def honest(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, N_ROWS)


@pytest.fixture
def publishes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The release task's publishes (competition ids), recorded instead of sent to a broker."""
    published: list[int] = []
    monkeypatch.setattr("leaderboard.screening.services._publish_release", published.append)
    return published


@pytest.fixture
def sybils(db: Any) -> tuple[Any, Any]:
    return User.objects.create_user("sybil-1"), User.objects.create_user("sybil-2")


@pytest.fixture
def screened(make_competition: Callable[..., Any]) -> Callable[..., Any]:
    from leaderboard.screening.services import screen_settings_update

    def make(mode: str, **options: Any) -> Any:
        competition = make_competition(daily_limit=None, **options)
        screen_settings_update(competition=competition, mode=mode)
        return competition

    return make


def _row(submission: Any) -> Any:
    submission.refresh_from_db()
    return submission


def _release_now(competition: Any, publishes: list[int]) -> None:
    """What the published release task does in the worker, run here."""
    from leaderboard.screening.tasks import held_release

    assert publishes == [competition.pk]
    held_release.run(competition.pk)
    publishes.clear()


# --- Sign-up traces ------------------------------------------------------------------------------------------


def _sign_up(username: str, peer: str, forwarded: str | None = None) -> Any:
    password = "a-long-and-uncommon-passphrase-7"
    data = {"username": username, "email": f"{username}@example.org", "password1": password, "password2": password}
    extra: dict[str, Any] = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return Client().post("/accounts/signup/", data, REMOTE_ADDR=peer, HTTP_USER_AGENT="Sybil/1.0", **extra)


def test_a_web_sign_up_keeps_the_client_address_behind_trusted_proxies_only(settings: Any) -> None:
    from leaderboard.screening.models import SignupTrace

    settings.TRUSTED_PROXIES, settings.BEHIND_PROXY = [], False
    assert _sign_up("direct", "192.0.2.10", "1.1.1.1").status_code == 302
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert _sign_up("proxied", "10.0.0.5", "9.9.9.9, 203.0.113.2").status_code == 302
    direct = SignupTrace.objects.get(user__username="direct")
    proxied = SignupTrace.objects.get(user__username="proxied")
    assert (direct.source, direct.address, direct.user_agent) == ("web", "192.0.2.10", "Sybil/1.0")
    assert proxied.address == "203.0.113.2"  # the entry the trusted proxy appended, not the forged one


def test_a_host_made_account_keeps_who_made_it_and_from_where(host: Any, settings: Any) -> None:
    from leaderboard.screening.models import SignupTrace

    settings.TRUSTED_PROXIES, settings.BEHIND_PROXY = [], False
    host.is_staff = True
    host.save()
    answer = api_client(host).post(
        "/api/v1/host/participants/", {"username": "bot-7"}, format="json", REMOTE_ADDR="198.51.100.7"
    )
    assert answer.status_code == 201
    trace = SignupTrace.objects.get(user__username="bot-7")
    assert (trace.source, trace.address, trace.provisioned_by_id) == ("provisioned", "198.51.100.7", host.pk)


def test_no_participant_surface_shows_a_sign_up_trace(participant: Any, competition: Any) -> None:
    from leaderboard.screening.services import signup_trace_record

    signup_trace_record(user=participant, source="web", address="203.0.113.99", user_agent="Secret-Agent/9")
    client = Client()
    client.force_login(participant)
    pages = [f"/c/{competition.slug}/", f"/c/{competition.slug}/submissions/", "/accounts/profile/"]
    for url in pages:
        text = client.get(url).content.decode()
        assert "203.0.113.99" not in text and "Secret-Agent" not in text


# --- Off, flag and hold in the worker --------------------------------------------------------------------------


def test_with_the_screen_off_nothing_is_screened(
    make_competition: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.screening.models import SuspectCluster

    competition = make_competition(daily_limit=None)
    submit(competition, sybils[0], probe([0, 1, 2]))
    submit(competition, sybils[1], probe([3, 4, 5]))
    assert score_all() == ["scored", "scored"]
    assert not SuspectCluster.objects.exists()


def test_flag_mode_lists_the_cluster_and_releases_as_usual(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.screening.models import SuspectCluster

    competition = screened("flag")
    first = submit(competition, sybils[0], probe([0, 1, 2]))
    second = submit(competition, sybils[1], probe([3, 4, 5]))
    assert score_all() == ["scored", "scored"]
    assert _row(first).public_score_text and _row(second).public_score_text
    cluster = SuspectCluster.objects.get(competition=competition)
    assert cluster.names == ["sybil-1", "sybil-2"] and cluster.status == "open"
    assert {item["kind"] for item in cluster.evidence} >= {"probe_like", "complementary"}


def test_hold_mode_holds_a_probe_cluster_without_spending_defense_state_and_dismiss_releases_in_order(
    screened: Callable[..., Any], sybils: tuple[Any, Any], participant: Any, submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from leaderboard.screening.models import SuspectCluster
    from leaderboard.screening.services import HELD_MESSAGE, cluster_dismiss
    from leaderboard.submissions.models import DefenseState

    competition = screened("hold", defenses=LADDER)
    alone = submit(competition, sybils[0], probe([0, 1, 2]))
    assert score_all() == ["scored"]  # one account alone is no cluster
    held = [submit(competition, sybils[1], probe([3, 4, 5])), submit(competition, sybils[0], probe([6, 7, 8]))]
    fair = submit(competition, participant, honest(1))
    assert score_all() == ["held", "held", "scored"]
    assert _row(alone).public_score_text and _row(fair).public_score_text
    for submission in held:
        row = _row(submission)
        assert (row.status, row.public_score, row.public_score_text, row.raw_public) == ("scored", None, "", None)
        assert row.public_message == HELD_MESSAGE
    # The participant's own view says held and shows no score.
    body = api_client(sybils[1]).get(f"/api/v1/submissions/{held[0].pk}/").json()
    assert body["public_score"] is None and body["public_message"] == HELD_MESSAGE
    as_sybil = Client()
    as_sybil.force_login(sybils[1])
    assert "held for review" in as_sybil.get(f"/c/{competition.slug}/submissions/").content.decode()
    # No defense state was spent by a held submission: sybil-2 has none, sybil-1's is its first release's.
    assert not [s.state for s in DefenseState.objects.filter(participant=sybils[1]) if s.state]

    cluster = SuspectCluster.objects.get(competition=competition)
    with django_capture_on_commit_callbacks(execute=True):
        decision = cluster_dismiss(cluster_id=cluster.pk, host=competition.host)
    assert decision.released == 2
    _release_now(competition, publishes)
    rows = [_row(submission) for submission in held]
    assert all(row.status == "scored" and row.public_score_text and not row.public_message for row in rows)
    assert rows[0].finished_at <= rows[1].finished_at  # in upload order
    # Released through the chain now, so sybil-2's Ladder has its first state.
    assert [s.state for s in DefenseState.objects.filter(participant=sybils[1]) if s.state]


def test_an_honest_account_beside_a_cluster_is_never_held(
    screened: Callable[..., Any], sybils: tuple[Any, Any], participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.screening.models import HeldSubmission

    competition = screened("hold")
    for round_ in range(3):
        submit(competition, participant, honest(10 + round_))
        submit(competition, sybils[0], probe([3 * round_, 3 * round_ + 1]))
        submit(competition, sybils[1], probe([20 + 3 * round_, 21 + 3 * round_]))
        submit(competition, other_participant, honest(20 + round_))
    score_all()
    held_users = set(HeldSubmission.objects.values_list("submission__participant__username", flat=True))
    assert held_users == {"sybil-1", "sybil-2"}


def _held_cluster(screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
                  score_all: Callable[[], list[str]]) -> tuple[Any, Any, list[Any]]:
    from leaderboard.screening.models import SuspectCluster

    competition = screened("hold")
    released = submit(competition, sybils[0], probe([0, 1, 2]))
    assert score_all() == ["scored"]  # alone: no cluster yet
    held = [submit(competition, sybils[1], probe([3, 4, 5])), submit(competition, sybils[0], probe([6, 7, 8]))]
    assert score_all() == ["held", "held"]
    assert _row(released).public_score_text
    return competition, SuspectCluster.objects.get(competition=competition), held


def test_disqualify_keeps_held_submissions_back_and_takes_the_accounts_off_the_boards(
    screened: Callable[..., Any], sybils: tuple[Any, Any], participant: Any, submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int],
) -> None:
    from leaderboard.screening.services import WITHHELD_MESSAGE, cluster_disqualify
    from leaderboard.submissions.selectors import leaderboard_rows

    competition, cluster, held = _held_cluster(screened, sybils, submit, score_all)
    submit(competition, participant, honest(3))
    score_all()
    assert {row.participant for row in leaderboard_rows(competition=competition, board="public")} == {
        "sybil-1", "alice"}
    decision = cluster_disqualify(cluster_id=cluster.pk, host=competition.host)
    assert (decision.withheld, publishes) == (2, [])
    assert [row.participant for row in leaderboard_rows(competition=competition, board="public")] == ["alice"]
    assert all(_row(s).public_message == WITHHELD_MESSAGE and not s.public_score_text for s in held)
    later = submit(competition, sybils[0], honest(4))  # not even an honest-looking file is released now
    assert score_all() == ["held"]
    assert _row(later).public_score is None and _row(later).public_message == WITHHELD_MESSAGE


def test_ban_deactivates_the_accounts_and_their_tokens_stop_working(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.screening.services import cluster_ban

    competition, cluster, _ = _held_cluster(screened, sybils, submit, score_all)
    client = api_client(sybils[0])
    assert client.get(f"/api/v1/competitions/{competition.slug}/quota/").status_code == 200
    cluster_ban(cluster_id=cluster.pk, host=competition.host)
    assert not User.objects.filter(pk__in=[s.pk for s in sybils], is_active=True).exists()
    assert client.get(f"/api/v1/competitions/{competition.slug}/quota/").status_code == 401


def test_merge_makes_one_team_and_releases_the_held_submissions(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from leaderboard.screening.services import cluster_merge
    from leaderboard.submissions.teams import team_members, team_of

    competition, cluster, held = _held_cluster(screened, sybils, submit, score_all)
    with django_capture_on_commit_callbacks(execute=True):
        decision = cluster_merge(cluster_id=cluster.pk, host=competition.host)
    assert decision.cluster.status == "merged" and decision.released == 2
    team = team_of(competition=competition, participant=sybils[0])
    assert team is not None and team_members(team=team) == ["sybil-1", "sybil-2"]
    _release_now(competition, publishes)
    assert all(_row(s).public_score_text for s in held)
    # One team is one account to the screen: its members' probes flag nobody now.
    submit(competition, sybils[1], probe([9, 10, 11]))
    assert score_all() == ["scored"]


def test_a_decision_is_taken_once(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int],
) -> None:
    from leaderboard.screening.services import ScreenConflict, cluster_dismiss, cluster_disqualify

    competition, cluster, _ = _held_cluster(screened, sybils, submit, score_all)
    cluster_disqualify(cluster_id=cluster.pk, host=competition.host)
    with pytest.raises(ScreenConflict):
        cluster_dismiss(cluster_id=cluster.pk, host=competition.host)


# --- Who sees the clusters ----------------------------------------------------------------------------------


def test_only_the_host_sees_the_page_and_the_api(
    screened: Callable[..., Any], sybils: tuple[Any, Any], participant: Any, submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int],
) -> None:
    competition, cluster, _ = _held_cluster(screened, sybils, submit, score_all)
    page = f"/c/{competition.slug}/host/screen/"
    as_participant = Client()
    as_participant.force_login(participant)
    assert as_participant.get(page).status_code == 404
    assert as_participant.post(f"{page}{cluster.pk}/dismiss/").status_code == 404
    api = api_client(participant)
    assert api.get(f"/api/v1/competitions/{competition.slug}/screen/clusters/").status_code == 403
    assert api.post(f"/api/v1/screen/clusters/{cluster.pk}/dismiss/").status_code == 404
    assert cluster.__class__.objects.get(pk=cluster.pk).status == "open"

    as_host = Client()
    as_host.force_login(competition.host)
    text = as_host.get(page).content.decode()
    assert "sybil-1, sybil-2" in text and "2 held" in text and "complementary" in text
    assert "Suspected multi-accounts" in as_host.get(f"/c/{competition.slug}/").content.decode()
    listed = api_client(competition.host).get(f"/api/v1/competitions/{competition.slug}/screen/clusters/").json()
    assert [(c["id"], c["accounts"], c["held"], c["status"]) for c in listed] == [
        (cluster.pk, ["sybil-1", "sybil-2"], 2, "open")]


def test_the_host_decides_over_the_api_and_sets_the_screen_on_the_page(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from leaderboard.screening.services import screen_settings_get

    competition, cluster, _ = _held_cluster(screened, sybils, submit, score_all)
    api = api_client(competition.host)
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(f"/api/v1/screen/clusters/{cluster.pk}/dismiss/")
    assert answer.status_code == 200 and answer.json()["status"] == "dismissed"
    assert publishes == [competition.pk]
    assert api.post(f"/api/v1/screen/clusters/{cluster.pk}/ban/").status_code == 409
    as_host = Client()
    as_host.force_login(competition.host)
    page = f"/c/{competition.slug}/host/screen/"
    assert as_host.post(page, {"mode": "flag", "threshold": "0.7"}).status_code == 302
    current = screen_settings_get(competition=competition)
    assert (current.mode, current.threshold) == ("flag", 0.7)
    assert as_host.post(page, {"mode": "sometimes", "threshold": "2"}).status_code == 400


def test_a_release_left_undone_is_published_again_when_the_host_opens_the_page(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from leaderboard.screening.models import SuspectCluster
    from leaderboard.screening.services import cluster_dismiss

    competition, cluster, held = _held_cluster(screened, sybils, submit, score_all)
    with django_capture_on_commit_callbacks(execute=True):
        cluster_dismiss(cluster_id=cluster.pk, host=competition.host)
    publishes.clear()  # that publish was lost (a broker outage, a worker killed before it ran)
    as_host = Client()
    as_host.force_login(competition.host)
    as_host.get(f"/c/{competition.slug}/host/screen/")
    assert publishes == []  # a recent decision's release may still be running
    SuspectCluster.objects.filter(pk=cluster.pk).update(decided_at=timezone.now() - timedelta(minutes=5))
    as_host.get(f"/c/{competition.slug}/host/screen/")
    _release_now(competition, publishes)
    assert all(_row(s).public_score_text for s in held)


def test_the_host_reads_and_changes_the_screen_over_the_api(competition: Any, participant: Any) -> None:
    url = f"/api/v1/competitions/{competition.slug}/screen/"
    host = api_client(competition.host)
    assert host.get(url).json() == {"mode": "off", "threshold": 0.5}
    assert host.patch(url, {"mode": "hold"}, format="json").json() == {"mode": "hold", "threshold": 0.5}
    assert host.patch(url, {"threshold": 1.5}, format="json").status_code == 400
    assert api_client(participant).get(url).status_code == 403
    assert api_client(participant).patch(url, {"mode": "off"}, format="json").status_code == 403
    assert host.get(url).json()["mode"] == "hold"
    schema = host.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/v1/competitions/{slug}/screen/", "/api/v1/competitions/{slug}/screen/clusters/",
            "/api/v1/screen/clusters/{cluster_id}/{action}/"} <= set(schema["paths"])


def test_a_held_submission_spends_no_competition_wide_defense_state(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int], django_capture_on_commit_callbacks: Any,
) -> None:
    from leaderboard.screening.models import SuspectCluster
    from leaderboard.screening.services import cluster_dismiss
    from leaderboard.submissions.models import CompetitionDefenseState

    competition = screened("hold", defenses=[{"name": "noise", "kind": "laplace", "epsilon": 1.0},
                                             {"name": "privacy_budget", "epsilon": 100.0, "scope": "competition"}])
    submit(competition, sybils[0], probe([0, 1, 2]))
    assert score_all() == ["scored"]
    before = {row.split: row.state for row in CompetitionDefenseState.objects.filter(competition=competition)}
    assert before and all(before.values())
    submit(competition, sybils[1], probe([3, 4, 5]))
    submit(competition, sybils[0], probe([6, 7, 8]))
    assert score_all() == ["held", "held"]
    shared = {row.split: row.state for row in CompetitionDefenseState.objects.filter(competition=competition)}
    assert shared == before
    with django_capture_on_commit_callbacks(execute=True):
        cluster_dismiss(cluster_id=SuspectCluster.objects.get(competition=competition).pk, host=competition.host)
    _release_now(competition, publishes)  # now the board's budget pays for them
    assert {row.split: row.state for row in CompetitionDefenseState.objects.filter(competition=competition)} != before


def test_a_team_is_one_account_to_the_screen(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.screening.models import SuspectCluster
    from leaderboard.submissions.teams import invitation_accept, team_create, team_invite

    competition = screened("hold")
    team = team_create(competition=competition, user=sybils[0], name="Owls")
    invitation = team_invite(team=team, inviter=sybils[0], username=sybils[1].username)
    invitation_accept(invitation_id=invitation.pk, user=sybils[1])
    submit(competition, sybils[0], probe([0, 1, 2]))
    submit(competition, sybils[1], probe([3, 4, 5]))
    assert score_all() == ["scored", "scored"]
    assert not SuspectCluster.objects.exists()


def test_merge_takes_a_solo_account_into_the_clusters_team(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]], publishes: list[int],
) -> None:
    from leaderboard.screening.models import SuspectCluster
    from leaderboard.screening.services import cluster_merge
    from leaderboard.submissions.teams import team_create, team_members, team_of

    competition = screened("hold")
    team_create(competition=competition, user=sybils[0], name="Owls")
    submit(competition, sybils[0], probe([0, 1, 2]))
    assert score_all() == ["scored"]
    submit(competition, sybils[1], probe([3, 4, 5]))
    assert score_all() == ["held"]
    cluster = SuspectCluster.objects.get(competition=competition)
    assert sorted(cluster.names) == ["sybil-2", "team Owls"]
    cluster_merge(cluster_id=cluster.pk, host=competition.host)
    team = team_of(competition=competition, participant=sybils[1])
    assert team is not None and team.name == "Owls" and team_members(team=team) == ["sybil-1", "sybil-2"]


def test_the_host_and_staff_cannot_be_banned_from_the_page(
    screened: Callable[..., Any], sybils: tuple[Any, Any], submit: Callable[..., Any],
    score_all: Callable[[], list[str]],
) -> None:
    from leaderboard.screening.services import ScreenConflict, cluster_ban

    competition, cluster, _ = _held_cluster(screened, sybils, submit, score_all)
    User.objects.filter(pk=sybils[1].pk).update(is_staff=True)
    with pytest.raises(ScreenConflict):
        cluster_ban(cluster_id=cluster.pk, host=competition.host)
    assert User.objects.filter(pk__in=[s.pk for s in sybils], is_active=True).count() == 2
