"""``mutnet`` as an attack and what ``auto`` plays on a model competition (paper 001, Section 5), offline on
:class:`LocalModelBoard` (hidden breast-cancer features; the host runs each uploaded model with onnxruntime):

* the registry knows ``mutnet`` (and registering it loads no onnx); on a file board it refuses;
* ``auto`` on a model board carries its plan in MutNet models on an honest scikit-learn base, in the queries of
  the same plan with prediction files, and recovers the public labels keyed by the head's feature rank;
* with the feature-hash head the labels are keyed by fingerprints, and the attack works when the host runs the
  model one row at a time, in chunks, in a shuffled order — where the rank head fails;
* the follow-up model (the learned labels looked up by key, the honest base elsewhere) tops the board."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.mutnet import FeatureHash, LocalModelBoard
from attacks.result import SubmissionRefused
from scoring.board import BoardEntry, board_standings
from scoring.hidden import public_split_mask
from tests.sandbox import hostile

FEATURES, LABELS = hostile.breast_cancer()
HIDDEN_X, HIDDEN_Y = FEATURES[300:], LABELS[300:]
SPLIT = {"decimals": 5, "public_fraction": 0.3, "seed": 3}


def test_mutnet_is_a_registered_attack_and_registering_it_loads_no_onnx() -> None:
    assert "mutnet" in attacks.available()
    code = "import sys, attacks; assert 'mutnet' in attacks.available(); assert 'onnx' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttackFailed, match="model competition"):
        attacks.run("mutnet", LocalOracle(HIDDEN_Y, decimals=5))


def test_auto_plays_a_model_board_through_mutnet_models_in_the_queries_of_prediction_files() -> None:
    board = LocalModelBoard(HIDDEN_X, HIDDEN_Y, **SPLIT)
    result = attacks.run("auto", board)
    carrier = result.details["carrier"]
    assert result.details["mutnet"]["key"] == "rank" and "scikit-learn" in result.details["mutnet"]["base"]
    assert "MutNet" in result.details["reasoning"][0]
    # The host's view (never the attacker's): a ranked head emitting table[rank] = rank / 1000 + 0.1.
    rank = np.rint((board.run(carrier.model_for(np.arange(269) / 1000.0 + 0.1))[:, 0] - 0.1) * 1000.0).astype(int)
    assert sorted(rank.tolist()) == list(range(269))
    by_rank = np.empty_like(HIDDEN_Y)
    by_rank[rank] = HIDDEN_Y
    mask = public_split_mask(269, 0.3, 3)
    public_by_rank = np.zeros(269, bool)
    public_by_rank[rank] = mask
    exact = result.fill_confidence() >= 1.0
    assert exact.sum() == mask.sum() == 81
    np.testing.assert_array_equal(result.labels[exact], by_rank[exact])
    assert (exact == public_by_rank).all()
    assert result.queries == board.queries  # every query was a model the board ran


def test_the_hash_head_keys_rows_by_fingerprint_whatever_the_batching_and_order() -> None:
    key = FeatureHash(n_features=30, buckets=509, seed=0)
    keys = key.keys_of(HIDDEN_X)
    for batch_size, order_seed in [(None, None), (1, 4), (7, 5)]:
        session = ort.InferenceSession(key.key_model().SerializeToString(), providers=["CPUExecutionProvider"])
        rows = np.arange(269) if order_seed is None else np.random.default_rng(order_seed).permutation(269)
        size = batch_size or 269
        got = np.empty(269, dtype=np.int64)
        for start in range(0, 269, size):
            part = rows[start:start + size]
            got[part] = session.run(["key"], {"X": HIDDEN_X[part].astype(np.float32)})[0]
        np.testing.assert_array_equal(got, keys)  # exact integers: numpy and the graph agree, any batching


@pytest.mark.parametrize(("batch_size", "order_seed"), [(1, 5), (7, 8)])
def test_mutnet_with_the_hash_head_decodes_labels_by_fingerprint_when_the_host_runs_rows_its_own_way(
    batch_size: int, order_seed: int
) -> None:
    x, y = HIDDEN_X[:60], HIDDEN_Y[:60]
    options = {"decimals": 5, "public_fraction": 0.2, "seed": 3}
    board = LocalModelBoard(x, y, batch_size=batch_size, order_seed=order_seed, **options)
    with pytest.raises(AttackFailed, match="refused the first rank-head model") as refused:
        attacks.run("mutnet", LocalModelBoard(x, y, batch_size=batch_size, order_seed=order_seed, **options),
                    attack="capacity_split", key="rank")  # the rank head needs the whole test set at once
    assert isinstance(refused.value.__cause__, SubmissionRefused)
    result = attacks.run("mutnet", board, key="hash", buckets=509, attack="capacity_split")
    keys = FeatureHash(n_features=30, buckets=509, seed=0).keys_of(x)
    mask = public_split_mask(60, 0.2, 3)
    assert len(set(keys[mask].tolist())) == mask.sum() == 12  # no two public rows share a fingerprint here
    truth = np.full(509, -1)
    truth[keys[mask]] = y[mask]
    np.testing.assert_array_equal(result.labels, truth)  # labels keyed by fingerprint, every public one
    assert result.details["mutnet"]["key"] == "hash" and result.details["carrier"].row_names[7] == "hash 7"
    follow_up = board.run(result.details["carrier"].follow_up(result.labels, result.confidence))[:, 0]
    assert (follow_up[mask] == y[mask]).all()  # each learned label back on its row, in any order


def _honest_population() -> dict[str, np.ndarray]:
    """Honest players: scikit-learn classifiers trained on the public rows, their probabilities on the hidden."""
    models = {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)),
        "naive_bayes": GaussianNB(),
        "tree": DecisionTreeClassifier(max_depth=4, random_state=0),
    }
    return {name: model.fit(FEATURES[:300], LABELS[:300]).predict_proba(HIDDEN_X)[:, 1]
            for name, model in models.items()}


@pytest.mark.parametrize("public_fraction", [None, 0.3])
def test_the_follow_up_model_climbs_to_the_top_of_the_board(public_fraction: float | None) -> None:
    """Every row public: the follow-up is first on both boards (the private board scores the same rows). With a
    30 % public split it is first on the public board; on the private rows nothing leaked, so there it is its
    honest base — its private score is the base model's, no better."""
    options = {"decimals": 5, "public_fraction": public_fraction, "seed": 3}
    board = LocalModelBoard(HIDDEN_X, HIDDEN_Y, **options)
    result = attacks.run("auto", board)
    follow_up = board.run(result.details["carrier"].follow_up(result.labels, result.confidence))[:, 0]
    players = _honest_population() | {"attacker": follow_up}
    mask = np.ones(269, bool) if public_fraction is None else public_split_mask(269, public_fraction, 3)
    private = mask if public_fraction is None else ~mask
    entries = [
        BoardEntry(i, name, float(i), float(board.board.submit(p)),
                   log_loss(HIDDEN_Y[private], np.clip(p[private], 1e-15, 1 - 1e-15), labels=[0, 1]))
        for i, (name, p) in enumerate(players.items())
    ]
    public = board_standings(entries, "public", higher_is_better=False)
    if public_fraction is None:  # the same instance with prediction files, rows in rank order: same queries
        rank = np.rint((board.run(result.details["carrier"].model_for(np.arange(269) / 1000.0 + 0.1))[:, 0] - 0.1)
                       * 1000.0).astype(int)
        by_rank = np.empty_like(HIDDEN_Y)
        by_rank[rank] = HIDDEN_Y
        assert attacks.run("auto", LocalOracle(by_rank, decimals=5)).queries == result.queries
    assert public[0].participant == "attacker" and public[0].score == 0.0
    standings = board_standings(entries, "private", higher_is_better=False)
    if public_fraction is None:
        assert standings[0].participant == "attacker"
    else:
        attacker = next(s for s in standings if s.participant == "attacker")
        honest_base = next(s for s in standings if s.participant == "logistic")
        assert attacker.score == pytest.approx(honest_base.score, abs=1e-6)  # its base is the same model


