"""The ``Oracle`` protocol an attack talks to, and ``LocalOracle``, which answers in process with the site's
own scoring core and defense chain (so an attack sees exactly what the site would release)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

import numpy as np

from attacks.result import AttackFailed
from defenses import DefenseChain
from scoring import Arithmetic, HiddenTestSet, ScoringSpec, public_split_mask
from scoring.parsing import ParsedPredictions, validate_array
from scoring.pipeline import SplitResult
from scoring.release import release_submission

Released = float | Decimal | None


@runtime_checkable
class Oracle(Protocol):
    """A leaderboard as a participant sees it: public facts plus ``submit`` returning the released score.

    These members are what every oracle has. Some oracles know more of the board (``public_fraction``,
    ``arithmetic``, ``feedback``, ``also_report``, ``accounts``/``account``, ``n_public``, ``disclosed``):
    attacks read those through :meth:`attacks.catalogue.BoardFacts.of`, the one place that knows their
    defaults, never by ``getattr``."""

    n_rows: int
    n_classes: int
    metric: str
    eps: float
    queries: int

    @property
    def decimals(self) -> int | None:
        """The released precision a participant observes (decimal places; ``None``: every digit)."""
        ...

    def submit(self, predictions: Any) -> Released:
        """Submit predictions in row order; the released score, or ``None`` when nothing is released."""
        ...


@runtime_checkable
class MultiMetricOracle(Oracle, Protocol):
    """A leaderboard that shows several metrics of each submission (paper 004, Section 3): ``also_report``
    names the metrics beside the primary ``metric``; ``submit_all`` is one query answering all of them."""

    also_report: tuple[str, ...]

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        """``{metric name: released value}`` for one submission, the primary metric first."""
        ...


@runtime_checkable
class BatchOracle(Oracle, Protocol):
    """An oracle that answers several *independent* queries at once: ``submit_many(vectors)`` is
    ``[submit(v) for v in vectors]`` — the same answers, in order, the same queries counted — but a live oracle
    may have them in flight together (the bot's pipelined ``HttpOracle``). Attacks call it through
    :func:`submit_many`, which falls back to one ``submit`` after another."""

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """The released score of each vector, in order (``None`` where nothing is released)."""
        ...


class ReducedOracle:
    """Base of an oracle that asks another board a transformed question (``attacks.one_vs_rest``,
    ``attacks.logit_split``): every query is one of the wrapped board's submissions, so the count and the
    released precision are the wrapped board's. Subclasses set the public facts and ``submit``."""

    def __init__(self, inner: Oracle) -> None:
        self.inner = inner
        self.n_rows = inner.n_rows

    @property
    def queries(self) -> int:
        return self.inner.queries

    @queries.setter
    def queries(self, value: int) -> None:
        self.inner.queries = value

    @property
    def decimals(self) -> int | None:
        return self.inner.decimals


def submit_many(oracle: Oracle, predictions: Sequence[Any]) -> list[Released]:
    """Submit queries that do not depend on one another's answers; their released scores, in order.

    Through the oracle's own ``submit_many`` when it has one (a live oracle then sends them concurrently,
    decoding stays in order), else one ``submit`` after another: the queries, their order and the answers are
    the same either way, so an attack stays pure and sequential and the concurrency stays in the oracle. When a
    query raises, the queries before it have been answered (and counted); later ones may have been sent too.
    Only a ``submit_many`` the oracle's class defines is used: a wrapper that forwards unknown attributes to an
    inner oracle (``__getattr__``) is asked one ``submit`` at a time, so its own ``submit`` is never bypassed.

    >>> submit_many(LocalOracle([0, 1], decimals=3), [[0.5, 0.5], [0.1, 0.9]])
    [0.693, 0.105]
    """
    if getattr(type(oracle), "submit_many", None) is not None:
        return list(oracle.submit_many(predictions))  # type: ignore[attr-defined]
    return [oracle.submit(vector) for vector in predictions]


class QueryLimit:
    """``inner`` allowed at most ``budget`` more submissions (every account's together, counted from when it is
    wrapped): a submission past the budget is not sent and raises :class:`~attacks.result.AttackFailed`.

    For an attack that cannot stop early and keep what it decoded: it fails rather than exceed its budget.
    Every other attribute is the inner oracle's, read and set (``account``, ``feedback``, ``also_report``, …);
    ``submit_many`` sends the queries that fit (through the inner oracle's own batching) before it raises, and
    ``submit_all`` (a multi-metric board) counts as one submission, as on the board itself.

    >>> limited_board = QueryLimit(LocalOracle([0, 1], decimals=3), 1)
    >>> limited_board.submit([0.5, 0.5]), limited_board.left
    (0.693, 0)
    >>> limited_board.submit([0.5, 0.5])
    Traceback (most recent call last):
    ...
    attacks.result.AttackFailed: the budget of 1 submission is spent
    """

    def __init__(self, inner: Oracle, budget: int) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 0:
            raise ValueError(f"budget must be an integer >= 0 or None, got {budget!r}")
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_budget", int(budget))
        object.__setattr__(self, "_start", inner.queries)

    @property
    def inner(self) -> Oracle:
        return self._inner  # type: ignore[no-any-return]

    @property
    def budget(self) -> int:
        return self._budget  # type: ignore[no-any-return]

    @property
    def queries(self) -> int:
        return self._inner.queries  # type: ignore[no-any-return]

    @queries.setter
    def queries(self, value: int) -> None:
        self._inner.queries = value

    @property
    def decimals(self) -> int | None:
        return self._inner.decimals  # type: ignore[no-any-return]

    @property
    def used(self) -> int:
        """Submissions since the oracle was wrapped."""
        return self.queries - self._start  # type: ignore[no-any-return]

    @property
    def left(self) -> int:
        """Submissions the budget still allows."""
        return max(0, self.budget - self.used)

    def _spent(self) -> AttackFailed:
        return AttackFailed(budget_spent(self.budget))

    def submit(self, predictions: Any) -> Released:
        if self.left <= 0:
            raise self._spent()
        return self._inner.submit(predictions)  # type: ignore[no-any-return]

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """Independent queries (:func:`submit_many`): those within the budget are sent and answered, then
        :class:`~attacks.result.AttackFailed` if some did not fit — as one ``submit`` after another would."""
        vectors = list(predictions)
        fits = vectors[: self.left]
        values = submit_many(self._inner, fits) if fits else []
        if len(fits) < len(vectors):
            raise self._spent()
        return values

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name == "submit_all":

            def submit_all(predictions: Any) -> Any:
                if self.left <= 0:
                    raise self._spent()
                return value(predictions)

            return submit_all
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)  # the class's own properties (``queries``; the rest read-only)
        else:
            setattr(self._inner, name, value)  # the attacker's ``account`` and the like are the board's


