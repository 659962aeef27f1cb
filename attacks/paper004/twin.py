"""Paper 004, Algorithms 1–2: twin-prime predictions and the factorisation decoder.

Row ``i`` of a batch is predicted ``x_i = p_i / (p_i + 2)`` with ``p_1 < p_2 < …`` the lower members of twin
prime pairs from 5 on (OEIS A001359). Then ``exp(summed loss) = C / Q`` with ``C = Π (p_i + 2)`` known and
``Q = 2^{#zeros} · Π_{label 1} p_i``: factorising ``Q`` reads off the labels (the primes present are the
ones) and the exponent of 2 counts the zeros, a built-in check.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from attacks.exact import gmpy2, local_precision, lower_twin_primes, mpfr, mpz
from attacks.oracle import Oracle
from attacks.paper004.server import ServerModel, batches
from attacks.planning import largest_feasible
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

# The decoder examines every integer the released score allows; more than this means the precision is far
# too low for the batch (the planner never lets it happen with an honest server).
_MAX_CANDIDATES = 4096


def labels_from_denominator(q: int, primes: Sequence[int]) -> list[int] | None:
    """Algorithm 2, steps 3–5: the labeling whose ``Q = 2^m · Π_{label 1} p_j`` is ``q``, or ``None`` when
    ``q`` has another form (a factor outside ``{2} ∪ primes``, a repeated prime, or ``m + #ones ≠ N``).

    >>> labels_from_denominator(170, (5, 11, 17))
    [1, 0, 1]
    >>> labels_from_denominator(171, (5, 11, 17)) is None
    True
    """
    if q <= 0:
        return None
    rest = mpz(q)
    twos = int(gmpy2.bit_scan1(rest)) if rest else 0
    rest >>= twos
    labels = []
    for p in primes:
        divides = rest % p == 0
        if divides:
            rest //= p
        labels.append(int(divides))
    if rest != 1 or twos + sum(labels) != len(primes):
        return None
    return labels


def algorithm2(ratio: Fraction) -> list[int]:
    """Paper 004, Algorithm 2: labels from ``exp(N · s) = p/q`` in lowest terms, with ``N`` read off the
    numerator (``Π (p_i + 2)`` over the first ``N`` twin primes).

    The paper's worked example, ``e^{3s} = 1729/170``: 1729 = 7·13·19, 170 = 2·5·17, so one zero and ones at
    the first and third rows.

    >>> algorithm2(Fraction(1729, 170))
    [1, 0, 1]
    """
    numerator = ratio.numerator
    n = 0
    while numerator > 1:
        n += 1
        p = lower_twin_primes(n)[-1]
        if numerator % (p + 2):
            raise AttackFailed(f"{ratio.numerator} is not a product of the first twin primes plus 2")
        numerator //= p + 2
    labels = labels_from_denominator(ratio.denominator, lower_twin_primes(n)) if n else None
    if labels is None:
        raise AttackFailed(f"{ratio.denominator} is not 2^m times distinct twin primes with m + #ones = {n}")
    return labels


def twin_prime_predictions(primes: Sequence[int], bits: int) -> list[Any]:
    """``p / (p + 2)`` for each prime, as ``bits``-bit MPFR values."""
    with local_precision(bits):
        return [mpfr(p) / (p + 2) for p in primes]


def batch_tolerance(model: ServerModel, primes: Sequence[int]) -> Any:
    """The bound on ``|N × released − exact summed loss|`` for a batch of ``primes`` (other rows at 1/2)."""
    magnitude = (model.n_rows - len(primes)) * math.log(2) + sum(math.log((p + 2) / 2) for p in primes)
    return model.sum_tolerance(magnitude, model.n_rows - len(primes) + sum(p / 2 for p in primes))


def batch_is_decodable(model: ServerModel, size: int) -> bool:
    """Two labelings of a batch differ in ``ln Q`` by at least ``ln(1 + 1/Q_max)``, ``Q_max = Π p_i``; the
    batch decodes uniquely when twice the tolerance is below that gap and no prediction is clipped."""
    primes = lower_twin_primes(size)
    if (primes[-1] + 2) * model.eps * 2 > 1:
        return False
    q_max = math.prod(primes)
    gap = gmpy2.log1p(1 / mpfr(q_max))
    return bool(2 * batch_tolerance(model, primes) < gap)


def decode_batch(summed_loss: Any, model: ServerModel, primes: Sequence[int]) -> list[int]:
    """The factorisation decoder on one batch: every integer ``Q`` with ``ln C − ln Q`` within the tolerance
    of the batch's summed loss, kept when it factorises as a labeling; exactly one must remain."""
    n_fill = model.n_rows - len(primes)
    tolerance = batch_tolerance(model, primes)
    c = math.prod(p + 2 for p in primes)
    bits = model.work_bits + c.bit_length()
    with local_precision(bits):
        batch_loss = summed_loss - n_fill * gmpy2.log(mpfr(2))
        low = int(gmpy2.floor(c * gmpy2.exp(-batch_loss - tolerance)))
        high = int(gmpy2.ceil(c * gmpy2.exp(-batch_loss + tolerance)))
    if high - low > _MAX_CANDIDATES:
        raise AttackFailed(
            f"twin_primes: the released score leaves {high - low} candidate denominators for a batch of "
            f"{len(primes)}; the server's precision is too low for this batch size"
        )
    found = [lab for q in range(max(low, 1), high + 1) if (lab := labels_from_denominator(q, primes)) is not None]
    if len(found) != 1:
        raise AttackFailed(
            f"twin_primes: {len(found)} labelings of a batch of {len(primes)} fit the released score "
            "(expected exactly one): the score is noisier or coarser than the server model says"
        )
    return found[0]


@register("twin_primes",
          paper="paper 004 §2.1, Algorithms 1–2 (Theorem 1)",
          board="binary log loss on an MPFR server",
          queries="⌈N / b⌉, b the batch the precision separates (1 at MPFR width)",
          precision="the summed loss to ln(1 + 1/Π p_i)/2: φ-bit MPFR for one query; float64 ≈ 7 rows a query")
def twin_primes(
    oracle: Oracle, *, batch_size: int | None = None, noise_bound: float = 0.0, bits: int | None = None,
    budget: int | None = None,
) -> AttackResult:
    """Paper 004 (Aggarwal, Xu, Feyisetan, Teissier 2020), Algorithms 1–2: twin-prime predictions decoded by
    factorisation.

    Queries: ``⌈N / b⌉``, where ``b`` is the largest batch whose labelings the released score separates
    (``b = N``, the paper's single query, when the precision allows it; other rows get 1/2, which adds
    ``ln 2`` whatever their label). Time: ``O(N · b)`` big-integer divisions plus the MPFR logs. A ``budget`` of
    submissions stops early: each batch decodes on its own, rows not queried are ``-1``.

    Precision: separating the ``2^b`` labelings of a batch needs the summed loss to within
    ``ln(1 + 1/Q_max) / 2`` with ``Q_max = Π p_i`` — about ``log2 Π p_i + log2 N + 10`` bits of the server's
    computation and release (≈ 100 bits for N = 16, ≈ 2,600 for N = 200: run against ``mpfr:φ``). A float64
    server carries ≈ 7 rows per query, 5 decimals only 1–2. Raises :class:`AttackFailed` before any query
    if not even one row fits (or ``batch_size`` does not), and after a query if the factorisation decoder
    does not find exactly one labeling — it never guesses.

    Paper 004, Section 2.1 (Algorithm 1 the predictions ``p/(p + 2)``, Algorithm 2 the decoder, Theorem 1).
    Twelve rows in one query of a 200-bit server:

    >>> from attacks import LocalOracle, run
    >>> labels = [1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1]
    >>> result = run("twin_primes", LocalOracle(labels, arithmetic="mpfr:200", decimals=None), confirm=False)
    >>> result.labels.tolist() == labels, result.queries, result.details["batch_size"]
    (True, 1, 12)
    """
    model = ServerModel.of(oracle, noise_bound=noise_bound, bits=bits)
    n = model.n_rows
    planned = largest_feasible(n, lambda b: batch_is_decodable(model, b))
    if batch_size is None:
        batch_size = planned
    if batch_size < 1 or batch_size > planned:
        raise AttackFailed(
            f"twin_primes: a batch of {batch_size} rows is not decodable at {model.phi}-bit arithmetic with "
            f"{model.decimals if model.decimals is not None else 'all'} released decimals (largest: {planned})"
        )
    labels = np.full(n, -1, dtype=np.int64)
    half = mpfr("0.5")
    for rows in batches(n, batch_size)[:budget]:
        primes = lower_twin_primes(len(rows))
        predictions: list[Any] = [half] * n
        predictions[rows.start : rows.stop] = twin_prime_predictions(primes, model.work_bits)
        released = oracle.submit(model.encode(predictions))
        labels[rows.start : rows.stop] = decode_batch(model.summed_loss(released), model, primes)
    return AttackResult(
        attack="twin_primes", labels=labels, queries=0, seconds=0.0,
        details={"batch_size": batch_size, "server_bits": model.phi, "decimals": model.decimals},
    )
