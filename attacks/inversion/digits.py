"""The bundled model-inversion challenge on scikit-learn's 8×8 digits, after paper 002's MNIST appendix (B.1).

Public digits 5–9 are the attacker's prior knowledge (its generator is fitted on them); private digits 0–4
train the host's target (a one-hidden-layer ReLU MLP) and, separately, the evaluation classifier (a wider
two-hidden-layer MLP (64, 32) with another seed: a different model, so a reconstruction that only fools the target does
not count). Both are plain arrays (:class:`scoring.inversion.MlpClassifier`), as the site stores them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from attacks.inversion.generator import PcaGenerator
from scoring.inversion import InversionTask, MlpClassifier

#: Paper 002, Appendix B.1: the attacker knows digits 5–9; digits 0–4 are the private classes.
PUBLIC_DIGITS = (5, 6, 7, 8, 9)
PRIVATE_DIGITS = (0, 1, 2, 3, 4)
PIXEL_MAX = 16.0


@dataclass(frozen=True)
class DigitsChallenge:
    """Everything of the digits challenge: the host's side (``target``, ``evaluator``, their held-out accuracy
    on private digits) and the attacker's (``public_images``, ``generator``)."""

    task: InversionTask
    target: MlpClassifier
    evaluator: MlpClassifier
    target_accuracy: float
    evaluator_accuracy: float
    public_images: np.ndarray
    private_means: np.ndarray  # (5, 64): the mean private image of each class (for the pictures only)
    generator: PcaGenerator


def _fit_mlp(x: np.ndarray, y: np.ndarray, hidden: tuple[int, ...], seed: int) -> MlpClassifier:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from threadpoolctl import threadpool_limits

    model = MLPClassifier(hidden_layer_sizes=hidden, alpha=1e-3, max_iter=300, random_state=seed)
    # One BLAS thread: these matrices are small, and on a shared machine more threads only wait on each other.
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x / PIXEL_MAX, y)
    return MlpClassifier.from_sklearn(model, input_scale=PIXEL_MAX)


@lru_cache(maxsize=4)  # deterministic per arguments; the site's command, tests and the bot share one build
def build_digits_challenge(*, seed: int = 0, n_latent: int = 16) -> DigitsChallenge:
    """Split the digits, train target and evaluator on 70% of the private digits (the rest measures them), and
    fit the attacker's generator on the public digits. Deterministic for a ``seed``."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x, y = digits.data.astype(np.float64), digits.target.astype(np.int64)
    public = np.isin(y, PUBLIC_DIGITS)
    private_x, private_y = x[~public], y[~public]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(private_y))
    cut = int(0.7 * len(order))
    train, test = order[:cut], order[cut:]
    target = _fit_mlp(private_x[train], private_y[train], (32,), seed)
    evaluator = _fit_mlp(private_x[train], private_y[train], (64, 32), seed + 1)
    task = InversionTask(n_features=64, n_classes=len(PRIVATE_DIGITS), image_shape=(8, 8), low=0.0, high=PIXEL_MAX)
    return DigitsChallenge(
        task=task,
        target=target,
        evaluator=evaluator,
        target_accuracy=float(np.mean(target.predict(private_x[test]) == private_y[test])),
        evaluator_accuracy=float(np.mean(evaluator.predict(private_x[test]) == private_y[test])),
        public_images=x[public],
        private_means=np.vstack([private_x[private_y == c].mean(axis=0) for c in PRIVATE_DIGITS]),
        generator=PcaGenerator.fit(x[public], n_latent=n_latent, low=0.0, high=PIXEL_MAX),
    )
