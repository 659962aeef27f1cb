"""Every posterior an attack prints is calibrated, or conservative where it cannot be (the figures:
``docs/figures/calibration.md``, ``python -m benchmarks.calibration``): the majority guess under noise, ``budgeted``,
``one_vs_rest`` and ``noisy_split``, each on seeded boards pooled (the boards of :mod:`benchmarks.calibration`)."""

from __future__ import annotations

import numpy as np

from attacks.noisy.shares import share_errors, share_posterior
from benchmarks.calibration import decile_table, pooled
from tests.attacks.calibration_support import assert_deciles_calibrated
from tests.attacks.golden.grid import CELLS, labels_of, oracle_of


def test_a_majority_guess_under_much_noise_claims_its_posterior_not_certainty() -> None:
    """The golden cell where a 3-class softmax CE board under noise 1.31 on the mean read the balance [0, 0, 1]:
    every row class 2, 13 of 40 right, once claimed at 1.0; the class's posterior given readings that noisy is
    about the prior's 1/3."""
    import attacks

    cell = next(c for c in CELLS if c.id == "softmax_ce-k3-privacy_small-pub0.3-a1-bal-n40-q500-s1")
    truth = labels_of(cell)
    result = attacks.run("auto", oracle_of(cell, truth), budget=cell.budget, seed=0)
    confidence = result.fill_confidence()
    assert result.details["fallback"] == "majority"
    assert (np.abs(confidence - 1 / 3) < 0.05).all(), confidence
    assert abs(float(confidence.mean()) - float((result.labels == truth).mean())) < 0.05


def test_share_posteriors_go_from_the_readings_to_the_prior_as_the_noise_grows() -> None:
    errors = share_errors("softmax_ce", 1e-15, 3, 1.0)
    assert errors is not None and (errors > 0.5).all()
    assert np.allclose(share_posterior([0.0, 0.0, 1.0], errors), 1 / 3, atol=0.03)
    assert np.allclose(share_posterior([0.1, 0.2, 0.7], share_errors("softmax_ce", 1e-15, 3, 1e-6)),
                       [0.1, 0.2, 0.7], atol=0.01)
    # A readable balance under moderate noise: between the two, never above the reading.
    middle = share_posterior([0.1, 0.2, 0.7], share_errors("softmax_ce", 1e-15, 3, 0.05))
    assert 1 / 3 < middle[2] <= 0.7


def test_majority_posteriors_are_never_overconfident_on_noisy_boards() -> None:
    """160 boards of 20 rows, 3 classes, shares drawn from the flat prior, the balance read through Laplace noise
    of 10^-2 … 10 and its scale from one spread (as the fingerprint's): 3,200 labels. The rows of one board share
    one confidence and one share right, so a decile moves with its 16 boards (a class's share has sd 0.24 under the
    prior: ± 0.06 a decile), not with its 320 labels; ± 0.02 a decile is out of reach at a test's cost. The test
    holds calibration in the large within 0.03 and the upper five deciles (where the readings moved the posterior
    off the prior) no more than 0.05 over-confident. Measured on 400 boards (8,000 labels): the lower five within
    0.04 either way (0.340 claimed, 0.304 right the worst), the upper five conservative or within 0.02 (0.731
    claimed, 0.753 right at the top)."""
    confidence, right = pooled("majority", range(160))
    assert abs(float(confidence.mean()) - float(right.mean())) <= 0.03
    table = decile_table(confidence, right)
    for _, mean, rate in table[5:]:
        assert mean - rate <= 0.05, table


def test_budgeted_posteriors_are_calibrated_per_decile() -> None:
    """Twelve boards of 200 rows (20–80 % ones), six releases of ε = 10 each: 2,400 labels. Measured on 40
    boards: every decile within 0.015 (0.890 claimed, 0.887 right at the top)."""
    confidence, right = pooled("budgeted", range(12))
    assert len(confidence) >= 2000
    assert_deciles_calibrated(confidence, right)


