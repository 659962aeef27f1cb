"""The sybil screen: cluster accounts that are probably one person, from what they submit and how they signed up.

Kaggle's commonest abuse is one person with many accounts. Behind a per-account Ladder every account's first
release is free, and the library's own multi-account attacks (``attacks/accounts.py``'s ``fresh_accounts``,
``attacks/blocks.py``, ``attacks/blocks_split.py``, ``capacity_split``) spend one probe submission per fresh
account: a vector that is one constant (½) on almost every row, with a few structured rows (a block of 3–5 rows at
binary- or evenly-spaced logits, or a capacity design's weights). Alone such an account looks like nothing; together
the accounts tile the rows. A host runs :func:`screen` over the competition's sign-up traces and submissions and
gets the clusters it should flag (or hold).

Signals (each an :class:`Evidence` with a sentence a host reads; never a label, never a score):

* ``probe_like`` — a submission that looks like a probe (:func:`probe_likeness`): most rows at one constant, the
  few others varied and structured. Part of every cluster's evidence where it is present; it is the only signal
  that can push a cluster over the default threshold.
* ``complementary`` — probe-like submissions from different accounts around the same constant whose changed rows
  differ: each reads a few rows, together they cover the board. They only make sense together. Also: 0/1 files from
  accounts that submitted no model probabilities, agreeing with the other participants' consensus (the majority
  vote of their probability files, never the labels) on about half of the rows, as random queries do (Blum &
  Hardt's boosting attack, the fallback ``auto`` plays once its probes are held).
* ``near_identical`` — the same file (to a rounding grid) from several accounts. Between probes it is strong (one
  block read twice from two accounts); between ordinary model outputs it is weak (two students running the same
  tutorial submit the same file).
* ``same_address``, ``signup_burst`` (sign-ups within minutes of each other), ``same_user_agent`` — sign-up traces.
  Honest people share addresses (a university NAT) and sign up together (a class's first lecture), so these are
  weak: their combined weight is capped below the default threshold (:attr:`ScreenConfig.trace_cap`).

How they combine (the design rule: *no sign-up trace and no ordinary model output flags anyone*):

1. **Core clusters**: accounts joined by strong links only — ``complementary`` or ``near_identical`` probe-like
   submissions (likeness at least :attr:`ScreenConfig.probe_floor`).
2. **Attachment**: an account outside every core cluster joins one when it shares the sign-up address with a member
   *and* signed up in the same burst (a run of the address's sign-ups, each within
   :attr:`ScreenConfig.burst_seconds` of the previous) or with the same uncommon user agent, *and* it has
   has submitted, but no ordinary model output (only constants or weak probes: the attack's fingerprint probes).
   An account with no submission is never flagged: an honest student who signed up in the attacker's lecture would
   be, and an attacker's reserve account joins the cluster by its first probe anyway.
   An honest student behind the attacker's NAT who submits a model never attaches.
3. **Trace clusters**: accounts sharing an address and signing up in one burst, with no probe evidence; their
   suspicion is at most :attr:`ScreenConfig.trace_cap` (below the default threshold: reported only to a host who
   lowers the threshold).
4. **Suspicion** ``1 − (1 − s_probe)(1 − s_trace)``: ``s_probe`` is the mean probe-likeness of the core members,
   ``s_trace`` the noisy-OR of the trace kinds present (address, burst, user agent, ordinary near-identical files),
   capped at ``trace_cap``.

Work is near-linear in the total submission size: each vector is read a constant number of times (its modal value
by ``np.unique``, an ``O(n log n)`` sort; its two rounding-grid hashes), near-identical files meet in a hash table,
complementary probes in a table keyed by their constant, and the sign-up traces are grouped by address and sorted
by time. No pair of accounts is compared row by row. :func:`screen_with_work` counts the work
(``tests/defenses/test_sybil_screen.py`` checks it grows linearly with the accounts).

The screen never sees hidden labels: everything it uses is what participants submitted and how they signed up, so
a hold (which participants can observe) leaks nothing about the labels.

Pure: numpy and the standard library only; no Django, no I/O. Measured catch and false-positive rates:
``benchmarks/sybil_screen.py`` and ``docs/sybil_screen.md``.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

#: The evidence kinds, in the order a host reads them.
KINDS = ("probe_like", "complementary", "near_identical", "same_address", "signup_burst", "same_user_agent")
#: The screen's modes: ``off`` (not run), ``flag`` (the host is told), ``hold`` (the flagged accounts' next
#: releases are withheld until the host decides). The site reads :attr:`ScreenConfig.mode`; :func:`screen` returns
#: nothing when it is ``off``.
MODES = ("off", "flag", "hold")


@dataclass(frozen=True)
class AccountTrace:
    """How one account signed up."""

    account: str  # an opaque account key (username or id)
    signed_up_at: float  # epoch seconds
    address: str | None = None  # sign-up IP address as text
    user_agent: str | None = None


@dataclass(frozen=True)
class SubmissionTrace:
    """One submission: ``vector`` is 1-D ``(n,)`` P(class 1) or 2-D ``(n, K)`` rows, aligned to the hidden order."""

    account: str
    at: float  # epoch seconds
    vector: np.ndarray


@dataclass(frozen=True)
class Evidence:
    """One reason accounts were grouped: ``kind`` is one of :data:`KINDS`; ``detail`` one sentence a host reads."""

    kind: str
    accounts: tuple[str, ...]
    detail: str


@dataclass(frozen=True)
class Cluster:
    """Accounts that are probably one person (sorted), how suspicious (0..1), and why."""

    accounts: tuple[str, ...]
    suspicion: float
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class ScreenConfig:
    """The screen's knobs; each default says why it is what it is."""

    #: A cluster with suspicion >= threshold is flagged (or held, in hold mode).
    threshold: float = 0.5
    min_accounts: int = 2
    #: ``off`` | ``flag`` | ``hold`` (:data:`MODES`); flag: the host is told, hold: releases are withheld too.
    mode: str = "flag"
    #: A submission is a probe (strong links) from this likeness up. Probes of the library's attacks score 0.55–1.0
    #: (a spike of ½ with a few varied rows); honest model zoos score 0 (benchmarks/sybil_screen.py).
    probe_floor: float = 0.5
    #: Modal share from which a vector starts to look like a spike (0 below) and at which it fully does (1 above).
    #: Honest models on breast cancer put at most 67 % of their rows within 1e-3 of one value (probe_detector's
    #: measurement); the attacks' probes put 96–99.9 % of their rows at ½.
    spike_low: float = 0.75
    spike_high: float = 0.95
    #: Width of the bins rows are counted in when finding the modal value (probability units): far above a 1e-7
    #: jitter that would hide a constant (probe_detector's issue 10), far below the attacks' smallest offsets.
    spike_tolerance: float = 1e-3
    #: Rounding grid of the near-identical hash (probability units, two grids half a step apart so that a jitter
    #: below a quarter step never separates two files): a re-run of a model with another seed moves rows by more.
    identical_grid: float = 1e-4
    #: Vectors shorter than this are never called probes: a modal share of 10 rows says nothing.
    min_rows: int = 10
    #: Sign-ups within this many seconds of each other form a burst: a script signs its accounts up seconds apart,
    #: a person by hand a few minutes apart. A class signing up in one lecture bursts too, so a burst is weak.
    burst_seconds: float = 600.0
    #: Weights of the weak kinds in ``s_trace`` (noisy-OR), and its cap. The cap is below the default threshold,
    #: so sign-up traces and ordinary identical files alone never flag: a university NAT whose students sign up in
    #: one lecture and submit the same tutorial model stays unflagged.
    weight_address: float = 0.25
    weight_burst: float = 0.2
    weight_user_agent: float = 0.1
    weight_identical: float = 0.2
    trace_cap: float = 0.45
    #: A user agent shared by more than this share of all accounts (and more than 3) is common (one browser
    #: release), not a trace.
    common_user_agent: float = 0.2
    #: An account whose own submissions include one below this likeness (and not a constant) has submitted an
    #: ordinary model output: it is never attached to a cluster by sign-up traces.
    ordinary_below: float = 0.2
    #: A 0/1 vector agreeing with the consensus of the ordinary probability submissions (their majority vote, at
    #: least ``min_voters`` of them) on ½ ± ``random_band``/√n of the rows is a random query (Blum & Hardt's
    #: boosting attack, ``auto``'s fallback once its probes are held): ``random_band`` = 1.5 is three standard
    #: deviations of a random vector's agreement; an honest model's hard labels agree on 80 % or more. Such a
    #: vector counts as a probe of likeness ``random_likeness`` — unless its account also submitted a model's
    #: probabilities (then they are that model's hard labels, however poor).
    random_band: float = 1.5
    #: Row subsets whose exact agreement links files as edits of one base (``near_identical`` between accounts that
    #: submit the same honest-looking file with a few rows moved: the probes laid on a model's output). 16 bands:
    #: a block of 3–5 moved rows leaves at least 11 of them shared; each band still holds n/16 rows.
    bands: int = 16
    #: The likeness an account takes from submitting such an edit of another account's file.
    edit_likeness: float = 0.7
    min_voters: int = 3
    random_likeness: float = 0.8

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if not 0.0 <= self.threshold <= 1.0 or not 0.0 <= self.probe_floor <= 1.0:
            raise ValueError("threshold and probe_floor must lie in [0, 1]")
        if self.min_accounts < 2:
            raise ValueError("min_accounts must be at least 2: a cluster of one account is not a sybil cluster")
        if not 0.0 <= self.spike_low < self.spike_high <= 1.0:
            raise ValueError("spike_low < spike_high must lie in [0, 1]")
        for name in ("spike_tolerance", "identical_grid", "burst_seconds"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number")


@dataclass
class Work:
    """What :func:`screen_with_work` did, counted: ``cells`` read from the vectors (each a constant number of
    times), ``bucket_entries`` placed in hash tables, ``pair_checks`` explicit comparisons of two accounts (only
    between an attached account and a cluster's members at its address, bounded by the address's size)."""

    cells: int = 0
    bucket_entries: int = 0
    pair_checks: int = 0
    sorted_items: int = 0

    @property
    def total(self) -> int:
        return self.cells + self.bucket_entries + self.pair_checks + self.sorted_items


# ----------------------------------------------------------------------------------------------------------------
# One vector


@dataclass(frozen=True)
class _Features:
    """What the screen keeps of one submission (the vector itself is dropped after this)."""

    likeness: float
    trivial: bool  # one value on every row (a constant baseline, the sample submission)
    shape: tuple[int, ...]
    constant_key: int  # the modal value's bin (1-D) or a hash of the modal row's bins (2-D)
    support: np.ndarray  # the rows off the modal value (int64, sorted)
    hashes: tuple[bytes, bytes]  # the near-identical hashes on two shifted grids
    votes: np.ndarray | None = None  # 1-D probabilities: the rows above ½, bit-packed (the consensus's votes)
    hard: bool = False  # 1-D, every row 0 or 1, both present (hard labels, or a random 0/1 query)
    bands: tuple[bytes, ...] = ()  # hashes of the rich bands (random row subsets) on the near-identical grid


def _as_matrix(vector: object) -> np.ndarray:
    """``vector`` as a finite float64 ``(n, K)`` matrix, or a ValueError saying what is wrong with it."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"a submission vector must be numeric: {error}") from None
    if array.ndim == 1:
        array = array[:, None]
    elif array.ndim != 2:
        raise ValueError(f"a submission vector must be 1-D (n,) or 2-D (n, K), not {array.ndim}-D {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"a submission vector must have at least one row and one column, not shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("a submission vector must be finite (it holds NaN or infinity)")
    return array


def _logits(matrix: np.ndarray) -> np.ndarray:
    """Probabilities as logits (clipped away from 0 and 1); values outside [0, 1] are taken as logits already."""
    if matrix.min() >= 0.0 and matrix.max() <= 1.0:
        clipped = np.clip(matrix, 1e-15, 1 - 1e-15)
        return np.log(clipped) - np.log1p(-clipped)
    return matrix


def _structure(magnitudes: np.ndarray) -> float:
    """0..1: how regular the distinct offsets of the changed rows are — consecutive ratios powers of two (binary
    weights) or gaps whole multiples of the smallest gap (evenly spaced logits); 0.5 when there are too few."""
    values = np.unique(np.round(magnitudes[magnitudes > 1e-9], 6))
    if len(values) < 3:
        return 0.5
    ratios = np.log2(values[1:] / values[:-1])
    binary = np.abs(ratios - np.round(ratios)) < 0.02
    gaps = np.diff(values)
    unit = gaps.min()
    multiples = gaps / unit
    even = np.abs(multiples - np.round(multiples)) < 0.02 * np.maximum(1.0, multiples)
    return float(max(binary.mean(), even.mean()))


def _diversity(keys: np.ndarray) -> float:
    """0..1: the entropy of the changed rows' values over its maximum (every changed row its own value = 1)."""
    count = len(keys)
    if count == 1:
        return 0.75  # one changed row: the classic row-at-a-time probe
    _, counts = np.unique(keys, return_counts=True)
    shares = counts / count
    return float(-(shares * np.log(shares)).sum() / math.log(count))


def _features(vector: object, config: ScreenConfig, work: Work | None = None) -> _Features:
    matrix = _as_matrix(vector)
    n, k = matrix.shape
    if work is not None:
        work.cells += 3 * n * k
    bins = np.round(matrix / config.spike_tolerance).astype(np.int64)
    if k == 1:
        row_keys = bins[:, 0]
    else:  # one integer per row: a hash of its bins (collisions only merge rows into a spike less often)
        weights = np.random.default_rng(0x5B11).integers(1, 2**31, size=k, dtype=np.int64)
        row_keys = bins @ weights
    values, inverse, counts = np.unique(row_keys, return_inverse=True, return_counts=True)
    mode = int(np.argmax(counts))
    modal = inverse.reshape(-1) == mode
    support = np.flatnonzero(~modal).astype(np.int64)
    trivial = len(support) == 0  # one value (within the bins) on every row: a constant baseline
    grid = config.identical_grid
    hashes = (_digest(np.floor(matrix / grid).astype(np.int64), n, k),
              _digest(np.floor(matrix / grid + 0.5).astype(np.int64), n, k))
    likeness = 0.0 if trivial else _likeness(matrix, modal, support, row_keys, config)
    votes = hard = None
    if k == 1 and not trivial and matrix.min() >= 0.0 and matrix.max() <= 1.0:
        column = matrix[:, 0]
        votes = np.packbits(column > 0.5)
        hard = bool(((column == 0.0) | (column == 1.0)).all())
    bands = () if trivial or hard or likeness >= config.probe_floor else _bands(matrix, config)
    return _Features(likeness, trivial, (n, k), int(values[mode]), support, hashes, votes, bool(hard), bands)


def _bands(matrix: np.ndarray, config: ScreenConfig) -> tuple[bytes, ...]:
    """Hashes of the vector's bands — :attr:`ScreenConfig.bands` random row subsets (one seeded assignment per
    row count) on the near-identical grid — that are rich (distinct values on at least half of the band's rows, so
    hard labels and coarse outputs never match by chance). Two files sharing a band agree exactly on all of its
    rows: from different models that does not happen; from edits of one base it does."""
    n, k = matrix.shape
    band_of = _band_assignment(n, config.bands)
    grid = np.floor(matrix / config.identical_grid).astype(np.int64)
    out = []
    for band in range(config.bands):
        rows = grid[band_of == band]
        distinct = len(np.unique(rows[:, 0])) if k == 1 else len(np.unique(rows, axis=0))
        if len(rows) < 4 or distinct * 2 < len(rows):
            continue
        out.append(hashlib.blake2b(rows.tobytes(), digest_size=16, person=f"{n}x{k}b{band}".encode()[:16]).digest())
    return tuple(out)


_ASSIGNMENTS: dict[tuple[int, int], np.ndarray] = {}


def _band_assignment(n: int, bands: int) -> np.ndarray:
    key = (n, bands)
    if key not in _ASSIGNMENTS:
        if len(_ASSIGNMENTS) > 64:
            _ASSIGNMENTS.clear()
        _ASSIGNMENTS[key] = np.random.default_rng([0xBA5E, n]).integers(0, bands, n)
    return _ASSIGNMENTS[key]


def _digest(grid: np.ndarray, n: int, k: int) -> bytes:
    shape = f"{n}x{k}".encode()[:16]
    return hashlib.blake2b(np.ascontiguousarray(grid).tobytes(), digest_size=16, person=shape).digest()


def _likeness(matrix: np.ndarray, modal: np.ndarray, support: np.ndarray, row_keys: np.ndarray,
              config: ScreenConfig) -> float:
    n = matrix.shape[0]
    if n < config.min_rows or len(support) == 0:
        return 0.0
    share = 1.0 - len(support) / n
    spike = min(1.0, max(0.0, (share - config.spike_low) / (config.spike_high - config.spike_low)))
    if spike == 0.0:
        return 0.0
    logits = _logits(matrix)
    centre = np.median(logits[modal], axis=0)
    magnitudes = np.abs(logits[support] - centre).max(axis=1)
    diversity = _diversity(row_keys[support])
    structure = _structure(magnitudes)
    return float(spike * (0.4 + 0.3 * diversity + 0.3 * structure))


def probe_likeness(vector: np.ndarray) -> float:
    """0..1: how much one submission looks like a label-inference probe rather than a model's output — the share
    of rows at the modal value (0 below 75 %, fully a spike from 95 %), times a base of 0.4 raised by the entropy
    of the few changed rows' values and by the regularity of their offsets (binary- or evenly-spaced logits). A
    constant vector (a baseline, the sample submission) is 0. Raises ValueError for a vector that is not a finite
    1-D or 2-D array with at least one row.

    >>> probe_likeness(np.r_[np.full(95, 0.5), 1 / (1 + np.exp(-np.array([1.0, 2, 4, 8, 16])))]) > 0.9
    True
    >>> probe_likeness(np.linspace(0.01, 0.99, 100))
    0.0
    >>> probe_likeness(np.full(100, 0.5))
    0.0
    """
    return _features(vector, ScreenConfig()).likeness


# ----------------------------------------------------------------------------------------------------------------
# The screen


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, item: str) -> str:
        parent = self.parent.setdefault(item, item)
        while parent != item:
            grand = self.parent[parent]
            self.parent[item] = grand
            item, parent = parent, grand
        return item

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


