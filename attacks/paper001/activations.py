"""Paper 001 §4 and App. D: the cross-entropies on logits (``softmax_ce`` eq. 5, ``sigmoid_ce`` eq. 14) through
the inverse activation — a probability-space plan of :mod:`attacks.paper001.design` (cross-entropy family) is
turned into logits, its per-label losses recomputed exactly as the logit server computes them, and its
certificate checked again.

The inverse activations: a binary row's ``θ`` becomes the log-odds ``ln(θ/(1 − θ))`` (App. D: ``Sigmoid`` is a
bijection), a K-class row ``q`` becomes ``ln q`` (softmax is invariant to adding a constant to every logit, so
``softmax(ln q) = q``: step (2) of §4's "solve ``exp(θ'_k)/Σ_j exp(θ'_j) = θ_k``" in closed form). The logits
are float64 numbers and the server computes ``log_softmax`` (max-shift, exp, sum, log) or ``logaddexp`` and
clips ``ln q_y`` to ``[ln eps, ln(1 − eps)]``; so the losses it sees are not exactly the designed ones. Each
row's losses are therefore recomputed from the submitted logits in MPFR (the scoring core's own ``mpfr_row``
of the metric), the server's float64 error bounded per row (:meth:`ServerModel.formula_row_error` of the
terms ``|z_max| + |z_y| + |ln Σ| + K + 2``: the shift, the exponentials, the sum and the logarithm), and the
batch's gap certified again — the "extra bits" of App. G: the logits of Theorem 3's rows span
``ln(θ_max/θ_min) ≈ 2^(NK)·Nτ``, which the server's rounding has to carry on top of the probabilities. A
batch whose certificate does not survive the conversion is re-planned with more spacing, then refused.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from attacks.exact import local_precision, mpfr
from attacks.paper000.probes import Probe, ServerModel
from attacks.paper001.design import SUPERINCREASING, Plan, plan_batch, powers_gap, primes_deviation
from attacks.paper001.losses import LossFamily, family_for
from attacks.result import AttackFailed

Big = Any  # an MPFR value

#: The leaderboard metrics on logits these attacks play, and the classes they accept.
LOGIT_METRICS = {"softmax_ce": "binary or multiclass", "sigmoid_ce": "binary"}
#: The probability-space loss the logits stand for (App. D: the cross-entropy after the activation).
CROSS_ENTROPY: LossFamily = family_for("kl")
#: Extra spacing tried when a plan's certificate does not survive the conversion to logits.
RETRY_HEADROOM = (1.0, 1.25, 2.0)


def to_logits(cell: Any) -> Any:
    """The inverse activation of one prediction cell: a float ``θ`` (binary, P(class 1)) → its log-odds, a tuple
    of K probabilities → their logarithms. Exact where it matters: ``θ = 1/2`` gives 0, equal ``q`` equal logits."""
    if isinstance(cell, tuple):
        return tuple(math.log(float(q)) for q in cell)
    theta = float(cell)
    return math.log(theta) - math.log1p(-theta)


def _row_row(metric: str) -> Any:
    from scoring.metrics import get_metric

    row = get_metric(metric).mpfr_row
    if row is None:  # pragma: no cover - both logit metrics define their φ-bit row
        raise AttackFailed(f"{metric}: the scoring core gives no exact row loss to plan with")
    return row


def cell_losses(model: ServerModel, metric: str, cell: Any) -> tuple[tuple[Big, ...], Big, Big]:
    """A logit cell's loss under every label, exactly (the metric's own formula at the attacker's precision),
    a bound on the float64 server's error in it, and its largest loss."""
    binary = not isinstance(cell, tuple)
    values = [mpfr(cell)] if binary else [mpfr(v) for v in cell]
    row = _row_row(metric)
    eps = mpfr(repr(model.eps))
    losses = tuple(row(values, label, eps, binary) for label in range(model.n_classes))
    logits = [mpfr(0), values[0]] if binary else values
    top = max(abs(v) for v in logits)
    terms = 2 * top + max(abs(x) for x in losses) + model.n_classes + 2
    error = model.formula_row_error(terms, None if binary else model.n_classes)
    return losses, error, max(abs(x) for x in losses)


def logit_probe(model: ServerModel, metric: str, probe: Probe) -> Probe:
    """``probe`` (probability cells) as logits, with the losses, error bound and magnitude the logit server has."""
    cells = tuple(to_logits(c) for c in probe.cells)
    other = to_logits(probe.other_cell)
    with local_precision(model.work_bits):
        table = []
        row_error = mpfr(0)
        max_total = mpfr(0)
        for cell in cells:
            losses, error, top = cell_losses(model, metric, cell)
            table.append(losses)
            row_error += error
            max_total += top
        other_losses, other_error, other_top = cell_losses(model, metric, other)
        others = model.n_rows - len(cells)
        if max(other_losses) != min(other_losses):  # pragma: no cover - equal logits score every label alike
            raise AttackFailed(f"{metric}: the neutral row does not score every label alike")
        return Probe(model.n_rows, probe.rows, cells, other, tuple(table), others * other_losses[0],
                     row_error + others * other_error, max_total + others * other_top)


def check_metric(metric: str, n_classes: int) -> None:
    """Refuse a board these attacks do not model (a metric on probabilities, sigmoid CE with K > 2)."""
    base = metric.split(":")[0]
    if base not in LOGIT_METRICS:
        raise AttackFailed(f"the logit attacks play {', '.join(LOGIT_METRICS)} boards (paper 001 §4, App. D), not "
                           f"{metric!r}; on probabilities use bregman_powers or ce_robust")
    if base == "sigmoid_ce" and n_classes != 2:
        raise AttackFailed(f"sigmoid cross-entropy (eq. 14) is binary; this board has {n_classes} classes")


def plan_logits(model: ServerModel, metric: str, size: int, construction: str, *, headroom: float = 1.0) -> Plan | None:
    """The certified logit plan for a batch of ``size`` rows: the cross-entropy plan of ``construction``
    (``powers``, ``primes`` or ``theorem3``) through the inverse activation, re-certified on the logit server's
    own losses and rounding; more spacing when the conversion costs the certificate; ``None`` if it never holds."""
    for extra in RETRY_HEADROOM:
        base = plan_batch(model, CROSS_ENTROPY, size, construction, headroom=headroom * extra)
        if base is None:
            return None
        probe = logit_probe(model, metric, base.probe)
        with local_precision(model.work_bits):
            window = model.window(probe)
            if construction in SUPERINCREASING:
                deviation, gap = mpfr(0), powers_gap(model, probe)
            else:
                deviation, gap = primes_deviation(model, probe, base.primes, base.spacing), base.gap
            if gap > 2 * headroom * (window + deviation):
                return replace(base, probe=probe, gap=gap, window=window, deviation=deviation)
    return None
