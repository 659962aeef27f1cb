"""Decoders for paper 001's batches, each returning a labeling only when it is the one labeling consistent with
the released score (within the window of :meth:`attacks.paper000.probes.ServerModel.window`):

* :func:`decode_powers` — Construction 1: the offsets are superincreasing, so the labels are read digit by
  digit from the top row down (the binary digits of ``(N·ℓ − h)/s`` when the offsets are exactly ``2^i·s``):
  O(m) instead of LabelInf's O(2^m).
* :func:`decode_primes` — Construction 2: ``Q = exp((N·ℓ − h)/s)`` and the nearest member of ``SqFree(m)``
  (:func:`attacks.paper001.squarefree.closest_free`, Algorithm 1); its prime factors are the rows labelled 1.
* LabelInf (Eq. 1), the exhaustive ``argmin_σ |f(σ, θ) − ℓ|``, is paper 000's
  :func:`~attacks.paper000.decoders.decode_nearest` on the same probe (the tests cross-check all three).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.paper000.decoders import decode_nearest, observation
from attacks.paper000.probes import Probe
from attacks.paper001.design import Plan
from attacks.paper001.squarefree import closest_free
from attacks.result import AttackFailed


def _inconsistent(what: str, distance: Any, window: Any) -> AttackFailed:
    return AttackFailed(
        f"{what}: the released score is {float(distance):.3g} from the nearest labeling on the N-scale, beyond "
        f"the window {float(window):.3g} — the noise exceeds the assumed bound, or a defense changed the score"
    )


def decode_powers(plan: Plan, probe: Probe, released: Any) -> np.ndarray:
    """Construction 1's decoder: from the top row down, the largest label whose offset fits under what is
    left of the summed loss (plus the window); consistent only if what remains at the end is within the
    window (then, by the plan's gap ``> 2W``, it is the only consistent labeling)."""
    model = plan.model
    summed, window = observation(model, probe, released)
    offsets = probe.offsets(model.work_bits)
    labels = np.zeros(probe.size, dtype=np.int64)
    with local_precision(model.work_bits):
        remaining = summed
        for i in range(probe.size - 1, -1, -1):
            label = 0
            for k, d in enumerate(offsets[i]):
                if d <= remaining + window:
                    label = k
            labels[i] = label
            remaining -= offsets[i][label]
        if abs(remaining) > window:
            raise _inconsistent("Construction 1 (powers)", abs(remaining), window)
    return labels


def decode_primes(plan: Plan, probe: Probe, released: Any) -> np.ndarray:
    """Construction 2's decoder: ``x = exp((N·ℓ − h)/s)``, ``Q = CloSqFree(x, m)`` searched only as far as
    the window and the offsets' deviation allow (at most one integer lies there, by the plan's certificate),
    and the exponents of Q's primes as the labels; checked against the actual offsets."""
    model = plan.model
    summed, window = observation(model, probe, released)
    k = model.n_classes
    with local_precision(model.work_bits):
        spacing = mpfr(plan.spacing)
        log_q = summed / spacing
        if log_q < -1 or log_q > gmpy2.log(mpfr(2)) * (model.work_bits - 8):
            raise _inconsistent("Construction 2 (primes)", abs(summed), window)
        x = gmpy2.exp(log_q)
        reach = (window + plan.deviation) / spacing
        radius = x * gmpy2.expm1(reach) + mpfr(2) ** -40
        product = closest_free(x, plan.primes, k, radius=radius, bits=model.work_bits)
        if product is None:
            raise _inconsistent("Construction 2 (primes): no member of SqFree(m) near exp((Nℓ − h)/s)",
                                abs(summed - spacing * gmpy2.log(max(x, mpfr(1)))), window)
    labels = np.zeros(probe.size, dtype=np.int64)
    remaining = product
    for i, p in enumerate(plan.primes):
        while remaining % p == 0:
            remaining //= p
            labels[i] += 1
    offsets = probe.offsets(model.work_bits)
    with local_precision(model.work_bits):
        predicted = sum((offsets[i][int(c)] for i, c in enumerate(labels)), mpfr(0))
        if abs(predicted - summed) > window:
            raise _inconsistent("Construction 2 (primes)", abs(predicted - summed), window)
    return labels


def decode_labelinf(plan: Plan, probe: Probe, released: Any) -> np.ndarray:
    """LabelInf (Eq. 1) over the batch's ``K^m`` labelings (``m`` small), certified unique."""
    return decode_nearest(plan.model, probe, released)


DECODERS = {"powers": decode_powers, "primes": decode_primes, "theorem3": decode_powers}
