"""Paper 004 (Aggarwal, Xu, Feyisetan, Teissier, "On Primes, Log-Loss Scores and (No) Privacy", 2020):
``twin_primes`` (Algorithms 1–2), ``binary_representation`` (Algorithm 3), ``auc_logloss`` (Section 3) and
``auc_logloss_ranks`` (Section 3 with the AUC read as a rank-sum code). Importing the package registers them."""

from __future__ import annotations

from attacks.paper004.auc import auc_logloss
from attacks.paper004.auc_ranks import auc_logloss_ranks
from attacks.paper004.binary import binary_representation, labels_from_exponent
from attacks.paper004.server import ServerModel
from attacks.paper004.twin import algorithm2, labels_from_denominator, twin_primes

__all__ = [
    "ServerModel",
    "algorithm2",
    "auc_logloss",
    "auc_logloss_ranks",
    "binary_representation",
    "labels_from_denominator",
    "labels_from_exponent",
    "twin_primes",
]
