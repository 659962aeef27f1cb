"""The claim check for paper 001's losses: one query staking everything on the claimed labels, compared with
the score they imply — :func:`attacks.confirm.check_claims` (which knows only the log losses) for every loss
of :mod:`attacks.paper001.losses`.

Claimed rows predict their label with ``1 − (K−1)·e`` (``e = max(eps, 2^-50)`` where the server clips, else 0:
a one-hot row), unclaimed rows ``1/K``. One wrong label then moves the summed loss by ``ln((1 − e)/e)`` under
cross-entropy, about ``1/e`` under Itakura–Saito, 1 (binary) or 2 under Brier, so a labeling wrong anywhere
fails loudly unless the window is wider than that (then the check says "uninformative").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attacks.confirm import MIN_STAKE
from attacks.exact import local_precision, mpfr
from attacks.oracle import Oracle
from attacks.paper000.probes import ServerModel
from attacks.paper001.activations import cell_losses, to_logits
from attacks.paper001.losses import LossFamily, exact_read
from attacks.result import AttackFailed


def stake_cells(family: LossFamily, labels: np.ndarray, n_classes: int, eps: float) -> list[Any]:
    """Each row's cell: everything on its claimed label, ``1/K`` on unclaimed (``-1``) rows."""
    e = max(float(eps), MIN_STAKE) if family.clipped else 0.0
    if n_classes == 2:
        return [0.5 if y < 0 else (1.0 - e if y == 1 else e) for y in labels.tolist()]
    cells: list[Any] = []
    for y in labels.tolist():
        if y < 0:
            cells.append(tuple([1.0 / n_classes] * n_classes))
        else:
            row = [e] * n_classes
            row[y] = 1.0 - (n_classes - 1) * e
            cells.append(tuple(row))
    return cells


def check_claims_bregman(
    oracle: Oracle, family: LossFamily, labels: np.ndarray, *, noise_bound: float = 0.0, logits: str | None = None
) -> str:
    """Spend one query on ``labels`` (``-1``: not claimed); raise :class:`AttackFailed` unless the released
    score is within the server model's window (its roundings, released decimals and ``noise_bound``) of the
    score the labels imply. Returns ``"passed"`` or ``"uninformative (…)"``. ``logits``: the board's metric on
    logits (``softmax_ce``, ``sigmoid_ce``): the staked rows go out through the inverse activation
    (:mod:`attacks.paper001.activations`) and are scored by that metric's formula."""
    labels = np.asarray(labels, dtype=np.int64)
    model = ServerModel.of(oracle, tau=noise_bound)
    k = model.n_classes
    binary = k == 2
    cells = stake_cells(family, labels, k, model.eps)
    if logits is not None:
        cells = [to_logits(cell) for cell in cells]
    cache: dict[Any, tuple[tuple[Any, ...], Any]] = {}
    with local_precision(model.work_bits):
        total = mpfr(0)
        row_error = mpfr(0)
        magnitude = mpfr(0)
        one_wrong = None
        for cell, y in zip(cells, labels.tolist(), strict=True):
            if cell not in cache and logits is not None:
                losses_of, error_of, _ = cell_losses(model, logits, cell)
                cache[cell] = (losses_of, error_of)
            if cell not in cache:
                values: list[float] = [float(cell)] if binary else [float(v) for v in cell]
                read = exact_read(values, model.work_bits)
                if binary:
                    read = [1 - read[0], read[0]]
                cache[cell] = (family.row_losses(read, binary=binary), family.row_error(model, read, binary=binary))
            losses, error = cache[cell]
            label = max(int(y), 0)
            total += losses[label]
            row_error += error
            magnitude += max(abs(x) for x in losses)
            if y >= 0:
                wrong = min(losses[c] - losses[label] for c in range(k) if c != label)
                one_wrong = wrong if one_wrong is None else min(one_wrong, wrong)
        released = oracle.submit(np.asarray(cells, dtype=np.float64))
        if released is None:
            raise AttackFailed("the check query released no score; the claimed labels cannot be vouched for")
        score = model.observe(released)
        window = model.error_bound(magnitude, row_error, mean=score, margin=2)
        gap = abs(model.n_rows * score - total)
        if gap > window:
            raise AttackFailed(
                f"check failed: the claimed labels imply a summed loss of {float(total):.6g}, the leaderboard "
                f"released {float(score) * model.n_rows:.6g} on the N-scale (window {float(window):.3g}); the "
                "server does not behave as the attack assumed (noise beyond the bound, a defense, a different "
                "loss), so no label is claimed"
            )
        if one_wrong is not None and one_wrong <= 2 * window:
            return "uninformative (one wrong label moves the score less than the window)"
        return "passed" if math.isfinite(float(total)) else "uninformative (infinite loss)"