@dataclass
class _Account:
    trace: AccountTrace | None = None
    likeness: float = 0.0  # the most probe-like submission's
    probes: int = 0
    ordinary: bool = False  # submitted a model output that is no probe
    submissions: int = 0
    hashes: set[bytes] = field(default_factory=set)


def _noisy_or(weights: Iterable[float]) -> float:
    rest = 1.0
    for weight in weights:
        rest *= 1.0 - weight
    return 1.0 - rest


def _names(accounts: Iterable[str], limit: int = 5) -> str:
    items = sorted(accounts)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _validate_traces(accounts: Sequence[AccountTrace]) -> dict[str, AccountTrace]:
    traces: dict[str, AccountTrace] = {}
    for trace in accounts:
        if not isinstance(trace, AccountTrace):
            raise ValueError(f"accounts must be AccountTrace records, not {type(trace).__name__}")
        if not isinstance(trace.account, str) or not trace.account:
            raise ValueError("an account key must be a non-empty string")
        if not math.isfinite(float(trace.signed_up_at)):
            raise ValueError(f"account {trace.account!r}: signed_up_at must be a finite number of epoch seconds")
        if trace.account in traces:
            raise ValueError(f"account {trace.account!r} has two sign-up traces")
        traces[trace.account] = trace
    return traces


