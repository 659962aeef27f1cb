"""Model-inversion challenges on the site: the label-only prediction endpoint (labels only, the query budget
charged atomically, malformed requests free), reconstructions scored by the host's evaluator (not the target),
and a leak crawl of every participant-visible surface of a challenge."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import connections

from leaderboard.inversion.models import PredictionBudget
from leaderboard.inversion.services import QueryBudgetExhausted, inversion_challenge_create, inversion_predict
from scoring.inversion import InversionTask, MlpClassifier
from tests.site.conftest import api_client

TASK = InversionTask(n_features=4, n_classes=3, image_shape=(2, 2), low=0.0, high=1.0, max_batch=8)
# Logits with many distinctive digits: if any of them (or a softmax of them) were released, the crawl finds it.
TARGET_W = np.array([[1.234567, -0.7654321, 0.1357913], [0.2468024, 1.1122334, -0.5566778],
                     [-0.3141592, 0.2718281, 1.4142135], [0.5772156, -0.6931471, 0.3010299]])
# The evaluator disagrees with the target on purpose: it reads the pixels in reverse order.
EVALUATOR_W = TARGET_W[::-1].copy()


def _challenge(slug: str = "invert", budget: int = 20, host: Any = None, release_per_class: bool = False) -> Any:
    target = MlpClassifier((TARGET_W,), (np.zeros(3),))
    evaluator = MlpClassifier((EVALUATOR_W,), (np.zeros(3),))
    return inversion_challenge_create(slug=slug, target=target, evaluator=evaluator, task=TASK, query_budget=budget,
                                      host=host, reference=np.full((3, 4), 0.5), release_per_class=release_per_class)


def _inputs(count: int, seed: int = 0) -> list[list[float]]:
    return np.random.default_rng(seed).uniform(0, 1, (count, 4)).round(3).tolist()


@pytest.mark.django_db
def test_predict_answers_the_targets_labels_and_charges_one_query_per_input(participant: Any) -> None:
    _challenge()
    client = api_client(participant)
    inputs = _inputs(5)
    answer = client.post("/api/v1/competitions/invert/predict/", {"inputs": inputs}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {
        "labels": np.argmax(np.array(inputs) @ TARGET_W, axis=1).tolist(),
        "queries_used": 5, "queries_left": 15, "query_budget": 20,
    }
    assert client.get("/api/v1/competitions/invert/predict/").json()["queries_left"] == 15


@pytest.mark.django_db
def test_a_batch_over_what_is_left_is_refused_whole_and_charges_nothing(participant: Any) -> None:
    _challenge(budget=6)
    client = api_client(participant)
    assert client.post("/api/v1/competitions/invert/predict/", {"inputs": _inputs(4)}, format="json").status_code == 200
    refused = client.post("/api/v1/competitions/invert/predict/", {"inputs": _inputs(3)}, format="json")
    assert refused.status_code == 429
    assert refused.json()["queries_left"] == 2 and "labels" not in refused.json()
    assert client.post("/api/v1/competitions/invert/predict/", {"inputs": _inputs(2)}, format="json").status_code == 200
    assert PredictionBudget.objects.get().used == 6


@pytest.mark.django_db
@pytest.mark.parametrize("inputs, problem", [
    ([[0.1, 0.2, 0.3]], "expected a list of 4 numbers"),
    ([[0.1, 0.2, 0.3, 2.0]], "must lie in [0, 1]"),
    ([[0.1, 0.2, 0.3, "x"]], "every value must be a number"),
    ([], "non-empty list"),
    ([[0.0] * 4] * 9, "at most 8"),
])
def test_malformed_inputs_are_a_400_naming_the_problem_and_cost_nothing(
    participant: Any, inputs: Any, problem: str
) -> None:
    _challenge()
    answer = api_client(participant).post("/api/v1/competitions/invert/predict/", {"inputs": inputs}, format="json")
    assert answer.status_code == 400 and problem in answer.json()["detail"]
    assert not PredictionBudget.objects.filter(used__gt=0).exists()


@pytest.mark.django_db
def test_budgets_are_per_participant_and_other_competitions_have_no_endpoint(
    participant: Any, other_participant: Any, make_competition: Callable[..., Any]
) -> None:
    _challenge(budget=3)
    inversion_predict(challenge=_challenge_of("invert"), participant=participant, inputs=_inputs(3))
    with pytest.raises(QueryBudgetExhausted):
        inversion_predict(challenge=_challenge_of("invert"), participant=participant, inputs=_inputs(1))
    assert len(inversion_predict(challenge=_challenge_of("invert"), participant=other_participant,
                                 inputs=_inputs(3)).labels) == 3
    make_competition(slug="plain")
    answer = api_client(participant).post("/api/v1/competitions/plain/predict/", {"inputs": _inputs(1)}, format="json")
    assert answer.status_code == 404


def _challenge_of(slug: str) -> Any:
    from leaderboard.inversion.models import InversionChallenge

    return InversionChallenge.objects.select_related("competition").get(competition__slug=slug)


@pytest.mark.django_db(transaction=True)
def test_parallel_requests_never_spend_more_than_the_budget() -> None:
    challenge = _challenge(budget=20)
    racer = User.objects.create_user("racer")
    barrier = threading.Barrier(12)
    outcomes: list[str] = []
    lock = threading.Lock()

    def ask(seed: int) -> None:
        try:
            barrier.wait()
            inversion_predict(challenge=challenge, participant=racer, inputs=_inputs(3, seed))
            outcome = "answered"
        except QueryBudgetExhausted:
            outcome = "refused"
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 3 queries a request against 20: six requests fit (18), the other six are refused whole.
    assert sorted(outcomes) == ["answered"] * 6 + ["refused"] * 6
    assert PredictionBudget.objects.get(participant=racer).used == 18


@pytest.mark.django_db
def test_reconstructions_are_scored_by_the_evaluator_not_the_target(
    participant: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]]
) -> None:
    challenge = _challenge(release_per_class=True)
    # Images the evaluator puts in classes 0, 1, 2 (it reads the pixels reversed); the target disagrees on some.
    images = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    evaluator_hits = np.argmax(images @ EVALUATOR_W, axis=1) == np.arange(3)
    target_hits = np.argmax(images @ TARGET_W, axis=1) == np.arange(3)
    assert evaluator_hits.tolist() != target_hits.tolist()  # the test can tell the two apart
    body = json.dumps({"reconstructions": images.tolist()}).encode()
    submission = submit(challenge.competition, participant, body, kind="json")
    assert score_all() == ["scored"]
    detail = api_client(participant).get(f"/api/v1/submissions/{submission.pk}/").json()
    assert detail["public_score"] == pytest.approx(evaluator_hits.mean())
    assert detail["per_class"] == evaluator_hits.tolist()
    rows = api_client(participant).get("/api/v1/competitions/invert/leaderboard/").json()["rows"]
    assert [row["score"] for row in rows] == [pytest.approx(evaluator_hits.mean())]


@pytest.mark.django_db
def test_a_malformed_reconstructions_upload_is_a_400(participant: Any) -> None:
    _challenge()
    client = api_client(participant)
    wrong_count = client.post("/api/v1/competitions/invert/submissions/",
                              {"reconstructions": [[0.5] * 4] * 2}, format="json")
    assert wrong_count.status_code == 400 and "expected 3 reconstructions" in wrong_count.json()["detail"]
    predictions = client.post("/api/v1/competitions/invert/submissions/", {"predictions": []}, format="json")
    assert predictions.status_code == 400 and "reconstructions" in predictions.json()["detail"]
    csv = client.post("/api/v1/competitions/invert/submissions/", b"id,label\nclass_0,1\n", content_type="text/csv")
    assert csv.status_code == 400 and "not valid JSON" in csv.json()["detail"]


@pytest.mark.django_db
def test_no_probability_or_logit_digits_on_any_participant_surface(
    participant: Any, host: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]]
) -> None:
    challenge = _challenge(host=host)
    client = api_client(participant)
    inputs = _inputs(8, seed=3)
    texts = [client.post("/api/v1/competitions/invert/predict/", {"inputs": inputs}, format="json").content.decode()]
    images = np.array(_inputs(3, seed=4))
    submission = submit(challenge.competition, participant, json.dumps({"reconstructions": images.tolist()}).encode(),
                        kind="json")
    score_all()
    for url in ("/api/v1/competitions/invert/", "/api/v1/competitions/", "/api/v1/competitions/invert/predict/",
                f"/api/v1/submissions/{submission.pk}/", "/api/v1/competitions/invert/submissions/",
                "/api/v1/competitions/invert/leaderboard/", "/api/v1/competitions/invert/quota/"):
        answer = client.get(url)
        assert answer.status_code == 200, url
        texts.append(answer.content.decode())
    web = api_client(None)
    web.force_login(participant)
    for url in ("/c/invert/", "/c/invert/leaderboard/public/", "/c/invert/submissions/"):
        page = web.get(url)
        assert page.status_code == 200, url
        texts.append(page.content.decode())
    assert "you have 12 left" in texts[-3]  # the competition page shows the participant's own budget
    # Timestamps carry fractional seconds ("01:03:20.508123"), which can match a secret's digits by chance.
    surface = re.sub(r"\d\d:\d\d:\d\d\.\d+", "hh:mm:ss", "\n".join(texts))
    secrets = []
    for rows in (np.array(inputs), images):
        for model in (TARGET_W, EVALUATOR_W):
            logits = rows @ model
            exp = np.exp(logits - logits.max(axis=1, keepdims=True))
            for value in np.concatenate([logits.ravel(), (exp / exp.sum(axis=1, keepdims=True)).ravel()]):
                secrets.append(f"{value:.4f}"[:-1])  # three decimals, truncated: any released rounding shows it
    leaked = [text for text in secrets if re.search(re.escape(text) + r"\d", surface)]
    assert leaked == []
    assert "target_npz" not in surface and "evaluator" not in surface.replace("evaluation classifier", "")


@pytest.mark.django_db
def test_the_host_page_shows_the_reference_and_participants_reconstructions(
    participant: Any, host: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]]
) -> None:
    challenge = _challenge(host=host)
    submit(challenge.competition, participant, json.dumps({"reconstructions": _inputs(3)}).encode(), kind="json")
    score_all()
    web = api_client(None)
    web.force_login(host)
    page = web.get("/c/invert/host/inversion/")
    assert page.status_code == 200
    text = page.content.decode()
    assert text.count("<svg") >= 6 and "alice" in text
    web.force_login(participant)
    assert web.get("/c/invert/host/inversion/").status_code in (403, 404)


@pytest.mark.django_db
def test_the_command_creates_the_digits_challenge_with_its_reference_attack(host: Any) -> None:
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("create_inversion_challenge", "digits", "--budget", "300", "--host", host.username, stdout=out)
    assert "created model-inversion challenge 'digits': 5 private classes, 300 queries" in out.getvalue()
    challenge = _challenge_of("digits")
    assert challenge.reference is not None and challenge.reference.shape == (5, 64)
    detail = api_client(None).get("/api/v1/competitions/digits/").json()
    assert detail["model_inversion"]["query_budget"] == 300 and detail["model_inversion"]["image_shape"] == [8, 8]
    web = api_client(None)
    web.force_login(host)
    page = web.get("/c/digits/host/inversion/").content.decode()
    assert page.count("<svg") == 5 and "BREP-MI" in page


@pytest.mark.django_db
def test_the_host_api_creates_a_digits_challenge_and_refuses_participants(participant: Any) -> None:
    staff = User.objects.create_user("staffer", is_staff=True)
    refused = api_client(participant).post("/api/v1/host/inversion-challenges/", {"slug": "nope"}, format="json")
    assert refused.status_code == 403
    created = api_client(staff).post("/api/v1/host/inversion-challenges/",
                                     {"slug": "digits-api", "query_budget": 200}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["model_inversion"]["query_budget"] == 200
    assert _challenge_of("digits-api").competition.host == staff


@pytest.mark.django_db
def test_the_endpoint_needs_a_token_and_an_open_challenge(participant: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    challenge = _challenge()
    anonymous = api_client(None).post("/api/v1/competitions/invert/predict/", {"inputs": _inputs(1)}, format="json")
    assert anonymous.status_code in (401, 403)
    competition = challenge.competition
    competition.closes_at = timezone.now() - timedelta(seconds=1)
    competition.opens_at = competition.closes_at - timedelta(days=1)
    competition.save()
    closed = api_client(participant).post("/api/v1/competitions/invert/predict/", {"inputs": _inputs(1)},
                                          format="json")
    assert closed.status_code == 403 and not PredictionBudget.objects.exists()


@pytest.mark.django_db
def test_per_class_verdicts_are_withheld_unless_the_host_releases_them(
    participant: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]]
) -> None:
    """Each ✓/✗ is an evaluator answer outside the prediction budget (5 a submission on the digits challenge,
    where the released accuracy is one number): by default a participant sees the accuracy only."""
    images = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    hits = (np.argmax(images @ EVALUATOR_W, axis=1) == np.arange(3)).tolist()
    body = json.dumps({"reconstructions": images.tolist()}).encode()
    withheld, released = _challenge(), _challenge(slug="invert-open", release_per_class=True)
    assert withheld.release_per_class is False
    submissions = [submit(c.competition, participant, body, kind="json") for c in (withheld, released)]
    assert score_all() == ["scored", "scored"]
    client = api_client(participant)
    details = [client.get(f"/api/v1/submissions/{s.pk}/").json() for s in submissions]
    assert details[0]["per_class"] is None and details[1]["per_class"] == hits
    assert details[0]["public_score"] == details[1]["public_score"] == pytest.approx(np.mean(hits))
    assert "✓" not in client.get(f"/c/{withheld.competition.slug}/").content.decode()


@pytest.mark.django_db
def test_more_than_ten_classes_keep_the_class_order() -> None:
    """The canonical order sorts ids: ``class_10`` must not land before ``class_2``."""
    from leaderboard.competitions.selectors import competition_scoring_spec

    rng = np.random.default_rng(2)
    task = InversionTask(n_features=4, n_classes=12, image_shape=(2, 2), low=0.0, high=1.0, max_batch=16)
    model = MlpClassifier((rng.normal(size=(4, 12)),), (np.zeros(12),))
    challenge = inversion_challenge_create(slug="twelve", target=model, evaluator=model, task=task)
    hidden = competition_scoring_spec(competition=challenge.competition).hidden
    assert hidden.labels.tolist() == list(range(12)) and hidden.ids[10] == "class_10"
