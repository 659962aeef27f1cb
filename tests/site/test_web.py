"""The HTML pages: what each shows, what each refuses, and the fixed cast's permissions (host, participant,
another participant, anonymous). Leaks are crawled separately in ``test_web_no_leaks.py``."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from leaderboard.competitions.selectors import competition_sample_submission
from leaderboard.submissions.models import Status, Submission
from tests.site.factories import N_ROWS, predictions_csv
from tests.site.test_api import MALFORMED

pytestmark = pytest.mark.django_db


def client_for(user: Any | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def web(host: Any, participant: Any, other_participant: Any) -> dict[str, Client]:
    """The fixed cast as logged-in browsers."""
    return {
        "host": client_for(host),
        "participant": client_for(participant),
        "other": client_for(other_participant),
        "anonymous": client_for(None),
    }


def text(response: Any) -> str:
    return html.unescape(response.content.decode())


def probs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, N_ROWS)


def submission_ids(page: str) -> set[int]:
    """Submission ids a page shows: as ``#123`` (not a CSS colour like ``#1f5fbf``) or in a submission URL."""
    shown = re.findall(r"#(\d+)(?!\w)", page) + re.findall(r"/submissions/(\d+)/", page)
    return {int(pk) for pk in shown}


def upload(client: Client, slug: str, data: bytes, name: str = "preds.csv") -> Any:
    return client.post(f"/c/{slug}/submit/", {"file": SimpleUploadedFile(name, data, content_type="text/csv")})


@pytest.fixture
def alice_scored(competition: Any, participant: Any, submit: Callable[..., Any], score_all: Any) -> list[Submission]:
    rows = [submit(competition, participant, probs(seed), filename=f"alice-{seed}.csv") for seed in range(3)]
    assert score_all() == ["scored"] * 3
    return [Submission.objects.get(pk=row.pk) for row in rows]


# --- Lists and metadata ---------------------------------------------------------------------------------


def test_the_root_lists_competitions_with_links(web, competition, make_competition) -> None:
    make_competition(slug="old-one", title="Old one", closes_at=timezone.now() + timedelta(days=1))
    response = web["anonymous"].get("/")
    assert response.status_code == 200
    body = text(response)
    assert f'href="/c/{competition.slug}/"' in body and 'href="/c/old-one/"' in body
    assert "Old one" in body and "binary_logloss" in body


def test_detail_shows_rules_limits_and_what_is_disclosed_only(web, make_competition) -> None:
    competition = make_competition(
        slug="rules",
        daily_limit=3,
        total_limit=10,
        defenses=[{"name": "rounding", "decimals": 4}],
        disclosed_defenses="Scores are rounded before release.",
    )
    body = text(web["anonymous"].get("/c/rules/"))
    # "4 decimals": the released precision (the rounding stage's, as the API's released_decimals says), which
    # participants read off every score anyway; the 5 displayed decimals would be a false statement.
    for fragment in ("3 per UTC day", "10", "4 decimals", "id,target", "Scores are rounded before release.",
                     "1e-15", "lower is better", f"/c/{competition.slug}/sample-submission.csv",
                     "/c/rules/leaderboard/public/", "/c/rules/leaderboard/private/", "Log in to submit"):
        assert fragment in body, fragment
    assert '"decimals"' not in body and "'decimals'" not in body  # the chain itself is not disclosed
    assert "Your quota" not in body


def test_detail_shows_a_participants_quota_and_the_utc_reset(web, competition, participant, submit) -> None:
    submit(competition, participant, probs(1))
    body = text(web["participant"].get(f"/c/{competition.slug}/"))
    tomorrow = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%d")
    assert re.search(r"Remaining today</dt><dd>4</dd>", body), body
    assert f"{tomorrow} 00:00:00 UTC" in body
    assert f"/c/{competition.slug}/submit/" in body and f"/c/{competition.slug}/submissions/" in body


def test_an_unknown_competition_is_a_404(web) -> None:
    for path in ("/c/nope/", "/c/nope/submit/", "/c/nope/leaderboard/public/", "/c/nope/sample-submission.csv"):
        assert web["participant"].get(path).status_code == 404, path


