"""``camouflage``: exact label inference through a probe detector (issue 10, item 1): the capacity lattice code
carried in moves of a few rows of an honest-looking base vector (:mod:`attacks.camouflage.attack`), decoded from
differences in which the base's unknown loss cancels. Importing the package registers it."""

from __future__ import annotations

from typing import Any

from attacks.camouflage.attack import LEVELS, Stealth, camouflage_attack
from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.oracle import Oracle, limited
from attacks.registry import register
from attacks.result import AttackResult

__all__ = ["LEVELS", "Stealth", "camouflage", "camouflage_attack"]


# It checks itself (``check``, a camouflaged confirmation: :func:`~attacks.camouflage.attack.self_check`), since
# ``attacks.confirm``'s query — 1/2 on every unclaimed row — is a spike a probe detector refuses.

def camouflage_fits(facts: BoardFacts) -> Plan | Refusal:
    """Probes refused or withheld on a float64 binary log-loss board that scores every row: rank 20."""
    if not facts.refusing:
        return Refusal("camouflage", "no probe was refused: the plain designs read the board")
    if not (facts.binary_logloss and facts.float64 and not facts.split and not facts.sticky
            and not facts.subsetting):
        return Refusal("camouflage", "float64 binary log loss scoring every row, without a Ladder or a fresh subset")
    return Plan("camouflage", {"noise_bound": facts.noise_bound, "seed": facts.seed},
                "probes refused or withheld: camouflaged exact design (an honest-looking base, the code in moves of a "
                "few rows; more cover when a query is refused)", rank=20)


@register("camouflage", exact=False, truncatable=True, fits=camouflage_fits,
          paper="ours (capacity's design in an honest-looking base; cf. paper 001 §5's benign-looking models)",
          board="float64 binary log loss, every row scored, probes refused (a probe detector)",
          queries="capacity's, plus a query per refusal",
          precision="any released decimals; float64 arithmetic; noise up to its noise_bound")
def camouflage(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """Recover every label with honest-looking queries. ``budget``: the submissions to spend, its own check
    included (a cut run keeps what it decoded). Params: ``seed``, ``level``/``max_level`` (stealth,
    :data:`~attacks.camouflage.attack.LEVELS`), ``noise_bound``, ``top_mode``, ``extra``, ``scale``, ``check``.
    Exact labels (confidence 1.0), confirmed by its own camouflaged query. Never more than ``budget`` are sent
    (the honest base and a refused check's retries included: past it, :class:`AttackFailed`).

    Paper: ours — capacity's lattice code carried in moves of a few rows of an honest-looking base (paper 001
    §5 hides its vectors in benign-looking *models*; this hides the probes among honest-looking *predictions*).
    Queries: capacity's, plus cover for each refused query. Precision: any released decimals, a float64 server,
    noise up to ``noise_bound``. A rejecting probe detector stops ``capacity`` but not this:

    >>> import numpy as np
    >>> from attacks import AttackFailed, LocalOracle, run
    >>> labels = np.random.default_rng(1).integers(0, 2, 20)
    >>> detector = [{"name": "probe_detector", "reject": True}]
    >>> try:
    ...     run("capacity", LocalOracle(labels, decimals=5, defenses=detector, seed=1))
    ... except AttackFailed:
    ...     print("capacity: refused")
    capacity: refused
    >>> result = run("camouflage", LocalOracle(labels, decimals=5, defenses=detector, seed=1), seed=2)
    >>> bool((result.labels == labels).all()), result.queries, result.details["confirmed"]
    (True, 4, 'passed')
    """
    return camouflage_attack(limited(oracle, budget), budget=budget, **params)
