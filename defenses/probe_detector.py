"""Flag (and optionally reject) a submission whose predictions have the structure of a label-inference probe
rather than of a model's output: the constructions of the attack papers are very regular, honest models
are not.

Signals, each checked per probability column (binary: the positive-class column):

* ``spike`` — at least ``constant_share`` of the rows sit at one value and the few others differ from it:
  the batched attacks set every row outside the current batch to a constant (paper 000, Algorithm 1: "all
  other entries set to 1", i.e. p = 1/2; the Data Science Bowl 2017 kernel: 0.5 outside a 15-row chunk).
  Not flagged: a constant baseline (no other rows) and hard labels (one other value on more than 1 % of rows).
* ``prime_odds`` — at least ``min_structured`` distinct values whose odds ``p/(1-p)`` (or its inverse, or
  twice either) is an integer prime, making up at least half of the distinct non-constant values: paper 000
  Theorem 1 (``p_i = 1/(1+q_i)``, q_i prime) and paper 004 Algorithm 1 (twin primes, ``p_i = q_i/(q_i+2)``).
* ``geometric_log_odds`` — ``min_structured`` distinct log-odds offsets from the constant (or their successive
  gaps) in exact geometric progression: the DSB 2017 kernel (``1/(1+exp(n·ε·2^j))``), paper 004 Algorithm 3
  (odds ``2^(2^(i-1))``), paper 000 Algorithm 3 (``3·exp(2^j·N·τ)``), and scaled powers of two in general.
* ``near_spike`` — at least ``constant_share`` of the rows within ``spike_tolerance`` (absolute, per class
  column) of the median row, not all equal, and some rows outside: the batched probes with their constant
  rows jittered (issue 10: moving the 1/2 rows by up to 1e-7 slipped every probe past ``spike``). Hard labels
  (two values) are not flagged, as for ``spike``.
* ``sparse_change`` (across submissions) — the submission is a *sparse edit* of at least ``sparse_edits`` of
  the participant's recent ones: on a secret random sample of ``sample`` rows (drawn once per competition),
  fewer than ``min_changed`` of the rows moved by more than ``change_tolerance`` in logit, although the files
  differ (hard labels, two values, are exempt). A differential attack keeps a base vector and moves a few
  rows per query (the ``camouflage`` attack's levels 0 and 1); an honest participant's next model moves most
  rows. Identical files (a resubmission) are
  not sparse edits. The last ``history`` sketches (the sampled logits as float32, and a digest of the file)
  are kept in the state.
* ``random_hard_labels`` (across submissions, binary only) — a 0/1 vector that agrees with each of at least 3
  of the participant's recent 0/1 submissions on ``50 % ± 2/√n`` of the rows, as independent uniformly
  random vectors do: Blum & Hardt's boosting attack (ICML 2015, Section 4). Two honest hard-label models
  agree on far more rows than that. The last ``history`` 0/1 vectors are kept, bit-packed, in the state.

False-positive rate on honest models and detection rate on the papers' probes are measured by
``benchmarks/probe_detector_rates.py`` and pinned by ``tests/defenses/test_probe_detector.py``.

What it cannot catch (measured there against the ``camouflage`` attack, which adapts when refused): queries
whose every row moves by more than ``change_tolerance`` from every earlier query. An attacker moves the rows
whose labels it already knows for free and pays for the others: each unknown row moved by ``a`` in logit adds
``a`` of unknown label-dependent loss, which widens the window the exact code must clear — about
``min_changed·N·change_tolerance`` per query while few labels are known. Measured at 5 decimals (exact labels
every time): 2,201 rows 174 queries undefended, 193 with the default detector, 277 with a strict one
(``min_changed: 0.5, sparse_edits: 2``); 25,000 rows 2,746 / 3,425 / 10,101. The strict one also flags 91 % of
an honest k-NN sweep and 56 % of a re-seeded random forest; the default flags no honest sequence measured. So
the detector raises the cost of exact inference, it does not bound leakage; and a stream of independent
honest-looking vectors (a fresh random model per query, decoded jointly as the ``noisy`` attack decodes its
random-sign queries) is indistinguishable from a participant trying many models.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from defenses.base import (
    SCOPE_PARAM,
    Defense,
    DefenseConfigError,
    DefenseContext,
    Param,
    ScoringView,
    Stage,
    register,
    take_params,
    take_scope,
)

REJECT_MESSAGE = (
    "This submission was rejected: its predictions have the structure of a crafted label-inference probe "
    "rather than of a model's output."
)

_MAX_ODDS = 2**40  # larger "integers" are beyond float64's resolution of odds near 0 or 1
_RELATIVE_TOLERANCE = 1e-9
_RATIO_TOLERANCE = 1e-6
#: Defaults of the strengthened signals (issue 10). Honest models on breast cancer put at most 67 % of their rows
#: within 0.03 of their median (10 splits × 13 models); 1e-3 is far above the 1e-7 jitter it is there to catch.
SPIKE_TOLERANCE = 1e-3
CHANGE_TOLERANCE = 1e-3
#: Honest sweeps (breast cancer, 3 splits): k-NN k → k+1 moves 9–28 % of rows by more than 1e-3 in logit, random
#: forests re-seeded 36–50 %, a deep tree one level deeper 0–6 % (hence three sparse edits, not one, before a flag).
MIN_CHANGED = 0.1
SPARSE_EDITS = 3
SAMPLE_ROWS = 512


def is_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for ``n < 3.3·10^24`` (the first 13 prime bases suffice).

    >>> [q for q in range(30) if is_prime(q)]
    [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
    """
    if n < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for p in bases:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in bases:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _near_prime(value: float) -> bool:
    if not 1.5 <= value <= _MAX_ODDS:
        return False
    nearest = round(value)
    return abs(value - nearest) <= _RELATIVE_TOLERANCE * value and is_prime(nearest)


