"""``logits_split``: a logit board (``softmax_ce``, ``sigmoid_ce``) with a public/private split, played as the log-loss
board of the same rows so that the split-aware ``capacity_split`` reads its public mask and labels.

A log-loss attack asks for probabilities; :class:`LogitBoard` sends their logits instead — ``ln q`` per class for
softmax (softmax(ln q) = q when the row sums to one), the log-odds ``ln p − ln(1 − p)`` for sigmoid. The server's
cross-entropy on those logits is then the log loss of the same probabilities, up to float rounding of the
log-sum-exp (a few ulps of each row's loss) and its clipping, which acts on log-probabilities rather than on
probabilities; the attack's probabilities stay inside ``[eps, 1 − eps]``, where the two clippings agree. The
rounding is carried as a small noise bound, and every claim is checked on the logit board itself (``attacks.run``
confirms an exact attack's labels with the board's own metric), so a mismatch fails loudly rather than mislabels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.capacity import capacity_split_attack
from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.oracle import Oracle, ReducedOracle, Released
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

LOGIT_BOARDS = ("softmax_ce", "sigmoid_ce")
#: Per-row float error of the server's log-sum-exp against the log loss of the same probabilities, in units of
#: the row's loss (a few ulps); as a bound on the released mean it is this times the largest row loss.
ROW_ROUNDING = 1e-14


class LogitBoard(ReducedOracle):
    """A logit oracle seen as the log-loss oracle of the same rows (public facts passed through)."""

    def __init__(self, inner: Oracle) -> None:
        if inner.metric.split(":")[0] not in LOGIT_BOARDS:
            raise AttackFailed(f"logits_split plays softmax_ce and sigmoid_ce boards, not {inner.metric}")
        super().__init__(inner)
        self.n_classes = inner.n_classes
        self.metric = "binary_logloss" if inner.n_classes == 2 else "multiclass_logloss"
        self.eps = inner.eps
        facts = BoardFacts.of(inner)
        self.public_fraction = facts.public_fraction
        n_public = facts.n_public
        if n_public is not None:
            self.n_public = n_public

    def logits(self, predictions: Any) -> np.ndarray:
        """The logits whose cross-entropy is the log loss of ``predictions`` (clipped to ``[eps, 1 − eps]``)."""
        q = np.clip(np.asarray(predictions, dtype=np.float64), self.eps, 1.0 - self.eps)
        if self.n_classes == 2:
            return np.log(q) - np.log1p(-q)
        return np.log(q / q.sum(axis=1, keepdims=True))

    def submit(self, predictions: Any) -> Released:
        return self.inner.submit(self.logits(predictions))


def logits_split_fits(facts: BoardFacts) -> Plan | Refusal:
    """softmax or sigmoid cross-entropy on logits with only a public split scored, float64: rank 90."""
    if not facts.open_release or facts.family not in ("softmax_ce", "sigmoid_ce") or not facts.split:
        return Refusal("logits_split", "a loss on logits scoring a public split, every score released, only")
    if not facts.float64:
        return Refusal("logits_split", f"{facts.arithmetic} arithmetic: float64 only")
    hidden: dict[str, bool] = {"hidden_split": True} if facts.public_fraction is None else {}
    if facts.seen is not None and facts.seen.subsetting:
        hidden["stated_count"] = False  # a fresh subset scored: the page's public count is not the scored one
    noted = f" with noise bound {facts.noise_bound:.3g}" if facts.noise else ""
    return Plan("logits_split", {"noise_bound": facts.noise_bound, **hidden}, f"{facts.metric} on logits, only the "
                "public split scored: split-aware capacity through the logits (ln q / log-odds of the log-loss "
                f"design){noted}", rank=90)


@register("logits_split", fits=logits_split_fits,
          paper="ours (capacity_split through the inverse activation, paper 001 §4)",
          board="softmax or sigmoid cross-entropy on logits, float64, only a public split scored",
          queries="capacity_split's",
          precision="any released decimals; float64 log-sum-exp rounding added to noise_bound")
def logits_split(
    oracle: Oracle, *, noise_bound: float = 0.0, budget: int | None = None, **params: Any
) -> AttackResult:
    """Public labels and mask of a ``softmax_ce``/``sigmoid_ce`` board with a public split (module docstring):
    ``capacity_split`` through :class:`LogitBoard`, with ``noise_bound`` plus the log-sum-exp's rounding. ``budget``
    and the params as ``capacity_split``'s (``n_public``, ``hidden_split``, ``top``).

    Paper: ours — ``capacity_split`` with the probabilities sent as logits, inverting the activation as paper
    001 §4 (softmax, eq. 5) and App. D.1 (sigmoid) do. Queries: ``capacity_split``'s. Precision: any released
    decimals; float64, the log-sum-exp's rounding counted in the window.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(3).integers(0, 3, 20)
    >>> oracle = LocalOracle(labels, metric="softmax_ce", n_classes=3, decimals=5, public_fraction=0.5)
    >>> public = oracle.spec.split_rows["public"]  # the host's secret, for the check
    >>> result = run("logits_split", oracle)
    >>> expected = np.full(20, -1)
    >>> expected[public] = labels[public]
    >>> result.labels.tolist() == expected.tolist(), result.details["through"]
    (True, 'logits')
    """
    board = LogitBoard(oracle)
    rounding = ROW_ROUNDING * -np.log(board.eps)
    params.setdefault("check", False)
    result = capacity_split_attack(board, noise_bound=noise_bound + rounding, budget=budget, **params)
    result.details["through"] = "logits"
    return result
