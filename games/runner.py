"""Play a game offline: every cell (data set × defense chain × attack × budget × accounts × seed) through
:class:`LocalOracle`.

One cell is one competition: the hidden labels, the game's metric and displayed precision, the defense chain,
and the seed as the competition's secret (public/private split and defense randomness). The attacker talks to
it through a ``LocalOracle``; the honest population submits to the *same* competition (the oracle's own
``ScoringSpec`` and chain, each model a separate participant with its own defense state and its own
submission ids), so a defense treats honest models exactly as it treats the attacker. At the end the attacker
submits its recovered labels as a confident prediction, like the bot does, and takes a rank on the public
and the private board.

Budgets: a cell's budget caps the attacker's submissions (every account's together; :class:`BudgetedView`) and
is handed to an attack that plans within one (``auto``). Nothing spends a budget for its own sake: an attack
stops when it has its labels, so a 100,000-submission cell costs what its attack decides to spend. Accounts: the
attacker's oracle has the cell's ``accounts`` participants, each with its own defense state; they share the
cell's budget.

Boards: with a ``public_fraction`` the public board releases the public split and the private board the
private split; without one, both boards score every row (the private board is a separate, final release).
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

import attacks
from attacks.auto import BudgetedView, BudgetSpent
from attacks.confirm import confident_predictions
from attacks.oracle import LocalOracle, Released
from attacks.registry import ATTACKS
from attacks.result import AttackFailed
from bot.http_oracle import SubmissionFailed
from defenses import DefenseChain
from games.gamefile import AttackSpec, DatasetSpec, DefenseSpec, GameFileError, GameSpec
from games.population import Population, load_population
from games.utility import (
    AttackerOutcome,
    HonestUtility,
    attacker_outcome,
    board_rank,
    honest_utility,
)
from scoring import ScoringError
from scoring.parsing import ParsedPredictions, validate_array
from scoring.pipeline import evaluate, raw_score
from scoring.release import States, release_submission

if TYPE_CHECKING:
    from games.live import LiveSite

Progress = Callable[[str], None]


#: The attack asked for more queries than the game's budget for it allows (``auto``'s own budget error).
QueryBudgetExceeded = BudgetSpent


@dataclass
class Participant:
    """One row of a board: who, the released public and private scores, and the true (raw) ones."""

    name: str
    released_public: float | None
    released_private: float | None
    raw_public: float
    raw_private: float
    rejected: bool = False


@dataclass
class Board:
    """The honest population's submissions to one competition (data set × defense × seed)."""

    dataset: str
    defense: str
    seed: int
    participants: list[Participant]
    utility: HonestUtility


#: What a cell that did not finish has not measured (its CSV/JSON row leaves them empty).
NOT_MEASURED = ("label_accuracy", "exact_fraction", "recovered_fraction", "claimed_accuracy", "exact_recovery")


@dataclass
class Cell:
    """One played cell: identifiers (``budget``: the cap on the attacker's submissions, ``None`` for none;
    ``accounts``: how many participants it controlled), status (``ok``, ``failed``: the attack gave up or ran
    out of budget, ``error``: it crashed), the attacker's outcome and the honest population's utility;
    ``scored_classes``: the class counts of the rows the released score depends on (for the information bound)."""

    dataset: str
    defense: str
    attack: str
    seed: int
    status: str
    error: str
    n_rows: int
    queries: int
    seconds: float
    outcome: AttackerOutcome
    utility: HonestUtility
    details: dict[str, Any] = field(default_factory=dict)
    budget: int | None = None
    accounts: int = 1
    scored_classes: list[int] = field(default_factory=list)
    #: With several accounts offline: the same attack behind the sybil screen in hold mode
    #: (:func:`games.screen_axis.play_screened`: labels read, accounts let through, submissions held); else ``None``.
    screen: dict[str, Any] | None = None

    def row(self) -> dict[str, Any]:
        """The flat CSV/JSON row (column order is the report's). A cell that did not finish has its status and
        reason and no accuracy: the labels it never claimed are not an accuracy of 0."""
        outcome = self.outcome.row()
        if self.status != "ok":
            outcome.update(dict.fromkeys(NOT_MEASURED))
        return {
            "dataset": self.dataset,
            "defense": self.defense,
            "attack": self.attack,
            "budget": self.budget,
            "accounts": self.accounts,
            "seed": self.seed,
            "status": self.status,
            "error": self.error,
            "n_rows": self.n_rows,
            "queries": self.queries,
            "seconds": round(self.seconds, 4),
            **outcome,
            **self.utility.row(),
        }