def screen(accounts: Sequence[AccountTrace], submissions: Sequence[SubmissionTrace],
           config: ScreenConfig = ScreenConfig()) -> list[Cluster]:
    """The flagged clusters (suspicion at least ``config.threshold``, at least ``config.min_accounts`` accounts),
    most suspicious first; none when ``config.mode`` is ``off``. Raises ValueError on a malformed trace or vector
    (NaN, empty, not 1-D/2-D), naming the submission.

    >>> probe = lambda rows: np.r_[np.full(rows[0], 0.5), [0.2, 0.1, 0.05], np.full(97 - rows[0], 0.5)]
    >>> subs = [SubmissionTrace(f"a{i}", float(i), probe((3 * i,))) for i in range(4)]
    >>> [c.accounts for c in screen([], subs)]
    [('a0', 'a1', 'a2', 'a3')]
    """
    return screen_with_work(accounts, submissions, config)[0]


def screen_with_work(accounts: Sequence[AccountTrace], submissions: Sequence[SubmissionTrace],
                     config: ScreenConfig = ScreenConfig()) -> tuple[list[Cluster], Work]:
    """:func:`screen`, and the :class:`Work` it did."""
    if config.mode == "off":
        return [], Work()
    screener = Screener(accounts, config)
    for index, submission in enumerate(submissions):
        screener.add(submission, index=index)
    return screener.clusters(), screener.work


