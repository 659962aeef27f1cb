"""``blocks``: binary-weighted blocks of rows, each read until its labels are sure, under noise **and** labels
redrawn per submission (a fresh randomized response) — the likelihood decoder for a board where every
submission's release is fresh: behind fresh accounts on a Ladder, or a plain noisy board.

A query keeps every row at 0.5 (its loss is ``ln 2`` whatever its label, flipped or not) except a block of ``g``
rows at logits ``−c·2^j`` (``j = 0 … g−1``, shuffled): with ``w_j`` the row's loss difference between its labels,
``N·score − (N−g)·ln 2 − Σ loss0 = Σ_j w_j·y'_j + N·noise``, where ``y'`` are the labels the scorer used (the true
ones, each flipped with probability ``p`` afresh per submission). The ``2^g`` labelings of the block release
values ``c`` apart, so one release names ``g`` labels when ``c`` is well above the noise.

Each read is decoded on its own — the exact likelihood of the release under every labeling of its block (the
other rows of the block marginalised under the prior), turned into a likelihood ratio for each row's *true* label
through the flip probability — and a row's posterior is the product of its reads' ratios with the class prior.
Reads are independent given the labels (fresh noise, fresh flips), so the posteriors are calibrated when the three
nuisance parameters are right, and all three are measured from the reads themselves, every read re-decoded with
the final values:

* the noise: every release's distance from its best labeling's value (mean absolute residual: a Laplace scale;
  the root mean square: a Gaussian one; the likelier of the two models, never below the released rounding);
* the flip probability: how often two confident reads of the same row disagree (``d = 2p(1−p)``);
* the class prior: the share of 1s read, corrected for the flips.

The block size is chosen, as the estimates come in, to minimise the expected reads a label (``g`` against the
misread rate ``c`` leaves and the reads the flip rate makes necessary): on the README's ``combined`` chain (fresh
randomized response 2 %, Laplace 1e-4, 5 decimals) at 2,201 rows that is 5 rows a read and two reads a row, a
third where they disagree. Reads go to the least sure rows first, until the expected wrong labels fall below
:data:`TARGET_WRONG` or the budget ends; every label is a posterior (never "exact": neither the noise nor a flip
is bounded). It only calls ``oracle.submit`` and reads ``n_rows``, ``eps``, ``decimals`` and ``metric``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

#: Stop once the expected number of wrong labels (the sum of ``1 − posterior``) is below this.
TARGET_WRONG = 0.1
#: A row is "sure" for the block-size choice at this posterior (the reads a row needs are counted to it).
SURE = 0.999
#: Most rows in a block (``2^g`` labelings are enumerated per read).
MAX_BLOCK = 10
#: The flip probability assumed before any row was read twice (high enough that rows get a second read).
FLIP_PRIOR = 0.05
#: Rows read twice at the start, so the flip probability is measured before the block size settles.
PILOT_ROWS = 60
#: Re-estimate the noise, flips and prior (and re-decode every read) after this many reads at first.
REFIT_EVERY = 25
#: Probability mass of an outlier component in the noise density (a release no model explains cannot make a
#: posterior certain).
OUTLIER = 1e-6
#: Relative jitter of the weights per query, so no two files are byte-identical (same-file-same-score boards).
JITTER = 1e-9
#: Plan rank: ahead of ``noisy`` (500) where blocks of 4 or more rows fit the noise.
RANK = 499
RANK_BEHIND = 501


@dataclass
class Noise:
    """The noise on ``N·score`` (sum units): ``kind`` ``laplace`` or ``gaussian`` with ``scale`` (β or σ)."""

    kind: str
    scale: float

    def logpdf(self, r: np.ndarray, span: float | np.ndarray) -> np.ndarray:
        if self.kind == "laplace":
            core = -np.abs(r) / self.scale - math.log(2 * self.scale)
        else:
            core = -0.5 * (r / self.scale) ** 2 - math.log(self.scale * math.sqrt(2 * math.pi))
        return np.logaddexp(core + math.log1p(-OUTLIER), np.log(OUTLIER / np.asarray(span, dtype=np.float64)))

    def misread(self, spacing: float) -> float:
        """Probability a release lands nearer a neighbouring labeling ``spacing`` away (either side)."""
        half = spacing / 2
        if self.kind == "laplace":
            return math.exp(-half / self.scale)
        return math.erfc(half / (self.scale * math.sqrt(2)))


@dataclass
class Read:
    rows: np.ndarray
    weights: np.ndarray
    value: float  # Σ_j w_j·y'_j + noise, in sum units


@dataclass
class BlockReader:
    """The reads so far and the estimates they give (see the module docstring)."""

    n: int
    max_weight: float
    rounding: float  # the released unit in sum units (0 at full precision)
    noise: Noise
    prior: float
    flip: float = FLIP_PRIOR
    reads: list[Read] = field(default_factory=list)
    flip_measured: bool = False

    def __post_init__(self) -> None:
        self.llr = np.zeros(self.n)
        self.count = np.zeros(self.n, dtype=np.int64)

    # -- decoding -------------------------------------------------------------------------------------------
    def _decode(self, reads: list[Read]) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
        """Per read, per row: the log-likelihood ratio of its true label being 1 and the posterior that the label
        the scorer used was 1 (flips included in the prior); and each read's residual from its likeliest
        labeling. Reads of one block size are decoded together."""
        llrs: list[np.ndarray] = [np.empty(0)] * len(reads)
        used: list[np.ndarray] = [np.empty(0)] * len(reads)
        residuals = np.zeros(len(reads))
        sizes: dict[int, list[int]] = {}
        for i, read in enumerate(reads):
            sizes.setdefault(len(read.rows), []).append(i)
        for g, index in sizes.items():
            weights = np.array([reads[i].weights for i in index])
            values = np.array([reads[i].value for i in index])
            llr, on_share, residual = self._decode_block(g, weights, values)
            for k, i in enumerate(index):
                llrs[i], used[i], residuals[i] = llr[k], on_share[k], residual[k]
        return llrs, used, residuals

    def _decode_block(
        self, g: int, weights: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_decode` for ``R`` reads of ``g`` rows: ``weights`` is ``R × g``, ``values`` has ``R``."""
        combos = _combos(g)
        q = self.prior * (1 - self.flip) + (1 - self.prior) * self.flip  # P(y' = 1)
        q = min(max(q, 1e-9), 1 - 1e-9)
        levels = weights @ combos.T  # R × 2^g: each labeling's value
        span = (weights.sum(axis=1) + 10 * self.noise.scale)[:, None]
        loglik = self.noise.logpdf(values[:, None] - levels, span)
        ones = combos.sum(axis=1)
        joint = loglik + (ones * math.log(q) + (g - ones) * math.log(1 - q))[None, :]
        best = np.argmax(loglik, axis=1)
        residual = values - levels[np.arange(len(values)), best]
        # P(release | y'_j = 1) and (= 0), the block's other rows under the prior: the joint summed over the
        # labelings with bit j on (off), over y'_j's own prior; in the log domain, scaled by the largest term.
        top = joint.max(axis=1, keepdims=True)
        scaled = np.exp(joint - top)
        on = scaled @ combos
        off = scaled.sum(axis=1, keepdims=True) - on
        tiny = 1e-300
        l1 = np.log(np.maximum(on, tiny)) + top - math.log(q)
        l0 = np.log(np.maximum(off, tiny)) + top - math.log(1 - q)
        used = on / np.maximum(on + off, tiny)
        f = self.flip
        if f > 0:
            # P(release | y_j): the scorer used y_j with probability 1 − p, the other label with p.
            a1 = np.logaddexp(math.log1p(-f) + l1, math.log(f) + l0)
            a0 = np.logaddexp(math.log(f) + l1, math.log1p(-f) + l0)
        else:
            a1, a0 = l1, l0
        return a1 - a0, used, residual

    def _read_llr(self, read: Read) -> tuple[np.ndarray, np.ndarray, float]:
        """:meth:`_decode` of one read."""
        llr, used, residual = self._decode_block(len(read.rows), read.weights[None, :], np.array([read.value]))
        return llr[0], used[0], float(residual[0])

    def decode_all(self) -> None:
        """Every read again with the current estimates."""
        self.llr[:] = 0.0
        llrs, _, _ = self._decode(self.reads)
        for read, llr in zip(self.reads, llrs, strict=True):
            self.llr[read.rows] += llr

    def add(self, read: Read) -> None:
        self.reads.append(read)
        llr, _, _ = self._read_llr(read)
        self.llr[read.rows] += llr
        self.count[read.rows] += 1

    def posterior(self) -> np.ndarray:
        """P(label = 1) of every row."""
        prior = min(max(self.prior, 1e-6), 1 - 1e-6)
        logodds = np.clip(self.llr + math.log(prior / (1 - prior)), -700, 700)
        return 1.0 / (1.0 + np.exp(-logodds))

    def confidence(self) -> np.ndarray:
        post = self.posterior()
        return np.maximum(post, 1 - post)

    # -- estimates ------------------------------------------------------------------------------------------
    def refit(self) -> None:
        """The noise from the residuals, the flip probability from rows read twice, the prior from the reads."""
        _, used_all, residuals = self._decode(self.reads)
        floor = self.rounding / 4 if self.rounding > 0 else 1e-12
        if len(residuals) >= 5:
            beta = max(float(np.mean(np.abs(residuals))), floor)
            sigma = max(float(np.sqrt(np.mean(residuals**2))), self.rounding / math.sqrt(12), 1e-12)
            lap = float(np.sum(-np.abs(residuals) / beta - math.log(2 * beta)))
            gau = float(np.sum(-0.5 * (residuals / sigma) ** 2 - math.log(sigma * math.sqrt(2 * math.pi))))
            self.noise = Noise("laplace", beta) if lap >= gau else Noise("gaussian", sigma)
        # Confident reads of the label the scorer used, per row.
        seen: dict[int, list[int]] = {}
        for read, used in zip(self.reads, used_all, strict=True):
            for row, u in zip(read.rows.tolist(), used.tolist(), strict=True):
                if u > 0.99 or u < 0.01:
                    seen.setdefault(row, []).append(int(u > 0.5))
        pairs = disagree = 0
        ones = total = 0
        for values in seen.values():
            ones += sum(values)
            total += len(values)
            # Only each row's first two reads: a third is asked for because they disagreed, so counting it would
            # measure the selection, not the flips.
            if len(values) >= 2:
                pairs += 1
                disagree += values[0] != values[1]
        if pairs >= 20:
            d = (disagree + 0.5) / (pairs + 1)
            self.flip = 0.5 * (1 - math.sqrt(max(0.0, 1 - 2 * min(d, 0.5))))
            self.flip_measured = True
        if total >= 20:
            share = ones / total
            if self.flip < 0.5:
                share = (share - self.flip) / (1 - 2 * self.flip)
            self.prior = min(max(share, 0.5 / self.n), 1 - 0.5 / self.n)
        self.decode_all()
        # The prior as the mean posterior of the rows read (a few EM steps; rows read more often are no longer
        # over-counted as in the raw share).
        touched = self.count > 0
        if touched.sum() >= 20:
            for _ in range(3):
                share = float(self.posterior()[touched].mean())
                self.prior = min(max(share, 0.5 / self.n), 1 - 0.5 / self.n)
                self.decode_all()

    # -- design ---------------------------------------------------------------------------------------------
    def block_size(self) -> int:
        """The block size with the fewest expected reads a label: ``g`` rows a read, at the spacing
        ``max_weight / 2^(g−1)``, against the reads a row needs to reach :data:`SURE` at the read error that
        spacing (misreads) and the flips leave."""
        best, best_cost = 1, math.inf
        target = math.log(SURE / (1 - SURE))
        for g in range(1, MAX_BLOCK + 1):
            spacing = self.max_weight / 2 ** (g - 1)
            if spacing <= self.rounding:
                break
            err = min(0.49, max(1e-12, self.flip + (1 - self.flip) * self.noise.misread(spacing)))
            per_read = math.log((1 - err) / err)
            margin = max(1, math.ceil(target / per_read))
            cost = margin / (1 - 2 * err) / g
            if cost < best_cost:
                best, best_cost = g, cost
        return best