@dataclass
class GameResult:
    """Everything a report needs: the validated game, every cell, every honest board, and how it was played:
    ``mode`` ``"offline"`` (:class:`LocalOracle` in process) or ``"live"`` (the attacker against ``site``)."""

    game: GameSpec
    cells: list[Cell]
    boards: list[Board]
    seconds: float
    available_attacks: list[str] = field(default_factory=list)
    mode: str = "offline"
    site: str | None = None


@dataclass
class _Competition:
    """One data set ready to play: the population and the game-level scoring settings."""

    dataset: DatasetSpec
    population: Population


def run_game(
    spec: GameSpec, *, progress: Progress | None = None, jobs: int = 1, site: LiveSite | None = None
) -> GameResult:
    """Play every cell of ``spec`` offline, in a fixed order (data set, defense, seed, attack, budget).

    Everything is checked before the first cell runs: attacks and defenses must be registered (the game
    file is re-checked against the registries), and every data set × defense chain must build a competition
    for the game's metric. An attack that raises :class:`AttackFailed` (or exceeds its budget) is a
    ``failed`` cell, any other exception an ``error`` cell; neither stops the game.

    ``jobs > 1`` plays the competitions (data set × defense × seed, each with all its attacks) in that many
    worker processes; the results are identical to a serial run, in the same order, but for wall times.
    With a live ``site`` (see :mod:`games.live`) the attacker plays each cell against that site, serially.
    """
    say = progress or (lambda _message: None)
    started = time.perf_counter()
    competitions = check_game(spec, live=site is not None)
    groups = [(spec, c, defense, seed) for c in competitions for defense in spec.defenses for seed in spec.seeds]
    cells: list[Cell] = []
    boards: list[Board] = []
    if site is not None:
        try:
            for group in groups:
                board, group_cells = _play_group(group, site)
                site.close_cells()  # a cell is open on the site only while it plays
                boards.append(board)
                _collect(cells, group_cells, spec.n_cells, say)
        except BaseException:  # interrupted or broken: close what it opened, if the site still answers
            with contextlib.suppress(Exception):
                site.close_cells()
            raise
    elif jobs > 1 and len(groups) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            played = pool.map(_play_group, groups)
            for board, group_cells in played:
                boards.append(board)
                _collect(cells, group_cells, spec.n_cells, say)
    else:
        for group in groups:
            board, group_cells = _play_group(group)
            boards.append(board)
            _collect(cells, group_cells, spec.n_cells, say)
    return GameResult(
        spec, cells, boards, time.perf_counter() - started, attacks.available(),
        mode="offline" if site is None else "live", site=None if site is None else site.url,
    )


def check_game(spec: GameSpec, *, live: bool = False) -> list[_Competition]:
    """Everything checked before the first cell runs (see :func:`run_game`); the game's competitions."""
    _check_registered(spec)
    several = [a.name for a in spec.attacks if max(spec.accounts_of(a)) > 1]
    if live and several:
        raise GameFileError(f"{spec.source}: attack(s) {', '.join(several)} use several accounts, which only an "
                            "offline game plays (a live cell has one attacker account)")
    models = [d.name for d in spec.datasets if d.models]
    if live and models:
        raise GameFileError(f"{spec.source}: data set(s) {', '.join(models)} are model competitions, which only an "
                            "offline game plays")
    competitions = [_Competition(d, load_population(d)) for d in spec.datasets]
    for competition in competitions:
        for defense in spec.defenses:
            try:
                make_oracle(spec, competition.dataset, competition.population, defense, spec.seeds[0])
            except (ScoringError, ValueError) as exc:
                raise GameFileError(
                    f"{spec.source}: data set {competition.dataset.name!r} with defense {defense.name!r}: {exc}"
                ) from None
    return competitions


