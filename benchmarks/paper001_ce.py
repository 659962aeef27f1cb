"""Paper 001's Figures 1(b)/(d) and 2 (Appendix G's Figures 3–4) for the cross-entropies: binary CE loss on
Titanic-sized label vectors (N = 2,201) and softmax cross-entropy on 10-class labels (scikit-learn's digits,
N = 1,797), largest N one query recovers in full and queries for all labels, against the noise bound
τ ∈ {1e-4, 1e-3, 1e-2, 1e-1, 1}. Run through ``benchmarks.paper001_figures`` (``--part ce|softmax``).

The server releases the full float64 mean (as in the paper's float64 simulation) plus noise uniform in
``[−τ, τ]``; a point counts only if every trial (seeded random labelings, plus all-one-class, alternating and
one-odd-row labelings) returns every label. Columns:

* **paper** — the paper gives these figures as plots only (no number in the text or App. G), so "—";
* **Thm 10 / Thm 3** — the paper's constructions re-run here in float64 as the paper did: Aggarwal et al.
  2021's ``θ_i = 3^(2^i·N·τ)/(1 + 3^(2^i·N·τ))`` (App. G, Theorem 10; binary only) and Theorem 3's
  ``θ_{n,k} ∝ 3^(2^((n−1)K+k)·N·τ)`` (softmax: its logits ``ln ϑ``), normalised in log space, clipped at
  ``eps = 1e-300`` so that the construction, not the board's clipping, is what runs out, decoded by LabelInf
  (Eq. 1: every labeling's float64 score, the nearest wins); multi-query (§3.2): the largest batch that
  decodes, θ built on the whole N;
* **ce_robust** — Theorem 3 as we run it (c from the whole window, batch sized by the server model, every
  batch certified), at the same ``eps = 1e-300``; for softmax through the inverse activation;
* **powers** — Construction 1 with base-K digits (``bregman_powers`` on CE, the ``softmax_ce`` attack on
  logits), at ``eps = 1e-300``, and **@1e-15** the same on a board clipping at the usual ``eps = 1e-15``
  (any row then moves the summed loss by at most ``ln((1 − eps)/eps) ≈ 34.5``: N·τ beyond half of that is
  refused before any query, whatever the construction).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from attacks import AttackFailed, LocalOracle, run
from attacks.paper000.probes import ServerModel
from attacks.paper001.activations import CROSS_ENTROPY, plan_logits
from attacks.paper001.design import plan_batch

PAPER_EPS = 1e-300
#: LabelInf enumerates K^m labelings; the paper's runs cap at about 10 s per inference.
MAX_LABELINGS = 1 << 16


class UniformNoiseOracle:
    """The exact float64 score of ``metric`` plus noise uniform in ``[-tau, tau]``, every digit released."""

    def __init__(self, labels: np.ndarray, *, metric: str, n_classes: int, tau: float, seed: int,
                 eps: float = PAPER_EPS) -> None:
        self.inner = LocalOracle(labels, metric=metric, n_classes=n_classes, decimals=None, eps=eps)
        self.tau = tau
        self.rng = np.random.default_rng(seed)
        self.n_rows, self.n_classes, self.metric = self.inner.n_rows, n_classes, metric
        self.eps, self.arithmetic = self.inner.eps, "float64"
        self.decimals: int | None = None
        self.queries = 0

    def submit(self, predictions: Any) -> float:
        self.queries += 1
        raw = self.inner.submit(predictions)
        assert raw is not None
        return float(raw) + float(self.rng.uniform(-self.tau, self.tau))


def trials(n: int, k: int, count: int, seed: int, pool: np.ndarray | None = None) -> list[np.ndarray]:
    """``count`` random labelings (drawn from ``pool``'s labels when given: the data set's), then adversarial."""
    rng = np.random.default_rng(seed)
    draws = [rng.choice(pool, n) if pool is not None else rng.integers(0, k, n) for _ in range(count)]
    one = np.zeros(n, dtype=np.int64)
    one[n // 2] = k - 1
    return [*draws, np.zeros(n, dtype=np.int64), np.full(n, k - 1, dtype=np.int64), np.arange(n) % 2, one]


# --- the paper's constructions in float64 + LabelInf ------------------------------------------------------------


def paper_log_weights(size: int, n_rows: int, k: int, tau: float, construction: str) -> np.ndarray:
    """``ln ϑ`` of the batch's rows (m × K): Theorem 3's ``2^((n−1)K+k)·N·τ·ln 3`` (class k = 1..K ↦ column
    k − 1), or Theorem 10's binary ``(0, 2^i·N·τ·ln 3)``."""
    if construction == "thm10":
        return np.column_stack([np.zeros(size), np.exp2(np.arange(1, size + 1)) * n_rows * tau * math.log(3)])
    exponents = np.arange(size)[:, None] * k + np.arange(1, k + 1)[None, :]
    return np.exp2(exponents) * n_rows * tau * math.log(3)