class Screener:
    """:func:`screen` kept up to date one submission at a time, for a host that screens after every submission:
    each vector is read once, when it is added (:meth:`add`); :meth:`clusters` regroups the kept features (work
    linear in the submissions and their changed rows, not in their size). ``screen(a, s, c)`` equals adding ``s``
    to ``Screener(a, c)`` and asking :meth:`clusters`.

    >>> screener = Screener([AccountTrace("a", 0.0), AccountTrace("b", 60.0)])
    >>> screener.add(SubmissionTrace("a", 1.0, np.r_[np.full(50, 0.5), 0.1, 0.2, 0.4]))
    >>> screener.clusters()
    []
    >>> screener.add(SubmissionTrace("b", 2.0, np.r_[0.1, 0.2, 0.4, np.full(50, 0.5)]))
    >>> [c.accounts for c in screener.clusters()]
    [('a', 'b')]
    """

    def __init__(self, accounts: Sequence[AccountTrace] = (), config: ScreenConfig = ScreenConfig()) -> None:
        self.config = config
        self.work = Work()
        self._traces = _validate_traces(accounts)
        self._kept: list[tuple[str, _Features]] = []
        self._sums: dict[tuple[int, ...], np.ndarray] = {}  # the consensus's votes, kept up to date
        self._voters: dict[tuple[int, ...], int] = defaultdict(int)

    def add_account(self, trace: AccountTrace) -> None:
        """One more sign-up trace (ValueError for a malformed one or an account already traced)."""
        checked = _validate_traces([trace])[trace.account] if isinstance(trace, AccountTrace) else None
        if checked is None:
            raise ValueError(f"accounts must be AccountTrace records, not {type(trace).__name__}")
        if trace.account in self._traces:
            raise ValueError(f"account {trace.account!r} has two sign-up traces")
        self._traces[trace.account] = checked

    def add(self, submission: SubmissionTrace, *, index: int | None = None) -> None:
        """Read one submission (ValueError, naming it, for a malformed one; nothing is kept then)."""
        where = f"submission {len(self._kept) if index is None else index}"
        if not isinstance(submission, SubmissionTrace):
            raise ValueError(f"{where}: must be a SubmissionTrace, not {type(submission).__name__}")
        if not isinstance(submission.account, str) or not submission.account:
            raise ValueError(f"{where}: the account key must be a non-empty string")
        try:
            features = _features(submission.vector, self.config, self.work)
        except ValueError as error:
            raise ValueError(f"{where} of account {submission.account!r}: {error}") from None
        self._kept.append((submission.account, features))
        if _votes(features, self.config) and features.votes is not None:
            bits = np.unpackbits(features.votes)[: features.shape[0]].astype(np.int64)
            shape = features.shape
            self._sums[shape] = self._sums[shape] + bits if shape in self._sums else bits
            self._voters[shape] += 1

    def clusters(self) -> list[Cluster]:
        """The flagged clusters now, most suspicious first (none when the mode is ``off``)."""
        if self.config.mode == "off":
            return []
        consensus = {shape: np.packbits(total * 2 > self._voters[shape]) for shape, total in self._sums.items()
                     if self._voters[shape] >= self.config.min_voters}
        return _group(self._traces, self._kept, self.config, self.work, consensus)