def test_sample_submission_downloads_the_exact_template(web, competition) -> None:
    response = web["anonymous"].get(f"/c/{competition.slug}/sample-submission.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    assert response.content.decode() == competition_sample_submission(competition=competition)


# --- Login ----------------------------------------------------------------------------------------------


def test_login_page_logs_a_participant_in_and_out(participant) -> None:
    participant.set_password("correct horse")
    participant.save()
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    bad = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert bad.status_code == 200 and "did not match" in text(bad)
    good = client.post("/accounts/login/", {"username": "alice", "password": "correct horse", "next": "/games/"})
    assert good.status_code == 302 and good["Location"] == "/games/"
    assert "alice" in text(client.get("/"))
    assert client.post("/accounts/logout/").status_code == 302
    assert "Log in" in text(client.get("/"))


# --- Submitting -----------------------------------------------------------------------------------------


def test_submitting_needs_a_login(web, competition) -> None:
    response = web["anonymous"].get(f"/c/{competition.slug}/submit/")
    assert response.status_code == 302
    assert response["Location"].startswith(f"/accounts/login/?next=/c/{competition.slug}/submit/")
    posted = upload(web["anonymous"], competition.slug, predictions_csv(competition, probs(1)))
    assert posted.status_code == 302 and Submission.objects.count() == 0


def test_a_valid_upload_is_queued_and_listed(
    web, competition, enqueued, django_capture_on_commit_callbacks
) -> None:
    form = web["participant"].get(f"/c/{competition.slug}/submit/")
    assert form.status_code == 200 and 'enctype="multipart/form-data"' in text(form)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(web["participant"], competition.slug, predictions_csv(competition, probs(1)), "mine.csv")
    assert response.status_code == 302 and response["Location"] == f"/c/{competition.slug}/submissions/"
    submission = Submission.objects.get()
    assert enqueued == [submission.pk] and submission.upload_name == "mine.csv"
    page = text(web["participant"].get(response["Location"]))
    assert f"Submission #{submission.pk} received" in page and "mine.csv" in page and "queued" in page


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_upload_shows_the_parsers_message_and_costs_nothing(web, competition, case) -> None:
    build, fragment = MALFORMED[case]
    response = upload(web["participant"], competition.slug, build(competition))
    assert response.status_code == 400
    body = text(response)
    assert "Upload rejected" in body and fragment in body, body
    assert Submission.objects.count() == 0


def test_a_missing_or_oversized_file_is_a_form_error(web, competition, settings) -> None:
    missing = web["participant"].post(f"/c/{competition.slug}/submit/", {})
    assert missing.status_code == 400 and "This field is required" in text(missing)
    settings.LEADERBOARD_MAX_UPLOAD_BYTES = 50
    big = upload(web["participant"], competition.slug, predictions_csv(competition, probs(1)))
    assert big.status_code == 400 and "over the limit of 50 bytes" in text(big)
    assert Submission.objects.count() == 0


def test_over_quota_shows_the_reset_time(web, make_competition) -> None:
    competition = make_competition(slug="tight", daily_limit=1)
    assert upload(web["participant"], "tight", predictions_csv(competition, probs(1))).status_code == 302
    response = upload(web["participant"], "tight", predictions_csv(competition, probs(2)))
    assert response.status_code == 429
    body = text(response)
    tomorrow = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%d")
    assert "Over quota" in body and "daily limit of 1" in body and f"resets at {tomorrow} 00:00:00 UTC" in body
    assert Submission.objects.count() == 1


def test_a_closed_competition_refuses_uploads_with_a_message(web, make_competition) -> None:
    competition = make_competition(
        slug="done", opens_at=timezone.now() - timedelta(days=2), closes_at=timezone.now() - timedelta(days=1)
    )
    response = upload(web["participant"], "done", predictions_csv(competition, probs(1)))
    assert response.status_code == 403 and "closed at" in text(response)


# --- My submissions and finals --------------------------------------------------------------------------


def test_my_submissions_show_status_released_text_and_errors_of_mine_only(
    web, competition, participant, other_participant, alice_scored, submit
) -> None:
    failed = submit(competition, participant, probs(7))
    Submission.objects.filter(pk=failed.pk).update(status=Status.FAILED, error="the score is not a finite number")
    bobs = submit(competition, other_participant, probs(8), filename="bob.csv")
    page = text(web["participant"].get(f"/c/{competition.slug}/submissions/"))
    assert submission_ids(page) == {row.pk for row in alice_scored} | {failed.pk}
    for row in alice_scored:
        assert row.public_score_text in page and row.upload_name in page
        assert row.raw_public_text[:9] not in page
        assert row.private_score_text not in page  # private scores wait for the close
    assert "the score is not a finite number" in page and "failed" in page
    assert bobs.pk not in submission_ids(page) and "bob.csv" not in page
    assert "Finals selected: 0 of 2" in page


def test_my_submissions_needs_a_login(web, competition) -> None:
    response = web["anonymous"].get(f"/c/{competition.slug}/submissions/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def final(client: Client, competition: Any, submission: Submission, selected: bool) -> Any:
    return client.post(
        f"/c/{competition.slug}/submissions/{submission.pk}/final/", {"selected": "1" if selected else "0"}, follow=True
    )


def test_finals_toggle_up_to_two(web, competition, alice_scored) -> None:
    first, second, third = alice_scored
    assert "is selected as final" in text(final(web["participant"], competition, first, True))
    final(web["participant"], competition, second, True)
    refused = text(final(web["participant"], competition, third, True))
    assert "at most 2 final submissions" in refused
    assert set(Submission.objects.filter(selected_for_final=True).values_list("pk", flat=True)) == {
        first.pk, second.pk,
    }
    assert "Finals selected: 2 of 2" in refused
    assert "no longer a final" in text(final(web["participant"], competition, first, False))
    assert not Submission.objects.get(pk=first.pk).selected_for_final


def test_nobody_else_can_toggle_a_final(web, competition, alice_scored) -> None:
    target = alice_scored[0]
    assert final(web["other"], competition, target, True).status_code == 404
    assert final(web["host"], competition, target, True).status_code == 404
    anonymous = web["anonymous"].post(f"/c/{competition.slug}/submissions/{target.pk}/final/", {"selected": "1"})
    assert anonymous.status_code == 302
    assert web["participant"].get(f"/c/{competition.slug}/submissions/{target.pk}/final/").status_code == 405
    assert not Submission.objects.filter(selected_for_final=True).exists()


# --- Boards ---------------------------------------------------------------------------------------------


def test_public_board_and_csv_show_the_best_released_score(web, competition, alice_scored) -> None:
    best = min(alice_scored, key=lambda s: s.public_score)
    page = text(web["anonymous"].get(f"/c/{competition.slug}/leaderboard/public/"))
    assert "alice" in page and best.public_score_text in page
    assert all(s.public_score_text not in page for s in alice_scored if s.pk != best.pk)
    assert f"/c/{competition.slug}/leaderboard/public.csv" in page
    export = web["anonymous"].get(f"/c/{competition.slug}/leaderboard/public.csv")
    assert export.status_code == 200 and export["Content-Type"].startswith("text/csv")
    assert export.content.decode().splitlines()[1].startswith(f"1,alice,{best.public_score_text},3,")


def test_private_board_waits_for_the_close_except_for_the_host(web, competition, alice_scored) -> None:
    slug = competition.slug
    for who in ("participant", "other", "anonymous"):
        page = web[who].get(f"/c/{slug}/leaderboard/private/")
        assert page.status_code == 403 and "after the competition closes" in text(page)
        assert web[who].get(f"/c/{slug}/leaderboard/private.csv").status_code == 403
    preview = text(web["host"].get(f"/c/{slug}/leaderboard/private/"))
    assert "Host preview" in preview and "alice" in preview
    competition.closes_at = timezone.now() - timedelta(seconds=1)
    competition.save()
    board = text(web["anonymous"].get(f"/c/{slug}/leaderboard/private/"))
    assert "alice" in board and "Host preview" not in board
    assert web["anonymous"].get(f"/c/{slug}/leaderboard/private.csv").status_code == 200
    mine = text(web["participant"].get(f"/c/{slug}/submissions/"))
    assert all(s.private_score_text in mine for s in alice_scored) and "Select as final" not in mine


def test_an_unknown_board_is_a_404(web, competition) -> None:
    assert web["anonymous"].get(f"/c/{competition.slug}/leaderboard/secret/").status_code == 404
    assert web["anonymous"].get(f"/c/{competition.slug}/leaderboard/secret.csv").status_code == 404


# --- Host pages -----------------------------------------------------------------------------------------


def test_the_host_sees_raw_next_to_released(web, competition, alice_scored) -> None:
    response = web["host"].get(f"/c/{competition.slug}/host/")
    assert response.status_code == 200
    body = text(response)
    for row in alice_scored:
        assert row.raw_public_text in body and row.public_score_text in body
    detail = text(web["host"].get(f"/c/{competition.slug}/"))
    assert f"/c/{competition.slug}/host/" in detail


@pytest.mark.parametrize(("who", "status"), [("participant", 403), ("other", 403), ("anonymous", 302)])
def test_nobody_but_the_host_sees_the_host_page(web, competition, alice_scored, who, status) -> None:
    response = web[who].get(f"/c/{competition.slug}/host/")
    assert response.status_code == status
    assert all(row.raw_public_text not in text(response) for row in alice_scored)
    assert f"/c/{competition.slug}/host/" not in text(web[who].get(f"/c/{competition.slug}/"))


def test_staff_get_links_to_the_admin(competition, host) -> None:
    host.is_staff = True
    host.save()
    body = text(client_for(host).get(f"/c/{competition.slug}/"))
    assert 'href="/admin/"' in body and f"/admin/competitions/competition/{competition.pk}/change/" in body


# --- Games ----------------------------------------------------------------------------------------------


@pytest.fixture
def games_dir(tmp_path: Path, settings: Any) -> Path:
    root = tmp_path / "games"
    (root / "standard" / "charts").mkdir(parents=True)
    (root / "standard" / "report.html").write_text("<h1>Standard game</h1><img src='charts/privacy.png'>")
    (root / "standard" / "charts" / "privacy.png").write_bytes(b"\x89PNG fake")
    (root / "standard" / ".hidden").write_text("not listed")
    (root / "unfinished").mkdir()
    (tmp_path / "outside.txt").write_text("SECRET OUTSIDE")
    (root / "standard" / "escape.txt").symlink_to(tmp_path / "outside.txt")
    settings.LEADERBOARD_GAMES_DIR = root
    return root


def test_games_are_listed_and_their_reports_served(web, games_dir) -> None:
    listing = text(web["anonymous"].get("/games/"))
    assert 'href="/games/standard/"' in listing and 'href="/games/unfinished/"' in listing
    assert "/games/standard/files/report.html" in listing
    detail = text(web["anonymous"].get("/games/standard/"))
    assert "charts/privacy.png" in detail and "<iframe" in detail and ".hidden" not in detail
    assert "escape.txt" not in detail
    report = web["anonymous"].get("/games/standard/files/report.html")
    assert report.status_code == 200 and report["Content-Type"].startswith("text/html")
    assert b"Standard game" in b"".join(report.streaming_content)
    assert report["Content-Security-Policy"] == "sandbox"
    chart = web["anonymous"].get("/games/standard/files/charts/privacy.png")
    assert chart.status_code == 200 and chart["Content-Type"] == "image/png"


@pytest.mark.parametrize(
    "path",
    [
        "/games/standard/files/../../outside.txt",
        "/games/standard/files/%2e%2e/%2e%2e/outside.txt",
        "/games/standard/files/..%2F..%2Foutside.txt",
        "/games/standard/files/escape.txt",
        "/games/standard/files/.hidden",
        "/games/standard/files//etc/passwd",
        "/games/standard/files/charts",
        "/games/..%2F/files/outside.txt",
        "/games/nope/",
        "/games/.hidden/",
    ],
)
def test_game_files_never_escape_the_games_directory(web, games_dir, path) -> None:
    response = web["anonymous"].get(path)
    assert response.status_code == 404, path
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"SECRET OUTSIDE" not in body and b"root:" not in body


def test_no_games_directory_is_an_empty_list(web, settings, tmp_path) -> None:
    settings.LEADERBOARD_GAMES_DIR = tmp_path / "missing"
    assert "No game reports yet" in text(web["anonymous"].get("/games/"))
