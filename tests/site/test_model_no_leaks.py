"""No leaks from a model competition: crawl every participant-visible page and API answer of a competition that
takes ONNX models (an honest model scored, a MutNet model scored, a hostile model failed, a model refused at
upload) as a participant, another participant and anonymously, and show that no hidden feature, label, raw
score, secret or other participant's submission appears — in the pages, the JSON, or the error messages."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from django.test import Client
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attacks.mutnet import FeatureRank, ranked_mutator_head
from leaderboard.competitions.models import HiddenTestData
from leaderboard.competitions.services import competition_create
from leaderboard.submissions.models import Submission
from tests.sandbox import hostile
from tests.site.conftest import api_client
from tests.site.factories import features_csv, labels_csv
from tests.site.test_web_no_leaks import Forbidden, label_renderings, leaks, links, page_text

pytestmark = pytest.mark.django_db

FEATURES, LABELS = hostile.breast_cancer()
N_HIDDEN = 60
HIDDEN = slice(300, 300 + N_HIDDEN)


def feature_renderings(features: np.ndarray) -> list[str]:
    """How hidden features would show: a CSV row's values, a JSON list of a row, each value as the host's file
    spells it and as float32 (what a model computes on), where specific enough not to be a common number."""
    out: list[str] = []
    for row in features:
        out.append(",".join(repr(float(v)) for v in row[:3]))
        out.append(json.dumps([float(v) for v in row[:3]]))
        for v in row:
            for text in (repr(float(v)), repr(float(np.float32(v)))):
                if len(text.replace("-", "").replace(".", "").lstrip("0")) >= 4:  # "17.99", not "0.0" or "1.2"
                    out.append(text)
    return out


@pytest.fixture
def scenario(host: Any, participant: Any, other_participant: Any, enqueued: list[int],
             score_all: Callable[[], list[str]], django_capture_on_commit_callbacks: Any) -> Any:
    ids = [f"r{i:03d}" for i in range(N_HIDDEN)]
    competition = competition_create(
        slug="cancer-models-leaks", host=host, labels_csv=labels_csv(LABELS[HIDDEN], ids),
        features_csv=features_csv(FEATURES[HIDDEN], ids), daily_limit=20,
    )
    honest = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(FEATURES[:300], LABELS[:300])
    honest_bytes = hostile.sklearn_onnx(honest, FEATURES)
    probe = np.full(N_HIDDEN, 0.5)
    probe[:4] = [1 / 3, 1 / 4, 1 / 6, 1 / 8]
    mutnet = ranked_mutator_head(onnx.load_model_from_string(honest_bytes), probe,
                                 FeatureRank(30, N_HIDDEN)).SerializeToString()
    uploads = {
        ("participant", "alice-honest.onnx"): honest_bytes,
        ("participant", "alice-mutnet.onnx"): mutnet,
        ("participant", "alice-nan.onnx"): hostile.nan_output(),
        ("other", "bob-index-error.onnx"): hostile.index_error(),
    }
    users = {"participant": participant, "other": other_participant}
    for (who, name), data in uploads.items():
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client(users[who]).post(
                f"/api/v1/competitions/{competition.slug}/submissions/",
                {"file": _named(data, name)}, format="multipart",
            )
        assert response.status_code == 202, response.content
    refused = api_client(participant).post(
        f"/api/v1/competitions/{competition.slug}/submissions/",
        {"file": _named(hostile.declared(input_width=29), "alice-refused.onnx")}, format="multipart",
    )
    assert refused.status_code == 400
    assert sorted(score_all()) == ["failed", "failed", "scored", "scored"]
    return competition, users, refused.content.decode()


def _named(data: bytes, name: str) -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
NUMBER_TOKEN = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?(?:[eE]-?\d+)?")


def feature_leaks(body: str, renderings: set[str]) -> list[str]:
    """The renderings of hidden features that start a number in ``body`` (one pass over the body's numbers,
    not a search per rendering: there are thousands), and the row renderings anywhere."""
    found = [text for text in renderings if not NUMBER_TOKEN.fullmatch(text) and text in body]
    for token in NUMBER_TOKEN.findall(body):
        found += [token[:end] for end in range(1, len(token) + 1) if token[:end] in renderings]
    return [f"a hidden feature: {text!r}" for text in found]


def _forbidden(competition: Any, me: Any | None) -> Forbidden:
    forbidden = Forbidden()
    hidden = HiddenTestData.objects.get(competition=competition)
    for text in label_renderings(list(hidden.ids), hidden.labels):
        forbidden.add(text, "the hidden labels")
    forbidden.add(hidden.secret, "the competition secret")
    for submission in Submission.objects.all():
        for raw in (submission.raw_public, submission.raw_private):
            if raw is not None:
                forbidden.add(f"{raw:.7f}", f"raw score of #{submission.pk}")
        if me is None or submission.participant_id != me.pk:
            forbidden.submission_ids.add(submission.pk)
            forbidden.add(submission.upload_name, f"another participant's file name (#{submission.pk})")
        if submission.error and (me is None or submission.participant_id != me.pk):
            forbidden.add(submission.error, f"another participant's error (#{submission.pk})")
        for note in submission.defense_notes or []:
            if note.startswith("model run"):
                forbidden.add(note, "a host note on a model run")
    return forbidden


def test_no_model_competition_surface_leaks(scenario: Any) -> None:
    competition, users, refused = scenario
    errors = set(Submission.objects.filter(competition=competition, status="failed").values_list("error", flat=True))
    assert errors == {"the model's output contains NaN or infinite values",
                      "the model raised an error while running on the hidden features"}
    assert "29 features" in refused
    found: list[str] = []
    for viewer in ("participant", "other", "anonymous"):
        found += _leaks_seen_by(competition, users.get(viewer), refused if viewer == "participant" else "")
    assert not found, "\n".join(found)
    # The detector would see them: the host's features file, one value inside a sentence, the labels.
    stored = HiddenTestData.objects.get(competition=competition).features
    assert stored is not None
    renderings = set(feature_renderings(stored))
    assert feature_leaks(features_csv(stored[:2]).decode(), renderings)
    assert feature_leaks(f"value {float(stored[5, 3])!r} at row 5", renderings)
    assert not feature_leaks("score 0.61234, 5 decimals, 60 rows", renderings)


def competition_crawl(client: Client, slug: str, start: list[str]) -> dict[str, tuple[int, str]]:
    """Every page under ``/c/{slug}/`` reachable from ``start`` (the rest of the site is the general crawl's)."""
    pages: dict[str, tuple[int, str]] = {}
    queue = list(start)
    while queue:
        url = queue.pop()
        if url in pages or not url.startswith(f"/c/{slug}/"):
            continue
        response = client.get(url)
        pages[url] = (response.status_code, page_text(response))
        queue.extend(link for link in links(pages[url][1]) if link not in pages)
    return pages


def _leaks_seen_by(competition: Any, me: Any | None, refused: str) -> list[str]:
    forbidden = _forbidden(competition, me)
    slug = competition.slug
    start = [f"/c/{slug}/", f"/c/{slug}/submit/", f"/c/{slug}/submissions/", f"/c/{slug}/leaderboard/public/",
             f"/c/{slug}/leaderboard/public.csv", f"/c/{slug}/sample-submission.csv", f"/c/{slug}/host/"]
    api = f"/api/v1/competitions/{slug}/"
    api_paths = [api, f"{api}sample-submission/", f"{api}submissions/", f"{api}quota/", f"{api}leaderboard/",
                 f"{api}leaderboard/?format=csv", f"/api/v1/host/competitions/{slug}/",
                 *(f"/api/v1/submissions/{pk}/" for pk in Submission.objects.values_list("pk", flat=True))]
    client = Client()
    if me is not None:
        client.force_login(me)
    pages = competition_crawl(client, slug, start)
    assert len(pages) >= 5  # the crawl reached the competition's pages
    rest = api_client(me)
    answers = {path: rest.get(path) for path in api_paths}
    hidden = HiddenTestData.objects.get(competition=competition)
    assert hidden.features is not None
    features = set(feature_renderings(hidden.features))

    # What the board publishes: a released score may start like a hidden feature (0.03369…) by chance.
    released = {text for pair in Submission.objects.values_list("public_score_text", "private_score_text")
                for text in pair if text}

    def seen(body: str) -> list[str]:
        # A timestamp's seconds ("…T03:33:12.123456Z") can start like a hidden feature (12.12) by chance.
        body = TIMESTAMP.sub("<time>", body)
        published = body
        for text in released:
            published = re.sub(rf"(?<![\d.]){re.escape(text)}(?!\d)", "<score>", published)
        return leaks(body, forbidden) + feature_leaks(published, features)

    found = [f"{url}: {leak}" for url, (_, body) in pages.items() for leak in seen(body)]
    for path, response in answers.items():
        assert response.status_code < 500, path
        body = response.content.decode()
        found += [f"{path}: {leak}" for leak in seen(body)]
        if "raw" in body:
            found.append(f"{path}: a raw field")
    found += [f"refused upload's message: {leak}" for leak in seen(refused)]
    return [f"{me or 'anonymous'}: {line}" for line in found]
