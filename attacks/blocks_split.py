"""``blocks_split``: the ``blocks`` reads on a board that scores only a hidden public split — each row in one of
three states (private; public with label 0; public with label 1), its status fixed, its label redrawn per
submission (a fresh randomized response), every release noisy.

A query keeps every row at 0.5 (its loss is ``ln 2`` whatever its label and split) except a block ``B`` of ``g``
rows; with ``N_pub`` the public rows (``round(N·public_fraction)``, as the split is drawn),
``N_pub·(score − ln 2) = Σ_{j∈B∩public} (u_j + w_j·y'_j) + N_pub·noise``: a row at logit ``x`` adds nothing when
private, ``softplus(x) − ln 2`` as a public 0 and ``softplus(−x) − ln 2`` as a public 1. One of the two is the
*small* state, within ``(−ln 2, 0)`` (``≈ −ln 2`` at a large ``|x|``), the other the *big* one, ``|x|`` above it.
The block's ``|x|`` are binary-spaced (``c·2^k`` up to the clipping's largest logit), so a release names which rows
are in their big state and, from the offset in steps of ``≈ ln 2``, how many public rows are in their small one
(not which: a private row and a small-state public one differ only in that offset). With ``c`` above
``ln 2·(g+1)`` (4 rows at ``eps = 1e-15``) every pattern's value is apart; a block takes as many rows (up to
:data:`MAX_BLOCK`) as each add :data:`GAIN_BITS` to what its release carries about its rows' states
(:func:`read_information`): 5 at the README's noise, where three or more small-state rows in one block can look
like a big one, which the later reads sort out. Each
row is turned so that the label it more likely has, if public, is its big state: an unread row shows big when
public with the majority label; a row left between "private" and "public minority" is read next the other way
round, where it shows big exactly when public.

Decoding is belief propagation over the reads: each read's exact likelihood over the ``3^g`` states its block's
rows can show, the other rows weighed by their current beliefs without this read's own message (the flips mixed
in: a public row shows its label with probability ``1 − p``), gives every row a message over its three true states;
a row's belief is the split prior (``N_pub/N`` public, the class prior among them) times its messages, and every
read's message is recomputed from the others' a few times over (a loopy graph whose loops are long: blocks are
drawn afresh). Reads are independent given the states (fresh noise, fresh flips), so the beliefs are calibrated
when the nuisance parameters are, and these are measured from the reads, as ``blocks`` measures them: the noise from
every release's distance to its state patterns (an EM step), the flip probability from public rows read twice
(the second read asked for while the first had shown the row public and nothing else, so the pair is not chosen
by a disagreement), the class prior from the public rows' beliefs (with the fingerprint's balance of the scored
rows, where it measured one, counted as a read of every public row: a few reads sample few public rows).

Reads go to the rows whose label, if public, is least sure (the expected wrong public labels a row holds), until
those fall below :data:`TARGET_WRONG` or the budget ends. A row believed public gets its likelier label; one
believed private the majority label (its label is never scored: nothing reads it). The confidence is the
probability the label is right (public: the belief; private: the class prior), never 1. It only calls
``oracle.submit`` and reads ``n_rows``, ``eps``, ``decimals``, ``metric`` and the public fraction.

Measured (the README's chain without its Ladder — fresh flips 2 %, Laplace 1e-4, 5 decimals — 30 % public, split
seed 7): a seeded 2,201-row vector (660 public rows, majority 0.686) has 0.732, 0.905 and 1.000 of its public
labels right with 100, 441 and 1,000 submissions (873 used); digits < 5 (539 public, majority 0.512) 0.577, 0.931
and 1.000 (692 used). Through fresh accounts behind the parameter-free Ladder the reads are the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.blocks import Noise, _max_weight
from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

#: Stop once the expected wrong labels among the public rows fall below this.
TARGET_WRONG = 0.1
#: Most rows in a block (``3^g`` state patterns are enumerated per read). At 6 the README's chain still gains
#: information a read, but the reads' overlapping patterns leave the propagated beliefs overconfident (measured:
#: 2,201 rows, 1,000 submissions, confidence 1.000 on 0.998 right).
MAX_BLOCK = 5
#: The flip probability assumed before public rows were read twice.
FLIP_PRIOR = 0.05
#: Public rows read a second time as soon as they are seen, so the flip probability is measured early.
PILOT_ROWS = 40
#: A row joins a block only if the release then carries this many more bits about the block's states. (The
#: README's chain, 30 % public: 5 rows a read carry ~0.8 bit more than 4 and, measured at 2,201 and 1,797 rows,
#: read the public rows in 10–15 % fewer submissions; 4 lost 0.04–0.10 of public accuracy at 441 submissions.)
GAIN_BITS = 0.5
#: Belief-propagation sweeps per refit, and the reads between refits (at least; then a tenth of the reads).
SWEEPS = 4
REFIT_EVERY = 20
#: A row is believed private (and gets the majority label) above this probability of being private.
BELIEVED_PRIVATE = 0.5
#: Relative jitter of the logits per query, so no two files are byte-identical.
JITTER = 1e-9
#: Plan rank: beside ``blocks`` (499), the likelihood decoder for a split.
RANK = 499
#: Mixed into the seed of the attack's random stream.
STREAM = 0xB5
LN2 = math.log(2.0)
PRIVATE, PUBLIC0, PUBLIC1 = 0, 1, 2


@dataclass
class SplitRead:
    """One read: ``rows``, each row's value per shown state (``levels``: ``g × 3``, private / public 0 / public 1,
    sum units) and the release less ``N_pub·ln 2`` in sum units."""

    rows: np.ndarray
    levels: np.ndarray
    value: float


def row_levels(p: np.ndarray) -> np.ndarray:
    """Each row's contribution to ``N_pub·(score − ln 2)`` per shown state, at prediction ``p``: ``g × 3``."""
    out = np.zeros((len(p), 3))
    out[:, PUBLIC0] = -np.log1p(-p) - LN2
    out[:, PUBLIC1] = -np.log(p) - LN2
    return out


