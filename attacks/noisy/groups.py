"""Binary-weighted groups: the ``noisy`` attack's design when one row's weight towers over the noise.

With ``c = A/N`` far above the noise's std ``σ`` (small boards, a 1e-3 scale; rounding only; multiplicative noise
once the score is small), a random-sign design wastes the release: its score is a signed count of rows, whose
resolution ``c`` is hundreds of ``σ``. Here a query weighs ``g`` rows with ``c, c/2, …, c/2^(g−1)`` (logits
``±A·2^−j``), every other row at 0.5 (no weight) or, once settled, at the edge on its label's side (no loss if
right, which keeps a multiplicative noise small; under additive noise they stay at 0.5, clear of the site's clamp
at 0): the ``2^g`` labelings of the group release ``2^g`` scores
spaced ``c/2^(g−1)`` apart, so one query names ``g`` labels (the binary-search / coin-weighing design of the
exact attacks, with the spacing sized to the noise: ``g = 1 + ⌊log2(c/(K·σ))⌋``). Decoding is the exact posterior
over the group's ``2^g`` labelings under the fitted noise model, every query of the group multiplied in; a group
is queried again (levels shuffled) until each of its labels' posterior clears the target.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from attacks.noisy.decoder import NoiseModel
from attacks.oracle import Oracle

#: The lowest weight spacing, in noise stds, a group's design allows (measured best of 4, 6, 8, 10 on the
#: benchmark boards; a bounded rounding error wants 10).
SPACING = 6.0
ROUNDING_SPACING = 10.0
#: Most rows in one group (2^g labelings are enumerated).
MAX_GROUP = 12
#: Most queries one group gets before it settles with the posterior it has.
MAX_REPEATS = 6


def group_size(unit: float, std: float, spacing: float | None = None) -> int:
    """Rows per query so the smallest weight is ``spacing`` stds: ``1 + ⌊log2(c/(spacing·σ))⌋`` (1..MAX_GROUP)."""
    spacing = SPACING if spacing is None else spacing
    if std <= 0:
        return MAX_GROUP
    return int(min(MAX_GROUP, max(1, 1 + math.floor(math.log2(max(unit / (spacing * std), 1e-300))))))


class GroupDecoder:
    """Queries groups of rows with binary weights and settles them one group at a time (see the module).

    The probes' noise scale comes from a handful of submissions; every group query's residual (under its
    group's best labeling) refines it, pooled with the probes as ``probes`` observations of variance 1, and
    :meth:`recheck` recomputes every group's posterior with the final scale, so a scale the probes
    underestimated cannot leave overconfident labels behind."""

    def __init__(
        self, oracle: Oracle, p_lo: float, balance: float, noise_for: Callable[[float], NoiseModel],
        threshold: float, probes: int, *, settled_at_edge: bool = True,
    ) -> None:
        self.oracle = oracle
        self.n = oracle.n_rows
        self.p_lo = p_lo
        self.a = math.log((1 - p_lo) / p_lo)
        self.balance = balance
        self.majority = int(balance >= 0.5)
        self.noise_for = noise_for  # release level -> NoiseModel (the probes' scale)
        self.threshold = threshold
        self.probes = probes
        self.settled_at_edge = settled_at_edge
        self.labels = np.full(self.n, self.majority, dtype=np.int64)
        self.confidence = np.full(self.n, max(balance, 1 - balance))
        self.settled = np.zeros(self.n, dtype=bool)
        self.queries = 0
        #: Per group: its rows and its queries' (weights, observation, release).
        self.groups: list[tuple[np.ndarray, list[tuple[np.ndarray, float, float]]]] = []
        self._square_sum = 0.0
        self._count = 0

    @property
    def factor(self) -> float:
        """The noise scale over the probes' one, from the residuals so far (never below 1)."""
        var = (self.probes + self._square_sum) / (self.probes + self._count)
        return math.sqrt(max(var, 1.0))

    @property
    def fit(self) -> float:
        """Mean square of the group residuals in probe-scale noise stds (1 when the labels and scale are right)."""
        return self._square_sum / self._count if self._count else math.nan

    def _noise(self, release: float, factor: float) -> NoiseModel:
        base = self.noise_for(release)
        return NoiseModel(base.kind, np.asarray(base.scale) * factor)

    def _base(self) -> np.ndarray:
        """Settled rows on their label's side (``settled_at_edge``), the rest at 0.5. Under additive noise every
        other row stays at 0.5: the site clamps a released log loss at 0, so a score near 0 would come back
        censored (and a wrongly settled label would bias every later query)."""
        p = np.full(self.n, 0.5)
        if self.settled_at_edge:
            s = self.settled
            p[s] = np.where(self.labels[s] == 1, 1.0 - self.p_lo, self.p_lo)
        return p

    def _posterior(
        self, rows: np.ndarray, queries: list[tuple[np.ndarray, float, float]], factor: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The group's best labeling and each label's posterior, from all its queries."""
        g = len(rows)
        combos = np.array(list(itertools.product((0, 1), repeat=g)), dtype=np.float64)
        ones = combos.sum(axis=1)
        logpost = ones * math.log(self.balance) + (g - ones) * math.log(1 - self.balance)
        for w, r, release in queries:
            logpost = logpost + self._noise(release, factor).loglik(r - combos @ w)
        post = np.exp(logpost - logpost.max())
        post /= post.sum()
        marginal = post @ combos
        best = combos[int(np.argmax(post))].astype(np.int64)
        return best, np.where(best == 1, marginal, 1 - marginal)

    def run_group(self, rows: np.ndarray, rng: np.random.Generator, budget: int) -> bool:
        """Query ``rows`` until their labels are sure (or ``MAX_REPEATS``/``budget`` runs out). True when sure."""
        queries: list[tuple[np.ndarray, float, float]] = []
        self.groups.append((rows, queries))
        return self._query(rows, queries, rng, budget)

    def _query(
        self, rows: np.ndarray, queries: list[tuple[np.ndarray, float, float]], rng: np.random.Generator,
        budget: int,
    ) -> bool:
        g = len(rows)
        sure = False
        for _ in range(MAX_REPEATS):
            if budget <= 0:
                break
            p = self._base()
            z = self.a * 2.0 ** -rng.permutation(g).astype(np.float64)
            # The side that costs nothing for the likelier label keeps the score (and a multiplicative noise) low.
            p_rows = 1.0 / (1.0 + np.exp(z)) if self.majority == 0 else 1.0 / (1.0 + np.exp(-z))
            p[rows] = np.clip(p_rows, self.p_lo, 1 - self.p_lo)
            released = self.oracle.submit(p)
            budget -= 1
            self.queries += 1
            if released is None:
                continue
            loss1, loss0 = -np.log(p), -np.log1p(-p)
            w = (loss1[rows] - loss0[rows]) / self.n
            others = np.ones(self.n, dtype=bool)
            others[rows] = False
            known = float(np.where(self.labels[others] == 1, loss1[others], loss0[others]).sum()) / self.n
            r = float(released) - known - float(loss0[rows].sum()) / self.n
            queries.append((w, r, float(released)))
            best, conf = self._posterior(rows, queries, self.factor)
            std = float(np.asarray(self._noise(float(released), 1.0).std()).ravel()[0])
            self._square_sum += ((r - float(best @ w)) / std) ** 2
            self._count += 1
            self.labels[rows] = best
            self.confidence[rows] = conf
            if conf.min() >= self.threshold:
                sure = True
                break
        self.settled[rows] = True
        return sure

    def recheck(self, rng: np.random.Generator, budget: int) -> int:
        """Every group's posterior again with the final noise scale; groups no longer sure are queried again
        (within ``budget``). Returns the queries spent."""
        spent = 0
        for rows, queries in self.groups:
            best, conf = self._posterior(rows, queries, self.factor)
            self.labels[rows] = best
            self.confidence[rows] = conf
            if conf.min() < self.threshold and spent < budget:
                before = self.queries
                self._query(rows, queries, rng, budget - spent)
                spent += self.queries - before
        return spent
