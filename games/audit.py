"""The host's leakage audit: how many hidden labels the library's attacks read from a competition's leaderboard
within the participants' real quota and with how many accounts, and what its defense chain costs honest
participants.

:func:`audit` plays the attack battery offline against the competition's own configuration (hidden labels,
public/private split and secret, metric, eps, arithmetic, displayed decimals, defense chain) through
:class:`attacks.LocalOracle`, i.e. the site's own scoring core and chain, so every released value is the one
the site would release for the same submission number. The battery is ``auto`` (which fingerprints the board
and plays the strongest attack it knows: an attack added to the registry and chosen by ``auto`` shows up here
without a change) and the specific attacks that fit the competition (:func:`battery`), each played the way
``auto`` plays it (same fingerprint probes, budget, confirmation and majority-class fill) but forced. Each is
played from scratch at every budget of a geometric ladder (:func:`budget_ladder`), so a curve "label accuracy
against submissions" exists per attack, measured separately on the public rows (the ones the board scores)
and on the private rows (which decide the final ranking). The participants' quota (daily limit × UTC days left
until the close, and the total limit) is marked. Each split is compared with its own majority class (what a
constant prediction gets for free there; :func:`compare_majority`): an attack below it read nothing. Every rung
is a fresh run, and with more submissions an attack may choose another plan that reads less; an attacker can stop
early, so each point also carries the best run of its attack within its budget (:func:`stop_early`: ``best``), the
verdict reads the best within the quota, and :func:`falls` says in words where a curve reads less than at a smaller
budget.

The accounts axis: one person with many accounts is the commonest abuse of a leaderboard whose state is per
participant (a Ladder, a privacy budget). For every account count asked (:data:`DEFAULT_ACCOUNTS`: 1, 2, 10, 30,
100, 1,000) ``auto`` plays with that many accounts within their quota (:func:`axis_budget`; the battery too up to
:data:`BATTERY_ACCOUNTS`), and a :class:`Cell` records labels read per split beside the information bound of
:func:`attacks.information.transcript_bits` for that count and budget; :func:`sign_ups` names the fewest counts
tried that read half, and all, of the public labels exactly.

The sybil screen beside it: at every count of two accounts or more ``auto`` plays again on the same board behind
the sybil screen in hold mode (:class:`games.screened_board.ScreenedBoard`: the attacker's accounts get synthetic
sign-up traces — a few addresses over a few hours, :data:`games.screened_board.TRACES` — the audit's simulated honest
models are screened beside them, the screen runs after every submission and withholds the releases of every account
in a flagged cluster). The cell's ``screen`` says what the attacks read then and what the hold cost them: the
accounts let through (that got a release) before the hold, the accounts and submissions held, and any honest account
flagged. A careful attacker (distinct addresses, spread sign-ups, camouflaged probes) may pass the screen: these too
are a lower bound.

:func:`verdict` says what the library's attacks read within the quota and with how many sign-ups, always as a
lower bound on the leakage (:data:`LOWER_BOUND`), never as a limit on what an attacker can do. Beside it: the
honest utility of the chain on a simulated population (:mod:`games.population`, :mod:`games.utility`), with and
without the chain.

Pure: no Django; the site's task and ``manage.py audit_competition`` hand it a :class:`AuditSetup` and a
:class:`Quota`, and store :meth:`AuditReport.as_dict`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

import attacks
import attacks.registry
from attacks.catalogue import BoardFacts
from attacks.fingerprint import DEFAULT_BUDGET as FINGERPRINT_PROBES
from attacks.information import labels_worth, transcript_bits
from attacks.oracle import LocalOracle
from attacks.result import Course
from games.audit_limits import DEFAULT_ACCOUNTS, MAX_ACCOUNTS, MAX_BUDGET, MAX_COUNTS
from games.population import simulated_population
from games.runner import as_submitted, release_once
from games.screened_board import CAREFUL, TRACES, ScreenedBoard, crowd
from games.utility import HonestUtility, honest_utility

#: ``progress(fraction done in [0, 1], what is being done)``.
Progress = Callable[[float, str], None]

#: The budget when none is given and the quota is unbounded (or beyond this): seconds for 2,000 rows.
DEFAULT_BUDGET_CAP = 2_000
#: The default budget reaches this multiple of the quota, so the host sees where the curve goes next.
BEYOND_QUOTA = 4
#: The smallest rung of the ladder (below it only the fingerprint probes run).
MIN_RUNG = 10
#: Wall-clock bound of one audit (seconds): rungs that would not finish in it are skipped, and say so.
DEFAULT_TIME_LIMIT = 120.0
#: Simulated honest models (strong to chance) for the utility cost.
HONEST_MODELS = 10
#: Accuracy within this of the majority rate is "no better than predicting the majority class".
MAJORITY_MARGIN = 0.005
#: Up to this many accounts the whole battery plays at the count's budget; above it only ``auto`` (which spends
#: accounts where they pay: fresh accounts on a Ladder, a privacy budget split across accounts, ...).
BATTERY_ACCOUNTS = 2
#: What every verdict says of itself: the audit measures what these attacks read, not what no attack can.
LOWER_BOUND = ("These are the labels the library's attacks read: a lower bound on the leakage, not a limit on "
               "what other attacks could read.")


#: What the verdict adds when a curve reads less at a larger budget (:func:`falls` says where).
FALLS = ("Some attacks read less with more submissions (each budget is a fresh run); an attacker can stop early, so "
         "each budget is credited with the best run within it.")


class AuditError(ValueError):
    """The audit cannot run on this configuration (the message says why)."""


@dataclass(frozen=True)
class AuditSetup:
    """What the audit needs of a competition (its scoring configuration; the fields of ``ScoringSpec``).

    ``secret`` seeds the public/private split and every defense's randomness, as on the site; ``public_mask``,
    when given (the stored split: drawn from the secret, or the host's own from a solution file), is the split
    the board scores. ``public_fraction=None`` scores every row (no split).
    """

    labels: np.ndarray
    metric: str = "binary_logloss"
    eps: float = 1e-15
    decimals: int | None = 5
    defenses: Sequence[dict[str, Any]] = ()
    public_fraction: float | None = 0.3
    secret: int = 0
    arithmetic: str = "float64"
    n_classes: int | None = None
    same_file_same_score: bool = False
    also_report: Sequence[str] = ()
    public_mask: np.ndarray | None = None
    features: np.ndarray | None = None

    @property
    def takes_models(self) -> bool:
        """A model competition: the battery is played through MutNet models run on ``features``."""
        return self.features is not None

    def attack_oracle(self, *, accounts: int = 1) -> Any:
        """The board an attack plays: :meth:`oracle`, or on a model competition that board behind
        :class:`games.model_board.ModelBoard` (each query a MutNet model run on the hidden features)."""
        board = self.oracle(accounts=accounts)
        if self.features is None:
            return board
        from games.model_board import ModelBoard  # loads onnx only for model competitions

        return ModelBoard(board, self.features)

    def oracle(self, *, accounts: int = 1, defenses: Sequence[dict[str, Any]] | None = None) -> LocalOracle:
        """A fresh board of this competition as an attacker with ``accounts`` accounts sees it."""
        oracle = LocalOracle(
            self.labels, metric=self.metric, eps=self.eps, decimals=self.decimals,
            defenses=list(self.defenses if defenses is None else defenses), seed=self.secret,
            public_fraction=self.public_fraction, arithmetic=self.arithmetic, n_classes=self.n_classes,
            same_file_same_score=self.same_file_same_score, also_report=tuple(self.also_report), accounts=accounts,
            # The stored split, so the audit attacks the very rows the board scores (a host's own split too).
            public_mask=self.public_mask if self.public_fraction is not None else None,
        )
        return oracle


@dataclass(frozen=True)
class Quota:
    """A participant's submissions left: ``daily_limit`` per UTC day on ``days`` days (``None``: no close
    date), and at most ``total_limit`` in all (``None``: no limit).

    >>> Quota(daily_limit=5, days=30).submissions, Quota(daily_limit=5, days=30, total_limit=100).submissions
    (150, 100)
    >>> Quota(daily_limit=5).submissions is None  # no close date, no total limit: unbounded
    True
    """

    daily_limit: int | None = None
    total_limit: int | None = None
    days: int | None = None

    @property
    def submissions(self) -> int | None:
        """Submissions one participant can make before the close (``None``: unbounded)."""
        bounds = [self.total_limit] if self.total_limit is not None else []
        if self.daily_limit is not None and (self.days is not None or self.daily_limit == 0):
            bounds.append(self.daily_limit * (self.days or 0))
        return min(bounds) if bounds else None

    def describe(self) -> str:
        """The limits as written: ``"5 a day × 30 days"``, ``"total limit 100"``, ``"no limit"``, ..."""
        parts = []
        if self.daily_limit is not None:
            days = "no close date" if self.days is None else f"{self.days} day{'s' if self.days != 1 else ''}"
            parts.append(f"{self.daily_limit} a day" + (", " if self.days is None else " × ") + days)
        if self.total_limit is not None:
            parts.append(f"total limit {self.total_limit:,}")
        return ", ".join(parts) if parts else "no limit"

    def summary(self) -> str:
        """What one participant can submit and why.

        >>> Quota(daily_limit=5, days=30).summary(), Quota(daily_limit=5).summary(), Quota().summary()
        ('150 submissions (5 a day × 30 days)', 'unbounded (5 a day, no close date)', 'no limit')
        """
        if self.submissions is None:
            return "no limit" if self.daily_limit is None and self.total_limit is None else \
                f"unbounded ({self.describe()})"
        return f"{self.submissions:,} submissions ({self.describe()})"


def quota_from_schedule(
    *, daily_limit: int | None, total_limit: int | None, opens_at: datetime | None, closes_at: datetime | None,
    now: datetime,
) -> Quota:
    """The quota of a participant starting now (or at the opening, if later): the UTC days from then until
    the close on which a submission can still be made, each worth ``daily_limit``.

    >>> from datetime import timezone as tz
    >>> now = datetime(2027, 1, 1, 18, 0, tzinfo=tz.utc)
    >>> quota_from_schedule(daily_limit=5, total_limit=None, opens_at=None, now=now,
    ...                     closes_at=datetime(2027, 1, 3, 0, 30, tzinfo=tz.utc)).days  # 1st, 2nd and 3rd
    3
    """
    days: int | None = None
    if closes_at is not None:
        start = max(now, opens_at) if opens_at is not None else now
        days = 0 if closes_at <= start else ((closes_at - timedelta(microseconds=1)).date() - start.date()).days + 1
    return Quota(daily_limit=daily_limit, total_limit=total_limit, days=days)


@dataclass
class Point:
    """One attack played once within ``budget`` submissions: label accuracy on the public and the private
    rows (unrecovered rows count as wrong; ``None`` where the split has no rows or the run did not finish),
    the share of each split's rows it recovered exactly (confidence 1.0), what ``auto`` ended up playing."""

    budget: int
    status: str = "ok"  # ok | error | skipped
    queries: int = 0
    seconds: float = 0.0
    public: float | None = None
    private: float | None = None
    exact_public: float | None = None
    exact_private: float | None = None
    played: str = ""
    error: str = ""
    #: Each split against its own majority class: ``above``, ``at`` or ``below`` (:func:`compare_majority`).
    vs_majority: dict[str, str | None] = field(default_factory=dict)
    #: The strongest run of this attack (by public accuracy) at this budget or a smaller one: what an attacker with
    #: this many submissions can read by stopping early (``budget``, ``public``, ``private``, ``exact_public``,
    #: ``played``; :func:`stop_early`). ``None``: no run within this budget finished.
    best: dict[str, Any] | None = None


