"""Attacks that model randomized releases instead of assuming a bounded error (issue 10, item 1): ``noisy``
(additive Laplace/Gaussian and multiplicative noise). Importing the package registers them."""

from __future__ import annotations

from attacks.noisy import attack  # noqa: F401  (registers "noisy")