def budget_spent(budget: int) -> str:
    """The message of a submission refused by a spent budget.

    >>> budget_spent(1), budget_spent(5)
    ('the budget of 1 submission is spent', 'the budget of 5 submissions is spent')
    """
    return f"the budget of {budget} submission{'' if budget == 1 else 's'} is spent"


def limited(oracle: Oracle, budget: int | None) -> Oracle:
    """``oracle`` within ``budget`` more submissions (:class:`QueryLimit`); ``oracle`` itself when ``budget`` is
    ``None`` (no limit)."""
    return oracle if budget is None else QueryLimit(oracle, budget)  # type: ignore[return-value]


def require_budget(attack: str, planned: int, budget: int | None, *, at_least: bool = False) -> None:
    """Refuse, before the first submission, an attack whose plan needs ``planned`` submissions (``at_least``:
    at least that many) when the budget allows fewer (:class:`~attacks.result.AttackFailed`, naming both).

    >>> require_budget("prime_single", 1, None), require_budget("prime_single", 1, 1)
    (None, None)
    >>> require_budget("robust_single", 2, 1)
    Traceback (most recent call last):
    ...
    attacks.result.AttackFailed: robust_single plans 2 submissions, more than the budget of 1
    >>> require_budget("noisy", 5, 4, at_least=True)
    Traceback (most recent call last):
    ...
    attacks.result.AttackFailed: noisy needs at least 5 submissions, more than the budget of 4
    """
    if budget is not None and planned > budget:
        verb = "needs at least" if at_least else "plans"
        raise AttackFailed(
            f"{attack} {verb} {planned} submission{'' if planned == 1 else 's'}, more than the budget of {budget}"
        )


def left_of(budget: int | None, spent: int) -> int | None:
    """What a budget leaves after ``spent`` submissions (``None``: no limit).

    >>> left_of(None, 3), left_of(5, 3), left_of(2, 3)
    (None, 2, 0)
    """
    return None if budget is None else max(0, budget - spent)


def round_sizes(limit: int) -> Iterator[int]:
    """Queries planned per round: 1, 2, 4, … up to ``limit`` — a slow start, so that a board which refuses or
    misleads the design costs one query, not a whole round, before the attack notices.

    >>> from itertools import islice
    >>> list(islice(round_sizes(8), 6))
    [1, 2, 4, 8, 8, 8]
    """
    size = 1
    while True:
        yield size
        size = min(2 * size, max(limit, 1))


