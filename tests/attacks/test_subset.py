"""The ``subsetting`` attack: its enumerating decoder against brute force, its designs decoding every outcome,
and full exact recovery against the subsetting defense (issue 10, item 1)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.subset.decoder import (
    NOT_SCORED,
    agreed_labels,
    assignment_sum,
    brute_force,
    consistent,
    row_code,
)
from attacks.subset.design import binary_design, heavy_prediction, subset_design

EPS = 1e-15


def subset_board(labels: np.ndarray, *, fraction: float = 0.5, same_file: bool = False, seed: int = 3) -> LocalOracle:
    return LocalOracle(labels, decimals=5, defenses=[{"name": "subsetting", "fraction": fraction}],
                       same_file_same_score=same_file, seed=seed)


def seeded_labels(n: int, seed: int, balance: float = 0.4) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < balance).astype(np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_the_decoder_finds_exactly_the_assignments_brute_force_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes = [row_code(i, float(p), EPS, subset=bool(seed % 2)) for i, p in enumerate(rng.uniform(0.02, 0.98, 7))]
    truth = tuple(int(rng.integers(len(c.values))) for c in codes)
    t = assignment_sum(codes, truth)
    # A window wide enough to leave several assignments, nudged off any float tie.
    lo, hi = t - 0.3 - 1e-9, t + 0.2 + 1e-9
    found = consistent(codes, lo, hi)
    assert found is not None
    assert sorted(found) == sorted(brute_force(codes, lo, hi))
    assert truth in found


def test_a_label_is_reported_only_when_every_consistent_assignment_agrees() -> None:
    codes = [row_code(0, 0.9, EPS), row_code(1, 0.6, EPS)]
    both: list[tuple[int, ...]] = [(1, 0), (1, 2)]  # row 0 scored as 0 in both; row 1 not scored or label 1
    assert agreed_labels(codes, both) == {0: 0}
    assert agreed_labels(codes, [(0, 1)]) == {1: 0}  # a row not scored tells nothing
    assert codes[0].states[0] == NOT_SCORED


def test_the_decoder_gives_up_past_its_limit_instead_of_enumerating_forever() -> None:
    codes = [row_code(i, 0.5 + 1e-9, EPS) for i in range(12)]  # every outcome sums to ~0
    assert consistent(codes, -1.0, 1.0, limit=100) is None


@pytest.mark.parametrize("width", [0.0016, 0.02, 0.12])
def test_every_outcome_of_a_subset_design_decodes_its_promised_labels(width: float) -> None:
    """Exhaustively: whatever subset was drawn and whatever the labels, with the release anywhere in its window,
    every ternary row that was scored and every heavy row scored with its heavy label is decoded, and every
    decoded label is right."""
    design = subset_design(width, EPS, margin=0.05, fraction=0.9)
    assert design.rows >= 4
    ps = list(design.ternary) + [heavy_prediction(a, k % 2) for k, a in enumerate(design.heavy)]
    codes = [row_code(i, p, EPS) for i, p in enumerate(ps)]
    n_ternary = len(design.ternary)
    for outcome in itertools.product(range(3), repeat=len(codes)):
        t = assignment_sum(codes, outcome)
        for shift in (-0.499 * width, 0.0, 0.499 * width):  # the release anywhere in the window (ties aside)
            found = consistent(codes, t + shift - width / 2, t + shift + width / 2)
            assert found is not None and outcome in found
            known = agreed_labels(codes, found)
            for i, code in enumerate(codes):
                label = code.states[outcome[i]]
                if i in known:
                    assert known[i] == label
                heavy_label = (i - n_ternary) % 2 if i >= n_ternary else None
                if label != NOT_SCORED and (i < n_ternary or label == heavy_label):
                    assert known.get(i) == label


def test_a_binary_design_separates_every_labeling_by_more_than_its_window() -> None:
    width = 0.02
    codes = [row_code(i, p, EPS, subset=False) for i, p in enumerate(binary_design(width, EPS))]
    sums = sorted(assignment_sum(codes, a) for a in itertools.product(range(2), repeat=len(codes)))
    assert len(codes) >= 10
    assert min(b - a for a, b in itertools.pairwise(sums)) > width


@pytest.mark.parametrize(("n", "fraction", "same_file"), [(60, 0.9, False), (60, 0.5, True), (171, 0.5, False)])
def test_subsetting_recovers_every_label_exactly(n: int, fraction: float, same_file: bool) -> None:
    y = seeded_labels(n, n)
    oracle = subset_board(y, fraction=fraction, same_file=same_file)
    result = attacks.run("subsetting", oracle)
    assert (result.labels == y).all()
    assert (result.fill_confidence() == 1.0).all()
    m = math.ceil(fraction * n - 1e-9)
    assert result.details["subset_size"] == [m, m]  # estimated, not told
    assert result.details["bound_queries"] < result.queries < 6 * result.details["bound_queries"]


def test_a_disclosed_subset_size_skips_the_size_probes() -> None:
    y = seeded_labels(80, 1)
    told = attacks.run("subsetting", subset_board(y, fraction=0.5), subset_size=40)
    assert (told.labels == y).all()


def test_a_budget_cut_returns_only_exact_labels() -> None:
    y = seeded_labels(171, 2)
    result = attacks.run("subsetting", subset_board(y), budget=10)
    known = result.labels >= 0
    assert result.queries == 10 and 0 < known.sum() < 171
    assert (result.labels[known] == y[known]).all()
    assert (result.fill_confidence()[~known] == 0).all()


@pytest.mark.parametrize("seed", range(3))
def test_labels_that_move_between_submissions_make_it_fail_never_vouch(seed: int) -> None:
    """Fresh randomized response looks like a subset of every row to the size probes; the attack's check rows
    catch the moving labels (or, if none moved, every vouched label is still the scored one)."""
    y = seeded_labels(120, seed)
    oracle = LocalOracle(y, decimals=5, defenses=[{"name": "randomized_response", "p": 0.3, "mode": "fresh"}],
                         seed=seed)
    with pytest.raises(AttackFailed):
        attacks.run("subsetting", oracle, check_every=4)


def test_auto_plays_subsetting_and_recovers_everything_on_a_subsetting_board() -> None:
    y = seeded_labels(171, 5)
    result = attacks.run("auto", subset_board(y, fraction=0.5), budget=400)
    assert result.details["attack"] == "subsetting"
    assert (result.labels == y).all()
    assert result.details["exact"] == 171


@pytest.mark.parametrize("budget", [12, 30])
def test_auto_on_a_subsetting_board_never_falls_below_the_majority_class(budget: int) -> None:
    y = seeded_labels(171, 6)
    result = attacks.run("auto", subset_board(y, fraction=0.9), budget=budget)
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())
    assert result.queries <= budget


def test_the_fingerprint_sees_a_subset_from_how_far_one_row_moves_the_mean() -> None:
    """Every row is public, yet a row moves the mean by (loss − ln 2)/154, not /171: rows are subsampled."""
    from attacks.fingerprint import fingerprint

    report = fingerprint(subset_board(seeded_labels(171, 6), fraction=0.9))
    assert report.subsetting and not report.fresh_flips
    assert report.scored_rows_estimate == pytest.approx(154, rel=0.02)
    plain = fingerprint(LocalOracle(seeded_labels(171, 6), decimals=5))
    assert not plain.subsetting and not plain.fresh_flips