@dataclass
class Curve:
    attack: str
    points: list[Point] = field(default_factory=list)

    def at(self, budget: int) -> Point | None:
        return next((p for p in self.points if p.budget == budget and p.status == "ok"), None)


@dataclass
class Cell:
    """One count of the accounts axis: the attacker holds ``accounts`` accounts and may make ``budget``
    submissions in all (the quota of that many participants, within the audit's bounds). ``attack`` is the
    strongest one played there (``auto``; at small counts the battery too), with its point (labels right per split,
    the exact ones, ``right_public``/``exact_public_rows`` as row counts); ``vs_majority`` compares each split with
    its own majority class (``above``, ``at`` or ``below``); ``bound`` is the information bound of
    :func:`attacks.information.transcript_bits` for that account count and budget (``bits``, the public ``labels``
    that many bits can name, ``rows``), ``None`` where the library has no bound for the chain."""

    accounts: int
    budget: int
    quota: int | None
    status: str = "ok"  # ok | error | skipped
    attack: str | None = None
    played: str = ""
    queries: int = 0
    seconds: float = 0.0
    public: float | None = None
    private: float | None = None
    exact_public: float | None = None
    exact_private: float | None = None
    right_public: int = 0
    exact_public_rows: int = 0
    vs_majority: dict[str, str | None] = field(default_factory=dict)
    bound: dict[str, float] | None = None
    tried: list[str] = field(default_factory=list)
    error: str = ""
    #: ``auto`` at this count behind the sybil screen in hold mode (:func:`screened_figures`; ``None``: not played,
    #: as at one account, which is never a cluster): labels read, and what the hold cost the attacker.
    screen: dict[str, Any] | None = None