def _group(traces: dict[str, AccountTrace], kept: Sequence[tuple[str, _Features]], config: ScreenConfig,
           work: Work, consensus: dict[tuple[int, ...], np.ndarray] | None = None) -> list[Cluster]:
    """The screen's grouping stage over the submissions' features (see the module's docstring, steps 1–4)."""
    people: dict[str, _Account] = defaultdict(_Account)
    for name, trace in traces.items():
        people[name].trace = trace
    probes: list[tuple[str, _Features]] = []
    by_hash: dict[bytes, set[str]] = defaultdict(set)
    probe_hash: dict[bytes, set[str]] = defaultdict(set)
    if consensus is None:
        consensus = _consensus(kept, config, work)
    # Accounts that submitted a model's probabilities: their 0/1 files are its hard labels, whatever they agree with
    # (an honest chance-level model's hard labels agree with the consensus on half of the rows, as queries do).
    modelled = {account for account, features in kept if not features.trivial and not features.hard
                and features.likeness < config.ordinary_below}
    for account, features in kept:
        person = people[account]
        person.submissions += 1
        if features.trivial:
            continue
        if features.hard and account not in modelled and features.shape in consensus and features.votes is not None:
            n = features.shape[0]
            agree = 1.0 - float(np.unpackbits(features.votes ^ consensus[features.shape])[:n].mean())
            work.cells += n
            if abs(agree - 0.5) <= config.random_band / math.sqrt(n):
                features = replace(features, likeness=config.random_likeness, constant_key=RANDOM_KEY)
        person.likeness = max(person.likeness, features.likeness)
        if features.likeness >= config.probe_floor:
            person.probes += 1
            probes.append((account, features))
            for digest in features.hashes:
                probe_hash[digest].add(account)
                work.bucket_entries += 1
        else:
            if features.likeness < config.ordinary_below:
                person.ordinary = True
            for digest in features.hashes:
                by_hash[digest].add(account)
                person.hashes.add(digest)
                work.bucket_entries += 1

    # 1. Core clusters: strong links between probe-like submissions.
    union = _Union()
    strong: list[Evidence] = []
    for group in _distinct_groups(probe_hash.values()):
        ordered = sorted(group)
        for other in ordered[1:]:
            union.join(ordered[0], other)
        strong.append(Evidence("near_identical", tuple(ordered),
                               f"{len(ordered)} accounts submitted the same probe-like file ({_names(ordered)})"))
    by_constant: dict[tuple[tuple[int, ...], int], list[tuple[str, _Features]]] = defaultdict(list)
    for name, features in probes:
        by_constant[(features.shape, features.constant_key)].append((name, features))
        work.bucket_entries += 1
    for (shape, key), bucket in by_constant.items():
        names = sorted({name for name, _ in bucket})
        if len(names) < 2:
            continue
        distinct_supports = {features.support.tobytes() for _, features in bucket}
        if len(distinct_supports) < 2:
            continue  # the same rows every time: near-identical, not complementary
        for other in names[1:]:
            union.join(names[0], other)
        if key == RANDOM_KEY:
            strong.append(Evidence(
                "complementary", tuple(names),
                f"{len(names)} accounts submitted {len(bucket)} 0/1 files that agree with the other participants' "
                f"consensus on about half of the {shape[0]} rows, as independent random queries do; honest hard "
                "labels agree on most rows"))
            continue
        sizes = [len(features.support) for _, features in bucket]
        rows = np.concatenate([features.support for _, features in bucket])
        work.cells += len(rows)
        covered = len(np.unique(rows))
        strong.append(Evidence(
            "complementary", tuple(names),
            f"{len(names)} accounts submitted {len(bucket)} probe-like files around one constant, each changing "
            f"{min(sizes)}–{max(sizes)} of {shape[0]} rows; together they cover {covered} rows "
            f"({covered / shape[0]:.0%}), each changed row on average {sum(sizes) / max(covered, 1):.1f} times"))
    strong += _edits(kept, people, union, config, work)
    cores: dict[str, set[str]] = defaultdict(set)
    for name, person in people.items():
        if person.probes:
            cores[union.find(name)].add(name)
    cores = {root: members for root, members in cores.items() if len(members) >= 2}

    # 2. Attachment by sign-up traces (address and burst or user agent), never for an ordinary submitter.
    common_agents = _common_agents(traces.values(), config)
    by_address: dict[str, list[str]] = defaultdict(list)
    for name, trace in traces.items():
        if trace.address:
            by_address[trace.address].append(name)
            work.bucket_entries += 1
    member_of = {name: root for root, members in cores.items() for name in members}
    attached: dict[str, set[str]] = defaultdict(set)
    for names in by_address.values():
        if not any(name in member_of for name in names):
            continue
        # The address's sign-ups in time order, cut into bursts (each within burst_seconds of the previous): a
        # burst holding a core member takes the burst's accounts with no model output of their own.
        timeline = sorted((traces[name].signed_up_at, name) for name in names)
        work.sorted_items += len(timeline)
        agents = {traces[name].user_agent: member_of[name] for name in names
                  if name in member_of and traces[name].user_agent and traces[name].user_agent not in common_agents}
        for burst in _bursts(timeline, config.burst_seconds):
            roots = [member_of[name] for name in burst if name in member_of]
            for name in burst:
                work.pair_checks += 1
                if name in member_of or people[name].ordinary or not people[name].submissions:
                    continue
                root = max(set(roots), key=roots.count) if roots else agents.get(traces[name].user_agent)
                if root is not None:
                    attached[root].add(name)
    clusters: list[Cluster] = []
    for root, members in cores.items():
        everyone = members | attached.get(root, set())
        s_probe = sum(people[name].likeness for name in members) / len(members)
        evidence = [e for e in strong if union.find(e.accounts[0]) == root]
        evidence.insert(0, _probe_evidence(members, people))
        trace_evidence, s_trace = _trace_evidence(everyone, traces, people, by_hash, common_agents, config, work)
        if attached.get(root):
            trace_evidence.append(Evidence(
                "same_address", tuple(sorted(attached[root])),
                f"{len(attached[root])} account(s) with no model output of their own ({_names(attached[root])}) "
                "signed up from a member's address in the same burst of sign-ups (or with its uncommon browser)"))
        suspicion = 1.0 - (1.0 - s_probe) * (1.0 - s_trace)
        clusters.append(Cluster(tuple(sorted(everyone)), round(suspicion, 6), tuple(evidence + trace_evidence)))

    # 3. Trace clusters: one address, one burst, no probes.
    clustered = {name for cluster in clusters for name in cluster.accounts}
    for names in by_address.values():
        free = sorted((traces[name].signed_up_at, name) for name in names if name not in clustered)
        work.sorted_items += len(free)
        for run in _bursts(free, config.burst_seconds):
            if len(run) >= config.min_accounts:
                together = set(run)
                evidence, s_trace = _trace_evidence(together, traces, people, by_hash, common_agents, config, work)
                clusters.append(Cluster(tuple(sorted(together)), round(s_trace, 6), tuple(evidence)))
    flagged = [c for c in clusters if len(c.accounts) >= config.min_accounts and c.suspicion >= config.threshold]
    flagged.sort(key=lambda c: (-c.suspicion, -len(c.accounts), c.accounts))
    return flagged