def test_one_vs_rest_posteriors_are_calibrated_per_decile() -> None:
    """Seven 3-class log-loss boards of 300 rows under Laplace 10^-2, 0.8 queries a row (both binary runs cut
    short): 2,100 labels. Before the runs' priors stopped counting twice, a decile claimed 0.584 and was right at
    0.503. Measured on 14 boards (4,200 labels): seven deciles within 0.02; d4 0.553 claimed, 0.521 right; the top
    0.953, 0.936 (the binary runs' own AMP marginals, see attacks/noisy/calibration.py) — inside this test's 2.5
    binomial standard errors, not inside ± 0.02."""
    confidence, right = pooled("one_vs_rest", range(7))
    assert len(confidence) >= 2000
    assert_deciles_calibrated(confidence, right)


def test_noisy_split_cut_short_is_never_overconfident() -> None:
    """Six undisclosed half-split binary boards of 300 rows under Laplace 0.1, 0.8 queries a row (cut short): a
    label counts right when its row is public and the label true; about 850 labels (what fits in the test's time).
    Not calibrated to ± 0.02, conservative instead: refine's conditionals (each state's given every other row's)
    gave way to AMP's marginals, tempered by the residuals, then halved log-odds, because at one query a row the
    least sure tenth still claimed 0.916 on states right 84 % (0.986 on 73 % before). Measured at 0.8 queries a
    row on 8 boards: the surest half at 0.99999 all right, the rest conservative (0.530 claimed, 0.730 right;
    0.599, 0.913; 0.753, 0.957). The test holds no decile over-confident beyond 2.5 binomial standard errors."""
    confidence, right = pooled("noisy_split", range(6))
    assert (confidence < 1.0).all()
    order = np.argsort(confidence, kind="stable")
    for decile in np.array_split(order, 10):
        mean, rate = float(confidence[decile].mean()), float(right[decile].mean())
        se = float(np.sqrt(max(mean * (1 - mean), 1e-6) / len(decile)))
        assert mean - rate <= max(0.02, 2.5 * se), decile_table(confidence, right)


def _split_board(metric: str, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 60-row, 4-class board scoring a half split under Laplace noise, its class shares drawn from the flat
    prior; ``auto`` with 300 queries: (confidences, which labels are right)."""
    import attacks
    from attacks import LocalOracle

    truth = np.random.default_rng(7 + seed).choice(4, 60, p=np.random.default_rng(seed).dirichlet(np.ones(4)))
    oracle = LocalOracle(truth, metric=metric, n_classes=4, decimals=5, public_fraction=0.5, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])
    result = attacks.run("auto", oracle, budget=300, seed=seed)
    return result.fill_confidence(), result.labels == truth


def test_k_class_split_guesses_claim_no_more_than_the_decoded_rows_show() -> None:
    """Three 4-class split boards where the balance read through the noise came out garbled (one class at ~100 %):
    ``one_vs_rest`` decodes the public rows, and the rows it leaves got that class at the garbled share (the floor
    put 30 rows of one board at 1.0 with 2 of 60 right; 0.71 claimed against 0.38 right over the three). Now the
    private rows take the class the decoded public rows make most likely at its posterior (Laplace's rule), the
    floor weighs a noisy balance at its posterior: every label claimed above 0.9 is right, and the claims in the
    large are within 0.1 of the share right (measured: 0.81 claimed, 0.74 right)."""
    parts = [_split_board("multiclass_logloss", 0.5, 2), _split_board("softmax_ce", 1.0, 0),
             _split_board("softmax_ce", 1.0, 1)]
    confidence = np.concatenate([c for c, _ in parts])
    right = np.concatenate([r for _, r in parts])
    assert right[confidence > 0.9].all(), confidence[(confidence > 0.9) & ~right]
    assert abs(float(confidence.mean()) - float(right.mean())) <= 0.1, (confidence.mean(), right.mean())
