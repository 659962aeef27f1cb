"""Checks shared by the calibration tests of the likelihood decoders."""

from __future__ import annotations

import math

import numpy as np


def assert_deciles_calibrated(confidence: np.ndarray, right: np.ndarray) -> None:
    """The labels in each confidence decile (equal counts) are right at the decile's mean confidence within 0.02,
    or within 2.5 binomial standard errors where a decile holds too few labels for 0.02 to be measurable; and no
    label is vouched for (confidence 1.0)."""
    assert (confidence < 1.0).all(), "a likelihood decoder vouched for a label"
    order = np.argsort(confidence, kind="stable")
    for decile in np.array_split(order, 10):
        mean, rate = float(confidence[decile].mean()), float(right[decile].mean())
        se = math.sqrt(max(mean * (1 - mean), 1e-6) / len(decile))
        assert abs(rate - mean) <= max(0.02, 2.5 * se), (
            f"decile of mean confidence {mean:.4f} right at {rate:.4f} ({len(decile)} labels)")
