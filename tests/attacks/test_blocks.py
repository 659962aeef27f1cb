"""``blocks``: binary-weighted blocks read until sure under noise and fresh label flips. Its read decoder against
brute force, its posteriors' calibration on seeded boards, and ``auto`` reaching it through fresh accounts behind
the README's ``combined`` chain."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle, run
from attacks.blocks import BlockReader, Noise, Read
from tests.attacks.calibration_support import assert_deciles_calibrated

COMBINED: list[dict[str, Any]] = [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
            {"name": "noise", "kind": "laplace", "scale": 1e-4},
            {"name": "ladder", "mode": "parameter_free"}]
NOISY_FLIPS = COMBINED[:2]


def _labels(n: int, share: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_one_read_decodes_as_brute_force_over_true_labels_and_flips(kind: str) -> None:
    """A read's per-row likelihood ratio is the sum over every true labeling of the block (prior π) and every
    flip pattern (probability p each) of the noise density at the release, as enumerated by hand."""
    rng = np.random.default_rng(5)
    weights = np.array([4.0, 2.0, 1.0])
    noise = Noise(kind, 0.3)
    reader = BlockReader(n=10, max_weight=4.0, rounding=0.0, noise=noise, prior=0.7, flip=0.1)
    for value in rng.uniform(-1, 8, 6):
        read = Read(np.array([2, 5, 7]), weights, float(value))
        llr, _, _ = reader._read_llr(read)
        for j in range(3):
            on = off = 0.0
            for y in itertools.product((0, 1), repeat=3):
                for y_used in itertools.product((0, 1), repeat=3):
                    p_y = math.prod(0.7 if b else 0.3 for b in y)
                    p_flip = math.prod(0.1 if a != b else 0.9 for a, b in zip(y, y_used, strict=True))
                    residual = np.array([value - np.dot(weights, y_used)])
                    density = math.exp(float(noise.logpdf(residual, 7.0 + 10 * 0.3)[0]))  # the reader's span
                    if y[j]:
                        on += p_y * p_flip * density
                    else:
                        off += p_y * p_flip * density
            expected = math.log(on / off) - math.log(0.7 / 0.3)
            assert llr[j] == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_posteriors_are_calibrated_by_confidence_decile() -> None:
    """Pooled over seeded boards (fresh flips 2 %, Laplace 1e-4, 5 decimals, budgets that leave some rows unread
    and some read once, twice or more), the labels in each confidence decile are right at the decile's mean
    confidence within 0.02 — or within 2.5 binomial standard errors where a decile's labels are too few for 0.02
    to be measurable (the deciles at the prior's level)."""
    confidences, right = [], []
    for seed in range(6):
        n = 1500
        labels = _labels(n, 0.68 if seed % 2 else 0.5, 100 + seed)
        board = LocalOracle(labels, decimals=5, defenses=NOISY_FLIPS, seed=seed)
        result = run("blocks", board, budget=250 + 40 * seed, seed=seed)
        confidences.append(result.fill_confidence())
        right.append(result.labels == labels)
    assert_deciles_calibrated(np.concatenate(confidences), np.concatenate(right))


def test_reads_the_flips_and_noise_from_the_reads() -> None:
    """The flip probability and the noise scale are measured from the reads, near the chain's (2 %, Laplace
    scale 1e-4 on the score), and nearly every label is right."""
    labels = _labels(1200, 0.6, 7)
    result = run("blocks", LocalOracle(labels, decimals=5, defenses=NOISY_FLIPS, seed=3), budget=700, seed=1)
    assert result.details["flip"] == pytest.approx(0.02, abs=0.012)
    assert result.details["noise"]["scale_score"] == pytest.approx(1e-4, rel=0.3)
    assert (result.labels == labels).mean() >= 0.995
    assert result.exact == 0


def test_auto_reads_the_combined_chain_through_fresh_accounts() -> None:
    """Behind fresh flips, Laplace noise and the parameter-free Ladder one account reads nothing, and the
    accounts that suffice read nearly every label, none called exact; 1,000-row boards, balanced and not."""
    for share, seed in ((0.68, 11), (0.5, 12)):
        labels = _labels(1000, share, seed)
        majority = max(labels.mean(), 1 - labels.mean())
        one = run("auto", LocalOracle(labels, decimals=5, defenses=COMBINED, seed=seed), budget=2000)
        board = LocalOracle(labels, decimals=5, defenses=COMBINED, seed=seed, accounts=600)
        many = run("auto", board, budget=2000)
        assert (one.labels == labels).mean() == pytest.approx(majority, abs=0.02)
        assert (many.labels == labels).mean() >= 0.995
        # The outer fingerprint's probes on the first account, then one submission a fresh account.
        assert many.exact == 0 and max(board.queries_by_account[1:]) == 1
        assert many.course is not None and many.course.attack == "fresh_accounts"


def test_a_few_accounts_read_some_rows_after_the_ladder_attack_failed() -> None:
    """With too few accounts to read the board, the one-account Ladder attack fails behind the noise and the flips
    and the accounts it leaves read what they can, one block a submission: above the majority class, each
    account spent once (never a wrong label vouched for)."""
    for share, seed in ((0.68, 11), (0.5, 12)):
        labels = _labels(1000, share, seed)
        majority = max(labels.mean(), 1 - labels.mean())
        result = run("auto", LocalOracle(labels, decimals=5, defenses=COMBINED, seed=seed, accounts=60), budget=2000)
        assert result.course is not None and result.course.fallback == "fresh_accounts"
        assert (result.labels == labels).mean() >= majority + 0.04
        assert result.exact == 0 and result.queries <= 62


def test_same_file_same_score_does_not_stop_the_reads() -> None:
    """Every read is a different file (shuffled weights, a jitter), so a board that re-releases a file's score
    for the same file still releases each read afresh."""
    labels = _labels(400, 0.7, 21)
    board = LocalOracle(labels, decimals=5, defenses=NOISY_FLIPS, seed=2, same_file_same_score=True)
    result = run("blocks", board, budget=400, seed=0)
    assert (result.labels == labels).mean() >= 0.99
