"""The host's leakage audit: how many hidden labels an attacker recovers from a competition's leaderboard within
the participants' real quota, and what its defense chain costs honest participants.

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
until the close, and the total limit) is marked, and :func:`verdict` says in one line what an attacker gets
within it. Beside it: the majority-class rate (what a constant prediction gets for free) and the honest
utility of the chain on a simulated population (:mod:`games.population`, :mod:`games.utility`), with and
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
from attacks.oracle import LocalOracle
from attacks.result import Course
from games.population import simulated_population
from games.runner import as_submitted, release_once
from games.utility import HonestUtility, honest_utility

#: ``progress(fraction done in [0, 1], what is being done)``.
Progress = Callable[[float, str], None]

#: The largest budget an audit plays (a runtime bound: every ladder rung replays the attack from scratch).
MAX_BUDGET = 20_000
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


class AuditError(ValueError):
    """The audit cannot run on this configuration (the message says why)."""


@dataclass(frozen=True)
class AuditSetup:
    """What the audit needs of a competition (its scoring configuration; the fields of ``ScoringSpec``).

    ``secret`` seeds the public/private split and every defense's randomness, as on the site; ``public_mask``,
    when given (the stored split), is checked against the one the secret draws. ``public_fraction=None``
    scores every row (no split).
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
        )
        if self.public_mask is not None and self.public_fraction is not None and not np.array_equal(
            oracle.spec.hidden.public_mask, np.asarray(self.public_mask, dtype=bool)
        ):
            raise AuditError("the stored public/private split is not the one the competition's secret draws: "
                             "the audit would attack other rows than the board scores")
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


@dataclass
class Curve:
    attack: str
    points: list[Point] = field(default_factory=list)

    def at(self, budget: int) -> Point | None:
        return next((p for p in self.points if p.budget == budget and p.status == "ok"), None)


@dataclass
class AuditReport:
    """Everything the audit measured; :meth:`as_dict` is what the site stores and the API returns."""

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


def audit(
    setup: AuditSetup,
    *,
    budget: int | None = None,
    accounts: int = 1,
    seed: int = 0,
    quota: Quota | None = None,
    progress: Progress | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    attack_names: Sequence[str] | None = None,
    honest_models: int = HONEST_MODELS,
) -> AuditReport:
    """Audit one competition (see the module docstring).

    ``budget``: the most submissions (all accounts together) an attack may make; default
    :func:`default_budget` of the quota. ``accounts``: participants the attacker controls (the quota is per
    account, so the attacker's is ``accounts ×`` it). ``attack_names`` overrides :func:`battery`.
    ``time_limit`` bounds the wall time: rungs predicted not to fit are skipped and listed in ``notes``.
    """
    started = time.perf_counter()
    if isinstance(accounts, bool) or not isinstance(accounts, int) or accounts < 1:
        raise AuditError(f"accounts must be a positive integer, got {accounts!r}")
    quota = quota or Quota()
    per_account = quota.submissions
    attacker_quota = None if per_account is None else per_account * accounts
    if budget is None:
        budget = default_budget(attacker_quota)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise AuditError(f"the budget must be a whole number of submissions from 1 to {MAX_BUDGET:,}, got {budget!r}")
    say = progress or (lambda fraction, message: None)
    probe = setup.oracle(accounts=accounts)
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
    ladder = budget_ladder(budget, attacker_quota)
    curves = {name: Curve(name) for name in names}
    # The quota's rung first (the verdict's), then small to large, so a time limit cuts the least useful runs.
    quota_rung = _quota_rung(ladder, attacker_quota)
    order = [(rung, name) for rung in [quota_rung, *(r for r in ladder if r != quota_rung)] for name in names]
    total_work = sum(rung for rung, _ in order) + _honest_work(len(truth), honest_models)
    done_work = 0.0
    seconds_per_query: dict[str, float] = {}
    reasoning: list[str] = []
    say(0.0, f"auditing {len(names)} attack(s) at {len(ladder)} budget(s) up to {budget:,} submissions")
    for rung, name in order:
        elapsed = time.perf_counter() - started
        predicted = seconds_per_query.get(name, 0.0) * rung
        if elapsed + predicted > time_limit:
            curves[name].points.append(Point(rung, status="skipped", error=f"over the audit's time limit of "
                                             f"{time_limit:.0f} s"))
            notes.append(f"{name} at {rung:,} submissions skipped: it would not finish within the audit's "
                         f"time limit of {time_limit:.0f} s")
        else:
            say(done_work / total_work, f"{name}: {rung:,} submissions")
            point, course = _play(setup, name, rung, accounts=accounts, seed=seed, truth=attack_truth,
                                  public=attack_public)
            curves[name].points.append(point)
            if point.status == "ok" and point.queries:
                seconds_per_query[name] = max(seconds_per_query.get(name, 0.0), point.seconds / point.queries)
            if name == "auto" and rung == quota_rung:
                reasoning = [] if course is None else [str(line) for line in course.reasoning]
        done_work += rung
        say(done_work / total_work, f"{name}: {rung:,} submissions done")
    for curve in curves.values():
        curve.points.sort(key=lambda p: p.budget)
    say(done_work / total_work, "honest population")
    honest = honest_cost(setup, seed=seed, n_models=honest_models)
    majority = {"public": _majority_rate(truth[public]), "private": _majority_rate(truth[~public])}
    at_quota = _best_at(list(curves.values()), quota_rung)
    quota_info = {
        "daily_limit": quota.daily_limit, "total_limit": quota.total_limit, "days": quota.days,
        "per_account": per_account, "accounts": accounts, "submissions": attacker_quota, "text": quota.describe(),
        "summary": quota.summary(),
    }
    report = AuditReport(
        n_rows=len(truth), n_public=int(public.sum()), n_private=int((~public).sum()), metric=setup.metric,
        decimals=probe.decimals, chain=[dict(step) for step in probe.spec.chain.to_json()], accounts=accounts,
        budget=budget, ladder=ladder, quota=quota_info, majority=majority, curves=list(curves.values()),
        at_quota=at_quota, honest=honest, reasoning=reasoning, verdict="", seconds=0.0, notes=notes,
        attacks_available=attacks.available(),
    )
    report.verdict = verdict(report)
    report.seconds = round(time.perf_counter() - started, 3)
    say(1.0, "done")
    return report