#: The ``constant_key`` of random 0/1 queries: they meet in one bucket of their own.
RANDOM_KEY = -(2**62)


def _consensus(kept: Sequence[tuple[str, _Features]], config: ScreenConfig,
               work: Work) -> dict[tuple[int, ...], np.ndarray]:
    """Per shape, the majority vote (bit-packed rows above ½) of the ordinary probability submissions — what the
    participants' models agree on, never the labels — where at least ``min_voters`` of them vote."""
    sums: dict[tuple[int, ...], np.ndarray] = {}
    voters: dict[tuple[int, ...], int] = defaultdict(int)
    for _, features in kept:
        if not _votes(features, config) or features.votes is None:
            continue
        n = features.shape[0]
        bits = np.unpackbits(features.votes)[:n].astype(np.int64)
        work.cells += n
        sums[features.shape] = sums[features.shape] + bits if features.shape in sums else bits
        voters[features.shape] += 1
    return {shape: np.packbits(total * 2 > voters[shape]) for shape, total in sums.items()
            if voters[shape] >= config.min_voters}


def _edits(kept: Sequence[tuple[str, _Features]], people: dict[str, _Account], union: _Union, config: ScreenConfig,
           work: Work) -> list[Evidence]:
    """Files from several accounts that share a rich band but are not one file: edits of one base. Their accounts
    are joined (``union``) and count as probes of :attr:`ScreenConfig.edit_likeness`."""
    parent = list(range(len(kept)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[bytes, int] = {}
    for index, (_, features) in enumerate(kept):
        for digest in features.bands:
            work.bucket_entries += 1
            if digest in first:
                a, b = find(first[digest]), find(index)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                first[digest] = index
    groups: dict[int, list[int]] = defaultdict(list)
    for index, (_, features) in enumerate(kept):
        if features.bands:
            groups[find(index)].append(index)
    evidence = []
    for members in groups.values():
        accounts = sorted({kept[i][0] for i in members})
        files = {kept[i][1].hashes[0] for i in members}
        if len(accounts) < 2 or len(files) < 2:
            continue
        for name in accounts:
            person = people[name]
            person.likeness = max(person.likeness, config.edit_likeness)
            person.probes += 1
            union.join(accounts[0], name)
        evidence.append(Evidence(
            "near_identical", tuple(accounts),
            f"{len(accounts)} accounts submitted {len(files)} different files that agree exactly on whole blocks of "
            "rows: edits of one base file, a few rows moved in each"))
    return evidence


def _votes(features: _Features, config: ScreenConfig) -> bool:
    """Whether a submission votes in the consensus: a probability file, neither hard labels nor a probe."""
    return features.votes is not None and not features.hard and features.likeness < config.probe_floor


def _distinct_groups(groups: Iterable[set[str]]) -> list[frozenset[str]]:
    """The account sets of several accounts, each once (one file hashes into two buckets)."""
    return sorted({frozenset(group) for group in groups if len(group) >= 2}, key=sorted)


def _common_agents(traces: Iterable[AccountTrace], config: ScreenConfig) -> set[str]:
    counts: dict[str, int] = defaultdict(int)
    total = 0
    for trace in traces:
        total += 1
        if trace.user_agent:
            counts[trace.user_agent] += 1
    return {agent for agent, count in counts.items() if count > 3 and count > config.common_user_agent * total}


def _probe_evidence(members: set[str], people: dict[str, _Account]) -> Evidence:
    likeness = [people[name].likeness for name in members]
    return Evidence("probe_like", tuple(sorted(members)),
                    f"{len(members)} accounts each submitted a probe-like file (most rows one constant and a few "
                    f"structured rows, or a random 0/1 query; likeness {min(likeness):.2f}–{max(likeness):.2f})")


def _trace_evidence(group: set[str], traces: dict[str, AccountTrace], people: dict[str, _Account],
                    by_hash: dict[bytes, set[str]], common_agents: set[str], config: ScreenConfig,
                    work: Work) -> tuple[list[Evidence], float]:
    """The weak evidence inside ``group`` and its capped noisy-OR weight."""
    evidence: list[Evidence] = []
    weights: list[float] = []
    members = [traces[name] for name in group if name in traces]
    work.sorted_items += len(members)
    addresses: dict[str, list[str]] = defaultdict(list)
    agents: dict[str, list[str]] = defaultdict(list)
    for trace in members:
        if trace.address:
            addresses[trace.address].append(trace.account)
        if trace.user_agent and trace.user_agent not in common_agents:
            agents[trace.user_agent].append(trace.account)
    shared = [names for names in addresses.values() if len(names) >= 2]
    if shared:
        largest = max(shared, key=len)
        weights.append(config.weight_address)
        evidence.append(Evidence("same_address", tuple(sorted(n for names in shared for n in names)),
                                 f"{len(largest)} of the {len(group)} accounts signed up from one address"
                                 + (f" ({len(shared)} shared addresses)" if len(shared) > 1 else "")))
    times = sorted((trace.signed_up_at, trace.account) for trace in members)
    burst = _longest_burst(times, config.burst_seconds)
    if len(burst) >= 2:
        weights.append(config.weight_burst)
        span = max(traces[n].signed_up_at for n in burst) - min(traces[n].signed_up_at for n in burst)
        evidence.append(Evidence("signup_burst", tuple(sorted(burst)),
                                 f"{len(burst)} of the accounts signed up within {span / 60:.0f} minutes, each within "
                                 f"{config.burst_seconds / 60:.0f} minutes of the previous"))
    same_agent = [names for names in agents.values() if len(names) >= 2]
    if same_agent:
        weights.append(config.weight_user_agent)
        evidence.append(Evidence("same_user_agent", tuple(sorted(n for names in same_agent for n in names)),
                                 f"{max(len(names) for names in same_agent)} of the accounts signed up with one "
                                 "uncommon user agent"))
    names = sorted(_with_twin(group, people, by_hash, work))
    if names:
        weights.append(config.weight_identical)
        evidence.append(Evidence("near_identical", tuple(names),
                                 f"{len(names)} of the accounts submitted the same model file as another of them"))
    return evidence, min(config.trace_cap, _noisy_or(weights))


def _with_twin(group: set[str], people: dict[str, _Account], by_hash: dict[bytes, set[str]], work: Work) -> set[str]:
    """The accounts of ``group`` that submitted an ordinary file another account of ``group`` also submitted:
    each member's hashes are looked up once (work linear in the group's submissions)."""
    seen: dict[bytes, set[str]] = defaultdict(set)
    for name in group:
        for digest in people[name].hashes:
            work.bucket_entries += 1
            if len(by_hash[digest]) >= 2:
                seen[digest].add(name)
    return {name for names in seen.values() if len(names) >= 2 for name in names}


def _bursts(times: list[tuple[float, str]], window: float) -> list[list[str]]:
    """``times`` (sorted) cut wherever two consecutive sign-ups are more than ``window`` seconds apart."""
    runs: list[list[str]] = []
    last = -math.inf
    for at, name in times:
        if at - last > window or not runs:
            runs.append([])
        runs[-1].append(name)
        last = at
    return runs


def _longest_burst(times: list[tuple[float, str]], window: float) -> list[str]:
    return max(_bursts(times, window), key=len, default=[])


def account_verdict(clusters: Sequence[Cluster], account: str, config: ScreenConfig = ScreenConfig()) -> Cluster | None:
    """The flagged cluster (suspicion at least ``config.threshold``) holding ``account``, the most suspicious one
    if several; ``None`` when there is none or ``config.mode`` is ``off``."""
    if config.mode == "off":
        return None
    for cluster in sorted(clusters, key=lambda c: -c.suspicion):
        if cluster.suspicion >= config.threshold and len(cluster.accounts) >= config.min_accounts \
                and account in cluster.accounts:
            return cluster
    return None