def _play_group(
    group: tuple[GameSpec, _Competition, DefenseSpec, int], site: LiveSite | None = None
) -> tuple[Board, list[Cell]]:
    """One competition: the honest board, then every attack of the game against it."""
    spec, competition, defense, seed = group
    board = play_honest(spec, competition.dataset, competition.population, defense, seed)
    cells = [
        play_cell(spec, competition.dataset, competition.population, defense, attack, seed, board, site,
                  budget=budget, accounts=accounts)
        for attack in spec.attacks
        for budget, accounts in spec.plays_of(attack)
    ]
    return board, cells


def _collect(cells: list[Cell], new: list[Cell], total: int, say: Progress) -> None:
    for cell in new:
        cells.append(cell)
        say(f"[{len(cells)}/{total}] {describe(cell)}")


def describe(cell: Cell) -> str:
    """One line on a played cell: where, its status, accuracy (or why it failed), queries and time."""
    budget = "" if cell.budget is None else f" @ {cell.budget:,}"
    accounts = "" if cell.accounts == 1 else f" × {cell.accounts:,} accounts"
    outcome = (f"accuracy {cell.outcome.label_accuracy:.3f}" if cell.status == "ok"
               else f"{cell.status} ({cell.error or 'no reason given'})")
    return (
        f"{cell.dataset} · {cell.defense} · {cell.attack}{budget}{accounts} · seed {cell.seed}: {outcome}, "
        f"{cell.queries} queries, {cell.seconds:.2f} s"
    )


def _check_registered(spec: GameSpec) -> None:
    missing = sorted({a.attack for a in spec.attacks} - set(ATTACKS))
    if missing:
        raise GameFileError(
            f"{spec.source}: unknown attack(s) {', '.join(missing)}; available: {', '.join(attacks.available())}"
        )


def make_oracle(
    spec: GameSpec, dataset: DatasetSpec, population: Population, defense: DefenseSpec, seed: int,
    *, accounts: int = 1,
) -> LocalOracle:
    """The competition of one cell, as the attacker's oracle (the honest models use its ``spec``) with
    ``accounts`` participants for the attacker.

    The oracle's ``decimals`` (what the attacker knows) is the released precision: the displayed precision or
    a coarser rounding defense's (``ScoringSpec.released_decimals``), as the bot learns it from released values.
    """
    return LocalOracle(
        population.labels,
        metric=spec.metric,
        eps=spec.eps,
        decimals=spec.decimals,
        defenses=defense.chain,
        seed=seed,
        public_fraction=dataset.public_fraction,
        n_classes=population.n_classes,
        ids=population.ids,
        accounts=accounts,
    )


def visible_decimals(displayed: int | None, chain: list[dict[str, Any]]) -> int | None:
    """The released precision a participant observes: the displayed decimals or a rounding defense's
    (:meth:`DefenseChain.released_decimals` of the chain's JSON form).

    >>> visible_decimals(None, [{"name": "noise", "scale": 1e-4}, {"name": "rounding", "decimals": 5}])
    5
    >>> visible_decimals(8, [{"name": "rounding"}])  # rounding defaults to Kaggle's 5 decimals
    5
    """
    return DefenseChain.from_json(chain).released_decimals(displayed)


def _splits(oracle: LocalOracle) -> tuple[str, str]:
    """(public board split, private board split) of a competition."""
    return (oracle.split, "private") if oracle.public_fraction is not None else (oracle.split, oracle.split)


def release_once(
    oracle: LocalOracle, predictions: np.ndarray, *, submission_id: str, split: str,
    shared: dict[str, States] | None = None,
) -> tuple[float | None, float, bool]:
    """Score one first-and-only submission of a fresh participant on ``split`` of ``oracle``'s competition.

    Returns (released score or ``None``, raw score, rejected). Goes through the same :func:`evaluate` and
    chain as ``oracle.submit``, with fresh defense state and its own submission id. ``shared`` is the
    competition's state of a chain with competition-scoped defenses (one Ladder for the board), updated in
    place: every honest participant meets the board the ones before them left.
    """
    parsed = ParsedPredictions(validate_array(np.asarray(predictions, dtype=np.float64), oracle.spec.submission_format))
    if shared is not None and oracle.spec.chain.has_shared_state:
        release = release_submission(oracle.spec, parsed, submission_id=submission_id, splits=(split,), shared=shared)
        if release.reject is not None:
            return None, float(raw_score(oracle.spec, parsed, oracle.spec.split_rows[split])), True
        for metric, by_split in release.shared.items():
            shared.setdefault(metric, {}).update(by_split)
        shared_result = release.primary[split]
        return shared_result.released, float(shared_result.raw), False
    evaluation = evaluate(oracle.spec, parsed, submission_id=submission_id, states=None, splits=(split,))
    if evaluation.reject is not None:
        return None, float(raw_score(oracle.spec, parsed, oracle.spec.split_rows[split])), True
    result = evaluation.results[split]
    return result.released, float(result.raw), False


