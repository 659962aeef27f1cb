"""A model competition on a live site (gunicorn + a real Celery worker + Redis + a fresh SQLite file), through
the client alone: the host creates it with hidden features, a participant uploads an honest scikit-learn model
exported to ONNX and a refused one, and the worker scores the honest one as scikit-learn would."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bot.client import UploadRejected
from tests.e2e.bot_support import LiveStack, live_stack, redis_available
from tests.sandbox import hostile
from tests.site.factories import features_csv, labels_csv

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    if not redis_available():
        pytest.fail("the end-to-end tests need Redis at 127.0.0.1:6379")
    with live_stack(tmp_path_factory.mktemp("models-e2e")) as live:
        yield live


def test_an_onnx_model_is_run_on_hidden_features_and_scored_over_http(stack: LiveStack) -> None:
    features, labels = hostile.breast_cancer()
    hidden = slice(300, None)
    stack.host.create_competition(
        "live-models", labels_csv(labels[hidden]), features=features_csv(features[hidden]), score_decimals=None,
        public_fraction=1.0,
    )
    player = stack.client(stack.participant("model-player"))
    competition = player.competition("live-models")
    assert competition.takes_models and competition.n_features == 30
    with pytest.raises(UploadRejected, match="has 29 features"):
        player.submit_model("live-models", hostile.declared(input_width=29))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(features[:300], labels[:300])
    upload = player.submit_model("live-models", hostile.sklearn_onnx(model, features))
    scored = player.wait(upload.id, timeout=120)
    assert scored.status == "scored", scored
    expected = log_loss(labels[hidden], np.clip(model.predict_proba(features[hidden])[:, 1], 1e-15, 1 - 1e-15))
    assert scored.public_score == pytest.approx(expected, abs=1e-5)


def test_mutnet_recovers_every_label_of_a_live_model_competition(stack: LiveStack) -> None:
    """Paper 001, Section 5, through the site: an existing attack (``capacity``) whose every query is an honest
    naive Bayes model with the ranked Mutator Network on top, uploaded over HTTP and run by the worker on
    hidden features the attacker never sees; then a follow-up model puts the learned labels back on their rows."""
    import onnx
    from sklearn.naive_bayes import GaussianNB

    import attacks
    from attacks.mutnet import ModelOracle

    features, labels = hostile.breast_cancer()
    hidden = slice(300, None)
    stack.host.create_competition(
        "live-mutnet", labels_csv(labels[hidden]), features=features_csv(features[hidden]), public_fraction=1.0,
        daily_limit=None,
    )
    player = stack.client(stack.participant("mutnet-player"))
    meta = player.competition("live-mutnet")

    def submit_model(data: bytes) -> float | None:
        done = player.wait(player.submit_model("live-mutnet", data).id, timeout=120, raise_on_failure=True)
        return done.public_score

    base = onnx.load_model_from_string(hostile.sklearn_onnx(GaussianNB().fit(features[:300], labels[:300]), features))
    oracle = ModelOracle(base, submit_model, n_rows=meta.n_rows, n_features=meta.n_features,
                         decimals=meta.released_decimals, seed=11)
    result = attacks.run("capacity", oracle)
    assert sorted(np.bincount(result.labels, minlength=2)) == sorted(np.bincount(labels[hidden], minlength=2))
    exploit = submit_model(oracle.model_for(np.asarray(result.labels, dtype=np.float64)))
    assert exploit == 0.0  # every label right: the top of the board


def test_the_bot_carries_its_queries_in_mutnet_models_on_a_model_competition(stack: LiveStack, tmp_path) -> None:
    """``leaderboard-bot --attack mutnet`` on a model competition: ``auto``'s plan played through MutNet models (an
    honest scikit-learn base under the ranked head); labels come back keyed by rank, and the final submission is
    the follow-up model (learned labels looked up, the base elsewhere), which scores 0 on the public board."""
    import json
    import subprocess
    import sys

    from stack.processes import REPO

    features, labels = hostile.breast_cancer()
    hidden = slice(300, None)
    stack.host.create_competition(
        "bot-mutnet", labels_csv(labels[hidden]), features=features_csv(features[hidden]), daily_limit=None,
    )
    token = stack.participant("bot-mutnet-user")
    out = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "bot", "--url", stack.url, "--competition", "bot-mutnet", "--token", token,
         "--json", str(out), "--no-progress", "--attack", "mutnet"],
        cwd=REPO, env=stack.env, capture_output=True, text=True, timeout=600,
    )
    summary = json.loads(out.read_text()) if out.exists() else {}
    assert done.returncode == 0, done.stdout + done.stderr + stack.logs()
    assert summary["status"] == "complete"
    assert summary["attack"] == "mutnet" and summary["mutnet"]["key"] == "rank"
    assert "scikit-learn" in summary["mutnet"]["base"] and "MutNet" in summary["reasoning"][0]
    public = round(0.3 * 269)
    assert summary["recovered"] >= public - 1 and all(name.startswith("rank ") for name in summary["labels"])
    assert summary["final_public_score_text"] == "0.00000"


def test_the_bot_keys_labels_by_feature_fingerprints_with_the_hash_head(stack: LiveStack, tmp_path) -> None:
    """``--attack mutnet --param key=hash``: rows keyed by a hash of their features computed inside the graph
    (what a host that batches or reorders rows still runs), labels reported per fingerprint, the follow-up
    model at the top of the public board. A small competition (40 rows, 8 public) keeps it fast;
    the split is the site's secret, so a public collision is possible (5 %): ``mutnet`` then takes another seed."""
    import json
    import subprocess
    import sys

    from attacks.mutnet import FeatureHash
    from stack.processes import REPO

    features, labels = hostile.breast_cancer()
    hidden = slice(300, 340)
    stack.host.create_competition(
        "bot-mutnet-hash", labels_csv(labels[hidden]), features=features_csv(features[hidden]), daily_limit=None,
        public_fraction=0.2,
    )
    token = stack.participant("bot-mutnet-hash-user")
    out = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, "-m", "bot", "--url", stack.url, "--competition", "bot-mutnet-hash", "--token", token,
         "--json", str(out), "--no-progress", "--attack", "mutnet", "--param", "key=hash", "--param",
         "buckets=509"],
        cwd=REPO, env=stack.env, capture_output=True, text=True, timeout=600,
    )
    summary = json.loads(out.read_text()) if out.exists() else {}
    assert done.returncode == 0, done.stdout + done.stderr + stack.logs()
    assert summary["status"] == "complete" and summary["mutnet"]["key"] == "hash"
    keys = FeatureHash(n_features=30, buckets=509, seed=summary["mutnet"]["seed"]).keys_of(features[hidden])
    exact = {name: label for name, label in summary["labels"].items() if name not in summary["confidence"]}
    assert len(exact) == 8 and all(name.startswith("hash ") for name in exact)
    truth: dict[str, set[int]] = {}  # a private row may share a public row's fingerprint: labels per key
    for key, label in zip(keys.tolist(), labels[hidden].tolist(), strict=True):
        truth.setdefault(f"hash {key}", set()).add(int(label))
    assert all(label in truth[name] for name, label in exact.items())  # every learned label is a row's own
    assert summary["final_public_score_text"] == "0.00000"
