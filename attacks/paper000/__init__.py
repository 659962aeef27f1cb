"""Paper 000 (Aggarwal et al., *Label Inference Attacks from Log-loss Scores*, ICML 2021): constructions,
certified decoders and the registered attacks ``prime_single``, ``prime_batched``, ``robust_single``,
``robust_batched`` and ``prime_powers``.

``probes`` builds a query and bounds what the server's arithmetic can do to its score; ``decoders`` turns a
released score into labels only with a certificate; ``noise`` reduces random noise to a bound τ (App. B.4);
``attacks`` holds the registered attacks. Importing this package registers them.
"""

from __future__ import annotations

from attacks.paper000 import attacks as _attacks  # noqa: F401  (registers the attacks)
from attacks.paper000.attacks import paper_prime_batch, prime_single_bits
from attacks.paper000.noise import tau_for_noise

__all__ = ["paper_prime_batch", "prime_single_bits", "tau_for_noise"]
