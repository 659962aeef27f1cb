"""The majority-class floor of ``auto``'s final labels: a guess replaces the majority label on a row only when
it is more likely right there, and a group of guesses stays only when a held-out check query says so.

Every best guess (``boosting``, ``noisy``, ``thresholdout``, ``ladder``, …) reports a posterior per row, but a
posterior is only as good as the model behind it: ``noisy`` fitted to a Thresholdout board, or boosting's vote
weight on a Ladder, can claim 0.99 on rows that are right 65 % of the time. Issue 10, item 2 asks for no best
guess below the majority class, so the floor does not trust the posteriors alone:

1. **Posterior rule.** On a binary board a guessed row keeps a label other than the majority class ``m`` only
   if its posterior is above 1/2 (the posteriors include the class balance as their prior, so that is "more
   likely right than ``m``"); without check queries the moved rows together must also promise a gain over
   ``m`` of more than :data:`Z` standard deviations (the sum of ``2c − 1`` against its spread).
2. **Check queries** (:func:`measure_band`), when the budget holds them and the board releases fresh scores
   (not a Ladder): the moved rows, in up to :data:`BANDS` bands by posterior, each get a pair of queries —
   every band row at the clipping edge towards its guess (``A``) and away from it (``B``), every other row at
   1/2. With ``v_r, v_w`` the loss of a right and a wrong edge prediction, ``s`` scored band rows of ``M``
   scored rows and ``r`` of them right::

       B − A          = (2r − s)(v_w − v_r) / M
       A + B − 2 ln 2 = s (v_r + v_w − 2 ln 2) / M

   so ``r / s`` — the band's accuracy — comes out of the ratio with ``M`` cancelled, on a public split, a
   Thresholdout reference side or a subset alike; the edge makes one row worth ``34.5 / M`` of score, so
   Laplace noise of 1e-3 on 2,201 rows blurs the count by a tenth of a row. A band is kept only when its
   measured accuracy is above 1/2 (where the majority labeling's is below) by :data:`Z` standard errors: the
   release noise, plus binomial sampling when the scored rows are only part of the band (a split, a subset,
   Thresholdout's reference side, which the sum ``A + B`` exposes). On a public split the private rows of a
   band are unmeasured: their guesses count at the majority's complement (what an unscored guess is worth).

The check measures the very quantity the floor is about (how many of these rows the guess gets right), so a
miscalibrated posterior cannot talk its way past it; the cost is ``2 · BANDS`` queries of the budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attacks.fingerprint import Fingerprint
from attacks.oracle import Oracle
from attacks.result import SubmissionRefused

LN2 = math.log(2.0)
#: Standard deviations (or standard errors) a guess's gain must clear: 2 keeps a no-gain guess ~2 % of the time.
Z = 2.0
#: Confidence bands of moved rows measured separately (each costs two check queries), at least
#: :data:`MIN_BAND` rows each (a smaller band's binomial error swamps its gain on a sampled board).
BANDS = 3
MIN_BAND = 100
#: Smallest budget (queries left for the guess) that gives up two queries per band to the check.
MIN_BUDGET_FOR_CHECK = 40
#: Fewest band rows a check must see (scored) to judge the band; fewer is no measurement.
MIN_SEEN = 10


def check_reserve(left: int | None, *, ladder: bool) -> int:
    """Queries to keep for the check (``left``: the queries the guess would otherwise get; ``None``: no limit).
    None on a Ladder-like board, whose re-released scores cannot answer a check.

    >>> check_reserve(None, ladder=False), check_reserve(300, ladder=False), check_reserve(30, ladder=False)
    (6, 6, 0)
    """
    if ladder or (left is not None and left < MIN_BUDGET_FOR_CHECK):
        return 0
    return 2 * BANDS


@dataclass
class BandCheck:
    """One band's measured accuracy ``accuracy`` ± ``se`` (``None``: nothing measurable was released) and the
    scored share of the band's rows that the pair saw (``scored``, as a share of the board's scored rows)."""

    rows: int
    accuracy: float | None
    se: float = math.inf
    scored: float = 0.0
    faithful: bool = False


def edge(eps: float) -> float:
    """The check's edge prediction: the power of two at or just above the clipping ``eps``, so that ``1 − edge``
    is exact in float64 and both sides lose exactly the same (``1 − 1e-15`` is not: its wrong loss is 34.434,
    ``1e-15``'s 34.539, enough to skew the pair's sum).

    >>> edge(1e-15) == 2.0**-49, edge(0.25)
    (True, 0.25)
    """
    return float(2.0 ** math.ceil(math.log2(eps)))


def edge_losses(eps: float) -> tuple[float, float]:
    """The log loss of an :func:`edge` prediction when right and when wrong.

    >>> [round(v, 3) for v in edge_losses(1e-15)]
    [0.0, 33.964]
    """
    e = edge(eps)
    return -math.log1p(-e), -math.log(e)


def measure_band(
    oracle: Oracle, rows: np.ndarray, guess: np.ndarray, *, noise: float, sampled: bool, n_scored: float,
    repeats: int = 1,
) -> BandCheck:
    """The accuracy of ``guess`` on ``rows`` from ``repeats`` ``A``/``B`` pairs (module docstring), averaged.
    ``noise``: the release noise's standard deviation; ``sampled``: the board is known to score only part of
    the rows (add binomial error); ``n_scored``: the board's scored rows (for that binomial error). Pairs that
    differ beyond the noise are fresh draws (a new subset or new flips each time), so they also average the
    sampling error down; identical ones (a fixed side) do not."""
    n = oracle.n_rows
    v_right, v_wrong = edge_losses(oracle.eps)
    unit_sum = v_right + v_wrong - 2 * LN2
    unit_diff = v_wrong - v_right
    scored_draws: list[float] = []
    net_draws: list[float] = []
    outside = np.setdiff1d(np.arange(n), rows)
    spare = int(outside[0]) if len(outside) else None  # a row at 1/2, jittered so no repeat is the same file
    for _ in range(repeats if spare is not None else 1):
        releases: list[float] = []
        for towards in (True, False):
            pred = np.full(n, 0.5)
            side = guess == 1 if towards else guess == 0
            pred[rows] = np.where(side, 1.0 - edge(oracle.eps), edge(oracle.eps))
            if spare is not None:
                pred[spare] += len(scored_draws) * 1e-12  # a new file each repeat, the same score to ~1e-12/N
            try:
                value = oracle.submit(pred)
            except SubmissionRefused:
                value = None
            if value is None:
                break
            releases.append(float(value))
        if len(releases) < 2:
            break
        a, b = releases
        scored_draws.append((a + b - 2 * LN2) / unit_sum)  # s / M
        net_draws.append((b - a) / unit_diff)  # (2r - s) / M
    if not scored_draws:
        return BandCheck(len(rows), None)
    k = len(scored_draws)
    scored, net = float(np.mean(scored_draws)), float(np.mean(net_draws))
    pair_sd = math.sqrt(2.0) * noise
    if scored <= Z * pair_sd / unit_sum / math.sqrt(k) or scored <= 0:
        return BandCheck(len(rows), None, scored=scored)  # the band is not scored (or lost in the noise)
    ratio = net / scored
    accuracy = float(np.clip(0.5 + 0.5 * ratio, 0.0, 1.0))
    se_noise = 0.5 * pair_sd * math.sqrt(1 / unit_diff**2 + (ratio / unit_sum) ** 2) / scored / math.sqrt(k)
    # Every row scored: the pair's sum must show the whole band (s/M = |band|/N); when it does not, only part of
    # the band was scored (Thresholdout's reference side, a subset) or labels were flipped afresh, and the
    # count is a sample of the band.
    tol = 4 * pair_sd / unit_sum + 1e-9
    faithful = not sampled and all(abs(v - len(rows) / n) <= tol for v in scored_draws)
    se = se_noise
    if not faithful:
        fresh = k > 1 and max(scored_draws) - min(scored_draws) > tol
        seen = max(1.0, scored * n_scored * (k if fresh else 1))
        se = math.sqrt(se_noise**2 + 0.25 / seen)
    return BandCheck(len(rows), accuracy, se, scored, faithful)


@dataclass
class FloorOutcome:
    """What the floor did: rows moved off the majority class before and after, and the reasoning lines."""

    moved_before: int = 0
    moved_after: int = 0
    checks: int = 0
    lines: list[str] | None = None


def apply_floor(
    oracle: Oracle,
    labels: np.ndarray,
    confidence: np.ndarray,
    report: Fingerprint,
    rates: np.ndarray | None,
    *,
    check_budget: int,
    known_public: np.ndarray | None = None,
    n_public: int | None = None,
) -> FloorOutcome:
    """Floor ``labels``/``confidence`` in place (binary boards): see the module docstring. ``rates``: the class
    shares of the rows still guessed (the majority class and its share); ``check_budget``: queries it may
    spend on check pairs; ``known_public``: rows the guess itself found scored (``noisy_split``'s mask), which
    a check measures in full rather than at the split's share; ``n_public``: the guess's count of the scored rows
    when its mask holds only those it read (``blocks_split`` with too few reads for every row)."""
    out = FloorOutcome(lines=[])
    lines = out.lines
    assert lines is not None
    if rates is None or len(rates) != 2:
        return out
    majority = int(np.argmax(rates))
    share = float(np.max(rates))
    guessed = (labels >= 0) & (confidence < 1.0)
    moved = guessed & (labels != majority)
    out.moved_before = int(moved.sum())
    if not moved.any():
        return out

    def revert(mask: np.ndarray) -> None:
        labels[mask] = majority
        confidence[mask] = min(share, 1.0 - 1e-9)  # a guess, never an exact label (1.0)

    # 1. Posterior rule: no row off the majority class on a posterior of 1/2 or less.
    weak = moved & (confidence <= 0.5)
    if weak.any():
        revert(weak)
        moved &= ~weak
        lines.append(f"floor: {int(weak.sum())} guessed row(s) with a posterior <= 1/2 back to class {majority}")
    c = confidence[moved]
    gain = float((2 * c - 1).sum())
    spread = math.sqrt(float((1 - (2 * c - 1) ** 2).sum()))
    can_check = check_budget >= 2
    if moved.any() and not _promises_gain(c) and not can_check:
        # Nothing to measure with: the posteriors' own promise must clear the bar. (With check queries the
        # measurement decides: a decoder that ran out of budget reports shrunken posteriors on rows it has right.)
        lines.append(f"floor: the {int(moved.sum())} moved row(s) promise a gain of {gain:.1f} ± {spread:.1f} rows "
                     f"over class {majority}, under {Z:g} sd: all back to the majority class")
        revert(moved)
        out.moved_after = 0
        return out
    # 2. Check queries, band by band (highest posteriors first).
    split = report.public_fraction
    sampled = bool(report.subsetting or report.only_public_moves or split is not None)
    n_scored = oracle.n_rows * (split if split is not None else 1.0)
    if report.scored_rows_estimate is not None and sampled:
        n_scored = float(report.scored_rows_estimate)
    if known_public is not None and known_public.any():
        n_scored = float(known_public.sum())  # the guess's own count (the fingerprint's is a noisy probe's)
        if n_public is not None and n_public > n_scored:
            n_scored = float(n_public)  # the mask names only the public rows the guess read
    noise = max(report.noise_spread, report.tolerance) if report.noise else report.tolerance
    idx = np.flatnonzero(moved)
    pairs = min(BANDS, check_budget // 2)
    bands = min(pairs, max(1, len(idx) // MIN_BAND))
    if bands == 0:
        lines.append(f"floor: {len(idx)} row(s) off class {majority} on their posteriors (no check query left)")
        out.moved_after = len(idx)
        return out
    order = idx[np.argsort(-confidence[idx], kind="stable")]
    for i, band in enumerate(np.array_split(order, bands)):
        repeats = pairs // bands + (1 if i < pairs % bands else 0)  # spare pairs repeat a band's check
        before = oracle.queries
        check = measure_band(oracle, band, labels[band], noise=noise, sampled=sampled, n_scored=n_scored,
                             repeats=repeats)
        out.checks += oracle.queries - before
        if check.accuracy is None or check.scored * n_scored < MIN_SEEN:
            if split is not None:
                # Private rows of a declared split: nothing measures them and no score informed their guesses.
                revert(_mask(len(labels), band))
                lines.append(f"floor: a band of {len(band)} row(s) is not scored (private): back to class {majority}")
            elif _promises_gain(confidence[band]):
                # Rows the check cannot see (Thresholdout's holdout side answers through its own noisy
                # releases, which the attack that decoded them modelled): the posteriors' own promise stands.
                lines.append(f"floor: the check saw too few of a band of {len(band)} row(s); kept on posteriors")
            else:
                revert(_mask(len(labels), band))
                lines.append(f"floor: the check saw too few of a band of {len(band)} row(s) and their posteriors "
                             f"promise no gain over {Z:g} sd: back to class {majority}")
            continue
        accuracy = check.accuracy
        if split is not None:
            # The pair measured the band's public rows; its private rows' guesses saw no score at all. A row the
            # guess found public is public; any other is at the split's share.
            public = split if known_public is None else float(np.mean(np.where(known_public[band], 1.0, split)))
            accuracy = public * accuracy + (1 - public) * (1 - share)
        verdict = accuracy - Z * check.se > 0.5
        posterior = float(confidence[band].mean())
        lines.append(f"floor: check of {len(band)} row(s) (posterior {posterior:.3f}, {repeats} pair(s)): accuracy "
                     f"{accuracy:.3f} ± {check.se:.3f}" + ("" if check.faithful else " (part of the band scored)")
                     + ("; kept" if verdict else f"; not above 1/2 by {Z:g} se: back to class {majority}"))
        if verdict:
            # The measured accuracy replaces a posterior that claimed more (never one that claimed less).
            confidence[band] = np.minimum(confidence[band], max(accuracy, 0.5 + 1e-9))
        else:
            revert(_mask(len(labels), band))
    out.moved_after = int((((labels >= 0) & (confidence < 1.0)) & (labels != majority)).sum())
    return out


def _promises_gain(c: np.ndarray) -> bool:
    """Whether rows moved off the majority class with posteriors ``c`` promise more right rows than the majority
    labeling by over :data:`Z` standard deviations (each row: +1 right, −1 wrong, so mean ``2c − 1``)."""
    gain = float((2 * c - 1).sum())
    return gain > Z * math.sqrt(float((1 - (2 * c - 1) ** 2).sum()))


def _mask(n: int, rows: np.ndarray) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return mask
