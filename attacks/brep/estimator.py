"""The boundary-repulsion gradient estimator of BREP-MI (paper 002, Section 4.2, Eq. 4–9).

With ``Φ(z) = 0`` when ``z`` is in the target (accepted) class and ``−1`` otherwise (Eq. 4), the estimate of
the gradient of the margin ``M`` at ``z`` from ``N`` points on the sphere of radius ``R`` around it is

    ĝ(z, R) = (1/N) · Σ_n Φ(z + R·u_n) · u_n          (Eq. 8, u_n uniform on the unit sphere)

— minus the mean of the rejected directions: it points away from the boundary — and the update is
``z ← z + α·ĝ`` (Eq. 9) with ``α = min(R/3, 3)`` (Section 5.1). Theorem 1 (Appendix A.1): for a linear model
the expected estimate aligns with ``∇M`` and the cosine tends to 1 as ``R`` grows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Paper 002, Section 5.1 ("Hyperparameters"): R0 = 2, γ = 1.3, α = min(R/3, 3), N = 32.
R0 = 2.0
GAMMA = 1.3
N_SAMPLES = 32
MAX_STEP = 3.0


def step_size(radius: float, max_step: float = MAX_STEP) -> float:
    """The paper's step ``α = min(R/3, 3)``.

    >>> step_size(2.0), step_size(30.0)
    (0.6666666666666666, 3.0)
    """
    return min(radius / 3.0, max_step)


def sphere_directions(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """``count`` independent directions uniform on the unit sphere of ``R^dim`` (normalised Gaussians).

    >>> u = sphere_directions(np.random.default_rng(0), 5, 7)
    >>> u.shape, bool(np.allclose(np.linalg.norm(u, axis=1), 1.0))
    ((5, 7), True)
    """
    gaussian = rng.standard_normal((count, dim))
    return gaussian / np.linalg.norm(gaussian, axis=1, keepdims=True)


def repulsion_direction(directions: np.ndarray, accepted: np.ndarray) -> np.ndarray:
    """Eq. 8 from the sampled unit ``directions`` (one per row) and whether ``z + R·u_n`` was accepted.

    >>> u = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    >>> repulsion_direction(u, np.array([True, False, True, True])).tolist()  # away from the rejected −x
    [0.25, 0.0]
    """
    phi = np.where(np.asarray(accepted, dtype=bool), 0.0, -1.0)
    return (phi[:, None] * directions).sum(axis=0) / len(directions)


def estimate(
    z: np.ndarray,
    radius: float,
    accepted: Callable[[np.ndarray], bool],
    rng: np.random.Generator,
    n_samples: int = N_SAMPLES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample ``n_samples`` points on the sphere of ``radius`` around ``z``, ask ``accepted`` of each (one hard
    label per point), and return ``(ĝ, directions, accepted flags)``.

    >>> w = np.array([1.0, 0.0, 0.0])  # a linear model: accepted where w·x > 0
    >>> g, _, _ = estimate(np.array([1.0, 0.0, 0.0]), 3.0, lambda x: bool(w @ x > 0), np.random.default_rng(1), 400)
    >>> bool(g[0] > 0.1 and abs(g[1]) < 0.1)
    True
    """
    directions = sphere_directions(rng, n_samples, z.size).reshape(n_samples, *z.shape)
    flags = np.array([accepted(z + radius * u) for u in directions], dtype=bool)
    flat = repulsion_direction(directions.reshape(n_samples, -1), flags)
    return flat.reshape(z.shape), directions, flags
