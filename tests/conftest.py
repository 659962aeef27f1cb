"""Shared fixtures for every test package."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, so every random test input is reproducible."""
    return np.random.default_rng(20261121)