def _combos(g: int) -> np.ndarray:
    return ((np.arange(2**g)[:, None] >> np.arange(g)[None, :]) & 1).astype(np.float64)


def _logsumexp(a: np.ndarray) -> float:
    m = float(np.max(a))
    return m + math.log(float(np.sum(np.exp(a - m))))


def _initial_noise(facts: BoardFacts, n: int, rounding: float) -> Noise:
    """The noise the fingerprint saw (its spread, in sum units), never below the rounding: a first guess the
    residuals replace."""
    spread = facts.seen_spread * n
    return Noise("laplace", max(spread, rounding / 4, 1e-12))


def blocks_fits(facts: BoardFacts) -> Plan | Refusal:
    """Binary log loss in float64, every row scored and released afresh, noise seen: rank 499 (ahead of
    ``noisy``) where blocks of 4 or more rows clear the noise seen, else 501."""
    if not facts.binary_logloss or facts.split or not facts.float64:
        return Refusal("blocks", "float64 binary log loss scoring every row only")
    if not facts.noise or not facts.fresh_release:
        return Refusal("blocks", "needs noise seen on scores released afresh over the same rows")
    if facts.budget_left is not None and facts.budget_left < 2:
        return Refusal("blocks", f"the budget ({facts.budget_left}) holds no read")
    n = facts.n_rows
    rounding = 0.0 if facts.decimals is None else n * 10.0 ** (-facts.decimals)
    reader = BlockReader(n, _max_weight(facts.eps), rounding, _initial_noise(facts, n, rounding),
                         prior=facts.prior if facts.prior is not None else 0.5)
    g = reader.block_size()
    rank = RANK if g >= 4 else RANK_BEHIND
    return Plan("blocks", {"budget": facts.budget_left, "seed": facts.seed},
                f"releases afresh under noise: blocks of ~{g} rows with binary-spaced weights, each row read until "
                "sure (flips per submission measured from rows read twice)", rank=rank,
                cost=2.1 * n / max(g, 1))


