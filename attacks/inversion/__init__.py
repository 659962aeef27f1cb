"""Model inversion from a label-only endpoint (paper 002's own setting): BREP-MI in a generator's latent space.

``generator`` (the attacker's PCA-Gaussian prior), ``oracle`` (the endpoint protocol and its local copy),
``brep_mi`` (Algorithm 1 in latent space), ``digits`` (the bundled challenge on scikit-learn's digits).
"""

from __future__ import annotations

from attacks.inversion.brep_mi import ClassRun, InversionAttackResult, brep_mi
from attacks.inversion.generator import PcaGenerator
from attacks.inversion.oracle import BudgetExhausted, LabelOracle, LocalLabelOracle

__all__ = [
    "BudgetExhausted", "ClassRun", "InversionAttackResult", "LabelOracle", "LocalLabelOracle", "PcaGenerator",
    "brep_mi",
]
