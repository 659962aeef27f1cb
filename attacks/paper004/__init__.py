"""Paper 004 (Aggarwal, Xu, Feyisetan, Teissier, "On Primes, Log-Loss Scores and (No) Privacy", 2020):
``twin_primes`` (Algorithms 1–2), ``binary_representation`` (Algorithm 3) and ``auc_logloss`` (Section 3).
Importing the package registers the three attacks."""

from __future__ import annotations

from attacks.paper004.auc import auc_logloss
from attacks.paper004.binary import binary_representation, labels_from_exponent
from attacks.paper004.server import ServerModel
from attacks.paper004.twin import algorithm2, labels_from_denominator, twin_primes

__all__ = [
    "ServerModel",
    "algorithm2",
    "auc_logloss",
    "binary_representation",
    "labels_from_denominator",
    "labels_from_exponent",
    "twin_primes",
]