def _patterns(g: int) -> np.ndarray:
    """Every state pattern of ``g`` rows: ``3^g × g`` in 0, 1, 2."""
    return (np.arange(3**g)[:, None] // 3 ** np.arange(g)[None, :]) % 3


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(a - top), axis=axis))


@dataclass
class SplitReader:
    """The reads so far, the messages they send and the estimates they give (see the module docstring)."""

    n: int
    n_public: int
    rounding: float
    noise: Noise
    prior: float  # P(label 1) among the public rows (and, for their labels, the private ones)
    flip: float = FLIP_PRIOR
    reads: list[SplitRead] = field(default_factory=list)
    flip_measured: bool = False
    noise_measured: bool = False
    #: The share of 1s the fingerprint measured over the scored rows (``None``: unmeasured).
    seen_prior: float | None = None

    def __post_init__(self) -> None:
        self.share = self.n_public / self.n
        self.count = np.zeros(self.n, dtype=np.int64)
        self.messages: list[np.ndarray] = []  # per read, g × 3 log messages over the true states
        self.total = np.zeros((self.n, 3))  # Σ of each row's messages
        #: Rows whose second read was asked for while the first had shown them public (flip pairs).
        self.pairs: set[int] = set()
        self.first_read: dict[int, int] = {}
        self.second_read: dict[int, int] = {}
        self.by_row: dict[int, list[int]] = {}
        self._sizes: dict[tuple[str, float, float, float], int] = {}

    # -- beliefs --------------------------------------------------------------------------------------------
    def log_prior(self) -> np.ndarray:
        mu = min(max(self.prior, 1e-6), 1 - 1e-6)
        share = min(max(self.share, 1e-9), 1 - 1e-9)
        return np.log(np.array([1 - share, share * (1 - mu), share * mu]))

    def beliefs(self) -> np.ndarray:
        """Every row's belief over private / public 0 / public 1 (``n × 3``)."""
        logb = self.total + self.log_prior()[None, :]
        logb -= logb.max(axis=1, keepdims=True)
        b = np.exp(logb)
        return b / b.sum(axis=1, keepdims=True)

    def answer(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The labels, P(label right) and P(public) of every row."""
        b = self.beliefs()
        public = b[:, PUBLIC0] + b[:, PUBLIC1]
        majority = int(self.prior >= 0.5)
        label = np.where(b[:, PUBLIC1] >= b[:, PUBLIC0], 1, 0)
        label = np.where(b[:, PRIVATE] > BELIEVED_PRIVATE, majority, label).astype(np.int64)
        mu = np.array([1 - self.prior, self.prior])
        right = b[np.arange(self.n), 1 + label] + b[:, PRIVATE] * mu[label]
        return label, np.minimum(right, 1 - 1e-12), public

    def wrong_public(self) -> np.ndarray:
        """Each row's probability of being public with the other label than the one returned."""
        label, _, _ = self.answer()
        b = self.beliefs()
        return b[np.arange(self.n), 2 - label]

    # -- decoding -------------------------------------------------------------------------------------------
    def _decode_group(self, reads: list[SplitRead], ext: np.ndarray,
                      own_flat: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reads of one block size ``g``: ``ext`` (``R × g × 3``) the rows' beliefs without each read's message.
        Returns the messages (``R × g × 3``, log), the posterior of each row's *shown* state (``R × g × 3``) and
        each read's residual (``R × 2``: its mean ``|r|`` and ``r²``)."""
        g = len(reads[0].rows)
        levels = np.array([r.levels for r in reads])  # R × g × 3
        values = np.array([r.value for r in reads])
        pats = _patterns(g)  # P × g
        f = self.flip
        shown = np.empty_like(ext)
        shown[..., PRIVATE] = ext[..., PRIVATE]
        shown[..., PUBLIC0] = ext[..., PUBLIC0] * (1 - f) + ext[..., PUBLIC1] * f
        shown[..., PUBLIC1] = ext[..., PUBLIC0] * f + ext[..., PUBLIC1] * (1 - f)
        log_shown = np.log(np.maximum(shown, 1e-300))
        cols = np.arange(g)[None, :]
        sums = levels[:, cols, pats].sum(axis=2)  # R × P
        span = (np.abs(levels).max(axis=2).sum(axis=1) + 10 * self.noise.scale)[:, None]
        loglik = self.noise.logpdf(values[:, None] - sums, span)
        own = log_shown[:, cols, pats]  # R × P × g
        joint = loglik + own.sum(axis=2)
        # Each read's residual: the posterior mean |r| and r² over the patterns (an EM step for the noise
        # scale), or, before the noise is measured, the distance to the nearest level.
        dist = values[:, None] - sums
        if self.noise_measured:
            weight = np.exp(joint - joint.max(axis=1, keepdims=True))
            weight /= weight.sum(axis=1, keepdims=True)
            residual = np.stack([(weight * np.abs(dist)).sum(axis=1), (weight * dist**2).sum(axis=1)], axis=1)
        else:
            nearest = np.min(np.abs(dist), axis=1)
            residual = np.stack([nearest, nearest**2], axis=1)
        messages = np.empty_like(ext)
        post = np.empty_like(ext)
        onehot = [(pats[:, j][:, None] == np.arange(3)[None, :]).astype(np.float64) for j in range(g)]
        for j in range(g):
            excl = joint - own[:, :, j]
            top = excl.max(axis=1, keepdims=True)
            like = np.log(np.maximum(np.exp(excl - top) @ onehot[j], 1e-300)) + top  # R × 3: P(release | shown)
            shown_post = like if own_flat else like + log_shown[:, j, :]
            cp = np.exp(shown_post - shown_post.max(axis=1, keepdims=True))
            post[:, j, :] = cp / cp.sum(axis=1, keepdims=True)
            lmax = like.max(axis=1, keepdims=True)
            e = np.exp(like - lmax)
            m = np.empty((len(reads), 3))
            m[:, PRIVATE] = e[:, PRIVATE]
            m[:, PUBLIC0] = (1 - f) * e[:, PUBLIC0] + f * e[:, PUBLIC1]
            m[:, PUBLIC1] = f * e[:, PUBLIC0] + (1 - f) * e[:, PUBLIC1]
            logm = np.log(np.maximum(m, 1e-300))
            messages[:, j, :] = logm - logm.max(axis=1, keepdims=True)
        return messages, post, residual

    def _ext(self, index: list[int]) -> np.ndarray:
        """The beliefs of the rows of reads ``index`` without each read's own message (``R × g × 3``)."""
        prior = self.log_prior()
        rows = np.array([self.reads[i].rows for i in index])
        own = np.array([self.messages[i] if i < len(self.messages) else np.zeros((len(rows[0]), 3))
                        for i in index])
        logb = self.total[rows] - own + prior[None, None, :]
        logb -= logb.max(axis=2, keepdims=True)
        b = np.exp(logb)
        return b / b.sum(axis=2, keepdims=True)

    def _groups(self, index: list[int]) -> dict[int, list[int]]:
        groups: dict[int, list[int]] = {}
        for i in index:
            groups.setdefault(len(self.reads[i].rows), []).append(i)
        return groups

    def sweep(self, index: list[int] | None = None) -> np.ndarray:
        """Recompute the messages of reads ``index`` (all) from the others' (one flooding step); the residuals."""
        index = list(range(len(self.reads))) if index is None else index
        residuals = np.zeros((len(self.reads), 2))
        updates: list[tuple[int, np.ndarray]] = []
        for _, group in self._groups(index).items():
            msgs, _, res = self._decode_group([self.reads[i] for i in group], self._ext(group))
            for k, i in enumerate(group):
                updates.append((i, msgs[k]))
                residuals[i] = res[k]
        for i, msg in updates:
            rows = self.reads[i].rows
            self.total[rows] += msg - self.messages[i]
            self.messages[i] = msg
        return residuals

    def add(self, read: SplitRead) -> None:
        i = len(self.reads)
        self.reads.append(read)
        self.messages.append(np.zeros((len(read.rows), 3)))
        touching: set[int] = set()
        for row in read.rows.tolist():
            touching.update(self.by_row.setdefault(row, []))
            self.by_row[row].append(i)
            if self.count[row] == 0:
                self.first_read[row] = i
            elif self.count[row] == 1:
                self.second_read[row] = i
        self.count[read.rows] += 1
        # The new read, then the reads that share its rows, then the new one again.
        self.sweep([i])
        if touching:
            self.sweep(sorted(touching))
            self.sweep([i])

    def propagate(self, sweeps: int = SWEEPS) -> np.ndarray:
        residuals = np.zeros((len(self.reads), 2))
        for _ in range(sweeps):
            residuals = self.sweep()
        return residuals

    # -- estimates ------------------------------------------------------------------------------------------
    def _shown_alone(self, i: int, row: int) -> float:
        """P(the label ``row`` showed in read ``i`` is 1), the row taken public with no other read of it."""
        read = self.reads[i]
        ext = self._ext([i])
        j = int(np.flatnonzero(read.rows == row)[0])
        ext[0, j] = [0.0, 0.5, 0.5]
        _, post, _ = self._decode_group([read], ext, own_flat=True)
        p = post[0, j]
        return float(p[PUBLIC1] / max(p[PUBLIC0] + p[PUBLIC1], 1e-300))

    def refit(self) -> None:
        """The noise from the residuals, the flip probability from the pair rows, the prior from the beliefs."""
        if not self.reads:
            return
        floor = self.rounding / 4 if self.rounding > 0 else 1e-12
        residuals = self.propagate()
        if len(self.reads) >= 8:
            # EM for the noise scale: the nearest levels' distances first, then posterior-weighted ones.
            for _ in range(3):
                absolute, square = residuals[:, 0], residuals[:, 1]
                beta = max(float(np.mean(absolute)), floor)
                sigma = max(float(np.sqrt(np.mean(square))), self.rounding / math.sqrt(12), 1e-12)
                lap = -len(absolute) * (1 + math.log(2 * beta))
                gau = -len(square) * (0.5 + math.log(sigma * math.sqrt(2 * math.pi)))
                self.noise = Noise("laplace", beta) if lap >= gau else Noise("gaussian", sigma)
                self.noise_measured = True
                residuals = self.propagate(2)
        b = self.beliefs()
        public = b[:, PUBLIC0] + b[:, PUBLIC1]
        firsts, seconds = [], []
        for row in sorted(self.pairs):
            if row not in self.second_read or public[row] < 0.99:
                continue
            v1 = self._shown_alone(self.first_read[row], row)
            v2 = self._shown_alone(self.second_read[row], row)
            if min(v1, 1 - v1) < 0.01 and min(v2, 1 - v2) < 0.01:
                firsts.append(int(v1 > 0.5))
                seconds.append(int(v2 > 0.5))
        if len(firsts) >= 20:
            self.flip = _flip_mle(np.array(firsts), np.array(seconds), self.prior)
            self.flip_measured = True
        touched = self.count > 0
        for _ in range(3):
            b = self.beliefs()
            ones = float(b[touched, PUBLIC1].sum())
            weight = float((b[:, PUBLIC0] + b[:, PUBLIC1])[touched].sum())
            if self.seen_prior is not None:
                # The fingerprint's balance of the scored rows (the labels it saw, flips and all), as if
                # ``n_public`` rows had been read with it.
                seen = (self.seen_prior - self.flip) / (1 - 2 * self.flip) if self.flip < 0.5 else self.seen_prior
                ones += min(max(seen, 0.0), 1.0) * self.n_public
                weight += self.n_public
            if weight >= 10:
                self.prior = min(max(ones / weight, 0.5 / self.n), 1 - 0.5 / self.n)
            self.propagate(1)

    # -- design ---------------------------------------------------------------------------------------------
    def block_size(self, max_weight: float) -> int:
        """The most rows a read (up to :data:`MAX_BLOCK`) each of which adds at least :data:`GAIN_BITS` to what a
        release carries (:func:`read_information`, at the noise, class prior and split measured) — at least one.
        Before the noise is measured it is taken at no less than ``ln 2 / 10``."""
        noise = self.noise
        if not self.noise_measured:
            noise = Noise(noise.kind, max(noise.scale, LN2 / 10))
        key = (noise.kind, round(math.log(noise.scale), 1), round(self.prior, 2), round(self.share, 3))
        if key not in self._sizes:
            states = _state_probs(self.share, self.prior)
            best, carried = 1, read_information(1, max_weight, noise, states)
            for g in range(2, MAX_BLOCK + 1):
                more = read_information(g, max_weight, noise, states)
                if more < carried + GAIN_BITS:
                    break
                best, carried = g, more
            self._sizes[key] = best
        return self._sizes[key]


def _state_probs(share: float, prior: float) -> np.ndarray:
    """A row's prior over private / public big state / public small state, its likelier label turned big."""
    share = min(max(share, 1e-6), 1 - 1e-6)
    likely = min(max(max(prior, 1 - prior), 0.5), 1 - 1e-6)
    return np.array([1 - share, share * likely, share * (1 - likely)])


def read_information(g: int, max_weight: float, noise: Noise, states: np.ndarray) -> float:
    """Bits one release of a ``g``-row block carries about its rows' shown states (each row private, big or small
    with probabilities ``states``; the release their pattern's value plus ``noise``): the released value's
    entropy on a fine grid less the noise's."""
    logits = block_logits(g, max_weight)
    levels = row_levels(1.0 / (1.0 + np.exp(-logits)))[:, [PRIVATE, PUBLIC0, PUBLIC1]]  # big state: public 0
    pats = _patterns(g)
    probs = states[pats].prod(axis=1)
    sums = levels[np.arange(g)[None, :], pats].sum(axis=1)
    scale = noise.scale
    step = max(scale / 8, (sums.max() - sums.min() + 20 * scale) / 20000)
    grid = np.arange(sums.min() - 10 * scale, sums.max() + 10 * scale, step)
    if noise.kind == "laplace":
        noise_bits = math.log2(2 * math.e * scale)
    else:
        noise_bits = 0.5 * math.log2(2 * math.pi * math.e * scale**2)
    released = np.zeros(len(grid))
    for chunk in np.array_split(np.arange(len(sums)), max(1, len(sums) // 64)):
        r = grid[:, None] - sums[None, chunk]
        if noise.kind == "laplace":
            density = np.exp(-np.abs(r) / scale) / (2 * scale)
        else:
            density = np.exp(-0.5 * (r / scale) ** 2) / (scale * math.sqrt(2 * math.pi))
        released += density @ probs[chunk]
    mass = released * step
    mass = mass[mass > 0]
    return float(-(mass * np.log2(mass)).sum()) - (noise_bits - math.log2(step))


def block_logits(g: int, max_weight: float) -> np.ndarray:
    """The ``|x|`` of a block of ``g`` rows, largest first: ``c·2^k`` with ``c = max_weight / 2^(g−1)``."""
    return max_weight / 2.0 ** np.arange(g, dtype=np.float64)


def _flip_mle(first: np.ndarray, second: np.ndarray, prior: float) -> float:
    """The flip probability that best explains the second reads' labels given the first's, each first label shown
    with probability ``q(v) = P(y = v)(1 − p) + P(y ≠ v)·p`` (a weak half-pair prior at 50 %)."""
    grid = np.linspace(1e-4, 0.3, 600)
    mu = min(max(prior, 1e-6), 1 - 1e-6)
    q1 = mu * (1 - grid) + (1 - mu) * grid
    disagree = first != second
    ll = np.zeros_like(grid)
    for v, d in zip(first.tolist(), disagree.tolist(), strict=True):
        q = q1 if v else 1 - q1
        pd = grid * (1 - grid) / q
        ll += np.log(pd if d else 1 - pd)
    ll += 0.5 * np.log(2 * grid * (1 - grid)) + 0.5 * np.log(1 - 2 * grid * (1 - grid))
    return float(grid[int(np.argmax(ll))])


def n_public_of(facts: BoardFacts) -> int | None:
    """The public rows: disclosed, or ``round(N·public_fraction)`` as :func:`scoring.public_split_mask` draws it."""
    return facts.stated_public_count


def _initial_noise(facts: BoardFacts, n_public: int, rounding: float) -> Noise:
    return Noise("laplace", max(facts.seen_spread * n_public, rounding / 4, 1e-12))


def blocks_split_fits(facts: BoardFacts) -> Plan | Refusal:
    """Binary log loss in float64 on a public split of known size, every release fresh, noise or fresh flips
    seen: rank 499."""
    if not facts.binary_logloss or not facts.split or not facts.float64:
        return Refusal("blocks_split", "float64 binary log loss on a public split only")
    n_public = n_public_of(facts)
    if n_public is None or n_public < 1:
        return Refusal("blocks_split", "the public split's size is not known")
    flips = bool(facts.seen is not None and facts.seen.fresh_flips)
    if not (facts.noise or flips) or not facts.fresh_release:
        return Refusal("blocks_split", "needs noise or fresh flips seen on scores released afresh")
    if facts.budget_left is not None and facts.budget_left < 2:
        return Refusal("blocks_split", f"the budget ({facts.budget_left}) holds no read")
    rounding = 0.0 if facts.decimals is None else n_public * 10.0 ** (-facts.decimals)
    noise = _initial_noise(facts, n_public, rounding)
    if noise.misread(LN2) > 0.25:
        return Refusal("blocks_split", "the noise hides the public count a read names", close=True)
    reader = SplitReader(facts.n_rows, n_public, rounding, noise, prior=0.5)
    reader.noise_measured = True
    g = reader.block_size(_max_weight(facts.eps))
    return Plan("blocks_split", {"budget": facts.budget_left, "seed": facts.seed, "prior": facts.prior},
                f"a public split released afresh under noise: blocks of ~{g} rows with binary-spaced logits read "
                "each row's status and label (belief propagation over the reads, flips measured)",
                rank=RANK, cost=1.5 * facts.n_rows / max(g, 1))


def _board(facts: BoardFacts) -> bool:
    return facts.binary_logloss and facts.float64 and facts.public_fraction is not None


@register("blocks_split", exact=False, truncatable=True, spends_budget=True, stage=Stage.LIKELIHOOD,
          fits=blocks_split_fits, applies=_board,
          paper="ours (group testing with three states a row: private, public 0, public 1; belief propagation)",
          board="float64 binary log loss on a public split of known size, each release fresh (noise, fresh "
          "randomized response; behind a Ladder through fresh accounts)",
          queries="about N/g reads for g-row blocks (g = 5 at Laplace 1e-4), more to settle the public rows",
          precision="additive Laplace/Gaussian noise well below ln 2 on the public sum (measured from the reads), "
          "any decimals")
def blocks_split(oracle: Oracle, *, budget: int | None = None, seed: int = 0,
                 prior: float | None = None) -> AttackResult:
    """Read every row's status and label in blocks until the expected wrong public labels fall below
    :data:`TARGET_WRONG` or ``budget`` submissions are spent (see the module docstring). ``prior``: the share of 1s
    a fingerprint measured over the scored rows (the plan passes it), counted with the reads. Labels are
    posteriors, never exact.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> from scoring import public_split_mask
    >>> labels = (np.random.default_rng(3).random(400) < 0.7).astype(int)
    >>> chain = [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
    ...          {"name": "noise", "kind": "laplace", "scale": 1e-4}]
    >>> board = LocalOracle(labels, decimals=5, defenses=chain, public_fraction=0.3, seed=1)
    >>> result = run("blocks_split", board, budget=300)
    >>> public = public_split_mask(400, 0.3, 1)
    >>> bool((result.labels[public] == labels[public]).mean() > 0.97), result.exact
    (True, 0)
    """
    facts = BoardFacts.of(oracle)
    if facts.metric != "binary_logloss" or facts.n_classes != 2:
        raise AttackFailed("blocks_split reads binary log loss only")
    n_public = n_public_of(facts)
    if n_public is None or n_public < 1:
        raise AttackFailed("blocks_split needs the public split's size (public_fraction)")
    n = oracle.n_rows
    limit = budget if budget is not None else 3 * n
    if limit < 1:
        raise AttackFailed("blocks_split: no submission in the budget")
    rounding = 0.0 if oracle.decimals is None else n_public * 10.0 ** (-oracle.decimals)
    max_weight = _max_weight(oracle.eps)
    seen_prior = prior if prior is not None else facts.prior
    reader = SplitReader(n, n_public, rounding, _initial_noise(facts, n_public, rounding),
                         prior=seen_prior if seen_prior is not None else 0.5, seen_prior=seen_prior)
    # A stream of its own: ``default_rng(seed)`` is also how a board draws its split from its secret.
    rng = np.random.default_rng((seed, STREAM))
    order = rng.permutation(n)
    tiebreak = np.argsort(order)
    spent = refused = 0
    next_refit = 8
    pilot: list[int] = []
    while spent < limit:
        if len(reader.reads) >= next_refit:
            reader.refit()
            next_refit = len(reader.reads) + max(REFIT_EVERY, len(reader.reads) // 10)
        wrong = reader.wrong_public()
        if float(wrong.sum()) <= TARGET_WRONG:
            break
        g = reader.block_size(max_weight)
        b = reader.beliefs()
        public = b[:, PUBLIC0] + b[:, PUBLIC1]
        # The pilot: the first rows seen public after one read are read again at once (flip pairs).
        if len(pilot) < PILOT_ROWS:
            fresh = np.flatnonzero((reader.count == 1) & (public > 0.99))
            for row in fresh[np.argsort(tiebreak[fresh])].tolist():
                if len(pilot) < PILOT_ROWS and row not in reader.pairs:
                    pilot.append(row)
                    reader.pairs.add(row)
        waiting = [row for row in pilot if reader.count[row] < 2]
        rows = waiting[:g]
        if len(rows) < g:
            rank = np.lexsort((tiebreak, reader.count, -wrong))
            taken = set(rows)
            for row in rank.tolist():
                if len(rows) >= g:
                    break
                if row not in taken:
                    rows.append(row)
                    taken.add(row)
        chosen = np.asarray(rows, dtype=np.int64)
        for row in chosen.tolist():
            # A row shown public by its only read gets its second read unchosen by a disagreement: a flip pair.
            if reader.count[row] == 1 and public[row] > 0.99:
                reader.pairs.add(row)
        # Each row turned so that its likelier label, if public, is its big state.
        big_one = b[chosen, PUBLIC1] >= b[chosen, PUBLIC0]
        size = block_logits(len(chosen), max_weight)[rng.permutation(len(chosen))]
        size *= 1 - JITTER * (spent % 997 + 1)
        logits = np.where(big_one, -size, size)
        read = _submit(oracle, chosen, logits, n, n_public)
        spent += 1
        if read is None:
            refused += 1
            if refused > 3 and refused * 2 > spent:
                break
            continue
        reader.add(read)
    reader.refit()
    labels, confidence, public = reader.answer()
    details: dict[str, Any] = {
        "reads": len(reader.reads), "refused": refused, "block_size": reader.block_size(max_weight),
        "n_public": n_public,
        "noise": {"kind": reader.noise.kind, "scale_sum": reader.noise.scale,
                  "scale_score": reader.noise.scale / n_public},
        "flip": reader.flip, "flip_measured": reader.flip_measured, "prior": reader.prior,
        "expected_wrong_public": float(reader.wrong_public().sum()),
        "believed_public": int((public > 0.5).sum()),
        # The rows believed public: what the majority floor's check measures in full (the others at the split's
        # share).
        "public_mask": (public > 0.5).tolist(),
        "reads_per_row": float(reader.count.mean()),
    }
    return AttackResult("blocks_split", labels, details=details, confidence=confidence)


def _submit(oracle: Oracle, rows: np.ndarray, logits: np.ndarray, n: int, n_public: int) -> SplitRead | None:
    """One read: ``rows`` at ``logits``, every other row at 0.5; the release as ``N_pub·(score − ln 2)``."""
    p = np.full(n, 0.5)
    p[rows] = 1.0 / (1.0 + np.exp(-logits))
    released = oracle.submit(p)
    if released is None:
        return None
    return SplitRead(rows, row_levels(p[rows]), float(released) * n_public - n_public * LN2)
