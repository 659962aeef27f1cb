"""BREP-MI (paper 002, Kahla et al., CVPR 2022) on a leaderboard: boundary repulsion from hard labels only.

``estimator`` holds the sphere-sampling gradient estimator (Eq. 8) and the update (Eq. 9); ``attack`` plays
Algorithm 1 against an oracle in logit space and registers ``brep``.
"""

from __future__ import annotations

from attacks.brep import attack as _attack  # noqa: F401  (registers brep)
from attacks.brep.estimator import repulsion_direction, sphere_directions, step_size

__all__ = ["repulsion_direction", "sphere_directions", "step_size"]
