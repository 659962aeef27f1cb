"""Label-inference attacks on leaderboards (pure Python: no Django, no Celery).

``LocalOracle(labels, ...)`` answers queries with the site's own scoring and defenses; ``available()``
lists attack names; ``run(name, oracle, **params)`` returns an :class:`AttackResult` with at least
``labels``, ``queries``, ``seconds`` and a per-label ``confidence``; ``run("auto", oracle, budget=Q)``
fingerprints the release and plays the strongest applicable attack (:mod:`attacks.auto`). Importing this
package registers every built-in attack.
"""

from __future__ import annotations

# Importing the attack modules registers them.
from attacks import accounts, auto, balance, blocks, blocks_split, boosting, paper000, paper001, paper004  # noqa: F401
from attacks import brep as _brep  # noqa: F401  (registers brep)
from attacks import budgeted as _budgeted  # noqa: F401  (registers budgeted)
from attacks import camouflage as _camouflage  # noqa: F401  (registers camouflage)
from attacks import capacity as _capacity  # noqa: F401  (registers capacity, capacity_split)
from attacks import ladder as _ladder  # noqa: F401  (registers ladder, ladder_fixed, ladder_free)
from attacks import logit_split as _logit_split  # noqa: F401  (registers logits_split)
from attacks import noisy as _noisy  # noqa: F401  (registers noisy)
from attacks import one_vs_rest as _one_vs_rest  # noqa: F401  (registers one_vs_rest)
from attacks import subset as _subset  # noqa: F401  (registers subsetting, randomized_response)
from attacks import thresholdout as _thresholdout  # noqa: F401  (registers thresholdout)
from attacks.mutnet import attack as _mutnet  # noqa: F401  (registers mutnet; loads no onnx)
from attacks.oracle import LocalOracle, Oracle
from attacks.registry import available, register, run
from attacks.result import AttackFailed, AttackResult, SubmissionRefused

__all__ = [
    "AttackFailed", "AttackResult", "LocalOracle", "Oracle", "SubmissionRefused", "available", "register", "run",
]
