"""The weight search for a carried group's digit: the reference seeded random search and a fast exact replica.

:func:`search_realization_reference` is the search as first written: three scales of ``B`` random weight
columns drawn from a generator seeded by the candidate set, each column scored by the range it wastes per bit
it resolves, ``(log2 span − H) / H − 10⁻³·H`` (``H`` the entropy of a uniformly chosen candidate's value), the
first best column kept. It costs a few milliseconds a call (≈ 1,400 calls at N = 25,000), most of it sorting
every column.

:func:`search_realization` returns *the same weights* (tests compare the two on thousands of candidate sets,
and the whole attack's queries on several seeds) in a fraction of the time, because almost every column can
be scored or ruled out without sorting it:

* the random columns are the generator's own: ``Generator.integers`` for a range below ``2³²`` is Lemire's
  multiply-shift on the bit generator's 32-bit halves (low half first), reproduced here vectorised on
  ``random_raw``; a draw numpy would reject (probability ≤ range/2³² each) sends the call to the reference;
* a column whose values are all distinct (one bitmask OR per column, its popcount) has ``H = log2 n``
  exactly, so its score is the reference's float, computed by the same operations;
* a column with a repeated value has ``H ≤ log2 n − 2/n`` and ``H ≤ log2 span``, a lower bound on its score;
  only the columns whose bound does not rule them out are scored by the reference's own sort (which gives
  every column the same floats whatever other columns it is scored with, as long as there are two or more);
* the columns are scored in chunks, in order (the first column with the least score is the reference's
  argmin); the perfect score (``n`` distinct values on a span of ``n``) cannot be beaten, and the reference
  keeps a later scale's column only if it is strictly better, so the first perfect column ends the search —
  most calls stop within the first 256 columns of the first scale.

* a chunk holding an allowed perfect column ends at its first one without scoring the others; the columns
  that do need the reference's sort get their run lengths by counting equal values (the same floats);
* only the chunks scored are scaled from the generator's words (the rejection check, which needs every word of
  the scale, is one wrapping 32-bit product per word);
* a candidate set searched before under caps at least as loose reuses that answer when it fits the new caps
  (:func:`_searched_sets` says why that is exactly the reference's answer).

The draws, not the scoring, are now the floor: seeding the generator and drawing ``3 × k × B`` words cost
about as much as scoring the first chunk, and they cannot be skipped without changing the weights.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from itertools import pairwise

import numpy as np

SCALES = (1, 2, 4)
#: On (``capacity_attack(..., reference=True)``): the attack runs its code as first written (the reference
#: search, no cached row terms), for the benchmark's same-run baseline and the equivalence tests.
REFERENCE: ContextVar[bool] = ContextVar("capacity_reference", default=False)


@contextmanager
def reference_code(on: bool = True) -> Iterator[None]:
    """Run the capacity attack's code as first written inside the block (see :data:`REFERENCE`)."""
    token = REFERENCE.set(on)
    try:
        yield
    finally:
        REFERENCE.reset(token)
SHIFT = np.uint64(32)


def _seed(key: bytes, n: int, k: int) -> int:
    return int.from_bytes(key[:8].ljust(8, b"\0"), "little") ^ (n * 7919 + k)