@dataclass
class AuditReport:
    """Everything the audit measured; :meth:`as_dict` is what the site stores and the API returns.

    ``accounts`` is the count the battery's budget ladder plays with (the smallest of ``account_counts``);
    ``axis`` holds one :class:`Cell` per count, ``sign_ups`` the smallest count whose attacks read half, or all, of
    the public labels exactly (``None``: not within the counts tried) and the fewest whose releases could carry
    them all (the bound)."""

    n_rows: int
    n_public: int
    n_private: int
    metric: str
    decimals: int | None
    chain: list[dict[str, Any]]
    accounts: int
    budget: int
    ladder: list[int]
    quota: dict[str, Any]
    majority: dict[str, float | None]
    curves: list[Curve]
    at_quota: dict[str, Any]
    honest: dict[str, Any]
    reasoning: list[str]
    verdict: str
    seconds: float
    notes: list[str]
    attacks_available: list[str]
    account_counts: list[int] = field(default_factory=list)
    axis: list[Cell] = field(default_factory=list)
    sign_ups: dict[str, Any] = field(default_factory=dict)
    #: How the accounts axis was screened (``mode``, ``traces``, ``honest_accounts``, ``careful``); empty: not.
    screen: dict[str, Any] = field(default_factory=dict)
    #: Where a curve reads less than at a smaller budget, in words (:func:`falls`); empty: every curve rises or holds.
    falls: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))


def battery(oracle: LocalOracle) -> list[str]:
    """``auto`` and the registered attacks that fit this board (metric, classes, split, arithmetic, feedback),
    read off the catalogue: every attack whose spec says it applies here."""
    facts = BoardFacts.of(oracle)
    fits = sorted((entry for entry in attacks.registry.catalogue()
                   if entry.applies is not None and entry.applies(facts)), key=lambda entry: (entry.stage, entry.name))
    return ["auto", *(entry.name for entry in fits)]


def forced_params(attack: str, budget: int) -> dict[str, Any]:
    """Parameters of a forced attack sized to the budget (what ``auto``'s plan would size for its own pick): the
    attacks whose spec says they spend every query given get what the fingerprint leaves."""
    left = max(1, budget - FINGERPRINT_PROBES)
    return {"budget": left} if attacks.registry.spec(attack).spends_budget else {}


def budget_ladder(budget: int, quota: int | None = None) -> list[int]:
    """Budgets halving from ``budget`` down to :data:`MIN_RUNG`, plus the quota when it is within the budget.

    >>> budget_ladder(200, quota=150)
    [12, 25, 50, 100, 150, 200]
    >>> budget_ladder(5)
    [5]
    """
    rungs = {budget}
    rung = budget
    while rung // 2 >= MIN_RUNG:
        rung //= 2
        rungs.add(rung)
    if quota is not None and 0 < quota <= budget:
        rungs.add(quota)
    return sorted(rungs)


def default_budget(quota: int | None) -> int:
    """The audited budget when the host names none: the quota and beyond (:data:`BEYOND_QUOTA` ×), capped."""
    if quota is None:
        return DEFAULT_BUDGET_CAP
    return max(MIN_RUNG, min(DEFAULT_BUDGET_CAP, BEYOND_QUOTA * quota))


