"""The camouflage attack: exact labels through a rejecting probe detector (escalating its cover when refused),
its decoder against brute force, its camouflaged self-check, and queries that look like a model's output."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.camouflage import LEVELS, camouflage_attack
from attacks.camouflage.attack import jitter_fraction
from attacks.camouflage.base import honest_base
from defenses.probe_detector import probe_signals
from scoring.metrics import get_metric
from scoring.pipeline import release_text

REJECT = {"name": "probe_detector", "reject": True}
STRICT = {**REJECT, "min_changed": 0.5, "sparse_edits": 2}


class Recording:
    """Forwards to an oracle and keeps every submitted vector and its release."""

    def __init__(self, inner: LocalOracle) -> None:
        self._inner = inner
        self.sent: list[tuple[np.ndarray, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def submit(self, predictions: Any) -> Any:
        released = self._inner.submit(predictions)
        self.sent.append((np.array(predictions, dtype=np.float64), released))
        return released


def _labels(n: int, seed: int) -> dict[str, np.ndarray]:
    one = np.zeros(n, dtype=np.int64)
    one[n // 2] = 1
    return {"random": np.random.default_rng(seed).integers(0, 2, n), "zeros": np.zeros(n, dtype=np.int64),
            "ones": np.ones(n, dtype=np.int64), "one": one}


@pytest.mark.parametrize("chain", [[], [REJECT], [STRICT]], ids=["undefended", "probe_detector", "strict"])
def test_it_recovers_every_label_exactly_through_a_rejecting_probe_detector(chain: list[dict[str, Any]]) -> None:
    for name, labels in _labels(140, 3).items():
        oracle = LocalOracle(labels, decimals=5, defenses=chain, seed=1)
        result = attacks.run("camouflage", oracle, seed=2)
        assert (result.labels == labels).all(), name
        assert (result.fill_confidence() == 1.0).all() and result.details["confirmed"] == "passed"


def test_a_strict_detector_refuses_its_sparse_edits_and_it_adapts() -> None:
    # 700 rows: the detector samples 512 of them; a strict one (50 % of rows must move) refuses the level-0 and
    # level-1 queries and the level-2 cover (20 %), then accepts level 3 (62 %) for the rest of the attack.
    labels = np.random.default_rng(4).integers(0, 2, 700)
    oracle = LocalOracle(labels, decimals=5, defenses=[STRICT], seed=1)
    result = camouflage_attack(oracle, seed=1)
    assert (result.labels == labels).all()
    assert result.details["refused"] == 3 and result.details["stealth_level"] == len(LEVELS) - 1


def test_it_costs_few_queries_more_than_the_capacity_attack_on_an_undefended_board() -> None:
    labels = np.random.default_rng(5).integers(0, 2, 569)
    camouflaged = attacks.run("camouflage", LocalOracle(labels, decimals=5), seed=0)
    capacity = attacks.run("capacity", LocalOracle(labels, decimals=5))
    assert camouflaged.accuracy(labels) == capacity.accuracy(labels) == 1.0
    assert camouflaged.queries <= 1.1 * capacity.queries + 2  # the unknown base costs ~1 bit in its first queries


def test_its_queries_look_like_a_model_to_the_per_submission_signals() -> None:
    labels = np.random.default_rng(6).integers(0, 2, 300)
    oracle = Recording(LocalOracle(labels, decimals=5))
    camouflage_attack(oracle, seed=3)
    assert all(probe_signals(p) == [] for p, _ in oracle.sent)
    base = honest_base(300, np.random.default_rng(0))
    assert len(np.unique(base)) == 300 and probe_signals(base) == []


@pytest.mark.parametrize("seed", range(4))
def test_the_decoder_never_claims_a_label_brute_force_leaves_open(seed: int) -> None:
    # Stop after a few queries, then enumerate every labeling of the 12 rows: the ones whose released scores (as
    # the server computes and rounds them) match every release. Each claimed label must be the same in all of
    # them, and the decoder must claim every label they all agree on once it has finished.
    n = 12
    labels = np.random.default_rng(40 + seed).integers(0, 2, n)
    for limit in (2, 3, None):
        oracle = Recording(LocalOracle(labels, decimals=5))
        result = camouflage_attack(oracle, seed=seed, budget=limit, check=False)
        consistent = _brute_force(n, oracle.sent)
        assert tuple(labels) in consistent
        matrix = np.array(sorted(consistent))
        pinned = matrix.min(axis=0) == matrix.max(axis=0)
        claimed = result.labels >= 0
        assert not (claimed & ~pinned).any(), (limit, result.labels, matrix)
        assert (result.labels[claimed] == labels[claimed]).all()
        if limit is None:
            assert claimed.all()


def _brute_force(n: int, sent: list[tuple[np.ndarray, Any]]) -> set[tuple[int, ...]]:
    metric = get_metric("binary_logloss")
    out = set()
    for bits in itertools.product((0, 1), repeat=n):
        y = np.array(bits, dtype=np.int64)
        if all(release_text(metric.score(p, y, 1e-15), 5)[0] == released for p, released in sent):
            out.add(bits)
    return out


def test_it_fails_loudly_on_noise_it_was_not_told_about() -> None:
    labels = np.random.default_rng(7).integers(0, 2, 300)
    oracle = LocalOracle(labels, decimals=5, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}], seed=2)
    with pytest.raises(AttackFailed, match="no labeling is consistent"):
        attacks.run("camouflage", oracle)


def test_its_self_check_catches_a_wrong_claim() -> None:
    # A server that scores one row's label flipped: the decoder, told nothing, claims the flipped label only if
    # every release agrees with it; the camouflaged confirmation then sees the score the claims imply.
    labels = np.random.default_rng(11).integers(0, 2, 200)
    flipped = labels.copy()
    flipped[17] ^= 1
    inner = LocalOracle(labels, decimals=5)
    liar = LocalOracle(flipped, decimals=5)

    class Switching(Recording):
        """Answers from the true labels until the confirmation, then from the flipped ones."""

        def submit(self, predictions: Any) -> Any:
            values = np.asarray(predictions, dtype=np.float64)
            confident = np.mean((values < 0.0181) | (values > 0.9819)) > 0.9
            return (liar if confident else inner).submit(predictions)

    with pytest.raises(AttackFailed, match="confirmation failed"):
        camouflage_attack(Switching(inner), seed=0)


def test_a_query_limit_returns_exact_labels_decoded_so_far() -> None:
    labels = np.random.default_rng(8).integers(0, 2, 400)
    result = attacks.run("camouflage", LocalOracle(labels, decimals=5, defenses=[REJECT], seed=1), budget=12)
    claimed = result.labels >= 0
    assert 0 < claimed.sum() < 400 and (result.labels[claimed] == labels[claimed]).all()
    assert result.queries == 12 and result.details["confirmed"] == "passed"


def test_jitter_fraction_makes_the_queries_differ_on_the_target_share() -> None:
    rng = np.random.default_rng(9)
    for known in (0.0, 0.1, 0.3):
        f = jitter_fraction(0.62, known)
        moved_a, moved_b = rng.random(200_000) < f, rng.random(200_000) < f
        sign_a, sign_b = rng.choice((-1, 1), 200_000), rng.choice((-1, 1), 200_000)
        differs = (moved_a != moved_b) | (moved_a & moved_b & (sign_a != sign_b))
        assert known + (1 - known) * differs.mean() >= 0.62 - 0.01
        assert known + (1 - known) * moved_a.mean() >= 0.62 - 0.01  # against the uncovered base


def test_auto_plays_it_when_probes_are_refused() -> None:
    labels = np.random.default_rng(10).integers(0, 2, 200)
    result = attacks.run("auto", LocalOracle(labels, decimals=5, defenses=[REJECT], seed=1), budget=60)
    assert result.details["attack"] == "camouflage" and result.accuracy(labels) == 1.0
    assert result.details["exact"] == 200


@pytest.mark.parametrize("decimals", [None, 8, 3])
def test_it_is_exact_at_every_released_precision_and_on_tiny_boards(decimals: int | None) -> None:
    for n in (1, 2, 5, 300):
        for labels in _labels(n, n).values():
            result = attacks.run("camouflage", LocalOracle(labels, decimals=decimals), seed=n)
            assert (result.labels == labels).all(), (n, labels)
