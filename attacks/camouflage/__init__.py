"""``camouflage``: exact label inference through a probe detector (issue 10, item 1): the capacity lattice code
carried in moves of a few rows of an honest-looking base vector (:mod:`attacks.camouflage.attack`), decoded from
differences in which the base's unknown loss cancels. Importing the package registers it."""

from __future__ import annotations

from typing import Any

from attacks.camouflage.attack import LEVELS, Stealth, camouflage_attack
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackResult

__all__ = ["LEVELS", "Stealth", "camouflage", "camouflage_attack"]


# It checks itself (``check``, a camouflaged confirmation: :func:`~attacks.camouflage.attack.self_check`), since
# ``attacks.confirm``'s query — 1/2 on every unclaimed row — is a spike a probe detector refuses.
@register("camouflage", exact=False)
def camouflage(oracle: Oracle, **params: Any) -> AttackResult:
    """Recover every label with honest-looking queries. Params: ``seed``, ``level``/``max_level`` (stealth,
    :data:`~attacks.camouflage.attack.LEVELS`), ``noise_bound``, ``max_queries``, ``top_mode``, ``extra``,
    ``scale``, ``check``. Exact labels (confidence 1.0), confirmed by its own camouflaged query."""
    return camouflage_attack(oracle, **params)