def test_auto_switches_to_the_hash_head_when_the_host_refuses_the_rank_head() -> None:
    """A host that runs one row at a time cannot run the rank head (``TopK`` over every row): its first model
    fails, and ``auto`` plays on with the feature-hash head, that one refused query counted."""
    x, y = HIDDEN_X[:60], HIDDEN_Y[:60]
    board = LocalModelBoard(x, y, batch_size=1, decimals=5, public_fraction=0.2, seed=3)
    result = attacks.run("auto", board)
    mutnet = result.details["mutnet"]
    assert mutnet["key"] == "hash" and mutnet["given_up_queries"] == 1 and mutnet["keys"] == 509
    assert "switched to the feature-hash head" in result.details["reasoning"][1]
    assert result.queries == board.queries
    keys = FeatureHash(n_features=30, buckets=509, seed=0).keys_of(x)
    mask = public_split_mask(60, 0.2, 3)
    exact = result.fill_confidence() >= 1.0
    assert sorted(np.flatnonzero(exact).tolist()) == sorted(keys[mask].tolist())
    np.testing.assert_array_equal(result.labels[keys[mask]], y[mask])


@pytest.mark.parametrize("attack", ["auto", "capacity_split"])
def test_two_public_rows_sharing_a_fingerprint_break_the_decoding_loudly_and_another_hash_seed_follows(
    attack: str,
) -> None:
    """With 151 fingerprints, hash seed 0 puts two of the 12 public rows in one bucket (checked below): the exact
    decoding breaks (the forced attack fails, ``auto`` falls back to a guess), and ``mutnet`` tries seed 1,
    which keeps them apart and recovers every public label — the first attempt's queries counted."""
    x, y = HIDDEN_X[:60], HIDDEN_Y[:60]
    mask = public_split_mask(60, 0.2, 3)
    assert len(set(FeatureHash(30, 151, seed=0).keys_of(x)[mask].tolist())) == 11
    keys = FeatureHash(30, 151, seed=1).keys_of(x)
    assert len(set(keys[mask].tolist())) == 12
    board = LocalModelBoard(x, y, batch_size=1, decimals=5, public_fraction=0.2, seed=3)
    result = attacks.run("mutnet", board, key="hash", buckets=151, attack=attack)
    mutnet = result.details["mutnet"]
    assert mutnet["seed"] == 1 and mutnet["given_up_queries"] > 0
    assert "two public rows share a fingerprint" in result.details["reasoning"][1]
    assert result.exact == 12 and result.queries == board.queries
    np.testing.assert_array_equal(result.labels[keys[mask]], y[mask])