class LocalOracle:
    """An in-process leaderboard over ``labels``.

    ``decimals`` is the competition's displayed precision (``None`` releases the full value);
    ``public_fraction`` (optional) releases the public-split score as the site does, with the split drawn
    from ``seed`` like a competition's secret, or given as ``public_mask`` (a host's own split, as a solution
    file's Usage column sets it; the fraction then defaults to its share); ``arithmetic`` is ``"float64"`` or
    ``"mpfr:φ"`` (then predictions may be decimal strings, ``Decimal`` or gmpy2 values and are read at φ bits).
    ``defenses`` is a chain in its JSON form. Defense state is kept in memory per oracle and account (see ``accounts``).

    The attribute :attr:`decimals` is what a participant can see: the *released* precision, i.e. the displayed
    decimals or a coarser rounding defense of the chain (:meth:`ScoringSpec.released_decimals`).

    ``accounts`` (default 1) is how many participants the attacker controls: :attr:`account` picks the one the
    next submission is made as; each has its own defense state, while submission ids (hence fresh noise draws)
    stay global as on the site. ``queries`` counts every account's submissions, ``queries_by_account`` each one's.
    A defense with ``scope: "competition"`` keeps one state for the whole board instead, shared by every account.

    ``disclosed`` is what the host tells participants of its chain (the parameters a page may state: a privacy
    budget's ε, the Ladder's step, a randomized response's p), kept beside ``same_file_same_score``.

    ``also_report`` names further metrics the leaderboard shows for every submission (paper 004, Section 3:
    AUC beside log loss). Every submission is released by :func:`scoring.release_submission`, the function
    the site's worker calls: each reported metric through the same chain, with its own defense state and
    randomness (the seeding keys are documented in :mod:`scoring.release`; the submission id is the query
    number). ``submit_all`` returns every released value, keyed by metric name, for one submission (one
    query); ``submit`` returns the primary metric's value of the same release, so an oracle without
    ``also_report`` behaves exactly as before.

    >>> oracle = LocalOracle([0, 1, 1], decimals=5)
    >>> oracle.submit([0.5, 0.5, 0.5])
    0.69315
    >>> oracle.queries
    1
    >>> both = LocalOracle([0, 1, 1], decimals=5, also_report=("auc",))
    >>> both.submit_all([0.2, 0.4, 0.6])
    {'binary_logloss': 0.55009, 'auc': 1.0}
    >>> LocalOracle([0, 1], decimals=None, defenses=[{"name": "rounding", "decimals": 3}]).decimals
    3
    """

    def __init__(
        self,
        labels: Sequence[int] | np.ndarray,
        *,
        metric: str = "binary_logloss",
        eps: float = 1e-15,
        decimals: int | None = 5,
        defenses: Sequence[dict[str, Any]] | None = None,
        seed: int = 0,
        public_fraction: float | None = None,
        arithmetic: str = "float64",
        n_classes: int | None = None,
        same_file_same_score: bool = False,
        ids: Sequence[str] | None = None,
        also_report: Sequence[str] = (),
        accounts: int = 1,
        disclosed: dict[str, Any] | None = None,
        public_mask: Sequence[bool] | np.ndarray | None = None,
    ) -> None:
        if isinstance(accounts, bool) or not isinstance(accounts, int) or accounts < 1:
            raise ValueError(f"accounts must be a positive integer, got {accounts!r}")
        label_array = np.asarray(labels, dtype=np.int64)
        n = len(label_array)
        self.n_classes = n_classes or max(int(label_array.max(initial=0)) + 1, 2)
        row_ids = tuple(ids) if ids is not None else tuple(str(i) for i in range(n))
        if public_mask is not None:
            mask = np.asarray(public_mask, dtype=bool)
            if mask.shape != (n,):
                raise ValueError(f"public_mask must hold one entry per label ({n}), got shape {mask.shape}")
            public_fraction = float(mask.mean()) if public_fraction is None else public_fraction
        else:
            mask = public_split_mask(n, public_fraction, seed) if public_fraction is not None else np.ones(n, bool)
        self.split = "public" if public_fraction is not None else "all"
        self.public_fraction = public_fraction
        # Building the spec validates every reported metric for this task, arithmetic and chain.
        self.spec = ScoringSpec(
            hidden=HiddenTestSet(row_ids, label_array, self.n_classes, mask),
            metric_name=metric,
            eps=eps,
            decimals=decimals,
            arithmetic=Arithmetic.parse(arithmetic),
            chain=DefenseChain.from_json(list(defenses or [])),
            secret=seed,
            same_file_same_score=same_file_same_score,
            also_report=tuple(also_report),
        )
        self.specs: dict[str, ScoringSpec] = self.spec.metric_specs
        self.also_report = self.spec.also_report
        self.n_rows = n
        self.metric = metric
        self.eps = eps
        self.arithmetic = arithmetic
        self.ids = row_ids
        self.queries = 0
        self.accounts = accounts
        #: The participant the next submission is made as (``0 .. accounts − 1``); attacks that use several
        #: accounts set it. Each account has its own defense state (Ladder leader, privacy budget, history).
        self.account = 0
        self._account_states: list[dict[str, dict[str, list[dict[str, Any]]]]] = [
            {name: {} for name in self.specs} for _ in range(accounts)
        ]
        self.queries_by_account = [0] * accounts
        #: The state of the chain's competition-scoped defenses (``scope: "competition"``): one for the whole
        #: board, shared by every account (``{metric: {split: [state per defense]}}``).
        self._shared_states: dict[str, dict[str, list[dict[str, Any]]]] = {}
        #: What the host tells participants of the chain (e.g. ``{"epsilon": 10}``, ``{"eta": 0.01}``), beside
        #: whether the same file gets the same score; attacks read it through ``BoardFacts.disclosed``.
        self.disclosed: dict[str, Any] = {"same_file_same_score": same_file_same_score, **(disclosed or {})}

    @property
    def _states(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """The defense state of the current account."""
        return self._account_states[self.account]

    @_states.setter
    def _states(self, value: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
        self._account_states[self.account] = value

    @property
    def decimals(self) -> int | None:
        """The released precision a participant observes (``None``: every digit)."""
        return self.spec.released_decimals

    @property
    def feedback(self) -> dict[str, Any]:
        """What a released value is, as the competition page says: ``{"kind": "score"}``, or a hard label
        (``"threshold"`` with its cut-offs ``t``, ``"rank"``, ``"accept_reject"``; :mod:`defenses.feedback`).

        >>> LocalOracle([0, 1], defenses=[{"name": "threshold", "t": 0.5}]).feedback["kind"]
        'threshold'
        """
        return self.spec.feedback

    def submit(self, predictions: Any) -> Released:
        return self.submit_all(predictions)[self.metric]

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """Independent queries (:class:`BatchOracle`): answered one after another, in order."""
        return [self.submit(vector) for vector in predictions]

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        """Score one submission (one query) with every reported metric: ``{metric name: released value}``.

        The primary metric comes first. An extra metric that is undefined on the scored rows (AUC on a
        single class) is released as ``None``; the primary metric raises as :meth:`submit` always has. A
        submission the chain rejects releases ``None`` on every metric and leaves the defense state as it was.
        """
        parsed = self._parse(predictions)
        if not 0 <= self.account < self.accounts:
            raise ValueError(f"account {self.account} does not exist: this board has {self.accounts} account(s)")
        self.queries += 1
        self.queries_by_account[self.account] += 1
        peers = None
        if self.spec.needs_peers:  # the other accounts are this board's other participants (a board rank)
            others = [s for i, s in enumerate(self._account_states) if i != self.account]
            peers = {name: {self.split: [o[name][self.split] for o in others if self.split in o.get(name, {})]}
                     for name in self.spec.reported_metrics}
        release = release_submission(
            self.spec, parsed, submission_id=self.queries, states=self._states, splits=(self.split,), peers=peers,
            shared=self._shared_states,
        )
        self._states = release.states
        if release.shared:
            self._shared_states = release.shared
        return {name: self._released(release.reject, release.results[name].get(self.split))
                if name in release.results else None for name in release.metrics}

    def _released(self, reject: str | None, result: SplitResult | None) -> Released:
        if reject is not None or result is None or result.released_text is None:
            return None
        if not self.spec.arithmetic.is_float64 and self.spec.decimals is None:
            return Decimal(result.released_text)
        return result.released

    def _parse(self, predictions: Any) -> ParsedPredictions:
        fmt = self.spec.submission_format
        if self.spec.arithmetic.is_float64:
            return ParsedPredictions(validate_array(np.asarray(predictions, dtype=np.float64), fmt))
        rows = [row if isinstance(row, (list, tuple, np.ndarray)) else (row,) for row in predictions]
        texts = tuple(tuple(_exact_text(v) for v in row) for row in rows)
        floats = np.array([[float(t) for t in row] for row in texts], dtype=np.float64)
        values = floats[:, 0] if self.n_classes == 2 and floats.shape[1] == 1 else floats
        return ParsedPredictions(validate_array(values, fmt), texts)


def _exact_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return str(value)