def _has_prime_odds(p: float) -> bool:
    odds = p / (1 - p)
    return any(_near_prime(v) for v in (odds, 1 / odds, 2 * odds, 2 / odds))


def _prime_odds_count(values: np.ndarray) -> int:
    """How many of ``values`` have prime odds (:func:`_has_prime_odds`), the near-integer test vectorised (a
    25,000-row submission is checked in milliseconds) and primality tested only where it passes."""
    if len(values) == 0:
        return 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        odds = values / (1 - values)
        candidates = np.stack([odds, 1 / odds, 2 * odds, 2 / odds])
        nearest = np.round(candidates)
        near = (candidates >= 1.5) & (candidates <= _MAX_ODDS) & (
            np.abs(candidates - nearest) <= _RELATIVE_TOLERANCE * candidates)
    hits = np.zeros(len(values), dtype=bool)
    for k, i in zip(*np.nonzero(near), strict=True):
        if not hits[i] and is_prime(int(nearest[k, i])):
            hits[i] = True
    return int(hits.sum())


def _geometric_run(values: np.ndarray, length: int) -> bool:
    """Whether sorted positive ``values`` hold ``length`` consecutive terms with one common ratio ≥ 1.5
    (``length − 2`` consecutive pairs of equal successive ratios, vectorised)."""
    if len(values) < length:
        return False
    ratios = values[1:] / values[:-1]
    previous, current = ratios[:-1], ratios[1:]
    same = ((previous >= 1.5) & (np.abs(current - previous) <= _RATIO_TOLERANCE * previous)).astype(np.int64)
    need = length - 2
    if len(same) < need:
        return False
    return bool(np.convolve(same, np.ones(need, dtype=np.int64), mode="valid").max() >= need)


