"""The contract every leaderboard defense follows, and the registry that maps names to defenses.

A defense is a plug-in registered by ``name`` with :func:`register`. It is built from the keyword
parameters of its JSON object (``{"name": "noise", "kind": "laplace", "scale": 1e-4}``) and validates them
in ``__init__``, raising :class:`DefenseConfigError` with a message that names the parameter. It acts at
one :class:`Stage`; a chain runs its defenses in stage order, so a defense that changes labels or rows acts
before the metric, score perturbations after it, and rounding and release rules last.

A defense never holds mutable state on ``self``. Its state (a Ladder's leader, a privacy budget spent) is a
JSON-serialisable ``dict`` created by :meth:`Defense.initial_state` and handed to every call through
:class:`DefenseContext`; the site persists it per competition, participant and split, the offline oracle
keeps it in memory. Randomness comes only from ``ctx.rng``, a generator seeded from the competition's secret
and the submission id (or the file's content), so re-scoring a submission reproduces its released score, and
from ``ctx.competition_rng``, seeded by the secret alone, for draws that must be the same for every submission
and participant (randomized response fixed once per competition, Thresholdout's reference rows).

A stateful defense (the Ladder, ``privacy_budget``, ``probe_detector``, ``thresholdout``) takes ``scope``
(:data:`SCOPES`): ``"account"`` (default) keeps its state per participant, as above; ``"competition"`` keeps
one state for the whole board, shared by every participant (a new account meets the board's Ladder, the
board's budget, the board's probe history); ``"team"`` keeps one state per team (a participant without a team
is a team of one). The chain says which of its states are kept per scope
(:meth:`defenses.DefenseChain.combine_parts`); the caller stores them once per competition (or team) and split.
When two teams merge, :meth:`Defense.merge_state` combines their states: never more lenient than either.

Defenses of one release talk to each other only through ``ctx.ledger``, a dict shared by the whole chain for
that one split of that one submission (e.g. the noise defense records the ε it spent under ``"privacy"`` and
``privacy_budget`` reads it). A defense that withholds a score says why in ``ctx.message`` (participant-safe).
"""

from __future__ import annotations

import math
from abc import ABC
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import IntEnum
from typing import Any, ClassVar

import numpy as np

Score = float | Decimal


class DefenseConfigError(ValueError):
    """A defense chain or one of its parameters is invalid; the message says which and why."""


SCOPES = ("account", "team", "competition")
"""Whose submissions share a stateful defense's state: each participant's own, a team's, or the whole board's."""


