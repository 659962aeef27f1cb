"""The Thresholdout attack (attacks/thresholdout.py): its design against brute force and the attack against the
defense at small N."""

from __future__ import annotations

import itertools

import numpy as np

import attacks
from attacks.thresholdout import design, states


def test_states_are_every_ternary_vector_once() -> None:
    assert {tuple(s) for s in states(3).tolist()} == set(itertools.product((0, 1, 2), repeat=3))


def test_design_separates_every_state() -> None:
    gap = 0.02
    _, moves = design(4, gap, 1e-15)
    sums = sorted(float(sum(moves[j, s[j]] for j in range(4))) for s in itertools.product((0, 1, 2), repeat=4))
    assert min(b - a for a, b in itertools.pairwise(sums)) >= gap


def test_thresholdout_attack_decodes_the_reference_side() -> None:
    y = (np.random.default_rng(3).random(300) < 0.6).astype(np.int64)
    oracle = attacks.LocalOracle(y, defenses=[{"name": "thresholdout"}], seed=5)
    result = attacks.run("thresholdout", oracle)
    reference = np.array(result.details["reference_mask"])
    assert result.details["rows_decoded"] >= 280  # until the holdout budget ends the releases
    assert abs(int(reference.sum()) - result.details["reference_rows"]) <= 4  # a chance match may misplace a block
    decoded = result.fill_confidence() >= 0.99
    assert decoded.sum() >= 0.4 * 300
    assert (result.labels[decoded] == y[decoded]).mean() >= 0.98
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())


def test_auto_plays_thresholdout_when_rows_never_move_without_a_split() -> None:
    # With this secret the fingerprint's row probes see reference rows move and holdout rows stay (no holdout
    # answer among them): a secret reference side. (A holdout answer among the probes can instead look like
    # subsetting or noise; see the report.)
    y = (np.random.default_rng(4).random(300) < 0.6).astype(np.int64)
    oracle = attacks.LocalOracle(y, defenses=[{"name": "thresholdout"}], seed=4, accounts=2)
    result = attacks.run("auto", oracle, budget=600)
    assert result.details["attack"] == "thresholdout"
    decoded = result.fill_confidence() >= 0.99
    assert decoded.sum() >= 100
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())
