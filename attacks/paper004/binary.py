"""Paper 004, Algorithm 3: predictions ``x_i = α_i / (1 + α_i)`` with ``α_i = 2^(2^(i-1))``.

A label 1 on row ``i`` lowers the summed loss by exactly ``2^(i-1) · ln 2``, so ``E = (Σ ln(1 + α_i) − summed
loss) / ln 2`` is an integer whose binary digits, least significant first, are the labels. No twin-prime
conjecture, and the decoder needs the summed loss only to within ``ln 2 / 2``; the catch is clipping:
``1 − x_i = 1/(1 + α_i)`` must stay above ``eps``, so a query carries ``⌊log2 log2(1/(2·eps))⌋ + 1`` rows
(6 at Kaggle's ``eps = 1e-15``, at most 10 for any float64 ``eps``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.paper004.server import ServerModel, batches
from attacks.planning import largest_feasible
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult


def labels_from_exponent(exponent: int, size: int) -> list[int]:
    """The labeling whose ``E = Σ_{label 1} 2^(i-1)`` is ``exponent``: its binary digits, reversed.

    The paper's examples: labels [1, 0, 1, 1] give E = 13, and E = 18 = 0b10010 gives [0, 1, 0, 0, 1].

    >>> labels_from_exponent(13, 4)
    [1, 0, 1, 1]
    >>> labels_from_exponent(18, 5)
    [0, 1, 0, 0, 1]
    """
    if not 0 <= exponent < 2**size:
        raise ValueError(f"exponent {exponent} does not fit {size} labels")
    return [(exponent >> i) & 1 for i in range(size)]


def _log2_alpha(i: int) -> int:
    """``log2 α_i = 2^(i-1)`` for the zero-based row ``i`` of a batch."""
    return 1 << i


def binary_predictions(size: int, bits: int) -> list[Any]:
    """``α_i / (1 + α_i)`` for the rows of a batch, as ``bits``-bit MPFR values (``1 − 1/(1 + α_i)``)."""
    with local_precision(bits):
        return [1 - 1 / (mpfr(2) ** _log2_alpha(i) + 1) for i in range(size)]


def _log1p_alpha_sum(size: int, bits: int) -> Any:
    with local_precision(bits):
        return gmpy2.fsum([gmpy2.log1p(mpfr(2) ** _log2_alpha(i)) for i in range(size)])


def batch_tolerance(model: ServerModel, size: int) -> Any:
    """The bound on ``|N × released − exact summed loss|`` for a batch of ``size`` (other rows at 1/2)."""
    magnitude = (model.n_rows - size) * math.log(2) + sum((1 << i) * math.log(2) + 1 for i in range(size))
    read = model.n_rows - size + sum(mpfr(2) ** _log2_alpha(i) for i in range(size))
    return model.sum_tolerance(magnitude, read)


def batch_is_decodable(model: ServerModel, size: int) -> bool:
    """No prediction clipped (``1 + α_i ≤ 1/(2·eps)``) and the tolerance below half the ``ln 2`` step."""
    if _log2_alpha(size - 1) > math.log2(1 / (2 * model.eps)) - 1e-9:
        return False
    return bool(2 * batch_tolerance(model, size) < math.log(2))


def decode_batch(summed_loss: Any, model: ServerModel, size: int) -> list[int]:
    """``E`` from the batch's summed loss: the one integer within ``tolerance / ln 2`` of the estimate."""
    tolerance = batch_tolerance(model, size)
    with local_precision(model.work_bits + (1 << size)):
        ln2 = gmpy2.log(mpfr(2))
        batch_loss = summed_loss - (model.n_rows - size) * ln2
        estimate = (_log1p_alpha_sum(size, model.work_bits + (1 << size)) - batch_loss) / ln2
        low = max(int(gmpy2.ceil(estimate - tolerance / ln2)), 0)
        high = min(int(gmpy2.floor(estimate + tolerance / ln2)), 2**size - 1)
    if low != high:
        raise AttackFailed(
            f"binary_representation: {max(high - low + 1, 0)} exponents of a batch of {size} fit the released "
            f"score (estimate {float(estimate):.6g}; expected exactly one): the score is noisier or coarser "
            "than the server model says"
        )
    return labels_from_exponent(low, size)


@register("binary_representation",
          paper="paper 004 §2.3, Algorithm 3 and Theorem 2",
          board="binary log loss on an MPFR server",
          queries="⌈N / b⌉, b ≤ 6 at eps = 1e-15 (the clipping caps the batch)",
          precision="the summed loss to within ln 2 / 2 (5 decimals to N ≈ 69,000); float64 or MPFR")
def binary_representation(
    oracle: Oracle, *, batch_size: int | None = None, noise_bound: float = 0.0, bits: int | None = None,
    budget: int | None = None,
) -> AttackResult:
    """Paper 004 (Aggarwal, Xu, Feyisetan, Teissier 2020), Algorithm 3 and Theorem 2: binary-representation
    predictions, decoded by reading the exponent of 2.

    Queries: ``⌈N / b⌉``; the paper's single query when ``b = N``, but clipping caps ``b`` at
    ``⌊log2 log2(1/(2·eps))⌋ + 1`` (6 rows at ``eps = 1e-15``), so in practice ``⌈N / 6⌉``; other rows get 1/2.
    A ``budget`` of submissions stops early: each batch decodes on its own, rows not queried are ``-1``.
    Time: ``O(N)`` MPFR operations on ``2^b``-bit numbers.

    Precision: the summed loss to within ``ln 2 / 2`` — 5 decimals suffice up to N ≈ 69,000, and float64
    reads ``x_6 = 1 − 2^-32`` with room to spare. Raises :class:`AttackFailed` before any query if not even
    one row fits (or ``batch_size`` does not), and after a query if no exponent or more than one fits the
    released score. With undisclosed noise beyond ``noise_bound`` a wrong exponent can still fit: every
    integer is a labeling, so this decoder cannot detect that by itself.

    Paper 004, Section 2.3 (Algorithm 3, Theorem 2). Twelve rows on a float64 board at 5 decimals, six a query:

    >>> from attacks import LocalOracle, run
    >>> labels = [1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1]
    >>> result = run("binary_representation", LocalOracle(labels, decimals=5), confirm=False)
    >>> result.labels.tolist() == labels, result.queries, result.details["batch_size"]
    (True, 2, 6)
    """
    model = ServerModel.of(oracle, noise_bound=noise_bound, bits=bits)
    n = model.n_rows
    planned = largest_feasible(n, lambda b: batch_is_decodable(model, b))
    if batch_size is None:
        batch_size = planned
    if batch_size < 1 or batch_size > planned:
        raise AttackFailed(
            f"binary_representation: a batch of {batch_size} rows is not decodable with eps={model.eps:g}, "
            f"{model.phi}-bit arithmetic and {model.decimals if model.decimals is not None else 'all'} released "
            f"decimals (largest: {planned})"
        )
    labels = np.full(n, -1, dtype=np.int64)
    half = mpfr("0.5")
    for rows in batches(n, batch_size)[:budget]:
        predictions: list[Any] = [half] * n
        predictions[rows.start : rows.stop] = binary_predictions(len(rows), model.work_bits + (1 << len(rows)))
        released = oracle.submit(model.encode(predictions))
        labels[rows.start : rows.stop] = decode_batch(model.summed_loss(released), model, len(rows))
    return AttackResult(
        attack="binary_representation", labels=labels, queries=0, seconds=0.0,
        details={"batch_size": batch_size, "server_bits": model.phi, "decimals": model.decimals},
    )
