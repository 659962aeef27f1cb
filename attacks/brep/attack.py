"""``brep``: BREP-MI (paper 002, Algorithm 1) adapted to a leaderboard's prediction vectors.

The paper climbs a GAN's latent space towards the centre of a target class using only the classifier's
predicted labels. Here the "latent" is the submission itself in logit space — ``z ∈ R^n`` (binary: the
prediction is ``σ(z)``) or ``R^{n×K}`` (softmax rows) — the "target class" is the board's accepted label
(:class:`attacks.hard_label.Acceptance`: a threshold board's badge, a Ladder's accept, rank 1, or a score
beating chance), and the output is the labelling implied by the final vector (``z > 0``; ``argmax``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.brep.estimator import GAMMA, MAX_STEP, N_SAMPLES, R0, estimate, sphere_directions, step_size
from attacks.catalogue import BoardFacts, Stage
from attacks.hard_label import Acceptance
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult, SubmissionRefused
from defenses.feedback import HARD_LABEL_KINDS

#: Paper 002, Section 5.1: halt after this many iterations at one radius without a fully accepted sphere.
MAX_ITERS = 1000
#: The queries spent when no budget is given: the attack has no end of its own before ``max_iters``.
DEFAULT_BUDGET = 1000


def predictions_of(z: np.ndarray) -> np.ndarray:
    """The submission for logit vector ``z``: ``σ(z)`` (binary, shape ``(n,)``) or row-wise softmax ``(n, K)``.

    >>> predictions_of(np.array([0.0, np.log(3.0)])).tolist()
    [0.5, 0.75]
    """
    if z.ndim == 1:
        return 0.5 * (1.0 + np.tanh(0.5 * z))  # σ(z) without overflow at large |z|
    shifted = np.exp(z - z.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def labels_of(z: np.ndarray) -> np.ndarray:
    """The labels a logit vector implies (binary ``z > 0``; else the largest logit of each row).

    >>> labels_of(np.array([-0.2, 0.3])).tolist(), labels_of(np.array([[0.1, 0.9, 0.0]])).tolist()
    ([0, 1], [1])
    """
    return (z > 0).astype(np.int64) if z.ndim == 1 else np.argmax(z, axis=1).astype(np.int64)


class _Budgeted:
    """The oracle behind a query budget, answering each submission with its hard label."""

    def __init__(self, oracle: Oracle, rule: Acceptance, budget: int) -> None:
        self.oracle, self.rule, self.left, self.accepted = oracle, rule, budget, 0

    def __call__(self, z: np.ndarray) -> bool:
        self.left -= 1
        try:
            released = self.oracle.submit(predictions_of(z))
        except SubmissionRefused:
            released = None
        verdict = self.rule.accepts(released)
        self.accepted += verdict
        return verdict


def _hard_label_board(facts: BoardFacts) -> bool:
    return facts.feedback in HARD_LABEL_KINDS


@register("brep", exact=False, truncatable=True, spends_budget=True, stage=Stage.LIKELIHOOD, applies=_hard_label_board,
          paper="paper 002 §4.2, Algorithm 1 with Eq. 8–9 (boundary repulsion); §5.1's defaults",
          board="boards that release only a hard label (accept/reject, rank, badge)",
          queries="the budget: a few sphere points a step",
          precision="hard labels only (accept/reject, badge, rank); a score board is read through a bar t")
def brep(
    oracle: Oracle,
    *,
    budget: int | None = None,
    n_samples: int = N_SAMPLES,
    r0: float = R0,
    gamma: float = GAMMA,
    max_step: float = MAX_STEP,
    scale: float | None = None,
    max_iters: int = MAX_ITERS,
    seed: int = 0,
    level: int = 1,
    t: float | None = None,
    improvement: bool = False,
) -> AttackResult:
    """Boundary repulsion from hard labels (Kahla et al., CVPR 2022, Algorithm 1 with Eq. 8–9).

    1. Draw random logit vectors of norm ``scale`` (default ``r0``: the first sphere is as large as the
       vector) until the board accepts one — the paper samples its GAN until the target class comes out.
    2. Repeat: sample ``n_samples`` points on the sphere of radius ``R`` around ``z`` and query their labels.
       If all are accepted, grow ``R ← γ·R`` and remember ``z* ← z``; otherwise step ``z_new = z + α·ĝ``
       (``ĝ``: Eq. 8, away from the rejected directions; ``α = min(R/3, max_step)``) and query it; keep it
       only if it is accepted (a step out of the accepted region is reverted).
    3. Stop when the ``budget`` is spent (the last sphere may be partial) or after ``max_iters`` iterations at
       one radius; output the labels of the final ``z`` (always an accepted point).

    On a board where an acceptance moves the bar (a Ladder's accept/reject, a rank board; ``Acceptance.
    stateful``) the accepted region follows the queries: an accepted sphere point is the board's new best, so
    ``z`` moves to it (the old ``z`` is no longer accepted) and the step query is skipped for that round.
    ``level``: on a medal board, how many cut-offs count as accepted; ``t``/``improvement``: the bar on a board
    that releases scores (default: beat chance).

    Defaults from paper 002, Section 5.1: ``R0 = 2``, ``γ = 1.3``, ``α = min(R/3, 3)``, ``N = 32``,
    ``maxIters = 1000``. Queries: at most ``budget`` (``None``: :data:`DEFAULT_BUDGET`; 0: :class:`AttackFailed`).
    Time: O(budget · n·K). Precision: one hard label per
    query. Claims every row (a guess; confidence 0.5: the labels come with no posterior).

    Paper 002 (Kahla et al., CVPR 2022, BREP-MI), Section 4.2 (Algorithm 1, Eq. 8–9), defaults Section 5.1.
    On a 20-row badge board (accuracy above 0.5 earns the badge) its output is an accepted point:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> hidden = np.random.default_rng(21).integers(0, 2, 20)
    >>> oracle = LocalOracle(hidden, metric="accuracy", defenses=[{"name": "threshold", "t": 0.5}], seed=1)
    >>> result = run("brep", oracle, budget=60, seed=1, n_samples=8)
    >>> result.queries, result.details["feedback"], oracle.submit(result.labels.astype(float))
    (60, 'threshold', 1.0)
    """
    budget = DEFAULT_BUDGET if budget is None else int(budget)
    if budget < 0 or n_samples < 1:
        raise ValueError(f"budget must be at least 0 and n_samples at least 1, got {budget} and {n_samples}")
    if budget == 0:
        raise AttackFailed("brep needs at least one query to find an accepted vector; the budget is 0")
    if not (r0 > 0 and gamma > 1 and max_step > 0):
        raise ValueError(f"need r0 > 0, gamma > 1 and max_step > 0, got {r0}, {gamma}, {max_step}")
    rule = Acceptance.of(oracle, t=t, improvement=improvement, level=level)
    ask = _Budgeted(oracle, rule, budget)
    rng = np.random.default_rng(seed)
    shape = (oracle.n_rows,) if oracle.n_classes == 2 else (oracle.n_rows, oracle.n_classes)
    norm = r0 if scale is None else scale
    z: np.ndarray | None = None
    start_queries = 0
    while ask.left > 0:
        candidate = norm * sphere_directions(rng, 1, int(np.prod(shape)))[0].reshape(shape)
        start_queries += 1
        if ask(candidate):
            z = candidate
            break
    if z is None:
        raise AttackFailed(f"none of {budget} random vectors was accepted by the board ({rule.kind})")
    radius, iters = r0, 0
    growths = steps = reverted = moves = 0
    z_star = z
    while ask.left > 0 and iters < max_iters:
        count = min(n_samples, ask.left)
        direction, directions, flags = estimate(z, radius, ask, rng, count)
        if flags.all():
            if rule.stateful:  # each point beat the one before: the last is the board's best
                z = z + radius * directions[-1]
            radius *= gamma
            z_star = z
            growths += 1
            iters = 0
            continue
        iters += 1
        if rule.stateful and flags.any():
            # The last accepted point is the board's best now; the old centre would be rejected.
            z = z + radius * directions[np.flatnonzero(flags)[-1]]
            moves += 1
            continue
        if ask.left == 0:
            break
        candidate = z + step_size(radius, max_step) * direction
        steps += 1
        if ask(candidate):
            z = candidate
        else:
            reverted += 1
    details: dict[str, Any] = {
        "feedback": rule.kind, "radius": radius, "growths": growths, "steps": steps, "reverted": reverted,
        "moves_to_accepted": moves, "start_queries": start_queries, "accepted": ask.accepted,
        "n_samples": n_samples, "r0": r0, "gamma": gamma, "unchanged_since_growth": bool(z is z_star),
    }
    labels = labels_of(z)
    return AttackResult("brep", labels, details=details, confidence=np.full(len(labels), 0.5))
