"""The class balance from constant predictions, and the majority-class floor every best guess keeps.

Every metric here but AUC is the mean of per-row values, so a *constant* prediction ``c`` scores
``Σ_k π_k · v_k(c)`` whatever the order of the rows, where ``π_k`` is the share of class ``k`` among the scored
rows and ``v_k(c)`` the metric's value of ``c`` on a row of class ``k``. Hence:

* binary: one query at ``c = 0.7`` gives ``π_1 = (s - v_0) / (v_1 - v_0)`` (log loss:
  ``s = -(π ln 0.7 + (1-π) ln 0.3)``; accuracy: ``s = π_1``; Brier: ``s = 0.49 - 0.4 π_1``);
* ``K`` classes: ``K - 1`` queries, query ``j`` at ``0.7`` on class ``j`` and the rest spread evenly, each a
  two-valued mixture in ``π_j``; the last share is what the others leave;
* AUC (not a mean over rows, and blind to constants: every constant scores 1/2): one query with row 0 at 1 and
  every other row at 0 scores ``1/2 + 1/(2 n_1)`` when row 0 is a 1 and ``1/2 - 1/(2 n_0)`` when it is a 0, so
  it gives row 0's label *and* the class counts.

Rounding to ``d`` decimals moves ``π`` by at most ``10^-d / |v_1 - v_0|`` (``1.2e-5`` at 5 decimals for log
loss), which pins the class counts exactly for ``N`` up to ~40,000; noise moves it by noise / ``|v_1 - v_0|``.
The shares are those of the *scored* rows (the public split, a subset), the best prior there is for the rest.

The *majority labeling* (every row the most common class) is right on ``max_k π_k`` of the rows; no best
guess should do worse (:func:`majority_labels`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.catalogue import BoardFacts, Plan, Refusal, Stage, why_guess
from attacks.oracle import Oracle, Released
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult, SubmissionRefused
from scoring import get_metric

#: The constant probe's value on the class it favours (binary: P(class 1)). The fingerprint measures a binary
#: log-loss board's balance with its edge probes instead (every row at eps: far finer); this probe serves the
#: other metrics and K classes.
PROBE_VALUE = 0.7


@dataclass
class Balance:
    """Class shares ``rates`` (sum 1) as measured, the queries spent, and any label learned on the way
    (``exact``: row → label; the AUC probe gives row 0's). ``rates`` is ``None`` when nothing was released."""

    rates: np.ndarray | None
    queries: int = 0
    exact: dict[int, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: The released value of each constant probe, in order (``None``: nothing released).
    released: list[float | None] = field(default_factory=list)

    @property
    def majority_class(self) -> int | None:
        return None if self.rates is None else int(np.argmax(self.rates))

    @property
    def majority_rate(self) -> float | None:
        return None if self.rates is None else float(np.max(self.rates))

    def as_dict(self) -> dict[str, Any]:
        return {
            "rates": None if self.rates is None else [round(float(r), 6) for r in self.rates],
            "majority_class": self.majority_class,
            "majority_rate": self.majority_rate,
            "queries": self.queries,
            "exact": {str(k): v for k, v in self.exact.items()},
        }


def constant_probe(n_rows: int, n_classes: int, favoured: int) -> np.ndarray:
    """Every row at :data:`PROBE_VALUE` on class ``favoured`` (binary: P(class 1) = 0.7 for ``favoured = 1``).

    >>> constant_probe(2, 2, 1).tolist(), constant_probe(1, 3, 2).round(2).tolist()
    ([0.7, 0.7], [[0.15, 0.15, 0.7]])
    """
    if n_classes == 2:
        value = PROBE_VALUE if favoured == 1 else 1.0 - PROBE_VALUE
        return np.full(n_rows, value)
    row = np.full(n_classes, (1.0 - PROBE_VALUE) / (n_classes - 1))
    row[favoured] = PROBE_VALUE
    return np.tile(row, (n_rows, 1))


def share_from_constant(metric: str, eps: float, n_classes: int, favoured: int, released: float) -> float | None:
    """The share of class ``favoured`` that makes :func:`constant_probe` score ``released`` (clipped to
    [0, 1]); ``None`` for a metric that does not decompose over rows (AUC) or cannot tell the classes apart.

    >>> round(share_from_constant("binary_logloss", 1e-15, 2, 1, 0.62811), 3)  # 68 % ones
    0.68
    >>> share_from_constant("accuracy", 1e-15, 2, 1, 0.25)
    0.25
    """
    rows = get_metric(metric).row_values
    if rows is None:
        return None
    probe = constant_probe(2, n_classes, favoured)
    other = (favoured + 1) % n_classes
    with np.errstate(all="ignore"):
        on, off = (float(v) for v in rows(probe, np.array([favoured, other]), eps))
    if not np.isfinite(on) or not np.isfinite(off) or abs(on - off) < 1e-12:
        return None
    return float(np.clip((float(released) - off) / (on - off), 0.0, 1.0))


def share_se(metric: str, eps: float, noise: float | None) -> float | None:
    """The standard error of a class-1 share read from one binary constant probe released with noise of
    standard deviation ``noise`` (``None``: unknown); ``None`` when unknown or the metric is not a mean.

    >>> share_se("accuracy", 1e-15, 0.01), round(share_se("binary_logloss", 1e-15, 0.01), 5)
    (0.01, 0.0118)
    """
    rows = get_metric(metric).row_values
    if noise is None or rows is None:
        return None
    values = rows(np.full(2, PROBE_VALUE), np.array([1, 0]), eps)
    gap = float(abs(values[0] - values[1]))
    return float(noise) / gap if gap > 0 else None


def rates_from_shares(shares: list[float | None], n_classes: int) -> np.ndarray | None:
    """Class shares from the measured ones (class ``j`` for ``j < len(shares)``), the rest sharing what is
    left evenly; ``None`` if none was measured.

    >>> rates_from_shares([0.2, 0.5], 3).round(6).tolist(), rates_from_shares([0.68], 2).round(2).tolist()
    ([0.2, 0.5, 0.3], [0.32, 0.68])
    """
    if n_classes == 2:
        known = [s for s in shares if s is not None]
        if not known:
            return None
        one = float(np.mean(known))
        return np.array([1.0 - one, one])
    rates = np.full(n_classes, np.nan)
    for j, share in enumerate(shares[:n_classes]):
        if share is not None:
            rates[j] = share
    if np.isnan(rates).all():
        return None
    missing = np.isnan(rates)
    left = max(0.0, 1.0 - float(np.nansum(rates)))
    rates[missing] = left / missing.sum() if missing.any() else 0.0
    total = rates.sum()
    return rates / total if total > 0 else np.full(n_classes, 1.0 / n_classes)


def measure_balance(
    oracle: Oracle, *, budget: int | None = None, send: Callable[[np.ndarray], Released] | None = None
) -> Balance:
    """Measure the class shares of the scored rows with constant predictions (one query for a binary board,
    ``K - 1`` for ``K`` classes, fewer if ``budget`` says so; AUC: the one-row probe, see the module
    docstring). Never more than ``budget`` queries. ``send`` submits a query (default ``oracle.submit``; a
    refused submission counts as nothing released)."""
    n, k = oracle.n_rows, oracle.n_classes

    def _submit(_oracle: Oracle, predictions: np.ndarray) -> Released:
        try:
            return (send or oracle.submit)(predictions)
        except SubmissionRefused:
            return None

    limit = (1 if k == 2 else k - 1) if budget is None else min(budget, 1 if k == 2 else k - 1)
    out = Balance(rates=None)
    if limit <= 0:
        out.notes.append("no query left to measure the class balance")
        return out
    if oracle.metric == "auc":
        probe = np.zeros(n)
        probe[0] = 1.0
        released = _submit(oracle, probe)
        out.queries = 1
        if released is not None:
            auc = float(released)
            if auc > 0.5:
                ones = min(max(0.5 / (auc - 0.5), 1.0), n - 1.0)
                out.rates, out.exact = np.array([1.0 - ones / n, ones / n]), {0: 1}
            elif auc < 0.5:
                zeros = min(max(0.5 / (0.5 - auc), 1.0), n - 1.0)
                out.rates, out.exact = np.array([zeros / n, 1.0 - zeros / n]), {0: 0}
        return out
    shares: list[float | None] = []
    for j in range(limit):
        favoured = 1 if k == 2 else j
        released = _submit(oracle, constant_probe(n, k, favoured))
        out.queries += 1
        out.released.append(None if released is None else float(released))
        shares.append(
            None if released is None else share_from_constant(oracle.metric, oracle.eps, k, favoured, float(released))
        )
    out.rates = rates_from_shares(shares, k)
    if out.rates is None:
        out.notes.append("the constant probes released nothing: class balance unknown")
    return out


def majority_labels(n_rows: int, rates: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The majority labeling and its per-row confidence (the majority share); ``-1`` and 0 when the balance is
    unknown."""
    if rates is None:
        return np.full(n_rows, -1, dtype=np.int64), np.zeros(n_rows)
    return np.full(n_rows, int(np.argmax(rates)), dtype=np.int64), np.full(n_rows, float(np.max(rates)))


def majority_fits(facts: BoardFacts) -> Plan | Refusal:
    """Every board: the majority class, the floor of every guess (rank 1001)."""
    return Plan("majority", majority_params(facts.seen), why_guess(facts), rank=1001)


def majority_params(seen: Any) -> dict[str, Any]:
    """``majority``'s parameters from a fingerprint (or ``None``): its measured balance and, under noise, the
    noise it saw (the shares read through it are posteriors, not certainties)."""
    if seen is None:
        return {"rates": None}
    params: dict[str, Any] = {"rates": seen.balance}
    if seen.noise and seen.noise_spread > 0:
        params["spread"] = float(seen.noise_spread)
    return params


@register("majority", exact=False, stage=Stage.GUESS, fits=majority_fits,
          paper="ours: the majority-class floor every guess is checked against",
          board="every board", queries="0 with the fingerprint's balance, else K − 1",
          precision="any released score of constant predictions (or the class shares given)")
def majority(
    oracle: Oracle, *, rates: Sequence[float] | None = None, budget: int | None = None, spread: float | None = None
) -> AttackResult:
    """Every row the most common class: the floor no best guess should fall below.

    The class shares ``rates`` when known (e.g. from the fingerprint), else measured with constant predictions
    (:func:`measure_balance`: one query, ``K - 1`` for K classes; AUC: one; never more than ``budget``, the
    classes left unmeasured sharing what the others leave). ``confidence`` is the majority share; with ``spread``
    (the release noise the shares were read through) the posterior of the majority class given those readings
    (:func:`attacks.noisy.shares.share_posterior`: a balance read under much noise is no certainty). Raises
    :class:`AttackFailed` when the board released nothing to measure the shares from (or the budget is 0).

    Paper: ours (the floor). Queries: 0 with ``rates``, else ``K − 1``. Precision: any released score (the
    shares are read from constant predictions, to the released decimals).

    >>> from attacks import LocalOracle, run
    >>> result = run("majority", LocalOracle([1, 1, 0, 1, 0, 1], decimals=5))
    >>> result.labels.tolist(), result.queries, round(float(result.confidence[0]), 3)
    ([1, 1, 1, 1, 1, 1], 1, 0.667)
    """
    queries = 0
    exact: dict[int, int] = {}
    if rates is None:
        measured = measure_balance(oracle, budget=budget)
        shares, queries, exact = measured.rates, measured.queries, measured.exact
    else:
        shares = np.asarray(rates, dtype=np.float64)
    if shares is None:
        if budget is not None and budget <= 0:
            raise AttackFailed("no query in the budget to measure the class balance, and no rates given")
        raise AttackFailed("the constant probes released nothing: the class balance is unknown")
    labels, confidence = majority_labels(oracle.n_rows, shares)
    if spread:
        from attacks.noisy.shares import share_errors, share_posterior

        posterior = share_posterior(shares, share_errors(oracle.metric, oracle.eps, len(shares), spread))
        confidence = np.minimum(confidence, posterior[int(labels[0])])
    for row, label in exact.items():
        labels[row], confidence[row] = label, 1.0
    return AttackResult(
        "majority", labels, confidence=confidence,
        details={"rates": [float(r) for r in shares], "balance_queries": queries},
    )


@dataclass
class ShareEstimate:
    """The share of class 1 averaged over repeated constant probes: ``share`` ± ``se`` (its standard error),
    the release noise's standard deviation on the score (``noise``; 0 when two releases agreed) and the
    queries spent."""

    share: float | None
    se: float = 0.0
    noise: float = 0.0
    queries: int = 0


def repeat_share(
    oracle: Oracle,
    *,
    budget: int,
    prior: float | None = None,
    prior_se: float = 0.0,
    noise: float | None = None,
    sigmas: float = 3.0,
) -> ShareEstimate:
    """The share of class 1 of a binary board from constant probes, repeated while the release is noisy and the
    majority class is still in doubt.

    Each probe is :func:`constant_probe` with one row moved by one ulp (a different file, the same score to
    ~1e-16), so a same-file-same-score cache cannot answer it and a fresh noise draw, subset or randomized
    response comes with each. Two releases that agree mean no noise: stop. Otherwise average (with ``prior``
    ± ``prior_se``, inverse-variance weighted, when given) until the share is ``sigmas`` standard errors away
    from 1/2 or the ``budget`` of queries is spent. ``noise`` (the release's standard deviation, if known) sizes the
    standard error from the start; else it is estimated from the releases themselves.
    """
    rows = get_metric(oracle.metric).row_values
    if oracle.n_classes != 2 or rows is None or budget <= 0:
        return ShareEstimate(prior, prior_se, noise or 0.0)
    probe_values = rows(np.full(2, PROBE_VALUE), np.array([1, 0]), oracle.eps)
    gap = float(abs(probe_values[0] - probe_values[1])) or 1.0
    shares: list[float] = []
    released: list[float] = []
    out = ShareEstimate(prior, prior_se, noise or 0.0)
    for i in range(budget):
        probe = constant_probe(oracle.n_rows, 2, 1)
        if i:
            row = (i - 1) % oracle.n_rows
            probe[row] = np.nextafter(probe[row], 1.0 if i % 2 else 0.0)
        try:
            value = oracle.submit(probe)
        except SubmissionRefused:
            value = None
        out.queries += 1
        if value is None:
            continue
        share = share_from_constant(oracle.metric, oracle.eps, 2, 1, float(value))
        if share is None:
            continue
        shares.append(share)
        released.append(float(value))
        if len(released) >= 2 and max(released) == min(released) and not noise:
            out.noise = 0.0
            break
        if len(released) >= 2 or noise:
            spread = float(np.std(released, ddof=1)) if len(released) >= 2 and not noise else float(noise or 0.0)
            out.noise = spread
            se_one = spread / gap
            weights = [len(shares) / se_one**2 if se_one > 0 else np.inf]
            means = [float(np.mean(shares))]
            if prior is not None and prior_se > 0:
                weights.append(1.0 / prior_se**2)
                means.append(prior)
            if np.isinf(weights[0]):
                out.share, out.se = means[0], 0.0
            else:
                total = sum(weights)
                out.share = float(np.clip(sum(w * m for w, m in zip(weights, means, strict=True)) / total, 0, 1))
                out.se = float(1.0 / np.sqrt(total))
            if out.se == 0 or abs(out.share - 0.5) > sigmas * out.se:
                break
        else:
            out.share, out.se = shares[0], prior_se
    if shares and out.share is None:
        out.share = float(np.mean(shares))
    return out