def take_scope(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Split the ``scope`` parameter off a stateful defense's parameters and validate it.

    >>> take_scope("ladder", {"mode": "fixed", "scope": "competition"})
    ('competition', {'mode': 'fixed'})
    >>> take_scope("ladder", {})
    ('account', {})
    >>> take_scope("ladder", {"scope": "board"})
    Traceback (most recent call last):
    ...
    defenses.base.DefenseConfigError: defense 'ladder': 'scope' must be one of account, team, competition, got 'board'
    """
    rest = {k: v for k, v in params.items() if k != "scope"}
    scope = params.get("scope", "account")
    if scope not in SCOPES:
        raise DefenseConfigError(f"defense {name!r}: 'scope' must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope, rest


class Stage(IntEnum):
    """Where in the scoring path a defense acts. A chain's stages never decrease."""

    DATA = 0  # changes labels or rows before the metric (randomized response, subsetting)
    SCORE = 1  # perturbs or replaces the metric's value (noise, Thresholdout)
    RELEASE = 2  # decides what is released and at what precision (Ladder, budgets, rounding)


@dataclass(frozen=True)
class MetricView:
    """What a defense may know about the metric: its direction and how to evaluate it."""

    name: str
    higher_is_better: bool
    score: Callable[[np.ndarray, np.ndarray], float]
    row_values: Callable[[np.ndarray, np.ndarray], np.ndarray] | None
    eps: float
    # The metric's range on this competition (log loss >= 0; AUC and accuracy in [0, 1]; Brier in [0, 1] or
    # [0, 2] for K classes). A defense that perturbs a score keeps its release inside it (:meth:`clamp`).
    lower: float = -math.inf
    upper: float = math.inf
    # The most one row's value can move when that row's label changes (``None``: not derived); the label
    # sensitivity of a mean of rows is this over the number of rows (``defenses/sensitivity.py``).
    row_spread: float | None = None
    # How to read the predictions as probabilities when the metric scores logits (``softmax_ce``,
    # ``sigmoid_ce``): the softmax or sigmoid; ``None`` when they are probabilities already.
    to_probabilities: Callable[[np.ndarray], np.ndarray] | None = None

    def probabilities(self, predictions: np.ndarray) -> np.ndarray:
        """``predictions`` as probabilities (binary: P(class 1) per row), whatever the metric reads."""
        return predictions if self.to_probabilities is None else self.to_probabilities(predictions)

    def clamp(self, value: Score) -> Score:
        """``value`` moved into ``[lower, upper]``: post-processing of a perturbed release, so it costs no
        privacy (a function of a differentially private output is as private) and tells nothing new.

        >>> view = MetricView("auc", True, lambda p, y: 0.0, None, 1e-15, 0.0, 1.0)
        >>> view.clamp(-0.25), view.clamp(1.5), view.clamp(0.75)
        (0.0, 1.0, 0.75)
        """
        if value < self.lower:
            return self.lower
        if value > self.upper:
            return self.upper
        return value


@dataclass(frozen=True)
class ScoringView:
    """One split's rows as the chain sees them: predictions aligned with (possibly altered) labels."""

    predictions: np.ndarray
    labels: np.ndarray
    n_classes: int
    metric: MetricView
    split: str = "public"
    # Positions of these rows within the split, so a DATA-stage defense that must treat a row the same way in
    # every submission (fixed randomized response) still finds it after another one (subsetting) chose rows.
    row_ids: np.ndarray | None = None
    # The whole submission, every row of every split in the canonical order (``None``: only these rows were
    # given). A check of the submission itself (``probe_detector``) reads this, never the split's rows, so its
    # verdict is the same on every split and says nothing about which rows are in which.
    submission: np.ndarray | None = None

    @property
    def whole_submission(self) -> np.ndarray:
        """Every row the participant submitted: :attr:`submission`, or these rows when it was not given."""
        return self.submission if self.submission is not None else self.predictions

    @property
    def rows_in_split(self) -> np.ndarray:
        """Each row's position in the split (``0..n-1`` until a defense selects rows)."""
        return self.row_ids if self.row_ids is not None else np.arange(len(self.labels))

    def with_rows(self, rows: np.ndarray) -> ScoringView:
        return replace(
            self, predictions=self.predictions[rows], labels=self.labels[rows], row_ids=self.rows_in_split[rows]
        )

    def with_labels(self, labels: np.ndarray) -> ScoringView:
        return replace(self, labels=labels)

    def score(self) -> float:
        return self.metric.score(self.predictions, self.labels)


@dataclass
class DefenseContext:
    """Per-call inputs of a defense: its own state (mutate in place), seeded randomness, and notes.

    ``rng`` is seeded by (secret, submission key, split, position): fresh per submission, the same on a
    re-score. ``competition_rng`` is seeded by (secret, split, position, defense name) only: the same for every
    submission of every participant. ``ledger`` is shared by all defenses of this one release (see the module
    docstring). ``notes`` are host-only remarks (e.g. "probe detected"); ``reject`` set to a message makes the
    site fail the submission with that participant-safe message instead of releasing a score; ``message`` is a
    participant-safe reason for releasing nothing (``after_metric`` returned ``None``). ``board_rng`` is seeded
    by (secret, position, defense name): the same on every split too (a draw over the whole submission's rows).
    """

    rng: np.random.Generator
    state: dict[str, Any]
    submission_key: str
    notes: list[str] = field(default_factory=list)
    reject: str | None = None
    competition_rng: np.random.Generator | None = None
    ledger: dict[str, Any] = field(default_factory=dict)
    message: str | None = None
    # The same defense's state for every OTHER participant of the competition (read-only, a snapshot), given
    # only to a defense with ``needs_peers``: a cross-participant release such as a board rank reads it.
    peers: tuple[dict[str, Any], ...] = ()
    board_rng: np.random.Generator | None = None

    def fixed_rng(self) -> np.random.Generator:
        """The competition-level generator (the chain derives a new one for every call, so each call of a
        defense sees the same stream from its start)."""
        if self.competition_rng is None:
            raise RuntimeError("this context has no competition-level generator (build it with DefenseChain)")
        return self.competition_rng


PARAM_TYPES = ("number", "integer", "boolean", "choice", "numbers")
"""The kinds of value a defense parameter takes (``numbers``: one number or a list of them)."""


@dataclass(frozen=True)
class Param:
    """One parameter of a defense as a host sets it: its name, type, default and allowed range.

    A defense lists its parameters in :attr:`Defense.parameters`; the host's chain builder shows them and
    ``tests/defenses/test_parameters.py`` checks every entry against what ``__init__`` accepts and refuses, so
    the listing cannot drift from the validation (which stays in ``__init__``: it is the one that decides).
    ``default`` ``None`` means "none" (the parameter is optional, an alternative, or derived: ``default_text``
    says how); ``when`` limits it to chains where another parameter has one of the given values (the noise's
    ``kind``, the Ladder's ``mode``); ``excludes`` names the alternatives it cannot be given with.

    >>> Param("p", "number", 0.05, minimum=0, maximum=1, exclusive_maximum=True).range_text()
    '[0, 1)'
    >>> Param("count", "integer", minimum=1).range_text()
    'at least 1'
    """

    name: str
    type: str
    default: Any = None
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    choices: tuple[str, ...] = ()
    required: bool = False
    when: tuple[tuple[str, tuple[str, ...]], ...] = ()
    excludes: tuple[str, ...] = ()
    default_text: str = ""

    def __post_init__(self) -> None:
        if self.type not in PARAM_TYPES:
            raise ValueError(f"parameter {self.name!r}: unknown type {self.type!r}")

    def range_text(self) -> str:
        """The allowed values in words ("" when any value of the type is allowed)."""
        if self.type == "choice":
            return "one of " + ", ".join(self.choices)
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            if self.type == "integer" and not (self.exclusive_minimum or self.exclusive_maximum):
                return f"{low:g} to {high:g}"
            return f"{'(' if self.exclusive_minimum else '['}{low:g}, {high:g}{')' if self.exclusive_maximum else ']'}"
        if low is not None:
            return f"above {low:g}" if self.exclusive_minimum else f"at least {low:g}"
        if high is not None:
            return f"below {high:g}" if self.exclusive_maximum else f"at most {high:g}"
        return ""

    def to_json(self) -> dict[str, Any]:
        """The parameter as plain JSON (what the host page and the validation endpoint send to the browser)."""
        return {
            "name": self.name, "type": self.type, "default": self.default, "default_text": self.default_text,
            "help": self.help, "minimum": self.minimum, "maximum": self.maximum,
            "exclusive_minimum": self.exclusive_minimum, "exclusive_maximum": self.exclusive_maximum,
            "choices": list(self.choices), "required": self.required,
            "when": {key: list(values) for key, values in self.when}, "excludes": list(self.excludes),
            "range": self.range_text(),
        }


SCOPE_PARAM = Param(
    "scope", "choice", "account", choices=SCOPES,
    help="whose submissions share the state: each account's own, a team's, or the whole board's",
)


class Defense(ABC):
    """Base class of every defense. Subclasses set ``name``, ``stage`` and override one or both hooks.

    ``__init__`` receives the chain object's parameters (all but ``name``) as keywords and must reject unknown
    or out-of-range ones with :class:`DefenseConfigError`. ``params()`` returns them back, complete with
    defaults, so the chain's JSON round-trips. ``initial_state()`` returns the state a participant starts
    with. ``before_metric`` (DATA stage) returns the view the metric will score; ``after_metric`` (SCORE and
    RELEASE stages) maps the score so far to the score released so far, ``None`` meaning "release nothing".
    """

    name: ClassVar[str]
    stage: ClassVar[Stage]
    citation: ClassVar[str] = ""
    # True when the release depends on other participants (``DefenseContext.peers``); the site then reads
    # their states, which it skips otherwise (one query per submission saved on every other chain).
    needs_peers: bool = False
    # Whose submissions share this defense's state (:data:`SCOPES`); a stateful defense takes it as a parameter.
    scope: str = "account"
    # The parameters a host may set (:class:`Param`), in the order the chain builder shows them.
    parameters: ClassVar[tuple[Param, ...]] = ()

    @property
    def shared(self) -> bool:
        """Whether this defense's state is one for the whole competition (``scope: "competition"``)."""
        return self.scope == "competition"

    @property
    def team_scoped(self) -> bool:
        """Whether this defense's state is one per team (``scope: "team"``)."""
        return self.scope == "team"

    def merge_state(self, kept: dict[str, Any], other: dict[str, Any], *, higher_is_better: bool) -> dict[str, Any]:
        """The state of two teams that merge (``kept`` is the surviving team's). A stateful defense combines
        them so that the merged team is never better off than either was: no fresh budget, no free release.
        Default (a defense without state): ``kept``."""
        return dict(kept)

    def scope_params(self) -> dict[str, Any]:
        """``{"scope": ...}`` when it is not the default, for :meth:`params` (a default chain's JSON is unchanged)."""
        return {} if self.scope == "account" else {"scope": self.scope}

    def params(self) -> dict[str, Any]:
        return {}

    def initial_state(self) -> dict[str, Any]:
        return {}

    def before_metric(self, view: ScoringView, ctx: DefenseContext) -> ScoringView:
        return view

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        return score

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.params()}

    def check_chain(self, earlier: list[Defense]) -> None:
        """Reject a chain in which this defense cannot work given the defenses before it (default: accept)."""
        return None

    def check_metric(self, metric: MetricView) -> None:
        """Reject a metric this defense cannot work with (default: accept). ``DefenseChain.check_metric`` calls
        it; the site should call that when a host sets a chain on a competition."""
        return None

    def released_decimals(self, upstream: int | None) -> int | None:
        """The decimal places a released score has after this defense, given ``upstream``, the places it
        had before (``None``: every digit). Default: unchanged; a rounding defense narrows it. A participant
        learns this precision from the released values, so attacks may size their constructions from it."""
        return upstream

    def released_higher_is_better(self, upstream: bool) -> bool:
        """Whether a larger released value is the better one after this defense, given ``upstream`` (the
        direction before it; the metric's own at the start of the chain). Default: unchanged; a hard-label
        defense (:mod:`defenses.feedback`) fixes its own (1 = beats the bar, or rank 1 = the best). The board
        ranks released values in this direction."""
        return upstream

    def feedback(self) -> dict[str, Any] | None:
        """What a released value *means* when this defense replaces the score by a hard label (``{"kind":
        "threshold", ...}``); ``None`` (default): the released value is a score. A participant reads the kind
        off the values themselves, so it is public metadata (:meth:`DefenseChain.feedback`)."""
        return None

    def records_privacy(self) -> bool:
        """Whether each release appends the ε/δ it spends to ``ctx.ledger["privacy"]`` (default: no)."""
        return False

    def disclosure(self) -> dict[str, Any] | None:
        """What the competition metadata may tell participants about this defense (default: nothing)."""
        return None


REGISTRY: dict[str, type[Defense]] = {}


def register(cls: type[Defense]) -> type[Defense]:
    """Class decorator: make a defense available under ``cls.name``."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"two defenses are named {cls.name!r}")
    REGISTRY[cls.name] = cls
    return cls


def take_params(name: str, given: dict[str, Any], allowed: dict[str, Any]) -> dict[str, Any]:
    """Merge ``given`` over ``allowed``'s defaults, rejecting unknown parameter names."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise DefenseConfigError(
            f"defense {name!r}: unknown parameter(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(allowed)) or '(none)'}"
        )
    return {**allowed, **given}