def test_the_sites_sandbox_accepts_and_runs_the_hash_head_and_the_follow_up() -> None:
    """The feature-hash head and the follow-up model pass the site's graph check and run in its sandbox child,
    emitting exactly what the attacker put in the table for each row's fingerprint."""
    from attacks.mutnet import ModelOracle, honest_base
    from sandbox import Limits, ModelContract, run_model, validate_model

    x = HIDDEN_X[:60]
    oracle = ModelOracle(honest_base(30).model, lambda data: None, n_rows=60, n_features=30, key="hash",
                         buckets=509, public_fraction=0.2)
    table = np.random.default_rng(9).uniform(0.01, 0.99, 509)
    contract = ModelContract(n_features=30, n_classes=2, n_rows=60)
    keys = FeatureHash(n_features=30, buckets=509, seed=0).keys_of(x)
    data = oracle.model_for(table)
    output = run_model(data, x, validate_model(data, contract), contract, Limits(cpu_seconds=5))
    np.testing.assert_array_equal(output.predictions, table[keys])
    learned = np.full(509, -1)
    learned[keys[:10]] = HIDDEN_Y[:10]
    follow = oracle.follow_up(learned)
    output = run_model(follow, x, validate_model(follow, contract), contract, Limits(cpu_seconds=5))
    honest = LocalModelBoard(x, HIDDEN_Y[:60]).run(honest_base(30).model.SerializeToString())[:, 1]
    known = np.isin(keys, keys[:10])
    np.testing.assert_array_equal(output.predictions[known], learned[keys[known]])
    np.testing.assert_allclose(output.predictions[~known], honest[~known], rtol=1e-6)