def _batch(n: int) -> int:
    return max(256, min(4000, 400_000 // max(n, 1)))


def _entropy_and_span(patterns: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For weight columns ``weights`` (``k × B``): the entropy (bits) of the value of a uniformly chosen
    candidate, and the span of the values."""
    values = np.sort(patterns.astype(np.int64) @ weights, axis=0)
    n, b = values.shape
    span = values[-1] - values[0] + 1
    idx = np.arange(n)[:, None]
    start_mark = np.vstack([np.ones((1, b), dtype=bool), values[1:] != values[:-1]])
    end_mark = np.vstack([values[1:] != values[:-1], np.ones((1, b), dtype=bool)])
    start = np.maximum.accumulate(np.where(start_mark, idx, 0), axis=0)
    end = np.minimum.accumulate(np.where(end_mark, idx, n)[::-1], axis=0)[::-1]
    entropy = math.log2(n) - np.log2(end - start + 1).mean(axis=0)
    return entropy, span


def _scores(entropy: np.ndarray, span: np.ndarray) -> np.ndarray:
    """The reference's score of columns (before masking), by the reference's own float operations."""
    waste = np.log2(span.astype(np.float64)) - entropy
    return waste / np.maximum(entropy, 1e-9) - 1e-3 * entropy


@lru_cache(maxsize=4096)
def search_realization_reference(
    key: bytes, shape: tuple[int, int], max_span: int, max_weight: int
) -> tuple[int, ...] | None:
    """Seeded random search for weights with span ``<= max_span`` minimising the wasted range per bit
    resolved, ``(log2 span - H) / H``, ties to larger ``H`` (the search as first written; the fast
    :func:`search_realization` returns the same weights).

    Cached on the candidate set, so the repeated shapes (a count digit's "c of K") are searched once.
    """
    patterns = np.frombuffer(key, dtype=np.uint8).reshape(shape)
    n, k = shape
    rng = np.random.default_rng(_seed(key, n, k))
    batch = _batch(n)
    constant_count = bool(np.all(patterns.sum(axis=1) == patterns[0].sum()))
    best: tuple[float, tuple[int, ...]] | None = None
    for scale in SCALES:
        top = max(2, (2 * n) // k + 2) * scale
        weights = rng.integers(0, top, size=(k, batch))
        if constant_count:
            weights -= weights.min(axis=0)
        entropy, span = _entropy_and_span(patterns, weights)
        ok = (span <= max_span) & (weights.max(axis=0) <= max_weight) & (entropy >= min(1.0, math.log2(n)) - 1e-9)
        if not ok.any():
            continue
        score = np.where(ok, _scores(entropy, span), np.inf)
        i = int(np.argmin(score))
        if best is None or score[i] < best[0]:
            best = (float(score[i]), tuple(int(w) for w in weights[:, i]))
    if best is None:
        return None
    return best[1]


class _Draws:
    """``Generator.integers(0, top, size)`` for ``top <= 2^32`` (numpy's buffered 32-bit Lemire draws),
    vectorised; :meth:`draw` returns ``None`` where numpy would have rejected a draw."""

    def __init__(self, seed: int) -> None:
        self.bits = np.random.PCG64(seed)
        self.spare: np.ndarray | None = None  # the high half of the last 64-bit output, not yet used

    def draw(self, top: int, count: int) -> np.ndarray | None:
        words = self.words(top, count)
        return None if words is None else scaled(words, top)

    def words(self, top: int, count: int) -> np.ndarray | None:
        """The next ``count`` 32-bit words, unscaled (:func:`scaled` turns any slice into the draws), or
        ``None`` if numpy would have rejected one of them."""
        head = self.spare
        need = count - (0 if head is None else 1)
        raw = self.bits.random_raw((need + 1) // 2)
        halves = raw.view(np.uint32)  # little-endian: each output's low half first, as numpy draws them
        self.spare = halves[need:].copy() if len(halves) > need else None
        words = halves[:need] if head is None else np.concatenate([head, halves[:need]])
        threshold = (2**32 - top) % top
        # Lemire rejects a word whose product with ``top`` has a low half below the threshold: that low half
        # is the product modulo 2^32, i.e. the wrapping 32-bit product (no 64-bit product of every word).
        if threshold and bool(((words * np.uint32(top)) < threshold).any()):
            return None
        return words


def scaled(words: np.ndarray, top: int) -> np.ndarray:
    """Lemire's draws from accepted 32-bit ``words``: the high half of ``word·top``."""
    out = words.astype(np.uint64)
    out *= np.uint64(top)
    out >>= SHIFT
    return out.view(np.int64)


@lru_cache(maxsize=4096)
def search_realization(key: bytes, shape: tuple[int, int], max_span: int, max_weight: int) -> tuple[int, ...] | None:
    """:func:`search_realization_reference`'s weights, fast (see the module docstring).

    The same candidate set comes back with other caps (a carried group deferred to a later position, or the
    same ambiguity in another query): a result found under caps at least as loose is reused when it fits the
    new ones, which is exactly the reference's answer (:func:`_searched_sets`)."""
    found = _searched_sets(key, shape)
    for span_cap, weight_cap, weights, span in found:
        if span_cap >= max_span and weight_cap >= max_weight:
            if weights is None:
                return None  # no allowed column under looser caps: none under tighter ones
            if span <= max_span and max(weights, default=0) <= max_weight:
                return weights
    weights = _search(key, shape, max_span, max_weight)
    span = 0
    if weights is not None:
        values = np.frombuffer(key, dtype=np.uint8).reshape(shape).astype(np.int64) @ np.array(weights)
        span = int(values.max() - values.min()) + 1
    found.append((max_span, max_weight, weights, span))
    return weights


@lru_cache(maxsize=4096)
def _searched_sets(key: bytes, shape: tuple[int, int]) -> list[tuple[int, int, tuple[int, ...] | None, int]]:
    """The searches done on a candidate set: ``(span cap, weight cap, weights, their span)``.

    Why reusing one is exact: the reference keeps, over its scales, the first column with the least score
    among the allowed ones. Tighter caps allow a subset of the same columns (the draws depend only on the
    set); if the looser search's winner is still allowed, it is still the least and still the first (an
    earlier column with an equal score would have won before), and every other scale's best allowed column
    scores no better than under the looser caps, so it is not strictly better. With no allowed column under
    looser caps there is none under tighter ones."""
    return []


def _search(key: bytes, shape: tuple[int, int], max_span: int, max_weight: int) -> tuple[int, ...] | None:
    n, k = shape
    if n < 2 or n > 62 or sys.byteorder != "little":  # the bitmasks hold 63 values; the draws read halves
        return search_realization_reference(key, shape, max_span, max_weight)
    patterns = np.frombuffer(key, dtype=np.uint8).reshape(shape)
    as_float = patterns.astype(np.float32)
    draws = _Draws(_seed(key, n, k))
    batch = _batch(n)
    constant_count = bool(np.all(patterns.sum(axis=1) == patterns[0].sum()))
    log_n = math.log2(n)
    entropy_floor = min(1.0, log_n) - 1e-9
    # The best score any column can have: n distinct values on a span of n (same float operations).
    perfect = float(_scores(np.array([log_n - 0.0]), np.array([n]))[0])
    best: tuple[float, tuple[int, ...]] | None = None
    for scale in SCALES:
        if best is not None and best[0] <= perfect:
            break  # nothing later is strictly better, and the reference keeps only a strictly better column
        top = max(2, (2 * n) // k + 2) * scale
        words = draws.words(top, k * batch)
        if words is None:
            return search_realization_reference(key, shape, max_span, max_weight)
        words = words.reshape(k, batch)  # only the chunks scored are scaled into weights
        # Columns in chunks, in order: the first column with the least score is the reference's argmin, and a
        # perfect one ends the scale (and the search) early.
        scale_best = math.inf if best is None else best[0]
        chosen: tuple[int, ...] | None = None
        for start, stop in _chunks(batch):
            weights = scaled(words[:, start:stop], top)
            if constant_count:
                weights -= weights.min(axis=0)
            score = _scale_scores(
                patterns, as_float, weights, max_span, max_weight, entropy_floor, scale_best, perfect
            )
            if score is None:
                continue
            i = int(np.argmin(score))
            if score[i] < scale_best:
                scale_best, chosen = float(score[i]), tuple(int(w) for w in weights[:, i])
                if scale_best <= perfect:
                    break
        if chosen is not None:
            best = (scale_best, chosen)
    if best is None:
        return None
    return best[1]


@lru_cache(maxsize=256)
def _repeated_entropy_caps(n: int) -> np.ndarray:
    """``caps[d]``: the most entropy ``n`` candidates on ``d < n`` distinct values can have (the counts as
    equal as possible), a hair above; ``caps[n]`` is ``log2 n``."""
    caps = np.empty(n + 1)
    caps[0] = 0.0
    for d in range(1, n + 1):
        q, r = divmod(n, d)
        spread = r * (q + 1) * math.log2(q + 1) + (d - r) * q * math.log2(q) if q else 0.0
        caps[d] = math.log2(n) - spread / n + 1e-12
    return caps


def _chunks(batch: int) -> list[tuple[int, int]]:
    """Column ranges scored one after another: a small first chunk (a perfect column is usually in it)."""
    edges = [0] + [edge for edge in (256, 1024) if edge < batch] + [batch]
    return list(pairwise(edges))


def _scale_scores(
    patterns: np.ndarray, as_float: np.ndarray, weights: np.ndarray, max_span: int, max_weight: int,
    entropy_floor: float, beat: float = math.inf, perfect: float | None = None,
) -> np.ndarray | None:
    """The reference's masked scores of columns, exactly wherever a column could be the first best one and
    below ``beat``, ``inf`` where it is not allowed or provably worse; ``None`` if no column is allowed."""
    n = patterns.shape[0]
    values = as_float @ weights.astype(np.float32)  # small integers: exact in float32
    low = values.min(axis=0)
    span = (values.max(axis=0) - low).astype(np.int64) + 1
    ok = (span <= max_span) & (weights.max(axis=0) <= max_weight)
    if not ok.any():
        return None
    small = span <= 63
    # Each value's bit in a 64-bit mask (a column spanning more than 63 values gets a meaningless count, never
    # used: ``small`` masks it out below).
    shifted = values - low
    np.minimum(shifted, 63, out=shifted)
    bits = np.left_shift(np.uint64(1), shifted.astype(np.uint8))
    distinct = np.bitwise_count(np.bitwise_or.reduce(bits, axis=0)).astype(np.int64)
    if perfect is not None:
        # The first allowed column with n distinct values on a span of n is the least score (nothing scores
        # below it: see ``perfect`` in :func:`_search`) and the first such: no other column needs scoring.
        hits = np.flatnonzero(ok & (span == n) & (distinct == n))
        if len(hits):
            score = np.full(weights.shape[1], np.inf)
            score[hits[0]] = perfect
            return score
    injective = small & (distinct == n)
    score = np.full(weights.shape[1], np.inf)
    clean = ok & injective
    if clean.any():
        score[clean] = _scores(np.full(int(clean.sum()), math.log2(n) - 0.0), span[clean])
    # Lower bounds for the other allowed columns: H at most the cap for their number of distinct values.
    caps = _repeated_entropy_caps(n)
    cap = np.where(small, caps[np.minimum(distinct, n)], caps[n])
    bound = _scores(np.maximum(np.minimum(cap, np.log2(span.astype(np.float64))), 1e-9), span) - 1e-9
    # A column whose entropy cannot reach the floor is never allowed (e.g. every candidate on one value).
    others = np.flatnonzero(ok & ~injective & (cap >= entropy_floor))
    if len(others) == 0:
        return score if clean.any() else None
    best = min(float(score.min()), beat)
    if not math.isfinite(best):
        # No distinct-valued column: score the most promising exactly, to have a best to prune with.
        order = others[np.argsort(bound[others], kind="stable")]
        _exact(patterns, weights, order[:32], score, entropy_floor)
        best = float(score.min())
        others = order[32:]
    rest = others[bound[others] <= best]
    if len(rest):
        _exact(patterns, weights, rest, score, entropy_floor)
    return score if np.isfinite(score).any() else None


def _exact(patterns: np.ndarray, weights: np.ndarray, columns: np.ndarray, score: np.ndarray, floor: float) -> None:
    """Score ``columns`` with the reference's own sort (two or more at a time: a single column would be
    summed in another order)."""
    if len(columns) == 0:
        return
    padded = columns if len(columns) > 1 else np.repeat(columns, 2)
    entropy, span = _entropy_and_span_counted(patterns, weights[:, padded])
    entropy, span = entropy[: len(columns)], span[: len(columns)]
    score[columns] = np.where(entropy >= floor, _scores(entropy, span), np.inf)


def _entropy_and_span_counted(patterns: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_entropy_and_span`'s floats in fewer steps: each sorted value's run length is the number of
    values equal to it (one comparison of every pair instead of marking and accumulating run ends); the same
    logarithms, averaged in the same order, give the same entropies."""
    n, b = patterns.shape[0], weights.shape[1]
    if n * n * b > 1 << 21:
        return _entropy_and_span(patterns, weights)
    values = np.sort(patterns.astype(np.int64) @ weights, axis=0)
    span = values[-1] - values[0] + 1
    runs = (values[:, None, :] == values[None, :, :]).sum(axis=1)
    # ``mean`` is this sum divided by the count (numpy's own definition), without its bookkeeping.
    entropy = math.log2(n) - np.add.reduce(np.log2(runs), axis=0) / n
    return entropy, span
