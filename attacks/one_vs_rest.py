"""``one_vs_rest``: a K-class board (log loss, kl, Brier, norm-like, Itakura–Saito, softmax CE), or a binary board
scored by a loss other than the log loss, asked binary questions "is the label in S?", each read as an exact binary
log-loss board, so that a binary attack the other boards lack — chiefly ``noisy``, the likelihood decoder for noise
beyond what an exact design tolerates — reads their labels too.

**The reduction.** For a set ``S`` of ``s`` classes, a row sent with probability ``a`` on every class of ``S`` and
``b = (1 − s·a)/(K − s)`` on every other one has, on a loss that treats the classes alike (every metric here),
only two losses: ``L_in(a)`` when its label is in ``S`` and ``L_out(a)`` otherwise. Their difference
``D(a) = L_in(a) − L_out(a)`` falls from positive (no mass on ``S``) through 0 (the uniform row, ``a = 1/K``) to
negative (all of it). The binary log loss of ``p`` is ``−ln(1 − p) + z·ln((1 − p)/p)`` for ``z = [y ∈ S]``, so a
row whose ``a`` solves ``D(a) = λ·ln((1 − p)/p)`` loses

    λ·ℓ(p, z) + β(p),   β(p) = L_out(a) + λ·ln(1 − p),

a binary log loss scaled by ``λ`` plus an offset that depends on ``p`` alone, never on the label. The adapter
(:class:`QuestionOracle`) sends those rows and reports ``(released − mean β)/λ``: the binary attack sees exactly
the binary board "label in S" with the inner board's noise (divided by ``λ``), rounding (now off its grid, which
``noisy`` models as noise anyway; the adapter announces the coarser decimals ``δ/λ`` rounds to) and clipping.

* On the log losses (``multiclass_logloss``, ``kl``, ``softmax_ce`` sent as the logits ``ln q``) ``a = p/z``,
  ``b = (1 − p)/z``, ``z = s·p + (K − s)(1 − p)`` solves it with ``λ = 1`` (``L_in = −ln p + ln z``); the adapter
  announces ``eps·K`` as its own ``eps``, so the rows stay inside the server's clipping interval. (Sharing
  ``1 − p`` among the other classes instead would add ``ln(K − s)`` to their rows only: an offset that depends on
  the unknown class counts.)
* On Brier, norm-like and Itakura–Saito ``a`` is found by bisection on the metric's own float64 row function (so
  what the adapter computes is what the server computes), and ``λ`` maps the binary attack's clipping interval
  ``[ε', 1 − ε']`` (``ε' = 1e-6``) onto the widest ``±Λ`` that ``D`` reaches on both sides. Brier:
  ``D = 2(b − a)``, ``Λ = 2/max(s, K − s)``.

**The questions.** ``code="bits"`` (the default) asks ``⌈log2 K⌉`` questions whose answers spell the class (K
distinct codewords chosen so each question splits the classes as evenly as it can: on Brier a balanced set
reaches ``Λ = 4/K`` where "is it class c?" reaches ``2/(K − 1)``); ``code="classes"`` asks "is it class c?" for
every class but the last (``K − 1`` questions). Each question is one run of the binary attack with its share of
the budget; a row's class is the one whose codeword the runs' posteriors make most likely. Labels are posteriors,
not vouched for: the attack is registered ``exact=False``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np

from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.noisy.attack import NOISY_PROBES, NOISY_SHARE, RANK_LIKELIHOOD
from attacks.noisy.split import NOISY_SPLIT_SHARE, SPLIT_REASON
from attacks.oracle import Oracle, ReducedOracle, Released
from attacks.registry import available, register, run
from attacks.result import AttackFailed, AttackResult
from scoring.metrics import Metric, get_metric

#: The binary attacks the adapter can carry: they read the board only through ``submit`` and its public facts.
#: ``noisy_split`` (a board with an unknown public split) only through balanced questions (``|S| = K/2``): their
#: two edge rows carry the same offset ``β``, so the mean offset over the unknown public rows is the known one.
CARRIED = ("noisy", "noisy_split")
#: Metrics whose rows reduce with ``λ = 1`` in closed form (the log loss, possibly sent as logits).
LOG_LOSSES = ("multiclass_logloss", "binary_logloss", "kl", "softmax_ce", "sigmoid_ce")
#  (on two classes each is the binary log loss already: nothing to reduce)
#: Metrics reduced by bisection on their own row function (norm-like under any α: ``norm_like:2.5``).
SOLVED = ("brier", "norm_like", "itakura_saito")
#: The binary clipping the adapter announces on solved metrics (any value works: ``λ`` scales with it).
SOLVED_EPS = 1e-6
BISECTION_STEPS = 80
#: The smallest class probability of a binary row on a clipping metric (:meth:`QuestionOracle._floor`).
BINARY_FLOOR = 1e-6
#: Codeword sets are searched exhaustively up to this many candidates (K ≤ 16 at most 12,870).
CODE_SEARCH_MAX = 20_000


def reducible(metric: str, n_classes: int) -> bool:
    """Whether ``one_vs_rest`` reduces this board to binary log-loss questions (a binary log-loss board is one
    already: play ``noisy`` on it)."""
    family = metric.split(":")[0]
    if metric == "binary_logloss" or (family in LOG_LOSSES and n_classes < 3):
        return False  # already the binary log loss (kl, softmax CE and sigmoid CE on two classes included)
    return family in LOG_LOSSES or family in SOLVED


def question_sets(k: int, code: str = "bits") -> list[tuple[int, ...]]:
    """The sets ``S`` asked about: ``"classes"`` gives ``{0}, …, {K − 2}``; ``"bits"`` gives ``⌈log2 K⌉`` sets,
    one per bit of K distinct codewords chosen (among all sets of K words, exhaustively while there are at most
    :data:`CODE_SEARCH_MAX`) so that every set holds as close to half the classes as it can.

    >>> question_sets(4), question_sets(3, "classes")
    ([(1, 3), (2, 3)], [(0,), (1,)])
    """
    if k < 2:
        raise ValueError("a board has at least two classes")
    if code == "classes":
        return [(c,) for c in range(k - 1)] if k > 2 else [(1,)]
    if code != "bits":
        raise ValueError(f"code is 'bits' or 'classes', not {code!r}")
    words = _codewords(k)
    return [tuple(c for c in range(k) if (words[c] >> j) & 1) for j in range(_bits(k))]


def halving(k: int, code: str = "bits") -> bool:
    """Whether every question halves the classes (``|S| = K/2``: an even K, or two classes), which is what
    ``noisy_split`` needs (a balanced question's two edge rows carry the same offset)."""
    return all(2 * len(subset) == k for subset in question_sets(k, code))


def _bits(k: int) -> int:
    return max(1, math.ceil(math.log2(k)))


@lru_cache(maxsize=32)
def _codewords(k: int) -> tuple[int, ...]:
    """K distinct ``⌈log2 K⌉``-bit words, class ``c`` → word ``c`` in the plain index code unless a set whose
    bits are better balanced is found; the all-zero word stays with class 0."""
    bits = _bits(k)
    words = 1 << bits

    def imbalance(chosen: tuple[int, ...]) -> tuple[int, int]:
        counts = [sum((w >> j) & 1 for w in chosen) for j in range(bits)]
        return max(abs(2 * c - k) for c in counts), sum(abs(2 * c - k) for c in counts)

    best = tuple(range(k))
    if math.comb(words - 1, k - 1) <= CODE_SEARCH_MAX:
        for rest in combinations(range(1, words), k - 1):
            chosen = (0, *rest)
            if imbalance(chosen) < imbalance(best):
                best = chosen
    return best


class QuestionOracle(ReducedOracle):
    """A board seen as the binary log-loss board "is the label in ``subset``?" (module docstring)."""

    metric = "binary_logloss"
    n_classes = 2

    def __init__(self, inner: Oracle, subset: tuple[int, ...] | list[int] | int) -> None:
        if not reducible(inner.metric, inner.n_classes):
            raise AttackFailed(
                f"one_vs_rest: reduces K-class log loss, kl, softmax CE, and Brier, norm-like or Itakura–Saito on "
                f"any number of classes, not {inner.metric} with {inner.n_classes} classes"
                + (" (a binary log-loss board needs no reduction: run noisy)"
                   if inner.metric.split(":")[0] in LOG_LOSSES else ""))
        super().__init__(inner)
        chosen = tuple(sorted({subset} if isinstance(subset, int) else set(subset)))
        self.k = inner.n_classes
        if not chosen or len(chosen) >= self.k or chosen[0] < 0 or chosen[-1] >= self.k:
            raise ValueError(f"{chosen} is not a proper non-empty set of the {self.k} classes")
        self.subset = chosen
        self.inside = np.zeros(self.k, dtype=bool)
        self.inside[list(chosen)] = True
        self._metric: Metric = get_metric(inner.metric)
        self._closed_form = inner.metric.split(":")[0] in LOG_LOSSES
        if self._closed_form:
            # z <= K − 1, so every q >= p/K or (1 − p)/K: p in [eps·K, 1 − eps·K] is never clipped.
            self.eps = min(0.25, inner.eps * self.k)
            self.scale = 1.0
        else:
            self.eps = SOLVED_EPS
            reach = self._reach()
            if not reach > 0:
                raise AttackFailed(f"one_vs_rest: {inner.metric} rows cannot tell {chosen} from the rest")
            self.scale = float(reach) / math.log((1.0 - self.eps) / self.eps)
        self._solved: dict[float, tuple[float, float]] = {}

    @property
    def decimals(self) -> int | None:
        inner = self.inner.decimals
        if inner is None or self.scale == 1.0:
            return inner
        # The release's grid δ becomes δ/λ: announce the coarser grid that covers it (conservative for noisy).
        return math.floor(inner + math.log10(self.scale) + 1e-9)

    def _pair(self, small: np.ndarray, subset_side: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(``a``, ``b``) of rows whose smaller probability is ``small``: ``a`` where ``subset_side``, else ``b``.
        The small one is the free variable and the other derived from it, never the reverse: ``1 − s·a`` would
        leave a tiny ``b`` only a few bits (and an Itakura–Saito loss ``≈ 1/b`` off by percents)."""
        s, rest = len(self.subset), self.k - len(self.subset)
        a = np.where(subset_side, small, (1.0 - rest * small) / s)
        b = np.where(subset_side, (1.0 - s * small) / rest, small)
        return a, b

    def _floor(self) -> float:
        """The smallest probability a row holds: kept off the clipping bound on a metric that clips. A binary
        row sends only ``a``, and the server's ``1 − a`` holds a tiny ``b`` to the unit of 1 (``2^-53``): at
        ``b = 1e-6`` the loss ``≈ 1/b`` is still good to 1e-10 of itself (an error of ~1e-9 of the binary
        scale, far below any noise the decoder models), at the clipping bound it would be off by percents."""
        if not self._metric.clips:
            return 1e-300
        return max(2.0 * self.inner.eps, BINARY_FLOOR) if self.k == 2 else 2.0 * self.inner.eps

    def _matrix(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.k == 2:  # binary boards take the probability of class 1
            return np.asarray(a if self.inside[1] else b, dtype=np.float64)
        return np.where(self.inside[None, :], a[:, None], b[:, None])

    def _losses(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(``L_in``, ``L_out``) of rows at (``a``, ``b``), by the metric's own float64 row function."""
        rows = self._metric.row_values
        assert rows is not None
        matrix = self._matrix(a, b)
        inside = np.full(len(a), self.subset[0], dtype=np.int64)
        outside = np.full(len(a), int(np.flatnonzero(~self.inside)[0]), dtype=np.int64)
        return rows(matrix, inside, self.inner.eps), rows(matrix, outside, self.inner.eps)

    def _gap(self, small: np.ndarray, subset_side: np.ndarray) -> np.ndarray:
        inside, outside = self._losses(*self._pair(small, subset_side))
        return inside - outside

    def _reach(self) -> float:
        """``Λ``: how far ``D`` reaches on both sides (no mass on the subset; all of it)."""
        floor = np.array([self._floor()])
        return float(min(self._gap(floor, np.array([True]))[0], -self._gap(floor, np.array([False]))[0]))

    def _solve(self, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(``a``, ``b``) with ``D = target``: bisection on the smaller probability in log space (``a`` where
        the target is positive, ``D`` falling in it; ``b`` where it is negative, ``D`` rising in it), from the
        floor to the uniform ``1/K`` where ``D = 0``; 80 halvings of a log range of at most 690 leave a
        relative error near the float64 unit."""
        subset_side = targets >= 0
        lo = np.full(len(targets), math.log(self._floor()))
        hi = np.full(len(targets), math.log(1.0 / self.k))
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            gap = self._gap(np.exp(mid), subset_side)
            # Moving the small probability towards 1/K brings D towards 0 from the target's side.
            beyond = np.where(subset_side, gap > targets, gap < targets)
            lo = np.where(beyond, mid, lo)
            hi = np.where(beyond, hi, mid)
        return self._pair(np.exp(0.5 * (lo + hi)), subset_side)

    def rows(self, predictions: Any) -> tuple[np.ndarray, float]:
        """The inner board's file for binary ``predictions`` and the mean offset ``β`` its loss carries."""
        p = np.clip(np.asarray(predictions, dtype=np.float64), self.eps, 1.0 - self.eps)
        s, rest = len(self.subset), self.k - len(self.subset)
        if self._closed_form:  # K >= 3 (:func:`reducible`)
            z = s * p + rest * (1.0 - p)
            offset = float(np.mean(np.log(z)))  # −ln a = −ln p + ln z; −ln b = −ln(1 − p) + ln z
            # Rows sum to one up to an ulp: the server's renormalisation is a no-op.
            matrix = np.where(self.inside[None, :], (p / z)[:, None], ((1.0 - p) / z)[:, None])
            # Softmax CE of the logits ln q is −ln q_y + ln Σ q: the same loss up to that ulp.
            return (np.log(matrix) if self._metric.logits else matrix), offset
        values, index = np.unique(p, return_inverse=True)
        unknown = [v for v in values.tolist() if v not in self._solved]
        if unknown:
            asked = np.asarray(unknown)
            a_new, b_new = self._solve(self.scale * (np.log1p(-asked) - np.log(asked)))
            self._solved.update(zip(unknown, zip(a_new.tolist(), b_new.tolist(), strict=True), strict=True))
        pairs = np.array([self._solved[v] for v in values.tolist()])[index.ravel()]
        a, b = pairs[:, 0], pairs[:, 1]
        _, outside = self._losses(a, b)
        offset = float(np.mean(outside + self.scale * np.log1p(-p)))
        return self._matrix(a, b), offset

    def submit(self, predictions: Any) -> Released:
        matrix, offset = self.rows(predictions)
        released = self.inner.submit(matrix)
        return None if released is None else (float(released) - offset) / self.scale


#: The adapter under its first name (one class against the rest).
OneVsRestOracle = QuestionOracle


def one_vs_rest_fits(facts: BoardFacts) -> Plan | Refusal:
    """The likelihood decoders on every board this reduces to binary log-loss questions, when the budget holds
    each question's first batch: ``noisy`` through ⌈log2 K⌉ questions on a board that scores every row, under
    noise seen (or, once every exact design failed on a rounded board, noise below the resolution: 10-class
    Brier, Laplace 1e-5 at 5 decimals); ``noisy_split`` through balanced questions (an even K) on a split board
    once the exact split design failed."""
    if not reducible(facts.metric, facts.n_classes):
        return Refusal("one_vs_rest", f"{facts.metric} with {facts.n_classes} classes is not reduced to binary "
                       "log-loss questions here")
    if not facts.fresh_release:
        return Refusal("one_vs_rest", "needs scores released afresh over the same rows, in float64")
    runs = len(question_sets(facts.n_classes))
    left = facts.budget_left
    if facts.split:
        if not (facts.exact_failed and (facts.noise or facts.rounded)):
            return Refusal("one_vs_rest", "a public split: only once the exact split design failed under noise")
        if not halving(facts.n_classes) or "noisy_split" not in available():
            return Refusal("one_vs_rest", "noisy_split needs questions that halve the classes (an even K)")
        if left is not None and left < runs * (NOISY_SPLIT_SHARE * facts.n_rows + NOISY_PROBES):
            return Refusal("one_vs_rest", f"the budget ({left}) cannot hold {runs} questions' first batches")
        return Plan("one_vs_rest", {"attack": "noisy_split", "budget": left, "seed": facts.seed},
                    f"{SPLIT_REASON}; on {facts.metric} with {facts.n_classes} classes through {runs} balanced "
                    "binary question(s) ('is the label in S?', |S| = K/2)", rank=RANK_LIKELIHOOD)
    if not (facts.noise or (facts.exact_failed and facts.rounded)):
        return Refusal("one_vs_rest", "no noise seen: the exact designs read the board")
    if left is not None and left < runs * (NOISY_SHARE * facts.n_rows + NOISY_PROBES):
        return Refusal("one_vs_rest", f"the budget ({left}) cannot hold {runs} questions' first batches")
    return Plan("one_vs_rest", {"budget": left, "seed": facts.seed}, f"noise beyond what an exact design tolerates "
                f"on {facts.metric} with {facts.n_classes} classes: {runs} binary question(s) ('is the label in S?', "
                "an exact reduction to a binary log-loss board), each decoded by likelihood from random-sign "
                "queries", rank=RANK_LIKELIHOOD)


def _one_vs_rest_board(facts: BoardFacts) -> bool:
    return reducible(facts.metric, facts.n_classes) and facts.float64 and facts.public_fraction is None


@register("one_vs_rest", exact=False, truncatable=True, spends_budget=True, stage=Stage.LIKELIHOOD,
          fits=one_vs_rest_fits, applies=_one_vs_rest_board,
          paper="ours (an exact reduction of K classes to binary log-loss questions)",
          board="K-class log loss, kl, softmax CE, Brier, norm-like, Itakura–Saito; float64; every row scored",
          queries="⌈log2 K⌉ times the binary decoder's",
          precision="the binary attack's (noisy by default: noise of unknown kind and scale, fitted); float64")
def one_vs_rest(
    oracle: Oracle, *, attack: str = "noisy", code: str = "bits", budget: int | None = None, seed: int = 0,
    **params: Any,
) -> AttackResult:
    """Recover the labels of a board :func:`reducible` makes binary with a binary ``attack`` asked the questions
    of :func:`question_sets` (module docstring). ``budget`` caps every submission, split evenly between the
    runs; ``params`` go to ``attack``.

    Paper: ours (an exact reduction of K classes to binary log-loss questions, "is the label in S?"). Queries:
    ``⌈log2 K⌉`` runs of the binary ``attack`` (``code="bits"``). Precision: the binary attack's — for
    ``noisy``, noise of an unknown kind and scale, fitted by its probes; float64. Three classes under
    multiplicative noise, two questions:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = np.random.default_rng(1).integers(0, 3, 20)
    >>> noise = [{"name": "noise", "kind": "multiplicative", "alpha": 1e-3}]
    >>> oracle = LocalOracle(y, metric="multiclass_logloss", decimals=5, seed=1, defenses=noise)
    >>> result = run("one_vs_rest", oracle, budget=600)
    >>> result.accuracy(y), len(result.details["runs"]), result.queries
    (1.0, 2, 30)
    """
    if attack not in CARRIED:
        raise ValueError(f"one_vs_rest carries {', '.join(CARRIED)}, not {attack!r}")
    k, n = oracle.n_classes, oracle.n_rows
    questions = question_sets(k, code)
    QuestionOracle(oracle, questions[0])  # refuses an irreducible board before any query
    split = attack == "noisy_split"
    if split and not halving(k, code):
        raise AttackFailed(f"one_vs_rest: noisy_split needs questions that halve the classes (an even K), not "
                           f"K = {k}: an unbalanced question's edge rows carry offsets the unknown split weighs")
    start = oracle.queries
    # log P(label = c) up to a constant, from every answered question; with a split, a last column: not scored.
    log_posterior = np.zeros((n, k + 1 if split else k))
    runs: list[dict[str, Any]] = []
    shares: list[tuple[np.ndarray, float]] = []
    as_asked = np.zeros_like(log_posterior)
    for i, subset in enumerate(questions):
        share = None if budget is None else (budget - (oracle.queries - start)) // (len(questions) - i)
        if share is not None and share < 4:
            raise AttackFailed(f"one_vs_rest: {budget} queries cannot hold {len(questions)} binary runs")
        asked = QuestionOracle(oracle, subset)
        before = oracle.queries
        result = run(attack, asked, budget=share, seed=seed + i, **params)
        if split:
            # The states' posteriors (not in S, not scored, in S): each class takes its answer's, "private" its own.
            states = np.log(np.maximum(np.asarray(result.details["state_posteriors"]), 1e-300))
            log_posterior[:, :k] += np.where(asked.inside[None, :], states[:, [2]], states[:, [0]])
            log_posterior[:, k] += states[:, 1]
        else:
            sure = result.fill_confidence()
            yes = np.where(result.labels == 1, sure, 1.0 - sure)
            # Each class adds the log-likelihood of its own answer (a class outside every set, "no" to all): the
            # run's posterior less its own prior, the question's measured share (kept, each run's prior would
            # count again per question: at K = 3, {1} and {2} at 1/3 each weighed class 0 as 1/2, not 1/3).
            measured = _question_share(result)
            prior_yes, prior_no = (0.0, 0.0) if measured is None else (math.log(measured),
                                                                           math.log(1.0 - measured))
            # The runs' posteriors multiplied as they come: the labels (below).
            as_asked += np.where(asked.inside[None, :], np.log(np.maximum(yes, 1e-300))[:, None],
                                 np.log(np.maximum(1.0 - yes, 1e-300))[:, None])
            log_posterior += np.where(asked.inside[None, :], np.log(np.maximum(yes, 1e-300))[:, None] - prior_yes,
                                      np.log(np.maximum(1.0 - yes, 1e-300))[:, None] - prior_no)
            if measured is not None:
                shares.append((asked.inside, measured))
        runs.append({"subset": list(subset), "queries": oracle.queries - before, "scale": asked.scale,
                     "complete": bool(result.details.get("complete", False))})
    # The labels: the class the runs' posteriors, multiplied as they come, make most likely (as before the priors
    # were taken out; on the golden 60/30/10 Ladder cell every run answers ½ and the tie goes to class 0, 24 of 40
    # right, where the prior-weighed sums, equal up to rounding, broke it toward class 1: 12).
    labels = (log_posterior if split else as_asked).argmax(axis=1).astype(np.int64)
    if shares and not split:
        log_posterior += np.log(np.maximum(class_prior(k, shares), 1e-300))[None, :]
    posterior = np.exp(log_posterior - log_posterior.max(axis=1, keepdims=True))
    posterior /= posterior.sum(axis=1, keepdims=True)
    # The confidence: that class's posterior, each run's likelihood weighed once against the class prior.
    confidence = np.minimum(posterior[np.arange(n), labels], 1.0 - 1e-9)
    extra: dict[str, Any] = {}
    if split:
        labels = np.where(labels == k, -1, labels)
        extra["public_mask"] = labels >= 0
        confidence = np.where(labels >= 0, confidence, 0.0)
    return AttackResult(
        labels=labels,
        queries=oracle.queries - start,
        attack="one_vs_rest",
        # Posteriors, never vouched for (unset, ``attacks.run`` would read every label as exact).
        confidence=confidence,
        details={"attack": attack, "code": code, "runs": runs, "confidence": confidence,
                 "complete": all(r["complete"] for r in runs),
                 "mean_posterior": float(np.mean(confidence)) if n else math.nan, **extra},
    )


def _question_share(result: AttackResult) -> float | None:
    """The share of "yes" the binary run measured for its question (the prior of its posteriors), if it says."""
    noise = result.details.get("noise")
    balance = noise.get("balance") if isinstance(noise, dict) else None
    if balance is None or not math.isfinite(float(balance)):
        return None
    return float(np.clip(float(balance), 1e-6, 1.0 - 1e-6))


def class_prior(k: int, shares: list[tuple[np.ndarray, float]], sweeps: int = 200) -> np.ndarray:
    """The class shares of most entropy whose mass in each asked set is its measured share (iterative
    proportional fitting from the uniform shares): the prior the runs' likelihoods are weighed against.

    >>> class_prior(3, [(np.array([False, True, False]), 0.2), (np.array([False, False, True]), 0.3)]).round(3).tolist()
    [0.5, 0.2, 0.3]
    >>> halves = [(np.array([False, True, False, True]), 0.5), (np.array([False, False, True, True]), 0.5)]
    >>> class_prior(4, halves).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    prior = np.full(k, 1.0 / k)
    for _ in range(sweeps):
        before = prior.copy()
        for inside, share in shares:
            mass = float(prior[inside].sum())
            if 0.0 < mass < 1.0:
                prior = np.where(inside, prior * share / mass, prior * (1.0 - share) / (1.0 - mass))
        if float(np.max(np.abs(prior - before))) < 1e-12:
            break
    return np.asarray(prior / prior.sum())
