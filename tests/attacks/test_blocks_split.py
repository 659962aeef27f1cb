"""``blocks_split``: three-state block reads (private, public 0, public 1) on a board that scores a hidden public
split under noise and fresh label flips. Its read decoder against brute force, its public labels on seeded split
boards, and its confidences' calibration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from attacks import LocalOracle, run
from attacks.blocks import Noise
from attacks.blocks_split import SplitRead, SplitReader, blocks_split_fits, n_public_of, row_levels
from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.seen import Fingerprint
from scoring import public_split_mask
from tests.attacks.calibration_support import assert_deciles_calibrated

NOISY_FLIPS = [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
               {"name": "noise", "kind": "laplace", "scale": 1e-4}]


def _labels(n: int, share: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_one_read_decodes_as_brute_force_over_states_and_flips(kind: str) -> None:
    """A read's message to a row over its three true states is the sum, over every true state of the block's other
    rows (weighed by their beliefs) and every label the scorer showed (each flipped with probability p), of the
    noise density at the release, as enumerated by hand."""
    rng = np.random.default_rng(5)
    noise = Noise(kind, 0.3)
    flip = 0.1
    reader = SplitReader(n=10, n_public=3, rounding=0.0, noise=noise, prior=0.7, flip=flip)
    p = np.array([0.02, 0.9, 0.3])
    levels = row_levels(p)
    span = float(np.abs(levels).max(axis=1).sum()) + 10 * 0.3
    ext = rng.dirichlet(np.ones(3), size=3)
    for value in rng.uniform(-2, 5, 6):
        read = SplitRead(np.array([2, 5, 7]), levels, float(value))
        messages, _, _ = reader._decode_group([read], ext[None, :, :])
        for j in range(3):
            expected = np.zeros(3)
            for states in itertools.product(range(3), repeat=3):
                for shown_labels in itertools.product((0, 1), repeat=3):
                    weight = 1.0
                    total = 0.0
                    for k, (state, shown) in enumerate(zip(states, shown_labels, strict=True)):
                        if state == 0:
                            weight *= 1.0 if shown == 0 else 0.0  # a private row shows nothing (counted once)
                        else:
                            weight *= 1 - flip if shown == state - 1 else flip
                            total += levels[k, 1 + shown]
                        if k != j:
                            weight *= ext[k, state]
                    if weight == 0.0:
                        continue
                    density = math.exp(float(noise.logpdf(np.array([value - total]), span)[0]))
                    expected[states[j]] += weight * density
            got = np.exp(messages[0, j])
            assert got / got.sum() == pytest.approx(expected / expected.sum(), rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(("share", "seed"), [(0.68, 1), (0.5, 2)])
def test_reads_the_public_labels_of_a_seeded_split_board(share: float, seed: int) -> None:
    """600 rows, 30 % public, fresh flips 2 %, Laplace 1e-4, 5 decimals: within 260 submissions nearly every public
    label is right (the public majority rate is far below), the flips and noise measured near the chain's, none
    exact."""
    labels = _labels(600, share, 40 + seed)
    public = public_split_mask(600, 0.3, seed)
    board = LocalOracle(labels, decimals=5, defenses=NOISY_FLIPS, public_fraction=0.3, seed=seed)
    result = run("blocks_split", board, budget=260, seed=seed)
    truth = labels[public]
    majority = max(truth.mean(), 1 - truth.mean())
    accuracy = (result.labels[public] == truth).mean()
    assert accuracy >= 0.98 and accuracy >= majority + 0.25
    assert result.exact == 0 and board.queries <= 260
    assert result.details["n_public"] == 180
    assert result.details["flip"] == pytest.approx(0.02, abs=0.02)
    assert result.details["noise"]["scale_score"] == pytest.approx(1e-4, rel=0.35)
    assert (np.asarray(result.details["public_mask"]) == public).mean() >= 0.98


def test_confidences_are_calibrated_by_decile() -> None:
    """Pooled over seeded split boards (budgets that leave rows unread, read once, twice or more), the public rows'
    labels in each confidence decile are right at the decile's mean confidence within 0.02 — or 2.5 binomial
    standard errors where a decile is too small for 0.02 to be measurable. (The public rows: the private rows'
    labels are the majority class at the public rows' class prior, which no score measures on them.)"""
    confidences, right = [], []
    for seed in range(6):
        n = 1000
        labels = _labels(n, 0.68 if seed % 2 else 0.5, 200 + seed)
        board = LocalOracle(labels, decimals=5, defenses=NOISY_FLIPS, public_fraction=0.3, seed=seed)
        result = run("blocks_split", board, budget=80 + 40 * seed, seed=seed)
        public = public_split_mask(n, 0.3, seed)
        confidences.append(result.fill_confidence()[public])
        right.append(result.labels[public] == labels[public])
    assert_deciles_calibrated(np.concatenate(confidences), np.concatenate(right))


@pytest.mark.parametrize(("n", "fraction"), [(600, 0.3), (2201, 0.3), (1797, 0.3), (7, 0.3), (2, 0.1), (5, 0.999)])
def test_the_public_count_is_the_split_s(n: int, fraction: float) -> None:
    """``N_pub`` (every read's sum unit) is the count the board's split holds, read off the page's fraction."""
    facts = BoardFacts.of(LocalOracle(np.zeros(n, dtype=np.int64), public_fraction=fraction))
    assert n_public_of(facts) == int(public_split_mask(n, fraction, 0).sum())


def test_fits_a_noisy_split_board_only() -> None:
    """The plan needs a split of known size and noise or fresh flips seen; it passes on the balance seen."""
    seen = Fingerprint(noise=True, noise_spread=1e-4, balance=[0.3, 0.7])
    split = BoardFacts.of(LocalOracle([0, 1] * 50, decimals=5, public_fraction=0.3), seen)
    plan = blocks_split_fits(split)
    assert isinstance(plan, Plan) and plan.params["prior"] == pytest.approx(0.7)
    every_row = BoardFacts.of(LocalOracle([0, 1] * 50, decimals=5), seen)
    assert isinstance(blocks_split_fits(every_row), Refusal)
    quiet = BoardFacts.of(LocalOracle([0, 1] * 50, decimals=5, public_fraction=0.3), Fingerprint(noise=False))
    assert isinstance(blocks_split_fits(quiet), Refusal)
    loud = BoardFacts.of(LocalOracle([0, 1] * 50, decimals=5, public_fraction=0.3),
                         Fingerprint(noise=True, noise_spread=0.05))
    assert isinstance(blocks_split_fits(loud), Refusal)
