"""Decoders for paper 000's probes, each returning a labeling only with a certificate that it is the one
labeling consistent with the released score.

A labeling σ of a probe's batch is *consistent* with a released score ℓ when
``|N·ℓ − base − Σ_r d[r][σ_r]| ≤ W`` (:meth:`ServerModel.window`). Since the true labeling is always
consistent, a decoder that finds exactly one consistent labeling has found the truth. Two certificates:

* **integer gap** (prime constructions, Theorem 1 / Algorithm 1 / Theorem 8): the batch offsets are
  ``−c·ln p_r`` up to a known deviation, so every labeling is an integer ``Q = Π p_r^{σ_r}``; distinct
  integers differ by at least ``ln(1 + 1/Q)`` in log, hence one consistent ``Q`` with
  ``ln(1 + 1/Q) > 2(W + deviation)`` is unique;
* **enumeration** (τ-robust constructions, Algorithms 2–3): all ``K^m`` subset sums, sorted; exactly one
  within ``W`` of the observation.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr, mpz
from attacks.paper000.probes import Big, Probe, ServerModel
from attacks.result import AttackFailed

MAX_ENUMERATION = 1 << 20


def observation(model: ServerModel, probe: Probe, released: Any) -> tuple[Big, Big]:
    """``(S, W)``: the released summed loss minus the all-zeros baseline, and the window around it."""
    score = model.observe(released)
    with local_precision(model.work_bits):
        summed = model.n_rows * score - probe.base(model.work_bits)
        return summed, model.window(probe, score)


# --- integer gap: primes and prime powers -------------------------------------------------------------------


def prime_deviation(model: ServerModel, probe: Probe, primes: tuple[int, ...]) -> Big:
    """``Σ_r max_c |d[r][c] + c·ln p_r|``: how far the offsets the server will use sit from ``−c·ln p_r``
    (float64 rounding of ``p/(1+p)``, or the φ-bit reading of a decimal string)."""
    if "deviation" not in probe.cache:
        with local_precision(model.work_bits):
            total = mpfr(0)
            for row_offsets, p in zip(probe.offsets(model.work_bits), primes, strict=True):
                log_p = gmpy2.log(p)
                total += max(abs(d + c * log_p) for c, d in enumerate(row_offsets))
            probe.cache["deviation"] = total
    return probe.cache["deviation"]


def factor_certified(model: ServerModel, probe: Probe, primes: tuple[int, ...]) -> bool:
    """Whether every labeling of the batch decodes by factoring with the integer-gap certificate (checked
    before querying): ``ln(1 + 1/P) > 2(W + deviation)`` for the largest product ``P``."""
    k = len(probe.table[0]) if probe.table else 2
    with local_precision(model.work_bits):
        largest = mpz(1)
        for p in primes:
            largest *= mpz(p) ** (k - 1)
        gap = gmpy2.log1p(1 / mpfr(largest))
        return bool(gap > 2 * (model.window(probe) + prime_deviation(model, probe, primes)))


def decode_factor(model: ServerModel, probe: Probe, primes: tuple[int, ...], released: Any) -> np.ndarray:
    """Paper 000's decoder (Theorem 1 proof, Algorithm 1 steps 8–10, Theorem 8 for K classes): the integer
    ``Q = T·exp(−N·ℓ)``, factored over the batch's primes; the multiplicity of ``p_r`` is row r's label.

    Raises :class:`AttackFailed` when ``Q`` is not a product of the batch's primes (the score is not one the
    construction can produce), when it is inconsistent with the score, or when the precision cannot rule out
    a neighbouring integer.
    """
    summed, window = observation(model, probe, released)
    k = len(probe.table[0])
    with local_precision(model.work_bits):
        q = gmpy2.exp(-summed)
        product = int(gmpy2.rint(q))
    remaining = product
    labels = np.zeros(len(primes), dtype=np.int64)
    for r, p in enumerate(primes):
        while labels[r] < k - 1 and remaining % p == 0:
            remaining //= p
            labels[r] += 1
    if product < 1 or remaining != 1:
        raise AttackFailed(
            f"the score decodes to Q = {product}, which is not a product of the probe's primes (each to a power "
            f"below {k}); the released score is not one this construction can produce (noise? a defense?)"
        )
    offsets = probe.offsets(model.work_bits)
    deviation = prime_deviation(model, probe, primes)
    with local_precision(model.work_bits):
        predicted = sum((offsets[r][int(c)] for r, c in enumerate(labels)), mpfr(0))
        if abs(predicted - summed) > window:
            raise AttackFailed(
                f"Q = {product} is {float(abs(predicted - summed)):.3g} from the released score on the N-scale, "
                f"beyond the window {float(window):.3g}: inconsistent (noise above the assumed bound?)"
            )
        if gmpy2.log1p(1 / mpfr(product)) <= 2 * (window + deviation):
            raise AttackFailed(
                f"the precision cannot separate Q = {product} from its neighbours (window {float(window):.3g}); "
                "use smaller batches or more bits"
            )
    return labels


# --- enumeration: τ-robust constructions --------------------------------------------------------------------


def _sorted_sums(model: ServerModel, probe: Probe) -> tuple[np.ndarray, np.ndarray, Big]:
    """All ``K^m`` candidate sums (long double), sorted, with their codes and the attacker's own error."""
    if "sums" not in probe.cache:
        k = len(probe.table[0])
        if k ** probe.size > MAX_ENUMERATION:
            raise AttackFailed(
                f"{k}^{probe.size} labelings is too many to enumerate (limit {MAX_ENUMERATION}); use smaller batches"
            )
        offsets = probe.offsets(model.work_bits)
        sums = np.zeros(1, dtype=np.longdouble)
        for row in offsets:
            values = np.array([np.longdouble(format(d, ".25e")) for d in row])
            sums = (sums[:, None] + values[None, :]).ravel()
        order = np.argsort(sums, kind="stable")
        with local_precision(model.work_bits):
            magnitude = sum((max(abs(d) for d in row) for row in offsets), mpfr(0))
            own_error = (probe.size + 2) * mpfr(2) ** -60 * (magnitude + 1)
        probe.cache["sums"] = (sums[order], order, own_error)
    return probe.cache["sums"]  # type: ignore[no-any-return]


