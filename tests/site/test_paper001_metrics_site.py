"""The site with paper 001's metrics: a host creates a competition on any of them (command, host API, admin),
the competition page and the API say what to submit, logit uploads are scored, and settings that cannot work
(an unknown or out-of-range metric, logits beside probabilities) are refused with a clear message."""

from __future__ import annotations

import html
import json
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.competitions.models import Competition
from leaderboard.competitions.selectors import competition_scoring_spec
from leaderboard.errors import CompetitionConfigError
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import submission_score
from scoring import get_metric
from tests.site.conftest import api_client
from tests.site.factories import N_ROWS, labels_csv, predictions_csv

pytestmark = pytest.mark.django_db
MULTICLASS = np.random.default_rng(5).integers(0, 3, N_ROWS)


def _upload(client: Any, competition: Competition, values: np.ndarray) -> Any:
    return client.post(
        f"/api/v1/competitions/{competition.slug}/submissions/",
        {"file": SimpleUploadedFile("p.csv", predictions_csv(competition, values), content_type="text/csv")},
        format="multipart",
    )


@pytest.mark.parametrize(
    ("metric", "k"),
    [("kl", 2), ("itakura_saito", 3), ("brier", 3), ("norm_like:2.5", 2), ("softmax_ce", 3), ("sigmoid_ce", 2)],
)
def test_a_competition_on_the_metric_scores_what_its_participants_upload(
    make_competition, clients, hidden_labels, metric: str, k: int
) -> None:
    labels = hidden_labels if k == 2 else MULTICLASS
    competition = make_competition(slug=f"m-{k}", metric=metric, labels=labels, score_decimals=5)
    m = get_metric(metric)
    rng = np.random.default_rng(1)
    probabilities = rng.dirichlet(np.ones(k), N_ROWS)
    values = m.from_probabilities(probabilities[:, 1] if k == 2 else probabilities)
    if m.logits:
        values = values * 3.0 - 1.0  # logits outside [0, 1], rows that do not sum to 1
    response = _upload(clients["participant"], competition, values)
    assert response.status_code == 202, response.content
    assert submission_score(submission_id=response.json()["id"]).action == "scored"
    submission = Submission.objects.get(pk=response.json()["id"])
    public = competition_scoring_spec(competition=competition).split_rows["public"]
    expected = m.score(values[public], labels[public], competition.eps)
    assert submission.public_score_text == f"{expected:.5f}"
    detail = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/").json()
    assert detail["metric"] == metric
    assert detail["predictions"] == ("logits" if m.logits else "probabilities")
    sample = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/sample-submission/")
    neutral = "0.0" if m.logits else ("0.5" if k == 2 else repr(1 / k))
    assert sample.content.decode().splitlines()[1].split(",")[1] == neutral


def test_a_probability_outside_0_1_is_still_refused_on_a_probability_metric(make_competition, clients) -> None:
    competition = make_competition(slug="is", metric="itakura_saito")
    response = _upload(clients["participant"], competition, np.full(N_ROWS, 1.5))
    assert response.status_code == 400 and "outside [0, 1]" in response.json()["detail"]
    logits = make_competition(slug="sig", metric="sigmoid_ce")
    bad = (predictions_csv(logits, np.zeros(N_ROWS)).decode().replace(",0.0\n", ",nan\n", 1)).encode()
    response = clients["participant"].post(
        f"/api/v1/competitions/{logits.slug}/submissions/",
        {"file": SimpleUploadedFile("p.csv", bad, content_type="text/csv")}, format="multipart",
    )
    assert response.status_code == 400 and "line 2" in response.json()["detail"]


def test_the_competition_page_says_what_to_submit(make_competition, client, participant) -> None:
    client.force_login(participant)
    logits = make_competition(slug="soft", metric="softmax_ce", labels=MULTICLASS)
    body = html.unescape(client.get(f"/c/{logits.slug}/").content.decode())
    assert "softmax_ce" in body and "predictions are logits, any finite real" in body
    assert "one logit per class (any finite real)" in body
    norm = make_competition(slug="norm", metric="norm_like:2.5")
    body = html.unescape(client.get(f"/c/{norm.slug}/").content.decode())
    assert "norm_like:2.5 (α = 2.5)" in body and "the probability of class 1" in body