def _quota_rung(ladder: list[int], quota: int | None) -> int:
    """The rung the verdict speaks of: the quota, or the largest rung within it, or the top of the ladder."""
    if quota is None:
        return ladder[-1]
    within = [rung for rung in ladder if rung <= quota]
    return within[-1] if within else ladder[0]


def _play(
    setup: AuditSetup, attack: str, budget: int, *, accounts: int, seed: int, truth: np.ndarray, public: np.ndarray
) -> tuple[Point, Course | None]:
    """``attack`` (through ``auto``, forced unless it is ``auto``) on a fresh board within ``budget``; the point
    and ``auto``'s course (``None`` when the attack crashed)."""
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
    """The strongest attack at ``rung`` by public accuracy (``auto`` on ties: it is listed first)."""
    best: tuple[str, Point] | None = None
    for curve in curves:
        point = curve.at(rung)
        if point is not None and point.public is not None and (best is None or point.public > (best[1].public or 0)):
            best = (curve.attack, point)
    if best is None:
        return {"budget": rung, "attack": None}
    name, point = best
    top = point.public or 0.0
    reached = [p.budget for curve in curves for p in curve.points
               if p.status == "ok" and p.budget <= rung and p.public is not None and p.public >= top]
    return {"budget": rung, "attack": name, "played": point.played, "public": point.public,
            "private": point.private, "exact_public": point.exact_public, "queries": point.queries,
            "reached_at": min(reached)}


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
    """One line: what an attacker recovers within the quota, against what the majority class gives."""
    quota = report.quota
    best = report.at_quota
    accounts = report.accounts
    who = "an attacker" if accounts == 1 else f"an attacker with {accounts} accounts"
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
    majority_public = report.majority["public"]
    if best.get("attack") is None or best.get("public") is None:
        return f"{within} no attack finished: see the notes."
    public = float(best["public"])
    private = best.get("private")
    by = best["attack"] if best["attack"] != "auto" else f"auto, playing {best['played']}"
    if best.get("reached_at", rung) < rung:
        by += f"; reached within {best['reached_at']:,} submissions"
    lead = f"{within} {who}"
    majority_text = "" if majority_public is None else f"predicting the majority class gives {percent(majority_public)}"
    if majority_public is not None and public <= majority_public + MAJORITY_MARGIN:
        return f"{lead} recovers no more than the majority class: {percent(public)} of public labels ({majority_text})."
    if limit is not None and limit > report.budget:
        lead += " recovers at least"
    else:
        lead += " recovers"
    private_text = "" if private is None else f"; {percent(float(private))} of private labels"
    return f"{lead} {percent(public)} of public labels ({by}{private_text}; {majority_text})."


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
    lines.append("")
    header = f"{'attack':<16}{'submissions':>12}{'used':>8}{'public':>9}{'private':>9}{'exact pub':>11}  played"
    lines.append(header)
    lines.append("-" * len(header))
    for curve in result["curves"]:
        for point in curve["points"]:
            mark = " *" if point["budget"] == result["at_quota"]["budget"] else "  "
            if point["status"] != "ok":
                lines.append(f"{curve['attack']:<16}{point['budget']:>12,}{'':>8}  {point['status']}: {point['error']}")
                continue
            lines.append(
                f"{curve['attack']:<16}{point['budget']:>12,}{point['queries']:>8,}{_pct(point['public']):>9}"
                f"{_pct(point['private']):>9}{_pct(point['exact_public']):>11}{mark}{point['played']}"
            )
    lines.append("")
    majority = result["majority"]
    lines.append(f"majority class: {_pct(majority['public'])} of public rows, {_pct(majority['private'])} of private")
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
    lines.append(f"({result['seconds']:.1f} s; * marks the quota's rung)")
    return "\n".join(lines)


def _step_text(step: dict[str, Any]) -> str:
    params = ", ".join(f"{key} {value}" for key, value in step.items() if key != "name")
    return f"{step.get('name', '?')} ({params})" if params else str(step.get("name", "?"))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _yes(value: int | bool | None) -> str:
    return "–" if value is None else ("yes" if value else "no")
