"""Attacks that model randomized releases instead of assuming a bounded error (issue 10, item 1): ``noisy``
(additive Laplace/Gaussian and multiplicative noise) and ``noisy_split`` (the same design on a board that scores an
undisclosed public split). Importing the package registers them."""

from __future__ import annotations

from attacks.noisy import (
    attack,  # noqa: F401  (registers "noisy")
    split,  # noqa: F401  (registers "noisy_split")
)