def account_counts(accounts: int | Sequence[int]) -> list[int]:
    """The account counts an audit tries, smallest first (duplicates dropped); raises :class:`AuditError` for a
    count that is not a whole number from 1 to :data:`MAX_ACCOUNTS` or more than :data:`MAX_COUNTS` counts.

    >>> account_counts(30), account_counts([100, 1, 30, 1])
    ([30], [1, 30, 100])
    """
    values = [accounts] if isinstance(accounts, int) else list(accounts)
    if not values or len(values) > MAX_COUNTS:
        raise AuditError(f"give from 1 to {MAX_COUNTS} account counts, got {len(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ACCOUNTS:
            raise AuditError(f"accounts must be whole numbers from 1 to {MAX_ACCOUNTS:,}, got {value!r}")
    return sorted(set(values))


def axis_budget(accounts: int, per_account: int | None, budget: int) -> int:
    """The submissions the attacker with ``accounts`` accounts makes in the accounts axis: its quota
    (``per_account ×`` accounts; unbounded when ``None``), at most the audited ``budget`` but at least one
    submission an account (a sign-up's first submission), within :data:`MAX_BUDGET`.

    >>> axis_budget(1, 305, 1220), axis_budget(1000, 305, 1220), axis_budget(1000, 1, 200), axis_budget(30, None, 50)
    (305, 1220, 1000, 50)
    """
    allowed = min(MAX_BUDGET, max(budget, accounts))
    return allowed if per_account is None else max(1, min(per_account * accounts, allowed))


@dataclass
class _Job:
    """One attack to play: a rung of the battery's ladder (``cell`` ``None``) or a count of the accounts axis."""

    attack: str
    budget: int
    accounts: int
    cell: Cell | None = None
    screened: bool = False


def audit(
    setup: AuditSetup,
    *,
    budget: int | None = None,
    accounts: int | Sequence[int] = DEFAULT_ACCOUNTS,
    seed: int = 0,
    quota: Quota | None = None,
    progress: Progress | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    attack_names: Sequence[str] | None = None,
    honest_models: int = HONEST_MODELS,
    screen: bool = True,
) -> AuditReport:
    """Audit one competition (see the module docstring).

    ``budget``: the most submissions (all accounts together) an attack of the battery's ladder may make; default
    :func:`default_budget` of the quota. ``accounts``: the account counts the attacker may hold (default
    :data:`DEFAULT_ACCOUNTS`; the quota is per account, so the attacker's is ``accounts ×`` it). The battery's
    budget ladder plays with the smallest count; every count gets a cell of the accounts axis (:class:`Cell`):
    ``auto`` within :func:`axis_budget`, and up to :data:`BATTERY_ACCOUNTS` accounts the battery too.
    ``attack_names`` overrides :func:`battery`. ``time_limit`` bounds the wall time: runs predicted not to fit are
    skipped and listed in ``notes`` (the quota's rung first, then the accounts axis, then the other rungs).
    ``screen``: also play ``auto`` behind the sybil screen in hold mode at every count of two accounts or more
    (:class:`Cell`'s ``screen``; a run the time limit skips says so there). Not on a model competition (the screen
    reads files, not models).
    """
    started = time.perf_counter()
    counts = account_counts(accounts)
    base = counts[0]
    quota = quota or Quota()
    per_account = quota.submissions
    attacker_quota = None if per_account is None else per_account * base
    if budget is None:
        budget = default_budget(attacker_quota)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise AuditError(f"the budget must be a whole number of submissions from 1 to {MAX_BUDGET:,}, got {budget!r}")
    say = progress or (lambda fraction, message: None)
    probe = setup.oracle(accounts=base)
    truth = np.asarray(setup.labels, dtype=np.int64)
    public = probe.spec.hidden.public_mask if probe.public_fraction is not None else np.ones(len(truth), bool)
    names = list(attack_names) if attack_names is not None else battery(probe)
    notes: list[str] = []
    attack_truth, attack_public = truth, public
    if setup.takes_models:  # the attack's rows are the hidden rows in the MutNet head's feature order
        from games.model_board import feature_ranks, in_rank_order

        ranks = feature_ranks(np.asarray(setup.features))
        attack_truth, attack_public = in_rank_order(truth, ranks), in_rank_order(public, ranks)
        notes.append("model competition: every query is an ONNX model (paper 001's Mutator Network head on a "
                     "linear base) run on the hidden features; labels are compared row for row")
    unknown = sorted(set(names) - set(attacks.available()))
    if unknown:
        raise AuditError(f"unknown attack(s) {', '.join(unknown)}; available: {', '.join(attacks.available())}")
    majority = {"public": _majority_rate(truth[public]), "private": _majority_rate(truth[~public])}
    ladder = budget_ladder(budget, attacker_quota)
    curves = {name: Curve(name) for name in names}
    quota_rung = _quota_rung(ladder, attacker_quota)
    chain = [dict(step) for step in probe.spec.chain.to_json()]
    n_classes = int(probe.n_classes)
    public_counts = np.bincount(truth[public], minlength=n_classes).tolist()
    cells = [Cell(k, axis_budget(k, per_account, budget), None if per_account is None else per_account * k)
             for k in counts]
    for cell in cells:
        bits = transcript_bits(chain, metric=setup.metric, n_rows=int(public.sum()), decimals=probe.decimals,
                               accounts=cell.accounts, queries=cell.budget, eps=setup.eps, n_classes=n_classes,
                               also_report=tuple(setup.also_report))
        if bits is not None:
            # Rounded up: an upper bound is never shown below itself.
            cell.bound = {"bits": _up(bits), "labels": _up(labels_worth(bits, public_counts)),
                          "rows": int(public.sum())}
    # Most useful first, so a time limit cuts the least useful runs: the quota's rung, the accounts axis (auto, then
    # the battery at small counts; the base count's cell reuses the ladder's run at the same budget), the rest.
    jobs = [_Job(name, quota_rung, base) for name in names]
    for cell in cells:
        if not (cell.accounts == base and cell.budget in ladder):
            jobs.append(_Job("auto", cell.budget, cell.accounts, cell))
    screening = screen and not setup.takes_models
    if screening:
        jobs.extend(_Job("auto", cell.budget, cell.accounts, cell, screened=True)
                    for cell in cells if cell.accounts > 1)
    for cell in cells:
        if cell.accounts <= BATTERY_ACCOUNTS and not (cell.accounts == base and cell.budget in ladder):
            jobs.extend(_Job(name, cell.budget, cell.accounts, cell) for name in names if name != "auto")
    jobs.extend(_Job(name, rung, base) for rung in ladder if rung != quota_rung for name in names)
    axis_points: dict[int, list[tuple[str, Point]]] = {cell.accounts: [] for cell in cells}
    honest_crowd = _crowd(setup, probe, seed=seed, n_models=honest_models) if screening else ((), ())
    total_work = sum(job.budget for job in jobs) + _honest_work(len(truth), honest_models)
    done_work = 0.0
    seconds_per_query: dict[str, float] = {}
    reasoning: list[str] = []
    say(0.0, f"auditing {len(names)} attack(s) at {len(ladder)} budget(s) up to {budget:,} submissions and "
             f"{len(counts)} account count(s)")
    for job in jobs:
        name, rung = job.attack, job.budget
        where = f"{rung:,} submissions" + ("" if job.cell is None else f", {job.accounts:,} accounts")
        elapsed = time.perf_counter() - started
        predicted = seconds_per_query.get(name, 0.0) * rung
        if job.screened and job.cell is not None:
            where += ", behind the sybil screen"
            if elapsed + predicted > time_limit:
                job.cell.screen = {"status": "skipped",
                                   "error": f"over the audit's time limit of {time_limit:.0f} s"}
            else:
                say(done_work / total_work, f"{name}: {where}")
                board = ScreenedBoard(setup.attack_oracle(accounts=job.accounts), crowd=honest_crowd, seed=seed)
                point, _ = _play(setup, name, rung, accounts=job.accounts, seed=seed, truth=attack_truth,
                                 public=attack_public, oracle=board)
                job.cell.screen = screened_figures(point, board, rows=int(public.sum()), majority=majority)
            done_work += rung
            say(done_work / total_work, f"{name}: {where} done")
            continue
        if elapsed + predicted > time_limit:
            point = Point(rung, status="skipped", error=f"over the audit's time limit of {time_limit:.0f} s")
            notes.append(f"{name} at {where} skipped: it would not finish within the audit's time limit of "
                         f"{time_limit:.0f} s")
        else:
            say(done_work / total_work, f"{name}: {where}")
            point, course = _play(setup, name, rung, accounts=job.accounts, seed=seed, truth=attack_truth,
                                  public=attack_public)
            point.vs_majority = {split: compare_majority(getattr(point, split), majority[split])
                                 for split in ("public", "private")}
            if point.status == "ok" and point.queries:
                seconds_per_query[name] = max(seconds_per_query.get(name, 0.0), point.seconds / point.queries)
            if name == "auto" and job.cell is None and rung == quota_rung:
                reasoning = [] if course is None else [str(line) for line in course.reasoning]
        if job.cell is None:
            curves[name].points.append(point)
        else:
            axis_points[job.accounts].append((name, point))
        done_work += rung
        say(done_work / total_work, f"{name}: {where} done")
    for curve in curves.values():
        curve.points.sort(key=lambda p: p.budget)
        stop_early(curve)
    for cell in cells:
        played = axis_points[cell.accounts]
        if cell.accounts == base and cell.budget in ladder:
            played = [(curve.attack, p) for curve in curves.values() for p in curve.points if p.budget == cell.budget]
        _fill_cell(cell, played, rows=int(public.sum()), majority=majority)
    say(done_work / total_work, "honest population")
    honest = honest_cost(setup, seed=seed, n_models=honest_models)
    at_quota = _best_at(list(curves.values()), quota_rung)
    quota_info = {
        "daily_limit": quota.daily_limit, "total_limit": quota.total_limit, "days": quota.days,
        "per_account": per_account, "accounts": base, "submissions": attacker_quota, "text": quota.describe(),
        "summary": quota.summary(),
    }
    report = AuditReport(
        n_rows=len(truth), n_public=int(public.sum()), n_private=int((~public).sum()), metric=setup.metric,
        decimals=probe.decimals, chain=chain, accounts=base,
        budget=budget, ladder=ladder, quota=quota_info, majority=majority, curves=list(curves.values()),
        at_quota=at_quota, honest=honest, reasoning=reasoning, verdict="", seconds=0.0, notes=notes,
        attacks_available=attacks.available(), account_counts=counts, axis=cells,
        sign_ups=sign_ups(cells, n_public=int(public.sum()), entropy=_entropy_bits(public_counts)),
        screen={} if not screening else {"mode": "hold", "traces": TRACES, "honest_accounts": len(honest_crowd[0]),
                                         "careful": CAREFUL},
        falls=falls(list(curves.values())),
    )
    report.verdict = verdict(report)
    report.seconds = round(time.perf_counter() - started, 3)
    say(1.0, "done")
    return report


def _crowd(setup: AuditSetup, probe: LocalOracle, *, seed: int, n_models: int) -> tuple[Any, Any]:
    """The audit's simulated honest models as accounts the screen sees beside the attacker's (each submits its
    output once); none when the population cannot be drawn (the utility figure says why)."""
    if n_models < 1:
        return (), ()
    try:
        population = simulated_population(setup.labels, n_classes=setup.n_classes, seed=seed, n_models=n_models)
    except Exception:  # the screen's crowd is a side figure, as the honest utility is
        return (), ()
    return crowd([as_submitted(probe, p) for p in population.predictions.values()], seed=seed)


def screened_figures(point: Point, board: ScreenedBoard, *, rows: int,
                     majority: dict[str, float | None]) -> dict[str, Any]:
    """A cell's ``screen``: ``auto``'s point behind the screen (labels right per split, the exact ones, as shares and
    public row counts) and the hold's tally (:class:`games.screened_board.ScreenTally`: ``let_through``,
    ``held_accounts``, ``held_submissions``, ``flagged_at``, ``honest_flagged`` …)."""
    figures: dict[str, Any] = {
        "status": point.status, "error": point.error, "queries": point.queries, "seconds": point.seconds,
        "played": point.played, "public": point.public, "private": point.private,
        "exact_public": point.exact_public, "exact_private": point.exact_private,
        "right_public": round((point.public or 0.0) * rows),
        "exact_public_rows": round((point.exact_public or 0.0) * rows),
        "vs_majority": {split: compare_majority(getattr(point, split), majority[split])
                        for split in ("public", "private")},
    }
    figures.update(board.tally.row())
    return figures


def _fill_cell(cell: Cell, played: list[tuple[str, Point]], *, rows: int, majority: dict[str, float | None]) -> None:
    """The cell's figures from the strongest point played at its count (by public accuracy; ``auto`` on ties)."""
    cell.tried = [name for name, point in played if point.status == "ok"]
    finished = [(name, point) for name, point in played if point.status == "ok" and point.public is not None]
    if not finished:
        failed = next((point for _, point in played), None)
        cell.status = "skipped" if failed is None else failed.status
        cell.error = "not played" if failed is None else failed.error
        return
    name, point = max(finished, key=lambda item: (item[1].public or 0.0, item[0] == "auto"))
    cell.attack, cell.played, cell.queries, cell.seconds = name, point.played, point.queries, point.seconds
    cell.public, cell.private = point.public, point.private
    cell.exact_public, cell.exact_private = point.exact_public, point.exact_private
    cell.right_public = round((point.public or 0.0) * rows)
    cell.exact_public_rows = round((point.exact_public or 0.0) * rows)
    cell.vs_majority = {split: compare_majority(getattr(point, split), majority[split])
                        for split in ("public", "private")}


def _up(value: float) -> float:
    """``value`` rounded up to 3 decimals."""
    return math.ceil(value * 1000) / 1000


def compare_majority(accuracy: float | None, majority_rate: float | None) -> str | None:
    """``above``, ``at`` (within :data:`MAJORITY_MARGIN`) or ``below`` the split's own majority class; ``None``
    where either is unknown.

    >>> compare_majority(0.25, 0.75), compare_majority(0.752, 0.75), compare_majority(1.0, 0.75)
    ('below', 'at', 'above')
    """
    if accuracy is None or majority_rate is None:
        return None
    if accuracy < majority_rate - MAJORITY_MARGIN:
        return "below"
    return "at" if accuracy <= majority_rate + MAJORITY_MARGIN else "above"


def _entropy_bits(counts: Sequence[int]) -> float:
    """The bits naming labels of these class counts take (``N·H`` of their shares)."""
    total = sum(counts)
    return -sum(c * math.log2(c / total) for c in counts if c) if total else 0.0


def sign_ups(cells: Sequence[Cell], *, n_public: int, entropy: float) -> dict[str, Any]:
    """The smallest account count whose cell read (exactly, vouched for by the attack) half of the public labels,
    and all of them; the smallest whose attack got every public label right (vouched for or not); the smallest
    whose releases could carry every public label (the bound); ``None`` for each where no count tried did.
    ``tried``: the largest count played.
    """
    done = [cell for cell in cells if cell.status == "ok"]

    def first(test: Callable[[Cell], bool]) -> int | None:
        return next((cell.accounts for cell in done if test(cell)), None)

    return {
        "tried": max((cell.accounts for cell in done), default=None),
        "counts": [cell.accounts for cell in done],
        "half": first(lambda c: n_public > 0 and c.exact_public_rows * 2 >= n_public),
        "all": first(lambda c: n_public > 0 and c.exact_public_rows >= n_public),
        "all_right": first(lambda c: n_public > 0 and c.right_public >= n_public),
        "bound_all": next((cell.accounts for cell in cells if cell.bound is not None
                           and cell.bound["bits"] >= entropy - 1e-9), None),
        "entropy_bits": round(entropy, 3),
    }


def _quota_rung(ladder: list[int], quota: int | None) -> int:
    """The rung the verdict speaks of: the quota, or the largest rung within it, or the top of the ladder."""
    if quota is None:
        return ladder[-1]
    within = [rung for rung in ladder if rung <= quota]
    return within[-1] if within else ladder[0]


def _play(
    setup: AuditSetup, attack: str, budget: int, *, accounts: int, seed: int, truth: np.ndarray, public: np.ndarray,
    oracle: Any = None,
) -> tuple[Point, Course | None]:
    """``attack`` (through ``auto``, forced unless it is ``auto``) on a fresh board (or ``oracle``) within
    ``budget``; the point and ``auto``'s course (``None`` when the attack crashed)."""
    if oracle is None:
        oracle = setup.attack_oracle(accounts=accounts)
    params: dict[str, Any] = {"budget": budget, "seed": seed}
    if attack != "auto":
        params.update(attack=attack, params=forced_params(attack, budget))
    started = time.perf_counter()
    try:
        result = attacks.run("auto", oracle, **params)
    except Exception as exc:  # a crashing attack is this point's error; the audit goes on
        return Point(budget, status="error", queries=oracle.queries, seconds=round(time.perf_counter() - started, 4),
                     error=f"{type(exc).__name__}: {exc}"), None
    labels = np.asarray(result.labels, dtype=np.int64)
    exact = (labels >= 0) & (result.fill_confidence() >= 1.0)
    correct = labels == truth
    course = result.course
    played = attack if course is None else course.attack
    if course is not None and course.fallback:
        played += f" → {course.fallback}"
    point = Point(
        budget, queries=result.queries, seconds=round(result.seconds, 4),
        public=_share(correct, public), private=_share(correct, ~public),
        exact_public=_share(exact & correct, public), exact_private=_share(exact & correct, ~public),
        played=played,
    )
    return point, course


def _share(values: np.ndarray, rows: np.ndarray) -> float | None:
    return float(values[rows].mean()) if rows.any() else None


def _majority_rate(labels: np.ndarray) -> float | None:
    return float(np.bincount(labels).max() / len(labels)) if len(labels) else None


def _best_at(curves: list[Curve], rung: int) -> dict[str, Any]:
    """The strongest attack within ``rung`` submissions by public accuracy (``auto`` on ties: it is listed first):
    its best run at ``rung`` or any smaller budget (an attacker can stop early); ``run`` is that run's budget."""
    best: tuple[str, Point] | None = None
    for curve in curves:
        runs = [p for p in curve.points if p.status == "ok" and p.budget <= rung and p.public is not None]
        point = max(runs, key=lambda p: (p.public or 0.0, -p.budget), default=None)
        if point is not None and (best is None or (point.public or 0.0) > (best[1].public or 0.0)):
            best = (curve.attack, point)
    if best is None:
        return {"budget": rung, "attack": None}
    name, point = best
    top = point.public or 0.0
    reached = [p.budget for curve in curves for p in curve.points
               if p.status == "ok" and p.budget <= rung and p.public is not None and p.public >= top]
    return {"budget": rung, "attack": name, "played": point.played, "public": point.public,
            "private": point.private, "exact_public": point.exact_public, "queries": point.queries,
            "reached_at": min(reached), "run": point.budget}


def stop_early(curve: Curve) -> None:
    """Give each point of ``curve`` (sorted by budget) its :attr:`Point.best`: the run at that budget or a smaller
    one with the most public labels right (the smaller budget on ties).

    >>> curve = Curve("auto", [Point(10, public=0.6), Point(20, public=1.0), Point(40, public=0.63)])
    >>> stop_early(curve)
    >>> [(p.best["budget"], p.best["public"]) for p in curve.points]
    [(10, 0.6), (20, 1.0), (20, 1.0)]
    """
    best: Point | None = None
    for point in curve.points:
        if point.status == "ok" and point.public is not None and (best is None or point.public > (best.public or 0)):
            best = point
        point.best = None if best is None else {
            "budget": best.budget, "public": best.public, "private": best.private,
            "exact_public": best.exact_public, "played": best.played}


def falls(curves: Sequence[Curve]) -> list[str]:
    """A sentence per attack whose curve reads fewer public labels at a budget than at a smaller one: where, how
    much, and why that does not bound the attacker (every budget is a fresh run; an attacker can stop early).

    >>> curve = Curve("auto", [Point(125, public=1.0, played="a"), Point(250, public=0.63, played="b")])
    >>> stop_early(curve)
    >>> text = falls([curve])[0]
    >>> text.split(": ", 1)[1].split(". ")[0]
    '63 % of public labels right at 250 (playing b) against 100 % at 125 (playing a)'
    >>> "within 250 submissions it reads at least the 100 % of the 125-submission run" in text
    True
    """
    sentences = []
    for curve in curves:
        fell = [p for p in curve.points if p.status == "ok" and p.public is not None and p.best is not None
                and p.best["budget"] < p.budget and p.public < p.best["public"]]
        if not fell:
            continue
        where = "; ".join(f"{percent(p.public or 0.0)} of public labels right at {p.budget:,} (playing {p.played}) "
                          f"against {percent(p.best['public'])} at {p.best['budget']:,} (playing {p.best['played']})"
                          for p in fell if p.best is not None)
        last = fell[-1]
        assert last.best is not None
        sentences.append(
            f"{curve.attack} read less with more submissions: {where}. Each budget is a fresh run, and with more "
            "submissions the attack may choose another plan; an attacker can stop early, so within "
            f"{last.budget:,} submissions it reads at least the {percent(last.best['public'])} of the "
            f"{last.best['budget']:,}-submission run (the \"best within\" figures).")
    return sentences


def rung_mark(quota: int | None, rung: int) -> str:
    """What the rung the verdict reads is, beside its budget: the quota only when it is the quota.

    >>> rung_mark(150, 150), rung_mark(None, 2000), rung_mark(5000, 2000)
    ('quota', 'the audited budget; the quota is unbounded', 'the audited budget; the quota allows 5,000')
    """
    if quota is None:
        return "the audited budget; the quota is unbounded"
    if quota == rung:
        return "quota"
    if quota > rung:
        return f"the audited budget; the quota allows {quota:,}"
    return f"the smallest budget audited; the quota allows {quota:,}"


def _honest_work(n_rows: int, models: int) -> float:
    """The honest population's share of the progress bar, in submissions of an attack (rough, by rows)."""
    return max(1.0, 2 * models * (1 + n_rows / 5000))


def honest_cost(setup: AuditSetup, *, seed: int = 0, n_models: int = HONEST_MODELS) -> dict[str, Any]:
    """The honest utility (:class:`games.utility.HonestUtility`) of a simulated population of ``n_models``
    models on the competition's labels, each submitting once as a fresh participant, with the chain and
    without it (the displayed decimals only): what the chain costs honest participants."""
    try:
        population = simulated_population(setup.labels, n_classes=setup.n_classes, seed=seed, n_models=n_models)
        with_chain = _honest_board(setup, population.predictions, setup.defenses)
        without = _honest_board(setup, population.predictions, [])
    except Exception as exc:  # the utility is a side figure: its failure must not lose the attack results
        return {"models": n_models, "error": f"{type(exc).__name__}: {exc}"}
    return {"models": n_models, "chain": with_chain.row(), "no_defense": without.row()}


def _honest_board(
    setup: AuditSetup, predictions: dict[str, np.ndarray], defenses: Sequence[dict[str, Any]]
) -> HonestUtility:
    oracle = replace(setup, public_mask=None).oracle(defenses=defenses)
    public_split = oracle.split
    private_split = "private" if oracle.public_fraction is not None and (~oracle.spec.hidden.public_mask).any() \
        else public_split
    released, raw_public, raw_private = [], [], []
    for position, probabilities in enumerate(predictions.values()):
        values = as_submitted(oracle, probabilities)
        shown, raw, _ = release_once(oracle, values, submission_id=f"honest-{position}", split=public_split)
        _, raw_hidden, _ = release_once(oracle, values, submission_id=f"honest-{position}-private", split=private_split)
        released.append(shown)
        raw_public.append(raw)
        raw_private.append(raw_hidden)
    return honest_utility(released_public=released, raw_public=raw_public, raw_private=raw_private,
                          higher_is_better=oracle.spec.metric.higher_is_better,
                          released_higher_is_better=oracle.spec.released_higher_is_better)


def percent(value: float) -> str:
    """A share as a whole percentage, never rounded up to 100 % nor down to 0 % when it is not.

    >>> percent(0.78), percent(0.9996), percent(1.0), percent(0.0004)
    ('78 %', '99.9 %', '100 %', '0.1 %')
    """
    shown = round(100 * value)
    if shown == 100 and value < 1.0:
        return f"{math.floor(1000 * value) / 10:.1f} %"
    if shown == 0 and value > 0.0:
        return f"{math.ceil(1000 * value) / 10:.1f} %"
    return f"{shown} %"


def verdict(report: AuditReport) -> str:
    """What the library's attacks read within the quota (each split against its own majority class), how many
    sign-ups they needed to read half or all of the public labels, and that this is a lower bound on the leakage
    (:data:`LOWER_BOUND`): never a limit on what other attacks could read."""
    quota = report.quota
    best = report.at_quota
    accounts = report.accounts
    who = "the library's attacks" + ("" if accounts == 1 else f" with {accounts:,} accounts")
    limit = quota["submissions"]
    rung = best["budget"]
    daily = quota["daily_limit"]
    if limit is None and daily is None:
        within = f"With no submission limit, within {rung:,} submissions (the audited budget)"
    elif limit is None:
        days = math.ceil(rung / (daily * accounts)) if daily else 0
        within = (f"With no close date ({daily:,} a day{_per_account(accounts)}), within {rung:,} submissions "
                  f"(the audited budget: {days:,} day{'s' if days != 1 else ''} of submissions)")
    elif limit > report.budget:
        within = (f"Within {rung:,} submissions (the audited budget; your quota allows {limit:,}: "
                  f"{quota['text']}{_per_account(accounts)})")
    else:
        within = f"Within your quota of {limit:,} submissions ({quota['text']}{_per_account(accounts)})"
    majority_public, majority_private = report.majority["public"], report.majority["private"]
    sentences = []
    if best.get("attack") is None or best.get("public") is None:
        sentences.append(f"{within} no attack finished: see the notes.")
    else:
        public = float(best["public"])
        by = best["attack"] if best["attack"] != "auto" else f"auto, playing {best['played']}"
        if best.get("reached_at", rung) < rung:
            by += f"; reached within {best['reached_at']:,} submissions"
        where = compare_majority(public, majority_public)
        if where == "below":
            sentences.append(f"{within} {who} read nothing of the public labels: their best, {percent(public)} "
                             f"right, is below the majority class ({percent(float(majority_public or 0))}).")
        elif where == "at":
            sentences.append(f"{within} {who} read nothing beyond the majority class: {percent(public)} of public "
                             f"labels right, what predicting the majority class gives "
                             f"({percent(float(majority_public or 0))}).")
        else:
            at_least = "at least " if limit is not None and limit > report.budget else ""
            majority_text = "" if majority_public is None else \
                f"; the majority class gives {percent(majority_public)}"
            sentences.append(f"{within} {who} read {at_least}{percent(public)} of public labels right ({by}"
                             f"{majority_text}).")
        private = best.get("private")
        if private is not None and majority_private is not None:
            sentences.append(_private_text(float(private), majority_private))
    axis = sign_ups_text(report.sign_ups, report.axis)
    if axis:
        sentences.append(axis)
    screened = screen_text(report.screen, [asdict(cell) for cell in report.axis])
    if screened:
        sentences.append(screened)
    if report.falls:
        sentences.append(FALLS)
    sentences.append(LOWER_BOUND)
    return " ".join(sentences)


def _private_text(private: float, majority_private: float) -> str:
    where = compare_majority(private, majority_private)
    if where == "above":
        return f"Private rows: {percent(private)} right, above their own majority class ({percent(majority_private)})."
    if where == "at":
        return (f"Private rows: {percent(private)} right, no more than their own majority class "
                f"({percent(majority_private)}).")
    return (f"Private rows: {percent(private)} right, below their own majority class ({percent(majority_private)}): "
            "nothing read there.")


def _accounts_text(count: int) -> str:
    return f"{count:,} account{'s' if count != 1 else ''}"


def sign_ups_text(found: dict[str, Any], axis: Sequence[Cell]) -> str:
    """The accounts axis in a sentence: of the account counts tried, the fewest with which the library's attacks
    read half, and all, of the public labels exactly ("none" when no count tried did), and from how many accounts
    the releases could carry every public label (the information bound). Empty when no count was played."""
    tried = found.get("tried")
    if tried is None:
        return "The accounts axis did not finish: see the notes." if axis else ""
    counts = found.get("counts") or [tried]

    def needed(key: str) -> str:
        count = found.get(key)
        return _accounts_text(count) if count is not None else "none"

    listed = ", ".join(f"{k:,}" for k in counts)
    text = (f"Sign-ups: of the account counts tried ({listed}), the fewest with which the library's attacks read "
            f"half of your public labels exactly: {needed('half')}; all of them: {needed('all')}")
    right, every = found.get("all_right"), found.get("all")
    if right is not None and (every is None or right < every):
        text += f" (every public label right, not all vouched for, with {_accounts_text(right)})"
    bound = found.get("bound_all")
    if bound is not None:
        text += (f". By the information bound, the releases of {_accounts_text(bound)} within their budget could "
                 "already carry every public label.")
    elif any(cell.bound is not None for cell in axis):
        top = max((cell for cell in axis if cell.bound is not None), key=lambda cell: cell.accounts)
        assert top.bound is not None
        text += (f". By the information bound, no count tried lets the releases carry every public label (at most "
                 f"{top.bound['labels']:,.0f} of {int(top.bound['rows']):,} labels' worth with "
                 f"{_accounts_text(top.accounts)}).")
    else:
        text += "."
    return text


def screen_text(screen: dict[str, Any], axis: Sequence[dict[str, Any]]) -> str:
    """The accounts axis behind the sybil screen in a sentence: per count played, the public labels right with the
    hold and without it, the accounts let through (that got a release) and the submissions held; then that a careful
    attacker may pass the screen. Empty when the axis was not screened."""
    if not screen:
        return ""
    parts = []
    for cell in axis:
        figures = cell.get("screen")
        if not figures:
            continue
        count = _accounts_text(int(cell["accounts"]))
        if figures.get("status") != "ok" or figures.get("public") is None:
            parts.append(f"{count}: {figures.get('status', 'skipped')} ({figures.get('error') or 'no reason given'})")
            continue
        without = "" if cell.get("public") is None else f" ({percent(float(cell['public']))} without it)"
        held = figures["held_submissions"]
        parts.append(f"{count}: {percent(float(figures['public']))} of public labels right{without}, "
                     f"{figures['let_through']:,} let through before the hold, "
                     f"{held:,} submission{'s' if held != 1 else ''} held")
    if not parts:
        return ""
    honest = screen.get("honest_accounts") or 0
    flagged = max((int((cell.get("screen") or {}).get("honest_flagged") or 0) for cell in axis), default=0)
    crowd_text = "" if not honest else f"; honest accounts flagged: {flagged} of {honest}"
    return (f"Behind the sybil screen holding flagged accounts ({screen.get('traces', TRACES)}{crowd_text}), the "
            f"library's attacks read with {'; '.join(parts)}. {screen.get('careful', CAREFUL)}")


def _per_account(accounts: int) -> str:
    return "" if accounts == 1 else f" per account × {accounts} accounts"


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def format_table(result: dict[str, Any]) -> str:
    """The audit (its :meth:`AuditReport.as_dict`) as plain text: the curves, the baselines and the verdict."""
    lines = []
    chain = " → ".join(_step_text(step) for step in result["chain"]) or "none"
    decimals = "full precision" if result["decimals"] is None else f"{result['decimals']} decimals"
    lines.append(f"{result['n_rows']:,} rows ({result['n_public']:,} public, {result['n_private']:,} private), "
                 f"{result['metric']}, {decimals}; chain: {chain}")
    quota = result["quota"]
    lines.append(f"quota: {quota['summary']}" + ("" if quota["accounts"] == 1 else f" × {quota['accounts']} accounts")
                 + f"; audited up to {result['budget']:,} submissions")
    majority = result["majority"]
    lines.append(f"majority class: {_pct(majority['public'])} of public rows, {_pct(majority['private'])} of private "
                 "(each split is compared with its own)")
    lines.append("")
    header = (f"{'attack':<16}{'submissions':>12}{'used':>8}{'public':>9}{'(majority':>10}{'private':>9}"
              f"{'(majority':>10}{'exact pub':>11}{'best within, pub':>18}  played")
    lines.append(header)
    lines.append("-" * len(header))
    for curve in result["curves"]:
        for point in curve["points"]:
            mark = " *" if point["budget"] == result["at_quota"]["budget"] else "  "
            if point["status"] != "ok":
                lines.append(f"{curve['attack']:<16}{point['budget']:>12,}{'':>8}  {point['status']}: {point['error']}")
                continue
            best = point.get("best") or {}
            within = _pct(best.get("public")) + (f" @{best['budget']:,}" if best.get("budget", point["budget"])
                                                   < point["budget"] else "")
            lines.append(
                f"{curve['attack']:<16}{point['budget']:>12,}{point['queries']:>8,}{_pct(point['public']):>9}"
                f"{_pct(majority['public']) + ')':>10}{_pct(point['private']):>9}{_pct(majority['private']) + ')':>10}"
                f"{_pct(point['exact_public']):>11}{within:>18}{mark}{point['played']}"
                + majority_note(point.get("vs_majority") or {})
            )
    lines.extend(f"note: {text}" for text in result.get("falls") or [])
    axis = result.get("axis") or []
    if axis:
        lines.append("")
        lines.append(f"accounts axis (auto at every count, the battery too up to {BATTERY_ACCOUNTS} accounts; "
                     "bound: the most bits the releases could carry, and the public labels' worth):")
        head = (f"{'accounts':>9}{'submissions':>13}{'used':>8}{'public':>9}{'exact pub':>11}{'private':>9}"
                f"{'bound':>24}  played")
        lines.append(head)
        lines.append("-" * len(head))
        for cell in axis:
            bound = "–" if cell["bound"] is None else \
                f"{cell['bound']['bits']:,.1f} bits, {cell['bound']['labels']:,.1f} of {cell['bound']['rows']:,}"
            if cell["status"] != "ok":
                lines.append(f"{cell['accounts']:>9,}{cell['budget']:>13,}{'':>8}  {cell['status']}: {cell['error']}"
                             f"{'':>4}{bound}")
                continue
            lines.append(
                f"{cell['accounts']:>9,}{cell['budget']:>13,}{cell['queries']:>8,}{_pct(cell['public']):>9}"
                f"{_pct(cell['exact_public']):>11}{_pct(cell['private']):>9}{bound:>24}  {cell['played']}"
                + majority_note(cell.get("vs_majority") or {})
            )
        text = sign_ups_text(result.get("sign_ups") or {}, [])
        if text:
            lines.append(text)
        lines.extend(screen_table(result.get("screen") or {}, axis))
    honest = result["honest"]
    if "error" in honest:
        lines.append(f"honest utility: not measured ({honest['error']})")
    else:
        chain_row, bare = honest["chain"], honest["no_defense"]
        lines.append(
            f"honest utility ({honest['models']} simulated models): "
            f"Kendall tau {_num(chain_row['honest_kendall_tau'])} "
            f"(without the chain {_num(bare['honest_kendall_tau'])}); best model wins: "
            f"{_yes(chain_row['honest_best_wins'])} ({_yes(bare['honest_best_wins'])}); mean |released - true| "
            f"{_num(chain_row['honest_mean_abs_error'])}; withheld {chain_row['honest_withheld']}"
        )
    lines.extend(f"note: {note}" for note in result["notes"])
    lines.append("")
    lines.append(f"verdict: {result['verdict']}")
    mark = rung_mark(quota["submissions"], result["at_quota"]["budget"])
    lines.append(f"({result['seconds']:.1f} s; * marks the budget the verdict reads: {mark})")
    return "\n".join(lines)


def screen_table(screen: dict[str, Any], axis: Sequence[dict[str, Any]]) -> list[str]:
    """The accounts axis behind the sybil screen as plain-text lines (none when it was not screened): per count,
    public labels right without the screen and with it (hold), the exact ones, the accounts let through before the
    hold, the accounts and submissions held, the accounts that had submitted at the first flag."""
    rows = [cell for cell in axis if cell.get("screen")]
    if not screen or not rows:
        return []
    lines = ["", f"behind the sybil screen (hold mode; {screen.get('traces', TRACES)}):"]
    head = (f"{'accounts':>9}{'no screen':>11}{'hold':>9}{'exact pub':>11}{'let through':>13}{'held accts':>12}"
            f"{'held subs':>11}{'flagged at':>12}")
    lines += [head, "-" * len(head)]
    for cell in rows:
        figures = cell["screen"]
        if figures.get("status") != "ok":
            lines.append(f"{cell['accounts']:>9,}{_pct(cell.get('public')):>11}  {figures.get('status')}: "
                         f"{figures.get('error', '')}")
            continue
        flagged = "never" if figures.get("flagged_at") is None else f"{figures['flagged_at']:,}"
        lines.append(f"{cell['accounts']:>9,}{_pct(cell.get('public')):>11}{_pct(figures['public']):>9}"
                     f"{_pct(figures['exact_public']):>11}{figures['let_through']:>13,}{figures['held_accounts']:>12,}"
                     f"{figures['held_submissions']:>11,}{flagged:>12}")
    honest = screen.get("honest_accounts") or 0
    if honest:
        flagged_honest = max(int(cell["screen"].get("honest_flagged") or 0) for cell in rows)
        lines.append(f"honest accounts screened beside the attacker: {honest}, flagged: {flagged_honest}")
    lines.append(screen.get("careful", CAREFUL) + " " + LOWER_BOUND)
    return lines


def majority_note(vs_majority: dict[str, str | None]) -> str:
    """What a point's or cell's comparison with each split's own majority class says, in words (empty when it
    is above it on the public rows and not below it on the private ones).

    >>> majority_note({"public": "below", "private": "at"})
    ' (public: below the majority class: read nothing)'
    """
    words = {"below": "below the majority class: read nothing", "at": "no more than the majority class"}
    parts = [f"{split}: {words[where]}" for split, where in vs_majority.items()
             if where in words and (split == "public" or where == "below")]
    return f" ({'; '.join(parts)})" if parts else ""


def _step_text(step: dict[str, Any]) -> str:
    params = ", ".join(f"{key} {value}" for key, value in step.items() if key != "name")
    return f"{step.get('name', '?')} ({params})" if params else str(step.get("name", "?"))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _yes(value: int | bool | None) -> str:
    return "–" if value is None else ("yes" if value else "no")
