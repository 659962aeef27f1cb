"""The game file: a TOML description of an attacker-vs-defender game, parsed and validated up front.

A game is the cross product data sets × defense chains × attacks × seeds. Every name is checked against the
registries (attacks, defenses, metrics) and every parameter against what it configures before anything
runs, and an error names the file, the table, the entry and the key::

    [game]
    name = "quick"
    seeds = [0, 1]                  # one cell per seed: the competition secret (split, defense randomness)
    metric = "binary_logloss"       # default
    # decimals = 5                  # displayed precision; omitted = full float64 (use a rounding defense)
    final_confidence = 0.9999       # the attacker's final submission: this probability on each claimed label
    budgets = [1000, 10000]         # optional: play each attack at each of these query budgets (a game dimension)
    accounts = [1, 30, 1000]        # optional: play each attack at each of these account counts (a game dimension)
    utility_tolerance = 0.05        # the recommended chain costs honest players at most this (1 − Kendall τ)

    [[datasets]]
    name = "breast_cancer"
    source = "breast_cancer"        # breast_cancer | digits (real models) | balanced (simulated models)
    test_fraction = 0.3             # held-out rows = the hidden labels
    # n_rows = 2000                 # balanced only
    # public_fraction = 0.3         # released score = public split; omitted = every row
    # models = true                 # a model competition: every query is an ONNX model (paper 001's MutNet
    #                               # head) run on the hidden features; breast_cancer | digits, offline only

    [[defenses]]
    name = "rounding-5"
    chain = [{name = "rounding", decimals = 5}]

    [[attacks]]
    name = "boosting-200"           # the row label in the report (default: the attack's name)
    attack = "boosting"             # registry name (default: name)
    budget = 200                    # optional: this attack at this budget only (else the game's budgets)
    accounts = 1                    # optional: this attack with this many accounts only (else the game's accounts)
    params = {margin = 0.25}        # keyword parameters of the attack (its ``budget``: the budget above)

Budgets: a budget caps an attacker's submissions (every account's together), enforced by the runner; ``auto``
plans within it. An attack with its own ``budget`` is played at that budget only; any other attack is played
once per entry of the game's ``budgets`` (without ``budgets``: once, with no cap). An attack stops when it has
its labels, so a large budget costs only the queries an attack decides to spend.

Accounts: a cell with ``k`` accounts gives the attacker ``k`` participants on the board
(``LocalOracle(accounts=k)``; an attack picks the submitter with ``oracle.account``), each with its own defense
state — a Ladder, a privacy budget, a detector's history — as real attackers have used several accounts (on
Kaggle, the commonest abuse). The budget stays the total: ``k`` accounts share the cell's submissions, so more
accounts buy fresh per-account state, never more queries. An attack with its own ``accounts`` is played with that
many only; any other attack once per entry of the game's ``accounts`` (without ``accounts``: one account). So the
game's answer is the worst case over every account count it tried, and it says how many that was. Offline games
only (a live cell has one attacker account).
"""

from __future__ import annotations

import inspect
import math
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SOURCES = ("breast_cancer", "digits", "balanced")
GAME_KEYS = {
    "name", "description", "seeds", "metric", "eps", "decimals", "final_confidence", "budgets", "accounts",
    "utility_tolerance",
}
DATASET_KEYS = {"name", "source", "test_fraction", "population_seed", "n_rows", "public_fraction", "models"}
DEFENSE_KEYS = {"name", "chain", "description"}
ATTACK_KEYS = {"name", "attack", "budget", "params", "accounts"}
#: The recommended chain's default limit on the honest players' utility cost (1 − Kendall τ).
UTILITY_TOLERANCE = 0.05
#: The most accounts one cell may give the attacker (each holds its defense state in memory).
MAX_ACCOUNTS = 100_000


class GameFileError(ValueError):
    """The game file is malformed or names something that does not exist; the message says where and why."""