def probe_signals(
    predictions: np.ndarray, *, constant_share: float = 0.9, min_structured: int = 4,
    spike_tolerance: float = SPIKE_TOLERANCE,
) -> list[str]:
    """The probe signals of a prediction vector (binary: P(class 1) per row) or matrix (one column per class).

    The constant is the most common prediction *row*; the structure checks run per class column over the
    other rows (all rows when no value holds half of them).

    >>> probe_signals(np.array([0.5] * 95 + [1 / (1 + q) for q in (2, 3, 5, 7, 11)]))  # doctest: +ELLIPSIS
    ['spike: 95/100 rows at 0.5, 5 other', 'prime_odds: 5 of 5 distinct values have prime odds']
    >>> probe_signals(np.linspace(0.01, 0.99, 100))
    []
    """
    matrix = predictions[:, None] if predictions.ndim == 1 else predictions
    n = len(matrix)
    if n == 0:
        return []
    if matrix.shape[1] == 1:  # np.unique along an axis sorts row views: ten times slower on one column
        values, inverse, counts = np.unique(matrix[:, 0], return_inverse=True, return_counts=True)
        rows = values[:, None]
    else:
        rows, inverse, counts = np.unique(matrix, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    mode_index = int(np.argmax(counts))
    mode_row, mode_count = rows[mode_index], int(counts[mode_index])
    n_other = n - mode_count
    signals: list[str] = []
    if mode_count >= constant_share * n and n_other > 0 and (len(rows) >= 3 or n_other <= max(1, n // 100)):
        shown = f"{float(mode_row[0]):.6g}" if len(mode_row) == 1 else "one row vector"
        signals.append(f"spike: {mode_count}/{n} rows at {shown}, {n_other} other")
    elif spike_tolerance > 0 and len(rows) >= 3:
        signals.extend(_near_spike(matrix, constant_share, spike_tolerance))
    has_constant = mode_count >= 0.5 * n
    candidates = matrix[inverse != mode_index] if has_constant else matrix
    for j in range(matrix.shape[1]):
        reference = float(mode_row[j]) if has_constant else 0.5
        for signal in _column_structure(candidates[:, j], reference, min_structured):
            signals.append(signal if matrix.shape[1] == 1 else f"class {j}: {signal}")
    return signals


def _near_spike(matrix: np.ndarray, share: float, tolerance: float) -> list[str]:
    """``share`` of the rows within ``tolerance`` of the median row (every class column), some rows outside.

    >>> _near_spike(np.r_[0.5 + 1e-7 * np.linspace(-1, 1, 95), [0.01, 0.2, 0.7, 0.9, 0.99]][:, None], 0.9, 1e-3)
    ['near_spike: 95/100 rows within 0.001 of 0.5, 5 other']
    """
    centre = np.median(matrix, axis=0)
    inside = np.abs(matrix - centre).max(axis=1) <= tolerance
    count = int(inside.sum())
    n = len(matrix)
    if count < share * n or count == n:
        return []
    shown = f"{float(centre[0]):.6g}" if matrix.shape[1] == 1 else "one row vector"
    return [f"near_spike: {count}/{n} rows within {tolerance:g} of {shown}, {n - count} other"]


def _column_structure(column: np.ndarray, reference: float, min_structured: int) -> list[str]:
    """Prime odds and geometric log-odds among one column's non-constant values."""
    values, counts = np.unique(column[(column > 0) & (column < 1)], return_counts=True)
    if len(values) == 0:
        return []
    signals: list[str] = []
    # A probe gives each prime its own row (or two); an honest model's small-denominator values (k-NN's j/k,
    # a tree's leaf frequencies) are shared by many rows, so only rare values count.
    prime_values = _prime_odds_count(values[counts <= 2])
    if prime_values >= min_structured and prime_values >= 0.5 * len(values):
        signals.append(f"prime_odds: {prime_values} of {len(values)} distinct values have prime odds")
    log_odds = np.log(values) - np.log1p(-values)
    centre = math.log(reference) - math.log1p(-reference) if 0 < reference < 1 else 0.0
    offsets = np.unique(np.abs(log_odds - centre))
    offsets = offsets[offsets > 0]
    gaps = np.diff(offsets)
    if _geometric_run(offsets, min_structured) or _geometric_run(gaps[gaps > 0], min_structured):
        signals.append("geometric_log_odds: log-odds in exact geometric progression")
    return signals


@register
class ProbeDetector(Defense):
    """Flag a submission that looks like a label-inference probe; with ``reject: true``, refuse to score it.

    Parameters: ``reject`` (default false: only a host note), ``constant_share`` (default 0.9: the share of
    rows at one value that makes a spike), ``min_structured`` (default 4: how many structured values make a
    prime-odds or geometric pattern), ``history`` (default 8: recent 0/1 submissions kept for the
    random-hard-labels signal; 0 turns it off). Runs at the DATA stage and judges the whole submission (every
    row, in the canonical order, :attr:`ScoringView.whole_submission`), not the split's rows: the verdict is a
    function of the vector and the participant's history only, the same on the public and the private split,
    so a rejection tells nothing about which rows are in which split (a vector probe-like on chosen rows only
    used to be rejected or not by the split those rows were in). The site charges a rejected submission
    against the quota like any other. State per participant: ``hard_labels``, the kept vectors, and
    ``sketches``; with ``scope: "competition"`` one history for the whole board, so a submission is compared
    with the board's recent submissions, whoever made them (sparse edits spread over fresh accounts); with
    ``scope: "team"`` one history per team (two merging teams keep both histories' most recent entries).

    Sources: Aggarwal et al., ICML 2021 (paper 000), Theorem 1 and Algorithms 1 and 3; Aggarwal et al.,
    PrivateNLP 2020 (paper 004), Algorithms 1 and 3; the Data Science Bowl 2017 leaderboard-probing kernel
    (FIELD_NOTES). The detector is a heuristic: a probe author who adds jitter evades it (it raises the cost
    of the published constructions, it does not bound leakage).
    """

    name = "probe_detector"
    stage = Stage.DATA
    citation = "Aggarwal et al. ICML 2021 Thm 1, Algs 1 and 3; Aggarwal et al. 2020 Algs 1 and 3; DSB 2017 kernel"
    parameters = (
        Param("reject", "boolean", False, help="refuse to score a probe (false: only a host note)"),
        Param("constant_share", "number", 0.9, minimum=0.5, maximum=1, exclusive_maximum=True,
              help="the share of rows at one value that makes a spike"),
        Param("min_structured", "integer", 4, minimum=3,
              help="how many structured values make a prime-odds or geometric pattern"),
        Param("history", "integer", 8, minimum=0, maximum=64,
              help="recent 0/1 submissions kept for the random-hard-labels signal (0: off)"),
        Param("spike_tolerance", "number", SPIKE_TOLERANCE, minimum=0, maximum=0.1,
              help="a row within this (absolute) of the common value counts toward a spike"),
        Param("change_tolerance", "number", CHANGE_TOLERANCE, minimum=0, maximum=10,
              help="a sampled row moved by more than this in logit counts as changed"),
        Param("min_changed", "number", MIN_CHANGED, minimum=0, maximum=1,
              help="fewer changed sampled rows than this share make a sparse edit of a recent submission"),
        Param("sparse_edits", "integer", SPARSE_EDITS, minimum=0, maximum=64,
              help="sparse edits of this many recent submissions flag a probe (0: off)"),
        Param("sample", "integer", SAMPLE_ROWS, minimum=16, maximum=100_000,
              help="rows in the secret sample that submissions are compared on"),
        SCOPE_PARAM,
    )

    def __init__(self, **params: Any) -> None:
        self.scope, params = take_scope(self.name, params)
        p = take_params(
            self.name, params, {
                "reject": False, "constant_share": 0.9, "min_structured": 4, "history": 8,
                "spike_tolerance": SPIKE_TOLERANCE, "change_tolerance": CHANGE_TOLERANCE, "min_changed": MIN_CHANGED,
                "sparse_edits": SPARSE_EDITS, "sample": SAMPLE_ROWS,
            }
        )
        if not isinstance(p["reject"], bool):
            raise DefenseConfigError(f"defense 'probe_detector': 'reject' must be true or false, got {p['reject']!r}")
        share = p["constant_share"]
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.5 <= share < 1:
            raise DefenseConfigError(f"defense 'probe_detector': 'constant_share' must be in [0.5, 1), got {share!r}")
        structured = p["min_structured"]
        if isinstance(structured, bool) or not isinstance(structured, int) or structured < 3:
            raise DefenseConfigError(
                f"defense 'probe_detector': 'min_structured' must be an integer of at least 3, got {structured!r}"
            )
        history = p["history"]
        if isinstance(history, bool) or not isinstance(history, int) or not 0 <= history <= 64:
            raise DefenseConfigError(
                f"defense 'probe_detector': 'history' must be an integer from 0 to 64, got {history!r}"
            )
        self.history: int = history
        self.spike_tolerance = _number(p, "spike_tolerance", 0.0, 0.1)
        self.change_tolerance = _number(p, "change_tolerance", 0.0, 10.0)
        self.min_changed = _number(p, "min_changed", 0.0, 1.0)
        self.sparse_edits = _integer(p, "sparse_edits", 0, 64)
        self.sample = _integer(p, "sample", 16, 100_000)
        self.reject: bool = p["reject"]
        self.constant_share = float(share)
        self.min_structured: int = structured

    def params(self) -> dict[str, Any]:
        return {
            "reject": self.reject, "constant_share": self.constant_share, "min_structured": self.min_structured,
            "history": self.history, "spike_tolerance": self.spike_tolerance,
            "change_tolerance": self.change_tolerance, "min_changed": self.min_changed,
            "sparse_edits": self.sparse_edits, "sample": self.sample, **self.scope_params(),
        }

    def initial_state(self) -> dict[str, Any]:
        return {"hard_labels": [], "sketches": []}

    def merge_state(self, kept: dict[str, Any], other: dict[str, Any], *, higher_is_better: bool) -> dict[str, Any]:
        """Both histories, the merged-in team's first, trimmed to the ``history`` most recent entries."""
        merged = dict(kept)
        for key in ("hard_labels", "sketches"):
            both = [*other.get(key, []), *kept.get(key, [])]
            merged[key] = both[-self.history:] if self.history else []
        return merged

    def before_metric(self, view: ScoringView, ctx: DefenseContext) -> ScoringView:
        # Logits (softmax_ce, sigmoid_ce) are read as the probabilities they stand for, so every signal keeps
        # its meaning (a spike at logit 0 is a spike at 1/2; prime odds are prime odds).
        # The whole submission, never the split's rows: judged per split, a vector probe-like on chosen rows only
        # was rejected or not by which split those rows are in, and a rejection read split membership.
        predictions = view.metric.probabilities(view.whole_submission)
        signals = probe_signals(
            predictions, constant_share=self.constant_share, min_structured=self.min_structured,
            spike_tolerance=self.spike_tolerance,
        )
        if self.history and predictions.ndim == 1 and np.isin(predictions, (0.0, 1.0)).all():
            signals.extend(self._random_hard_labels(predictions.astype(bool), ctx))
        if self.history and self.sparse_edits and len(np.unique(predictions)) > 2:
            # Hard labels (two values) are exempt: honest thresholded models differ on few rows; the random ones
            # of the boosting attack are what ``random_hard_labels`` looks for.
            signals.extend(self._sparse_change(predictions, ctx))
        if signals:
            ctx.notes.append("probe_detector: " + "; ".join(signals))
            if self.reject:
                ctx.reject = REJECT_MESSAGE
        return view

    def _random_hard_labels(self, bits: np.ndarray, ctx: DefenseContext) -> list[str]:
        """Compare a 0/1 vector with the participant's recent ones, then remember it."""
        n = len(bits)
        kept: list[str] = ctx.state.setdefault("hard_labels", [])
        random_like = 0
        for entry in kept:
            length, packed = entry.split(":")
            if int(length) != n:
                continue  # scored on other rows (e.g. subsetting before the detector)
            earlier = np.unpackbits(np.frombuffer(bytes.fromhex(packed), dtype=np.uint8), count=n).astype(bool)
            if abs(float(np.mean(earlier == bits)) - 0.5) <= 2 / math.sqrt(n):
                random_like += 1
        kept.append(f"{n}:{np.packbits(bits).tobytes().hex()}")
        del kept[: -self.history]
        if random_like >= 3:
            return [f"random_hard_labels: agrees ~50% with {random_like} recent 0/1 submissions"]
        return []

    def _sparse_change(self, predictions: np.ndarray, ctx: DefenseContext) -> list[str]:
        """Compare the sampled logits with the participant's recent submissions' ones, then remember them."""
        matrix = predictions[:, None] if predictions.ndim == 1 else predictions
        n = len(matrix)
        if n == 0:
            return []
        rows = _sample_rows(n, self.sample, ctx)
        clipped = np.clip(matrix[rows], 1e-15, 1 - 1e-15)
        logits = (np.log(clipped) - np.log1p(-clipped)).astype(np.float32)
        digest = hashlib.sha256(np.ascontiguousarray(matrix, dtype=np.float64).tobytes()).hexdigest()[:32]
        kept: list[str] = ctx.state.setdefault("sketches", [])
        sparse = 0
        for entry in kept:
            length, earlier_digest, packed = entry.split(":")
            if int(length) != n or earlier_digest == digest:
                continue  # other rows scored, or the very same file again (a resubmission is no probe)
            earlier = np.frombuffer(bytes.fromhex(packed), dtype=np.float32).reshape(logits.shape)
            moved = np.abs(logits.astype(np.float64) - earlier).max(axis=1) > self.change_tolerance
            if float(moved.mean()) < self.min_changed:
                sparse += 1
        kept.append(f"{n}:{digest}:{logits.tobytes().hex()}")
        del kept[: -self.history]
        if sparse >= self.sparse_edits:
            return [f"sparse_change: a sparse edit of {sparse} recent submissions (fewer than "
                    f"{self.min_changed:.0%} of sampled rows moved by more than {self.change_tolerance:g} in logit)"]
        return []


def _sample_rows(n: int, sample: int, ctx: DefenseContext) -> np.ndarray:
    """The rows the sketches keep: every row of a small set, else a random sample of the submission's rows drawn
    once per competition, the same on every split (secret: a participant cannot move only the sampled rows)."""
    if n <= sample:
        return np.arange(n)
    rng = ctx.board_rng if ctx.board_rng is not None else np.random.default_rng(0)
    return np.sort(rng.choice(n, size=sample, replace=False))


def _number(params: dict[str, Any], key: str, low: float, high: float) -> float:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise DefenseConfigError(f"defense 'probe_detector': '{key}' must be a number in [{low:g}, {high:g}], "
                                 f"got {value!r}")
    return float(value)


def _integer(params: dict[str, Any], key: str, low: int, high: int) -> int:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DefenseConfigError(f"defense 'probe_detector': '{key}' must be an integer from {low} to {high}, "
                                 f"got {value!r}")
    return value