def _max_weight(eps: float) -> float:
    """The largest logit the scorer's clipping leaves (a little inside it, so the clip never bites)."""
    eps = min(max(float(eps), 1e-300), 0.25)
    return math.log((1 - eps) / eps) * (1 - 1e-6)


def _board(facts: BoardFacts) -> bool:
    return facts.binary_logloss and facts.float64 and facts.public_fraction is None


@register("blocks", exact=False, truncatable=True, spends_budget=True, stage=Stage.LIKELIHOOD, fits=blocks_fits,
          applies=_board,
          paper="ours (group testing with repeated reads under noise and fresh label flips)",
          board="float64 binary log loss, every row scored, each release fresh (noise, fresh randomized response; "
          "behind a Ladder through fresh accounts)",
          queries="about 2·N/g reads for g-row blocks (g from the noise: 5 at Laplace 1e-4 on 2,201 rows), more "
          "where reads disagree",
          precision="any additive Laplace/Gaussian noise (measured from the reads), any decimals")
def blocks(oracle: Oracle, *, budget: int | None = None, seed: int = 0) -> AttackResult:
    """Read every row in binary-weighted blocks until the expected wrong labels fall below :data:`TARGET_WRONG`
    or ``budget`` submissions are spent (see the module docstring). Labels are posteriors, never exact.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = (np.random.default_rng(3).random(300) < 0.7).astype(int)
    >>> chain = [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
    ...          {"name": "noise", "kind": "laplace", "scale": 1e-4}]
    >>> result = run("blocks", LocalOracle(labels, decimals=5, defenses=chain, seed=1), budget=400)
    >>> bool((result.labels == labels).mean() > 0.99), result.exact
    (True, 0)
    """
    facts = BoardFacts.of(oracle)
    if facts.metric != "binary_logloss" or facts.n_classes != 2:
        raise AttackFailed("blocks reads binary log loss only")
    n = oracle.n_rows
    limit = budget if budget is not None else 4 * n + PILOT_ROWS
    if limit < 1:
        raise AttackFailed("blocks: no submission in the budget")
    rounding = 0.0 if oracle.decimals is None else n * 10.0 ** (-oracle.decimals)
    reader = BlockReader(n, _max_weight(oracle.eps), rounding, _initial_noise(facts, n, rounding),
                         prior=facts.prior if facts.prior is not None else 0.5)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    pilot = order[: min(PILOT_ROWS, n)]
    spent = 0
    refused = 0
    next_refit = 0
    # The pilot: its rows read once, then again, at a spacing that clears any noise the fingerprint could have
    # missed by a factor of four, so the first residuals and the flip count are clean.
    pilot_noise = Noise(reader.noise.kind, reader.noise.scale * 4)
    while spent < limit:
        if len(reader.reads) >= next_refit:
            reader.refit()
            # Every REFIT_EVERY reads at first, then as the reads grow by a tenth (each refit decodes them all).
            next_refit = len(reader.reads) + max(REFIT_EVERY, len(reader.reads) // 10)
        conf = reader.confidence()
        if float(np.sum(1 - conf)) <= TARGET_WRONG:
            break
        pilot_left = pilot[reader.count[pilot] < 2]
        if len(pilot_left):
            saved = reader.noise
            reader.noise = pilot_noise if not reader.reads or len(reader.reads) < 8 else reader.noise
            g = reader.block_size()
            reader.noise = saved
            low = reader.count[pilot_left].min()
            rows = pilot_left[reader.count[pilot_left] == low][:g]
        else:
            g = reader.block_size()
            # The least sure rows first; ties by how few reads they have, then the random order.
            rank = np.lexsort((np.argsort(order), reader.count, conf))
            rows = rank[:g]
        rows = np.asarray(rows, dtype=np.int64)
        weights = reader.max_weight / 2.0 ** rng.permutation(len(rows)).astype(np.float64)
        weights *= 1 - JITTER * (spent % 997 + 1)
        read = _submit(oracle, rows, weights, n)
        spent += 1
        if read is None:
            refused += 1
            if refused > 3 and refused * 2 > spent:
                break
            continue
        reader.add(read)
    reader.refit()
    post = reader.posterior()
    labels = (post >= 0.5).astype(np.int64)
    confidence = np.minimum(np.maximum(post, 1 - post), 1 - 1e-12)
    details: dict[str, Any] = {
        "reads": len(reader.reads), "refused": refused, "block_size": reader.block_size(),
        "noise": {"kind": reader.noise.kind, "scale_sum": reader.noise.scale, "scale_score": reader.noise.scale / n},
        "flip": reader.flip, "flip_measured": reader.flip_measured, "prior": reader.prior,
        "expected_wrong": float(np.sum(1 - confidence)),
        "reads_per_row": float(reader.count.mean()),
    }
    return AttackResult("blocks", labels, details=details, confidence=confidence)


def _submit(oracle: Oracle, rows: np.ndarray, weights: np.ndarray, n: int) -> Read | None:
    """One read: ``rows`` at logits ``−weights``, every other row at 0.5; the release as ``Σ w·y' + noise``."""
    p = np.full(n, 0.5)
    p[rows] = 1.0 / (1.0 + np.exp(weights))
    released = oracle.submit(p)
    if released is None:
        return None
    loss1 = -np.log(p[rows])
    loss0 = -np.log1p(-p[rows])
    w = loss1 - loss0
    value = float(released) * n - (n - len(rows)) * math.log(2) - float(loss0.sum())
    return Read(rows, w, value)
