"""``brep``: paper 002's boundary-repulsion estimator (Theorem 1 on a linear model) and Algorithm 1 on boards
that release only a hard label."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.brep.attack import labels_of, predictions_of
from attacks.brep.estimator import estimate, repulsion_direction, sphere_directions, step_size


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- Theorem 1 (paper 002, Appendix A.1): the estimator aligns with ∇M on a linear model as R grows ----------
D = 20
W = np.random.default_rng(12).standard_normal(D)  # the linear model's margin M(x) = w·x + b
MARGIN = 1.0  # M(z) at the current point: z is inside the target class, at distance MARGIN/|w| of the boundary
Z = np.random.default_rng(13).standard_normal(D)
B = MARGIN - float(W @ Z)


def _accepted(x: np.ndarray) -> bool:
    return bool(W @ x + B > 0)


def _expected_estimate(radius: float, samples: int, seed: int) -> np.ndarray:
    """A Monte Carlo estimate of E[ĝ(z, R)] from ``samples`` sphere points (Eq. 8 with N = samples)."""
    direction, _, _ = estimate(Z, radius, _accepted, np.random.default_rng(seed), samples)
    return direction


def test_the_expected_direction_aligns_with_the_gradient_as_the_radius_grows() -> None:
    distance = MARGIN / float(np.linalg.norm(W))
    radii = [1.5 * distance, 2 * distance, 4 * distance, 16 * distance, 64 * distance]
    cosines = [_cosine(_expected_estimate(r, 20_000, seed=1), W) for r in radii]
    # A larger R widens the rejected cap, so the estimate's signal grows against the same sampling noise, up to
    # alignment (for a linear model the exact expectation is parallel to w once the sphere meets the boundary).
    assert all(later >= earlier - 0.005 for earlier, later in pairwise(cosines)), cosines
    assert cosines[0] < 0.95 and min(cosines[2:]) > 0.99, cosines
    # The paper's bound (Eq. 26 with δ → 1): cos ≥ 1 − 9·M²·(d−1)² / (2·R⁴·|∇M|²), meaningful at large R.
    bound = 1 - 9 * MARGIN**2 * (D - 1) ** 2 / (2 * radii[-1] ** 4 * float(W @ W))
    assert cosines[-1] >= bound - 0.005


def test_a_sphere_inside_the_class_gives_no_direction_and_the_radius_must_grow() -> None:
    inside = 0.9 * MARGIN / float(np.linalg.norm(W))
    direction, _, flags = estimate(Z, inside, _accepted, np.random.default_rng(2), 64)
    assert flags.all() and not direction.any()


def test_the_estimator_and_step_follow_eq_8_and_the_papers_step() -> None:
    u = sphere_directions(np.random.default_rng(3), 6, 4)
    flags = np.array([True, False, False, True, True, False])
    expected = -(u[1] + u[2] + u[5]) / 6
    assert np.allclose(repulsion_direction(u, flags), expected)
    assert step_size(2.0) == pytest.approx(2 / 3) and step_size(12.0) == 3.0


def test_logits_map_to_submissions_and_labels() -> None:
    z = np.array([[0.0, 2.0], [1.0, -1.0]])
    assert np.allclose(predictions_of(z).sum(axis=1), 1.0)
    assert labels_of(z).tolist() == [1, 0]
    assert labels_of(np.array([-1.0, 0.5])).tolist() == [0, 1]


# --- Algorithm 1 against boards --------------------------------------------------------------------------------
def _public_and_fresh(result: attacks.AttackResult, oracle: LocalOracle, hidden: np.ndarray) -> tuple[float, float]:
    public = oracle.spec.hidden.public_mask
    return (float((result.labels[public] == hidden[public]).mean()),
            float((result.labels[~public] == hidden[~public]).mean()))


def test_it_is_registered_as_a_best_guess() -> None:
    assert "brep" in attacks.available()


def test_on_a_badge_board_it_climbs_the_public_rows_only() -> None:
    hidden = np.random.default_rng(20).integers(0, 2, 4000)
    oracle = LocalOracle(hidden, metric="accuracy", decimals=5, public_fraction=0.5, seed=4,
                         defenses=[{"name": "threshold", "t": 0.5}])
    result = attacks.run("brep", oracle, budget=400, n_samples=8, seed=4)
    public, fresh = _public_and_fresh(result, oracle, hidden)
    assert result.queries == 400 and result.details["feedback"] == "threshold"
    assert public > 0.53  # 2,000 public rows: a coin's accuracy has σ ≈ 0.011
    assert fresh == pytest.approx(0.5, abs=0.035)
    # The output is an accepted point: its labels, submitted, earn the badge.
    assert oracle.submit(result.labels.astype(float)) == 1.0


def test_the_paper_defaults_run_and_a_radius_grows_when_every_point_is_accepted() -> None:
    hidden = np.random.default_rng(21).integers(0, 2, 500)
    oracle = LocalOracle(hidden, metric="accuracy", defenses=[{"name": "threshold", "t": 0.5}], seed=1)
    result = attacks.run("brep", oracle, budget=600, seed=1, n_samples=4)
    assert result.queries == 600 and result.details["growths"] >= 1
    assert result.details["radius"] > 2.0


@pytest.mark.parametrize("chain", [
    [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}],
    [{"name": "rank"}],
], ids=["ladder-accept-reject", "rank"])
def test_on_boards_whose_bar_moves_it_follows_the_accepted_points(chain: list[dict[str, object]]) -> None:
    hidden = np.random.default_rng(22).integers(0, 2, 1000)
    oracle = LocalOracle(hidden, metric="accuracy", decimals=5, defenses=chain, seed=2)
    result = attacks.run("brep", oracle, budget=300, n_samples=8, seed=2)
    assert result.queries == 300 and result.details["moves_to_accepted"] >= 1
    assert result.accuracy(hidden) > 0.5


def test_it_handles_multiclass_boards() -> None:
    hidden = np.random.default_rng(23).integers(0, 3, 1500)
    oracle = LocalOracle(hidden, metric="accuracy", n_classes=3, defenses=[{"name": "threshold", "t": 1 / 3}])
    result = attacks.run("brep", oracle, budget=300, n_samples=8, seed=3)
    assert set(np.unique(result.labels)) <= {0, 1, 2}
    assert result.accuracy(hidden) > 1 / 3 + 0.02  # σ of a guess ≈ 0.012


def test_it_fails_loudly_when_no_start_is_accepted() -> None:
    hidden = np.random.default_rng(24).integers(0, 2, 400)
    oracle = LocalOracle(hidden, metric="accuracy", defenses=[{"name": "threshold", "t": 0.9}])
    with pytest.raises(AttackFailed, match="accepted"):
        attacks.run("brep", oracle, budget=20)


def test_it_is_deterministic_for_a_seed() -> None:
    hidden = np.random.default_rng(25).integers(0, 2, 300)
    chain = [{"name": "threshold", "t": 0.5}]
    first = attacks.run("brep", LocalOracle(hidden, metric="accuracy", defenses=chain), budget=100, seed=5)
    second = attacks.run("brep", LocalOracle(hidden, metric="accuracy", defenses=chain), budget=100, seed=5)
    assert np.array_equal(first.labels, second.labels)