def as_submitted(oracle: LocalOracle, probabilities: Any) -> np.ndarray:
    """What a participant uploads for ``probabilities`` on ``oracle``'s competition: the probabilities, or the
    logits they stand for when the metric reads logits (``softmax_ce``, ``sigmoid_ce``)."""
    return oracle.spec.metric.from_probabilities(np.asarray(probabilities, dtype=np.float64))


def play_honest(
    spec: GameSpec, dataset: DatasetSpec, population: Population, defense: DefenseSpec, seed: int
) -> Board:
    """Every honest model submits once to the cell's competition, in the population's order; their public and
    private boards. A competition-scoped defense (``scope: "competition"``) keeps one state across them (a later
    model is released behind a board Ladder only if it beats the best so far), the public and private boards
    each their own."""
    oracle = make_oracle(spec, dataset, population, defense, seed)
    public_split, private_split = _splits(oracle)
    participants: list[Participant] = []
    shared_public: dict[str, States] = {}
    shared_private: dict[str, States] = {}
    for position, (name, predictions) in enumerate(population.predictions.items()):
        values = as_submitted(oracle, predictions)
        released_public, raw_public, rejected = release_once(
            oracle, values, submission_id=f"honest-{position}", split=public_split, shared=shared_public
        )
        released_private, raw_private, rejected_private = release_once(
            oracle, values, submission_id=f"honest-{position}-private", split=private_split, shared=shared_private
        )
        participants.append(
            Participant(name, released_public, released_private, raw_public, raw_private, rejected or rejected_private)
        )
    utility = honest_utility(
        released_public=[p.released_public for p in participants],
        raw_public=[p.raw_public for p in participants],
        raw_private=[p.raw_private for p in participants],
        higher_is_better=oracle.spec.metric.higher_is_better,
        released_higher_is_better=oracle.spec.released_higher_is_better,
    )
    return Board(dataset.name, defense.name, seed, participants, utility)


def _accepts(attack: str, parameter: str) -> bool:
    return parameter in inspect.signature(ATTACKS[attack]).parameters


