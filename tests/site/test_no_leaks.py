"""No leaks through the API: crawl every participant-visible endpoint as a participant and anonymously, and
show that no hidden label, raw score, extra digit of precision, secret or other participant's submission
appears. (The HTML pages get the same crawl where they are defined.)"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.audits.models import Audit
from leaderboard.competitions.models import HiddenTestData
from leaderboard.competitions.services import add_data_file
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import submission_score
from tests.site.conftest import issue_token
from tests.site.factories import N_ROWS, predictions_csv
from tests.site.kaggle_calls import kaggle_answers

pytestmark = pytest.mark.django_db


def _upload(client: Any, competition: Any, seed: int, name: str) -> int:
    values = np.random.default_rng(seed).uniform(0.02, 0.98, N_ROWS)
    response = client.post(
        f"/api/v1/competitions/{competition.slug}/submissions/",
        {"file": SimpleUploadedFile(name, predictions_csv(competition, values), content_type="text/csv")},
        format="multipart",
    )
    assert response.status_code == 202
    return int(response.json()["id"])


def _ids_in(value: Any) -> set[int]:
    found: set[int] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key in {"id", "submission_id"} and isinstance(item, int):
                found.add(item)
            found |= _ids_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _ids_in(item)
    return found


@pytest.mark.parametrize(
    "metric", ["binary_logloss", "kl", "itakura_saito", "brier", "norm_like:2.5", "softmax_ce", "sigmoid_ce"]
)
def test_participant_and_anonymous_surfaces_release_nothing_hidden(
    clients, make_competition, hidden_labels, metric, participant
) -> None:
    # Paper 001's metrics too: the logit ones take the same uploads (any finite real is a logit).
    competition = make_competition(slug="breast-cancer", daily_limit=5, metric=metric)
    alice = [_upload(clients["participant"], competition, seed, "alice.csv") for seed in range(3)]
    bob = [_upload(clients["other"], competition, 10 + seed, "bob-private-name.csv") for seed in range(2)]
    for pk in alice + bob:
        assert submission_score(submission_id=pk).action == "scored"
    failed = _upload(clients["participant"], competition, 99, "alice-failed.csv")
    Submission.objects.filter(pk=failed).update(status="failed", error="the score is not a finite number")

    audit = Audit.objects.create(competition=competition, status="done", progress=1.0,
                                 result={"verdict": "an attacker recovers 100 % of public labels"})
    hidden = HiddenTestData.objects.get(competition=competition)
    submissions = list(Submission.objects.all())
    raw_texts = ({s.raw_public_text for s in submissions} | {s.raw_private_text for s in submissions}) - {""}
    slug = competition.slug
    # A data file as a host publishes test features: the ids without their labels.
    add_data_file(competition, "test.csv", "".join(f"{row_id},0.5\n" for row_id in hidden.ids).encode())
    paths = [
        "/api/v1/competitions/",
        f"/api/v1/competitions/{slug}/data/",
        f"/api/v1/competitions/{slug}/data/test.csv",
        f"/api/v1/host/competitions/{slug}/data/",
        f"/api/v1/competitions/{slug}/",
        f"/api/v1/competitions/{slug}/sample-submission/",
        f"/api/v1/competitions/{slug}/submissions/",
        f"/api/v1/competitions/{slug}/quota/",
        f"/api/v1/competitions/{slug}/leaderboard/",
        f"/api/v1/competitions/{slug}/leaderboard/?format=csv",
        f"/api/v1/competitions/{slug}/leaderboard/?board=private",
        f"/api/v1/competitions/{slug}/leaderboard/?board=private&format=csv",
        f"/api/v1/host/competitions/{slug}/",
        f"/api/v1/host/competitions/{slug}/submissions/",
        f"/api/v1/host/competitions/{slug}/leakage/",
        f"/api/v1/host/competitions/{slug}/audit/",
        f"/api/v1/host/competitions/{slug}/audit/{audit.pk}/",
        *(f"/api/v1/submissions/{pk}/" for pk in [*alice, *bob, failed]),
        "/api/schema/",
    ]
    label_lines = [f"{row_id},{int(label)}\n" for row_id, label in zip(hidden.ids, hidden_labels, strict=True)]

    def release_nothing_hidden(who: str, path: str, body: str) -> None:
        assert hidden.secret not in body, (who, path)
        assert not any(line in body for line in label_lines), (who, path)
        assert '"labels"' not in body and '"public_mask"' not in body
        for raw in raw_texts:
            # The raw value to 7 decimals would be 2 digits more than the board releases.
            assert raw[:9] not in body, (who, path, raw)
        for number in re.findall(r"(?<![\d.eE-])0\.\d{6,}", body):
            # Only the metadata's own constants may carry more than 5 decimals (none do here).
            pytest.fail(f"{who} {path}: {number} has more digits than released")
        assert "bob-private-name" not in body, (who, path)
        if "raw" in body and path != "/api/schema/":
            pytest.fail(f"{who} {path}: a raw field appears")

    for who in ("participant", "anonymous"):
        for path in paths:
            response = clients[who].get(path)
            assert response.status_code < 500, (who, path)
            body = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
            release_nothing_hidden(who, path, body)
            if response.status_code == 200 and response["Content-Type"].startswith("application/json"):
                seen = _ids_in(json.loads(body))
                allowed = {*alice, failed} if who == "participant" else set()
                assert not (seen & set(bob)), (who, path)
                assert seen <= allowed, (who, path, seen)
        # The same reads through Kaggle's API (the kaggle command line's), downloads followed and unzipped.
        auth = (participant.username, issue_token(participant)) if who == "participant" else None
        answers = kaggle_answers(Client(), [slug], auth, [*alice, *bob, failed])
        for call, (status, body) in answers.items():
            assert status < 500, (who, call)
            release_nothing_hidden(who, call, body)
            refs = _refs_in(json.loads(body)) if body.startswith("{") else set()
            assert refs <= ({*alice, failed} if who == "participant" else set()), (who, call, refs)
        assert all(answers[f"GetSubmission {pk}"][0] in {401, 404} for pk in bob)
        if who == "participant":  # the crawl reads what it must not leak beside
            assert _refs_in(json.loads(answers[f"ListSubmissions {slug}"][1])) == {*alice, failed}
            assert answers[f"file {slug} test.csv"][0] == 200


def _refs_in(value: Any) -> set[int]:
    """Submission numbers in a Kaggle answer: its integer ``ref`` fields (a competition's or file's is text)."""
    found: set[int] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "ref" and isinstance(item, int):
                found.add(item)
            found |= _refs_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _refs_in(item)
    return found


TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")

HARD_LABEL_CHAINS: dict[str, list[dict[str, Any]]] = {
    "threshold": [{"name": "threshold", "t": 0.75}],
    "medal": [{"name": "threshold", "t": [0.7, 0.8]}],
    "rank": [{"name": "rank"}],
    "board_rank": [{"name": "rank", "among": "board"}],
    "accept_reject": [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}],
}


@pytest.mark.parametrize("kind", sorted(HARD_LABEL_CHAINS))
def test_a_hard_label_board_releases_the_label_and_no_digit_of_the_score(
    kind: str, clients, make_competition, participant, other_participant
) -> None:
    competition = make_competition(slug=f"hard-{kind.replace('_', '-')}", defenses=HARD_LABEL_CHAINS[kind],
                                   daily_limit=None)
    alice = [_upload(clients["participant"], competition, seed, "alice.csv") for seed in range(4)]
    bob = [_upload(clients["other"], competition, 10 + seed, "bob.csv") for seed in range(2)]
    for pk in alice + bob:
        assert submission_score(submission_id=pk).action == "scored"
    failed = _upload(clients["participant"], competition, 99, "alice-failed.csv")
    Submission.objects.filter(pk=failed).update(status="failed", error="the score is not a finite number")
    submissions = list(Submission.objects.filter(competition=competition, status="scored"))
    assert {s.public_score_text for s in submissions} <= {"0", "1", "2", "3", "4"}
    raws = [raw for s in submissions for raw in (s.raw_public, s.raw_private) if raw is not None]
    slug = competition.slug
    paths = [
        "/api/v1/competitions/", f"/api/v1/competitions/{slug}/", f"/api/v1/competitions/{slug}/submissions/",
        f"/api/v1/competitions/{slug}/leaderboard/", f"/api/v1/competitions/{slug}/leaderboard/?format=csv",
        f"/api/v1/competitions/{slug}/leaderboard/?board=private",
        *(f"/api/v1/submissions/{pk}/" for pk in [*alice, *bob, failed]),
    ]
    for who in ("participant", "anonymous"):
        # The REST API's answers, and Kaggle's (the kaggle command line's; the leaderboard zips unpacked).
        auth = (participant.username, issue_token(participant)) if who == "participant" else None
        answers = {path: (response.status_code, response.content.decode())
                   for path in paths for response in (clients[who].get(path),)}
        answers.update(kaggle_answers(Client(), [slug], auth, [*alice, *bob, failed], files=False))
        for path, (status, text) in answers.items():
            assert status < 500, (who, path)
            # Timestamps ("02:32:20.736766Z") hold digit runs that can match a score's prefix by chance.
            body = TIMESTAMP.sub("<time>", text)
            # The only decimals allowed are the public settings: the cut-offs, eps and the public fraction.
            settings_numbers = {"0.75", "0.7", "0.8", "0.3", "1e-15"}
            for raw in raws:
                # Not even the digits a Kaggle board would show (5), nor fewer — except where a raw score rounds to
                # a cut-off the board publishes whatever the score (0.7477 → "0.75", the threshold t, seen once).
                for places in (2, 3, 4, 5):
                    shown = f"{raw:.{places}f}"
                    assert shown in settings_numbers or shown not in body, (who, path, raw, places)
            for number in re.findall(r"(?<![\w.:-])\d+\.\d+", body):
                assert number in settings_numbers, (who, path, number)
    meta = clients["anonymous"].get(f"/api/v1/competitions/{slug}/").json()
    assert meta["feedback"]["kind"] == {"medal": "threshold", "board_rank": "rank"}.get(kind, kind)
