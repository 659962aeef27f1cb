"""Paper 001 (Aggarwal et al., *Reconstructing Test Labels from Noisy Loss Functions*, AISTATS 2022): the
registered attacks ``bregman_powers`` (Construction 1) and ``bregman_primes`` (Construction 2, CloSqFree).

``losses`` models the linearly-decomposable losses and designs prediction rows; ``design`` builds and
certifies a batch's query; ``decode`` turns a released score into labels only with a certificate;
``squarefree`` is Algorithm 1 (CloSqFree); ``verify`` checks claimed labels with one query; ``attacks`` holds
the registered attacks (multi-query §3.2, doubling trick §7); ``cross_entropy`` registers ``ce_robust``
(Theorem 3) and the logit-board attacks ``softmax_ce`` / ``sigmoid_ce``, whose rows go through the inverse
activation (``activations``). Importing this package registers them.
"""

from __future__ import annotations

from attacks.paper001 import attacks as _attacks  # noqa: F401  (registers the attacks)
from attacks.paper001 import cross_entropy as _cross_entropy  # noqa: F401  (registers ce_robust, softmax/sigmoid)
from attacks.paper001.squarefree import closest_free

__all__ = ["closest_free"]