@dataclass(frozen=True)
class DatasetSpec:
    """Where the hidden labels and the honest population come from."""

    name: str
    source: str
    test_fraction: float = 0.3
    population_seed: int = 0
    n_rows: int | None = None
    public_fraction: float | None = None
    models: bool = False


@dataclass(frozen=True)
class DefenseSpec:
    """A named defense chain in its JSON form (``[]`` = no defense)."""

    name: str
    chain: list[dict[str, Any]]
    description: str = ""


@dataclass(frozen=True)
class AttackSpec:
    """One attack configuration: the registry name, its keyword parameters, an optional query budget of its
    own (else it plays at the game's budgets) and an optional number of accounts of its own (else it plays with
    each of the game's account counts, or one account)."""

    name: str
    attack: str
    params: dict[str, Any] = field(default_factory=dict)
    budget: int | None = None
    accounts: int | None = None


@dataclass(frozen=True)
class GameSpec:
    """A validated game."""

    name: str
    seeds: list[int]
    datasets: list[DatasetSpec]
    defenses: list[DefenseSpec]
    attacks: list[AttackSpec]
    description: str = ""
    metric: str = "binary_logloss"
    eps: float = 1e-15
    decimals: int | None = None
    final_confidence: float = 0.9999
    budgets: list[int] | None = None
    utility_tolerance: float = UTILITY_TOLERANCE
    source: str = "<string>"
    accounts: list[int] | None = None

    def budgets_of(self, attack: AttackSpec) -> list[int | None]:
        """The budgets ``attack`` is played at: its own, else the game's, else one run without a cap.

        >>> game = GameSpec("g", [0], [], [], [], budgets=[100, 1000])
        >>> game.budgets_of(AttackSpec("auto", "auto")), game.budgets_of(AttackSpec("b", "boosting", budget=50))
        ([100, 1000], [50])
        """
        if attack.budget is not None:
            return [attack.budget]
        return list(self.budgets) if self.budgets else [None]

    def accounts_of(self, attack: AttackSpec) -> list[int]:
        """The account counts ``attack`` is played with: its own, else the game's, else one.

        >>> game = GameSpec("g", [0], [], [], [], accounts=[1, 30])
        >>> game.accounts_of(AttackSpec("auto", "auto")), game.accounts_of(AttackSpec("b", "boosting", accounts=1))
        ([1, 30], [1])
        """
        if attack.accounts is not None:
            return [attack.accounts]
        return list(self.accounts) if self.accounts else [1]

    def plays_of(self, attack: AttackSpec) -> list[tuple[int | None, int]]:
        """Every (budget, accounts) ``attack`` is played at, budgets first (one cell each per competition)."""
        return [(budget, k) for budget in self.budgets_of(attack) for k in self.accounts_of(attack)]

    @property
    def levels(self) -> list[int | None]:
        """The budgets the report compares chains at: the game's budgets, or one level without a cap."""
        return list(self.budgets) if self.budgets else [None]

    @property
    def account_levels(self) -> list[int]:
        """Every account count some attack is played with, ascending: the report's accounts axis."""
        return sorted({k for attack in self.attacks for k in self.accounts_of(attack)}) or [1]

    @property
    def n_cells(self) -> int:
        plays = sum(len(self.plays_of(a)) for a in self.attacks)
        return len(self.datasets) * len(self.defenses) * plays * len(self.seeds)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (``source`` dropped, so a game's outputs do not depend on where its file lives)."""
        data = asdict(self)
        data.pop("source")
        return data

    def document(self) -> dict[str, Any]:
        """The game as the tables of a game file (JSON-ready), so ``parse_game(spec.document()) == spec``
        but for ``source``: how a game travels to a worker, which validates it again rather than trusting it.

        >>> spec = parse_game({"game": {"name": "g", "seeds": [1]}, "datasets": [{"name": "breast_cancer"}],
        ...                    "defenses": [{"name": "none", "chain": []}], "attacks": [{"name": "boosting"}]})
        >>> parse_game(spec.document(), source=spec.source) == spec
        True
        """

        def present(table: dict[str, Any]) -> dict[str, Any]:
            return {key: value for key, value in table.items() if value is not None}  # TOML has no null

        game = present({key: value for key, value in self.to_dict().items() if key in GAME_KEYS})
        return {
            "game": game,
            "datasets": [present(asdict(d)) for d in self.datasets],
            "defenses": [present(asdict(d)) for d in self.defenses],
            "attacks": [present(asdict(a)) for a in self.attacks],
        }


def load_game(path: str | Path) -> GameSpec:
    """Read and validate a game file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GameFileError(f"{path}: cannot read the game file: {exc.strerror or exc}") from None
    return parse_game(text, source=str(path))


def parse_game(text: str | dict[str, Any], *, source: str = "<string>") -> GameSpec:
    """Validate a game given as TOML text (or an already parsed dict).

    >>> spec = parse_game('''
    ... [game]
    ... name = "tiny"
    ... seeds = [0]
    ... [[datasets]]
    ... name = "bc"
    ... source = "breast_cancer"
    ... [[defenses]]
    ... name = "none"
    ... chain = []
    ... [[attacks]]
    ... name = "boosting"
    ... params = {budget = 10}
    ... ''')
    >>> spec.n_cells, spec.attacks[0].attack, spec.decimals
    (1, 'boosting', None)
    """
    if isinstance(text, dict):
        data = text
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise GameFileError(f"{source}: not valid TOML: {exc}") from None
    return _Validator(source).game(data)


class _Validator:
    """Builds a :class:`GameSpec`, raising :class:`GameFileError` with the location of the first problem."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> GameFileError:
        return GameFileError(f"{self.source}: {where}: {message}")

    def game(self, data: dict[str, Any]) -> GameSpec:
        unknown_tables = sorted(set(data) - {"game", "datasets", "defenses", "attacks"})
        if unknown_tables:
            raise self.fail(
                "top level", f"unknown table(s) {', '.join(unknown_tables)}; expected [game], [[datasets]], "
                "[[defenses]], [[attacks]]"
            )
        game = data.get("game")
        if not isinstance(game, dict):
            raise self.fail("[game]", "missing table (it needs at least name and seeds)")
        self.keys("[game]", game, GAME_KEYS)
        name = self.required("[game]", game, "name")
        seeds = game.get("seeds", [0])
        if (
            not isinstance(seeds, list)
            or not seeds
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
        ):
            raise self.fail("[game]", f"'seeds' must be a non-empty list of non-negative integers, got {seeds!r}")
        if len(set(seeds)) != len(seeds):
            raise self.fail("[game]", f"'seeds' lists a seed twice: {seeds!r}")
        metric = self.string("[game]", game, "metric") or "binary_logloss"
        self.check_metric(metric)
        eps = self.number("[game]", game, "eps", 1e-15, low=0.0, high=0.5, open_low=True, open_high=True)
        decimals = game.get("decimals")
        if decimals is not None and (not isinstance(decimals, int) or isinstance(decimals, bool)
                                     or not 0 <= decimals <= 15):
            raise self.fail("[game]", f"'decimals' must be an integer from 0 to 15 (omit it for float64), got "
                            f"{decimals!r}")
        confidence = self.number("[game]", game, "final_confidence", 0.9999, low=0.5, high=1.0, open_high=False)
        budgets = game.get("budgets")
        if budgets is not None and (
            not isinstance(budgets, list)
            or not budgets
            or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in budgets)
            or len(set(budgets)) != len(budgets)
        ):
            raise self.fail("[game]", f"'budgets' must be a non-empty list of distinct positive integers (query "
                            f"budgets), got {budgets!r}")
        accounts = game.get("accounts")
        if accounts is not None and (
            not isinstance(accounts, list)
            or not accounts
            or not all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_ACCOUNTS for k in accounts)
            or len(set(accounts)) != len(accounts)
        ):
            raise self.fail("[game]", f"'accounts' must be a non-empty list of distinct integers from 1 to "
                            f"{MAX_ACCOUNTS:,} (participants the attacker controls, sharing the budget), got "
                            f"{accounts!r}")
        tolerance = self.number("[game]", game, "utility_tolerance", UTILITY_TOLERANCE, low=0.0, high=2.0)
        datasets = [self.dataset(i, d) for i, d in enumerate(self.entries("datasets", data))]
        defenses = [self.defense(i, d, metric, eps) for i, d in enumerate(self.entries("defenses", data))]
        attacks = [self.attack(i, a) for i, a in enumerate(self.entries("attacks", data))]
        for table, items in (("datasets", datasets), ("defenses", defenses), ("attacks", attacks)):
            names = [item.name for item in items]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise self.fail(f"[[{table}]]", f"names must be unique; {', '.join(map(repr, twice))} repeated")
        return GameSpec(
            name=name,
            description=self.string("[game]", game, "description") or "",
            seeds=list(seeds),
            metric=metric,
            eps=eps,
            decimals=decimals,
            final_confidence=confidence,
            budgets=None if budgets is None else sorted(budgets),
            accounts=None if accounts is None else sorted(accounts),
            utility_tolerance=tolerance,
            datasets=datasets,
            defenses=defenses,
            attacks=attacks,
            source=self.source,
        )

    # --- tables -------------------------------------------------------------------------------------------

    def entries(self, table: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        items = data.get(table)
        if items is None:
            raise self.fail(f"[[{table}]]", "missing: a game needs at least one entry")
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
            raise self.fail(f"[[{table}]]", "must be a non-empty array of tables")
        return items

    def dataset(self, index: int, entry: dict[str, Any]) -> DatasetSpec:
        where = self.where("datasets", index, entry)
        self.keys(where, entry, DATASET_KEYS)
        name = self.required(where, entry, "name")
        source = self.string(where, entry, "source") or name
        if source not in SOURCES:
            raise self.fail(where, f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
        n_rows = entry.get("n_rows")
        if source == "balanced":
            if not isinstance(n_rows, int) or isinstance(n_rows, bool) or n_rows < 2:
                raise self.fail(where, f"source 'balanced' needs 'n_rows', an integer of at least 2, got {n_rows!r}")
        elif n_rows is not None:
            raise self.fail(where, f"'n_rows' applies to source 'balanced' only (source {source!r} fixes its size)")
        public_fraction = entry.get("public_fraction")
        if public_fraction is not None:
            public_fraction = self.number(where, entry, "public_fraction", 0.0, low=0.0, high=1.0,
                                          open_low=True, open_high=True)
        models = entry.get("models", False)
        if not isinstance(models, bool):
            raise self.fail(where, f"'models' must be true or false, got {models!r}")
        if models and source == "balanced":
            raise self.fail(where, "'models = true' needs features: source 'breast_cancer' or 'digits'")
        seed = entry.get("population_seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise self.fail(where, f"'population_seed' must be a non-negative integer, got {seed!r}")
        return DatasetSpec(
            name=name,
            source=source,
            test_fraction=self.number(where, entry, "test_fraction", 0.3, low=0.0, high=1.0,
                                      open_low=True, open_high=True),
            population_seed=seed,
            n_rows=n_rows,
            public_fraction=public_fraction,
            models=models,
        )

    def defense(self, index: int, entry: dict[str, Any], metric: str, eps: float) -> DefenseSpec:
        from defenses import DefenseChain, DefenseConfigError

        where = self.where("defenses", index, entry)
        self.keys(where, entry, DEFENSE_KEYS)
        name = self.required(where, entry, "name")
        chain = entry.get("chain")
        if not isinstance(chain, list):
            raise self.fail(where, "'chain' is required: a list of {name = ..., ...} tables ([] = no defense)")
        try:
            built = DefenseChain.from_json(chain)
        except DefenseConfigError as exc:
            raise self.fail(where, f"invalid defense chain: {exc}") from None
        check_metric = getattr(built, "check_metric", None)
        if callable(check_metric):
            try:
                check_metric(_metric_view(metric, eps))
            except DefenseConfigError as exc:
                raise self.fail(where, f"invalid defense chain for metric {metric!r}: {exc}") from None
        return DefenseSpec(name=name, chain=list(chain), description=self.string(where, entry, "description") or "")

    def attack(self, index: int, entry: dict[str, Any]) -> AttackSpec:
        import attacks
        from attacks.registry import ATTACKS

        where = self.where("attacks", index, entry)
        self.keys(where, entry, ATTACK_KEYS)
        label = self.string(where, entry, "name") or self.string(where, entry, "attack")
        if not label:
            raise self.fail(where, "needs 'name' (or 'attack')")
        registry_name = self.string(where, entry, "attack") or label
        if registry_name not in ATTACKS:
            raise self.fail(
                where, f"unknown attack {registry_name!r}; available: {', '.join(attacks.available()) or '(none)'}"
            )
        params = entry.get("params", {})
        if not isinstance(params, dict):
            raise self.fail(where, f"'params' must be a table of keyword parameters, got {params!r}")
        try:
            inspect.signature(ATTACKS[registry_name]).bind(None, **params)
        except TypeError as exc:
            raise self.fail(where, f"attack {registry_name!r} does not accept these params: {exc}") from None
        budget = entry.get("budget")
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 1):
            raise self.fail(where, f"'budget' must be a positive integer (a cap on queries), got {budget!r}")
        accounts = entry.get("accounts")
        if accounts is not None and (
            not isinstance(accounts, int) or isinstance(accounts, bool) or not 1 <= accounts <= MAX_ACCOUNTS
        ):
            raise self.fail(where, f"'accounts' must be a positive integer of at most {MAX_ACCOUNTS:,} (participants "
                            f"the attacker controls), got {accounts!r}")
        return AttackSpec(name=label, attack=registry_name, params=dict(params), budget=budget, accounts=accounts)

    # --- values -------------------------------------------------------------------------------------------

    @staticmethod
    def where(table: str, index: int, entry: dict[str, Any]) -> str:
        label = entry.get("name") or entry.get("attack")
        return f"[[{table}]] #{index + 1}" + (f" ({label!r})" if isinstance(label, str) else "")

    def keys(self, where: str, entry: dict[str, Any], allowed: set[str]) -> None:
        unknown = sorted(set(entry) - allowed)
        if unknown:
            raise self.fail(where, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")

    def required(self, where: str, entry: dict[str, Any], key: str) -> str:
        value = self.string(where, entry, key, required=True)
        assert value is not None
        return value

    def string(self, where: str, entry: dict[str, Any], key: str, *, required: bool = False) -> str | None:
        value = entry.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"'{key}' is required")
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.fail(where, f"'{key}' must be a non-empty string, got {value!r}")
        return value

    def number(
        self,
        where: str,
        entry: dict[str, Any],
        key: str,
        default: float,
        *,
        low: float,
        high: float,
        open_low: bool = False,
        open_high: bool = False,
    ) -> float:
        value = entry.get(key, default)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok:
            ok = (value > low if open_low else value >= low) and (value < high if open_high else value <= high)
        if not ok:
            interval = f"{'(' if open_low else '['}{low}, {high}{')' if open_high else ']'}"
            raise self.fail(where, f"'{key}' must be a number in {interval}, got {value!r}")
        return float(value)

    def check_metric(self, metric: str) -> None:
        from scoring import METRICS
        from scoring.metrics import is_metric_name

        if not is_metric_name(metric):
            raise self.fail(
                "[game]",
                f"unknown metric {metric!r}; choose one of {', '.join(sorted(METRICS))} (or norm_like:α, α ≥ 2)",
            )


def _metric_view(metric: str, eps: float) -> Any:
    """The defenses' view of ``metric`` (for chains that reject metrics they cannot handle)."""
    from scoring.pipeline import metric_view

    return metric_view(metric, eps)