def play_cell(
    spec: GameSpec,
    dataset: DatasetSpec,
    population: Population,
    defense: DefenseSpec,
    attack: AttackSpec,
    seed: int,
    board: Board,
    site: LiveSite | None = None,
    *,
    budget: int | None = None,
    accounts: int | None = None,
) -> Cell:
    """Run one attack within ``budget`` submissions (``None``: the attack's own budget, if any) with ``accounts``
    participants sharing them (``None``: the first of :meth:`GameSpec.accounts_of`) against a fresh competition,
    then submit its recovered labels and rank it.

    With a live ``site`` the attacker (queries and final submission) talks to a competition on that site;
    the private release and the boards use the offline twin, which runs the same code with the same secret.
    """
    budget = attack.budget if budget is None else budget
    accounts = spec.accounts_of(attack)[0] if accounts is None else accounts
    oracle = make_oracle(spec, dataset, population, defense, seed, accounts=accounts)
    target: Any = oracle
    if site is not None:
        if accounts > 1:
            raise GameFileError(f"{spec.source}: a live cell has one attacker account, not {accounts}")
        # One competition per cell: a game with budgets plays an attack at several, each its own cell.
        label = attack.name if spec.budgets is None else f"{attack.name}@{budget}"
        target = site.attacker_oracle(spec, dataset, population, defense, seed, label)
    hidden = population.labels
    params = dict(attack.params)
    if "seed" not in params and _accepts(attack.attack, "seed"):
        params["seed"] = seed
    if budget is not None and "budget" not in params and _accepts(attack.attack, "budget"):
        params["budget"] = budget  # ``auto`` plans within the cell's budget instead of running into it
    ranks: np.ndarray | None = None
    if dataset.models and site is None:  # every query a MutNet model run on the hidden features
        from games.model_board import ModelBoard, feature_ranks  # onnx only for model competitions

        assert population.features is not None, "a model competition needs a data set with features"
        target = ModelBoard(oracle, population.features)
        ranks = feature_ranks(population.features)
    attacker: Any = BudgetedView(target, budget) if budget is not None else target
    status, error = "ok", ""
    details: dict[str, Any] = {}
    confidence: np.ndarray | None = None
    started = time.perf_counter()
    try:
        result = attacks.run(attack.attack, attacker, **params)
        labels = np.asarray(result.labels, dtype=np.int64)
        confidence = result.confidence
        queries, seconds, details = result.queries, result.seconds, jsonable(result.details)
        if labels.shape != hidden.shape:
            raise AttackFailed(f"the attack returned {labels.shape[0]} labels for {hidden.shape[0]} rows")
        if ranks is not None:  # the attack's row i is the hidden row of rank i: back to the hidden order
            labels = labels[ranks]
            confidence = None if confidence is None else np.asarray(confidence)[ranks]
    except AttackFailed as exc:
        status, error = "failed", str(exc) or type(exc).__name__
    except Exception as exc:  # a crashing attack is reported as its cell's error, the game goes on
        status, error = "error", f"{type(exc).__name__}: {exc}"
    if status != "ok":
        labels = np.full(hidden.shape, -1, dtype=np.int64)
        queries, seconds = target.queries, time.perf_counter() - started
        confidence = None
    # Exact labels are staked at the game's final confidence, a best guess at its own (lower) confidence.
    stake = spec.final_confidence if confidence is None else np.minimum(confidence, spec.final_confidence)
    final = as_submitted(oracle, confident_predictions(labels, population.n_classes, stake))
    _, private_split = _splits(oracle)
    try:
        # On a model competition the final submission is the follow-up model: the same head, the labels as its table.
        released_public = target.submit(final if ranks is None else _in_rank_order(final, ranks))
    except (ScoringError, SubmissionFailed):
        released_public = None
    released_private, _, _ = release_once(oracle, final, submission_id="attacker-private", split=private_split)
    higher = oracle.spec.released_higher_is_better  # the board ranks released values (a hard label: 1 first)
    outcome = attacker_outcome(
        labels,
        hidden,
        released_public=None if released_public is None else float(released_public),
        released_private=released_private,
        public_rank=board_rank(
            [p.released_public for p in board.participants], _float(released_public), higher_is_better=higher
        ),
        private_rank=board_rank(
            [p.released_private for p in board.participants], released_private, higher_is_better=higher
        ),
        n_participants=len(board.participants) + 1,
        confidence=confidence,
    )
    scored = hidden[oracle.spec.split_rows[oracle.split]]
    screen = None
    if accounts > 1 and site is None and ranks is None:  # the screen reads files, not models
        from games.screen_axis import play_screened

        screen = play_screened(
            make_oracle(spec, dataset, population, defense, seed, accounts=accounts), attack.attack, params,
            budget=budget, hidden=hidden, seed=seed,
            honest=[as_submitted(oracle, p) for p in population.predictions.values()],
        )
    return Cell(
        dataset=dataset.name,
        defense=defense.name,
        attack=attack.name,
        budget=budget,
        accounts=accounts,
        scored_classes=np.bincount(scored, minlength=population.n_classes).tolist(),
        seed=seed,
        status=status,
        error=error,
        n_rows=len(hidden),
        queries=queries,
        seconds=seconds,
        outcome=outcome,
        utility=board.utility,
        details=details,
        screen=screen,
    )


def _in_rank_order(values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    out = np.empty_like(values)
    out[ranks] = values
    return out


def _float(value: Released) -> float | None:
    return None if value is None else float(value)


def jsonable(value: Any) -> Any:
    """Attack details made JSON-safe (numpy scalars and arrays to Python values, the rest to text)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist()) if value.size <= 64 else f"<array of {value.size}>"
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)

