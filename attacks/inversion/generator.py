"""The attacker's generator: a Gaussian latent model fitted by PCA on public images (probabilistic PCA).

Paper 002 searches a GAN's latent space. On 8×8 digits a GAN is more machinery than the data needs: the public
digits 5–9 are 64 numbers each, and their top principal components with a standard normal latent
(``x = μ + (z · σ) V``, clipped to the pixel range) already give a smooth, dimension-reduced prior of
"digit-like strokes" that is differentiable-free, deterministic, fits in milliseconds with one SVD, and runs on
any CPU without PyTorch. What matters for BREP-MI is what a GAN gives it: a low-dimensional latent ``z`` whose
decoded images stay on a plausible manifold while the search moves ``z`` through the target's decision regions;
the latent dimension (default 16 of 64) is what keeps the reconstructions from being arbitrary pixel patterns
that only fool the target.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PcaGenerator:
    """``decode(z) = clip(mean + (z · scales) @ components, low, high)`` with ``z ~ N(0, I)``.

    >>> g = PcaGenerator.fit(np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]]), n_latent=1, low=0.0, high=4.0)
    >>> g.decode(np.zeros((1, 1))).tolist()
    [[2.0, 2.0]]
    """

    mean: np.ndarray
    components: np.ndarray  # (n_latent, n_features), orthonormal rows
    scales: np.ndarray  # (n_latent,): the standard deviation along each component
    low: float
    high: float

    @classmethod
    def fit(cls, images: np.ndarray, *, n_latent: int = 16, low: float = 0.0, high: float = 16.0) -> PcaGenerator:
        x = np.asarray(images, dtype=np.float64)
        if not 1 <= n_latent <= min(x.shape):
            raise ValueError(f"n_latent must lie in 1..{min(x.shape)}, got {n_latent}")
        mean = x.mean(axis=0)
        _, singular, vt = np.linalg.svd(x - mean, full_matrices=False)
        scales = singular[:n_latent] / np.sqrt(max(len(x) - 1, 1))
        return cls(mean, vt[:n_latent], scales, low, high)

    @property
    def n_latent(self) -> int:
        return len(self.scales)

    def decode(self, z: np.ndarray) -> np.ndarray:
        """Images of latent rows ``z`` (shape ``(m, n_latent)``), clipped to the pixel range."""
        return np.clip(self.mean + (np.atleast_2d(z) * self.scales) @ self.components, self.low, self.high)

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` latent vectors from the prior ``N(0, I)``."""
        return rng.standard_normal((count, self.n_latent))
