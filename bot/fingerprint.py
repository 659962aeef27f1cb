"""The bot's fingerprint is the library's: :mod:`attacks.fingerprint` (it only submits through the ``Oracle``
protocol, so it lives with the attacks; ``attacks.run("auto", …)`` runs it). These names stay for callers."""

from __future__ import annotations

from attacks.fingerprint import DEFAULT_BUDGET, Fingerprint, fingerprint, released_digits

__all__ = ["DEFAULT_BUDGET", "Fingerprint", "fingerprint", "released_digits"]