def _code_to_labels(code: int, size: int, k: int) -> np.ndarray:
    labels = np.zeros(size, dtype=np.int64)
    for r in range(size - 1, -1, -1):
        code, labels[r] = divmod(code, k)
    return labels


def enumeration_certified(model: ServerModel, probe: Probe) -> bool:
    """Whether every two labelings of the batch are more than ``2W`` apart (checked before querying); false
    when there are too many labelings to enumerate."""
    k = len(probe.table[0]) if probe.table else 2
    if k**probe.size > MAX_ENUMERATION:
        return False
    sums, _, own = _sorted_sums(model, probe)
    if len(sums) < 2:
        return True
    with local_precision(model.work_bits):
        gap = mpfr(format(np.diff(sums).min(), ".25e"))
        return bool(gap > 2 * (model.window(probe) + own))


def decode_nearest(model: ServerModel, probe: Probe, released: Any) -> np.ndarray:
    """Algorithms 2 and 3's decoder: the batch labeling whose loss is nearest the released score
    (``argmin_σ |L(σ) − ℓ|``), accepted only if it is the one labeling within the window."""
    summed, window = observation(model, probe, released)
    sums, order, own = _sorted_sums(model, probe)
    with local_precision(model.work_bits):
        low = np.longdouble(format(summed - window - own, ".25e"))
        high = np.longdouble(format(summed + window + own, ".25e"))
    lo, hi = int(np.searchsorted(sums, low, "left")), int(np.searchsorted(sums, high, "right"))
    if hi - lo == 0:
        nearest = int(np.clip(np.searchsorted(sums, np.longdouble(format(summed, ".25e"))), 0, len(sums) - 1))
        raise AttackFailed(
            "no labeling of the batch is consistent with the released score (nearest is "
            f"{float(abs(sums[nearest] - np.longdouble(format(summed, '.25e')))):.3g} away on the N-scale, window "
            f"{float(window):.3g}): the noise exceeds the assumed bound, or a defense changed the score"
        )
    if hi - lo > 1:
        raise AttackFailed(
            f"{hi - lo} labelings of the batch are consistent with the released score: the precision or the "
            "assumed noise bound cannot separate them"
        )
    return _code_to_labels(int(order[lo]), probe.size, len(probe.table[0]))


# --- reference -----------------------------------------------------------------------------------------------


def brute_force(model: ServerModel, probe: Probe, released: Any) -> list[tuple[int, ...]]:
    """Every batch labeling consistent with the released score, by exhaustive search in MPFR (tests only)."""
    summed, window = observation(model, probe, released)
    offsets = probe.offsets(model.work_bits)
    k = len(probe.table[0])
    found: list[tuple[int, ...]] = []
    with local_precision(model.work_bits):
        for labeling in itertools.product(range(k), repeat=probe.size):
            total = sum((offsets[r][c] for r, c in enumerate(labeling)), mpfr(0))
            if abs(total - summed) <= window:
                found.append(labeling)
    return found