def test_create_competition_command_takes_every_metric_name(tmp_path: Path, hidden_labels) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes(labels_csv(hidden_labels))
    for slug, metric in (("cli-sig", "sigmoid_ce"), ("cli-norm", "norm_like:4"), ("cli-is", "itakura_saito")):
        call_command("create_competition", slug, "--labels", str(path), "--metric", metric, stdout=StringIO())
        assert Competition.objects.get(slug=slug).metric == metric
    with pytest.raises(CommandError, match="α ≥ 2"):
        call_command("create_competition", "cli-bad", "--labels", str(path), "--metric", "norm_like:1.5")
    with pytest.raises(CommandError, match="softmax_ce"):  # binary only: the message names the K-class one
        multi = tmp_path / "multi.csv"
        multi.write_bytes(labels_csv(MULTICLASS))
        call_command("create_competition", "cli-bad", "--labels", str(multi), "--metric", "sigmoid_ce")
    with pytest.raises(CommandError, match="one upload cannot be both"):
        call_command("create_competition", "cli-bad", "--labels", str(path), "--metric", "sigmoid_ce",
                     "--also-report", "brier")


def test_the_host_api_creates_and_refuses_with_the_core_message(hidden_labels) -> None:
    staff = api_client(User.objects.create_user("sam", is_staff=True))

    def create(slug: str, **fields: Any) -> Any:
        form = {"slug": slug, "labels": SimpleUploadedFile("l.csv", labels_csv(hidden_labels), content_type="text/csv"),
                **fields}
        return staff.post("/api/v1/host/competitions/", form, format="multipart")

    made = create("api-sig", metric="sigmoid_ce", defenses=json.dumps([{"name": "noise", "kind": "laplace",
                                                                        "epsilon": 1.0}]))
    assert made.status_code == 201, made.content
    assert made.json()["metric"] == "sigmoid_ce" and made.json()["predictions"] == "logits"
    assert create("api-norm", metric="norm_like:2.5").status_code == 201
    bad = create("api-bad", metric="norm_like:1")
    assert bad.status_code == 400 and "α ≥ 2" in json.dumps(bad.json(), ensure_ascii=False)
    mixed = create("api-mixed", metric="softmax_ce", also_report="kl")
    assert mixed.status_code == 400 and "one upload cannot be both" in json.dumps(mixed.json())
    tiny = create("api-tiny", metric="itakura_saito", eps="1e-300")
    assert tiny.status_code == 400 and "itakura_saito" in json.dumps(tiny.json())


def test_the_admin_creates_a_competition_on_a_parametrised_metric(client, hidden_labels) -> None:
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    form = {
        "slug": "admin-norm", "title": "", "description": "", "metric": "norm_like:3.5", "eps": "1e-15",
        "score_decimals": "5", "public_fraction": "0.3", "daily_limit": "5", "total_limit": "",
        "opens_at_0": "2026-01-01", "opens_at_1": "00:00:00", "closes_at_0": "", "closes_at_1": "",
        "arithmetic": "float64", "defenses": "[]", "disclosed_defenses": "", "host": "", "also_report": "[]",
        "labels_file": SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv"),
    }
    response = client.post("/admin/competitions/competition/add/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Competition.objects.get(slug="admin-norm").metric_alpha == 3.5
    form.update(slug="admin-bad", metric="norm_like:x")
    form["labels_file"] = SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv")
    response = client.post("/admin/competitions/competition/add/", form)
    assert response.status_code == 200 and "unknown metric" in html.unescape(response.content.decode())


def test_the_service_refuses_a_logit_metric_beside_a_probability_one(make_competition) -> None:
    with pytest.raises(CompetitionConfigError, match="one upload cannot be both"):
        make_competition(slug="mixed", metric="kl", also_report=["softmax_ce"])