def _log_probabilities(log_weights: np.ndarray, logits: bool) -> np.ndarray:
    """The clipped ``ln θ`` the server uses: probabilities ``θ = exp(ln ϑ − logsumexp)`` as float64 numbers
    (what a probability board is sent), or for logits the metric's own log-softmax."""
    top = log_weights.max(axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        log_sum = top + np.log(np.exp(log_weights - top).sum(axis=1, keepdims=True))
        if logits:
            return np.clip(log_weights - log_sum, math.log(PAPER_EPS), math.log1p(-PAPER_EPS))
        theta = np.exp(log_weights - log_sum)
    return np.log(np.clip(theta / theta.sum(axis=1, keepdims=True), PAPER_EPS, 1 - PAPER_EPS))


def paper_recovers(labels: np.ndarray, k: int, batch: int, tau: float, construction: str, *, logits: bool,
                   seed: int, batches: int | None = None) -> bool:
    """The paper's batches of ``batch`` rows (the rest at 1/K), each decoded by LabelInf in float64."""
    n = len(labels)
    if k**batch > MAX_LABELINGS:
        return False
    rng = np.random.default_rng(seed)
    table = _log_probabilities(paper_log_weights(batch, n, k, tau, construction), logits)
    if not np.all(np.isfinite(table)):
        return False
    codes = np.array(list(itertools.product(range(k), repeat=batch)), dtype=np.int64)
    stop = n if batches is None else min(n, batches * batch)
    for start in range(0, stop, batch):
        rows = np.arange(start, min(start + batch, n))
        m = len(rows)
        rest = (n - m) * math.log(k)
        truth = -table[np.arange(m), labels[rows]].sum() + rest
        released = truth / n + rng.uniform(-tau, tau)
        candidates = codes[: k**m, batch - m:] if m < batch else codes
        scores = (-table[np.arange(m)[None, :], candidates].sum(axis=1) + rest) / n
        found = candidates[int(np.argmin(np.abs(scores - released)))]
        if found.tolist() != labels[rows].tolist():
            return False
    return True


def paper_single(k: int, tau: float, construction: str, *, logits: bool, count: int, pool: np.ndarray | None) -> int:
    best = 0
    for n in range(1, 40):
        if k**n > MAX_LABELINGS or not all(
                paper_recovers(y, k, n, tau, construction, logits=logits, seed=i)
                for i, y in enumerate(trials(n, k, count, seed=n, pool=pool))):
            break
        best = n
    return best


def paper_multi(labels: np.ndarray, k: int, tau: float, construction: str, *, logits: bool, count: int,
                pool: np.ndarray | None) -> str:
    """Queries for every label with the largest batch whose first 10 batches decode on every trial."""
    n = len(labels)
    best = 0
    for m in range(1, 40):
        if k**m > MAX_LABELINGS or not all(
                paper_recovers(y, k, m, tau, construction, logits=logits, seed=i, batches=10)
                for i, y in enumerate(trials(n, k, count, seed=m, pool=pool))):
            break
        best = m
    if best and paper_recovers(labels, k, best, tau, construction, logits=logits, seed=7):
        return str(math.ceil(n / best))
    return "fails"


# --- ours ---------------------------------------------------------------------------------------------------------


def _certified(n: int, k: int, tau: float, construction: str, logits: str | None, eps: float) -> bool:
    model = ServerModel(n_rows=n, n_classes=k, eps=eps, decimals=None, noise_bound=tau)
    if logits is not None:
        return plan_logits(model, logits, n, construction) is not None
    return plan_batch(model, CROSS_ENTROPY, n, construction) is not None


def ours_single(attack: str, metric: str, k: int, tau: float, construction: str, logits: str | None, count: int,
                pool: np.ndarray | None, eps: float = PAPER_EPS, **params: Any) -> int:
    """The largest N the server model certifies for one query, checked by running the attack on the trials."""
    best = 0
    for n in range(1, 63):
        if not _certified(n, k, tau, construction, logits, eps):
            break
        best = n
    if best == 0:
        return 0
    for i, labels in enumerate(trials(best, k, count, seed=best, pool=pool)):
        oracle = UniformNoiseOracle(labels, metric=metric, n_classes=k, tau=tau, seed=i, eps=eps)
        result = run(attack, oracle, tau=tau, verify=False, **params)
        if result.queries != 1 or result.labels.tolist() != labels.tolist():
            raise AssertionError(f"{attack}, τ = {tau}: N = {best} was certified but not recovered in one query")
    return best


def ours_queries(attack: str, metric: str, labels: np.ndarray, k: int, tau: float, eps: float = PAPER_EPS,
                 **params: Any) -> str:
    oracle = UniformNoiseOracle(labels, metric=metric, n_classes=k, tau=tau, seed=7, eps=eps)
    try:
        result = run(attack, oracle, tau=tau, verify=False, **params)
    except AttackFailed as error:
        return "refused" if "not separable" in str(error) else "failed"
    if result.labels.tolist() != labels.tolist():
        raise AssertionError(f"{attack}, τ = {tau}: the multi-query attack returned wrong labels")
    return str(result.queries)
