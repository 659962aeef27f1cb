"""``one_vs_rest``: a K-class log-loss board played as K − 1 binary ones, so that a binary attack the multiclass
side lacks — chiefly ``noisy``, the likelihood decoder for noise beyond what an exact design tolerates — reads
multiclass labels too.

The reduction is exact. A binary vector ``p`` asks "is the label ``c``?": row ``i`` is sent as

    q_ic = p_i / z_i,   q_ik = (1 − p_i) / z_i for every k ≠ c,   z_i = p_i + (K − 1)(1 − p_i)

(the class ``c`` in proportion to ``p_i``, EVERY other class in proportion to ``1 − p_i``, so the rows sum to
one). Its multiclass loss is then ``−ln p_i + ln z_i`` when ``y_i = c`` and ``−ln(1 − p_i) + ln z_i`` otherwise —
the binary log loss of ``p_i`` plus an offset that depends on ``p_i`` alone, never on the label. (Sharing
``1 − p_i`` among the other classes instead would add ``ln(K − 1)`` to the rows that are not ``c`` only: an offset
that depends on the unknown class count.) The adapter (:class:`OneVsRestOracle`) subtracts the mean offset from
each release, so the binary attack sees exactly the binary board "label = c", with the multiclass board's noise,
rounding (now off its grid, which ``noisy`` models as noise anyway) and clipping. To keep every ``q`` inside the
server's clipping interval the adapter announces ``eps·K`` as its own ``eps``: the binary attack's edge probes
then land where the server does not clip.

Each class but the last is asked once (``K − 1`` runs of the binary attack, each with its share of the budget);
a row's class is the one with the highest posterior, the last class taking what the others leave. Labels are
posteriors, not vouched for: the attack is registered ``exact=False``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attacks.oracle import Oracle, ReducedOracle, Released
from attacks.registry import register, run
from attacks.result import AttackFailed, AttackResult

#: The binary attacks the adapter can carry: they read the board only through ``submit`` and its public facts.
CARRIED = ("noisy",)


class OneVsRestOracle(ReducedOracle):
    """A K-class log-loss oracle seen as the binary log-loss board "is the label ``positive``?"."""

    metric = "binary_logloss"
    n_classes = 2

    def __init__(self, inner: Oracle, positive: int) -> None:
        if inner.metric != "multiclass_logloss" or inner.n_classes < 3:
            raise AttackFailed(f"one_vs_rest: needs multiclass log loss with K >= 3, not {inner.metric} with "
                               f"{inner.n_classes} classes")
        if not 0 <= positive < inner.n_classes:
            raise ValueError(f"class {positive} does not exist on a {inner.n_classes}-class board")
        super().__init__(inner)
        self.positive = positive
        self.k = inner.n_classes
        # z <= K − 1, so q_ic >= p_i / K and q_ik >= (1 − p_i) / K: p in [eps·K, 1 − eps·K] is never clipped.
        self.eps = min(0.25, inner.eps * self.k)

    def rows(self, predictions: Any) -> tuple[np.ndarray, float]:
        """The K-class file for binary ``predictions`` and the mean offset its loss carries."""
        p = np.clip(np.asarray(predictions, dtype=np.float64), self.eps, 1.0 - self.eps)
        z = p + (self.k - 1) * (1.0 - p)
        matrix = np.repeat(((1.0 - p) / z)[:, None], self.k, axis=1)
        matrix[:, self.positive] = p / z  # rows sum to one up to an ulp: the server's renormalisation is a no-op
        offset = float(np.mean(np.log(z)))  # −ln q_ic = −ln p + ln z; −ln q_ik = −ln(1 − p) + ln z
        return matrix, offset

    def submit(self, predictions: Any) -> Released:
        matrix, offset = self.rows(predictions)
        released = self.inner.submit(matrix)
        return None if released is None else float(released) - offset


@register("one_vs_rest", exact=False)
def one_vs_rest(
    oracle: Oracle, *, attack: str = "noisy", budget: int | None = None, seed: int = 0, **params: Any
) -> AttackResult:
    """Recover K-class labels with a binary ``attack`` asked "is it class c?" for c = 0 … K − 2 (module
    docstring). ``budget`` caps every submission, split evenly between the runs; ``params`` go to ``attack``."""
    if attack not in CARRIED:
        raise ValueError(f"one_vs_rest carries {', '.join(CARRIED)}, not {attack!r}")
    k, n = oracle.n_classes, oracle.n_rows
    start = oracle.queries
    posterior = np.zeros((n, k))
    runs: list[dict[str, Any]] = []
    for c in range(k - 1):
        share = None if budget is None else (budget - (oracle.queries - start)) // (k - 1 - c)
        if share is not None and share < 4:
            raise AttackFailed(f"one_vs_rest: {budget} queries cannot hold {k - 1} binary runs")
        asked = OneVsRestOracle(oracle, c)
        before = oracle.queries
        result = run(attack, asked, budget=share, seed=seed + c, **params)
        yes = result.fill_confidence()
        posterior[:, c] = np.where(result.labels == 1, yes, 1.0 - yes)
        runs.append({"class": c, "queries": oracle.queries - before,
                     "complete": bool(result.details.get("complete", False))})
    # The last class takes what the others leave; a row's posteriors are renormalised (each run is calibrated
    # on its own question, so they need not sum to one).
    posterior[:, k - 1] = np.clip(1.0 - posterior[:, : k - 1].sum(axis=1), 0.0, 1.0)
    total = posterior.sum(axis=1, keepdims=True)
    posterior = np.where(total > 0, posterior / np.where(total > 0, total, 1.0), 1.0 / k)
    labels = posterior.argmax(axis=1).astype(np.int64)
    confidence = np.minimum(posterior.max(axis=1), 1.0 - 1e-9)
    return AttackResult(
        labels=labels,
        queries=oracle.queries - start,
        attack="one_vs_rest",
        details={"attack": attack, "runs": runs, "confidence": confidence,
                 "complete": all(r["complete"] for r in runs),
                 "mean_posterior": float(np.mean(confidence)) if n else math.nan},
    )
