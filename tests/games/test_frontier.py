"""Budgets and accounts in games, the privacy–utility frontier, the recommended chain and the frontier chart."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attacks.oracle import Oracle
from attacks.registry import ATTACKS
from attacks.result import AttackFailed, AttackResult
from games import GameFileError, parse_game, run_game
from games.caveats import CAVEATS, chain_caveats
from games.frontier import ChainPoint, counts_at, leakage, pareto, recommend, utility_cost
from games.frontier_chart import frontier_svg, nice_step
from games.gamefile import DefenseSpec, GameSpec
from games.report import attack_lines, chain_verdicts, write_report
from games.runner import Cell, GameResult
from games.utility import AttackerOutcome, HonestUtility

GAME = """
[game]
name = "budgets"
seeds = [0]
budgets = [50, 5]

[[datasets]]
name = "balanced-40"
source = "balanced"
n_rows = 40

[[defenses]]
name = "none"
chain = []

[[defenses]]
name = "ladder"
chain = [{name = "ladder", mode = "fixed", eta = 0.01}]

[[attacks]]
name = "test_one_row"

[[attacks]]
name = "boosting-8"
attack = "boosting"
budget = 8

[[attacks]]
name = "three-accounts"
attack = "test_accounts"
accounts = 3
budget = 4
"""


def one_row_per_query(oracle: Oracle) -> np.ndarray:
    """Exact and slow: 1 + n queries (one row moved per query), then it stops, whatever the budget left."""
    base = np.full(oracle.n_rows, 0.5)
    baseline = oracle.submit(base)
    labels = np.full(oracle.n_rows, -1, dtype=np.int64)
    for row in range(oracle.n_rows):
        probe = base.copy()
        probe[row] = 0.9
        released = oracle.submit(probe)
        if released is None or baseline is None:
            raise AttackFailed("nothing was released")
        labels[row] = 1 if float(released) < float(baseline) else 0
    return labels


def accounts_probe(oracle: Any) -> AttackResult:
    """The same file from every account: with a Ladder each account's first submission is released."""
    released = []
    for account in range(oracle.accounts):
        oracle.account = account
        released.append(oracle.submit(np.full(oracle.n_rows, 0.5)))
    oracle.account = 0
    labels = np.zeros(oracle.n_rows, dtype=np.int64)
    return AttackResult("test_accounts", labels, details={"accounts": oracle.accounts, "released": released},
                        confidence=np.full(oracle.n_rows, 0.5))


@pytest.fixture(autouse=True)
def test_attacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ATTACKS, "test_one_row", one_row_per_query)
    monkeypatch.setitem(ATTACKS, "test_accounts", accounts_probe)


# --- the game file: budgets and accounts ------------------------------------------------------------------------


def test_budgets_are_a_game_dimension_and_an_attacks_own_budget_wins() -> None:
    spec = parse_game(GAME)
    assert spec.budgets == [5, 50] and spec.levels == [5, 50]  # sorted
    assert [spec.budgets_of(a) for a in spec.attacks] == [[5, 50], [8], [4]]
    assert spec.attacks[2].accounts == 3 and spec.attacks[0].accounts is None  # None: the game's accounts
    assert [spec.accounts_of(a) for a in spec.attacks] == [[1], [1], [3]] and spec.account_levels == [1, 3]
    assert spec.n_cells == 1 * 2 * (2 + 1 + 1) * 1
    assert spec.utility_tolerance == 0.05
    without = parse_game(GAME.replace("budgets = [50, 5]", ""))
    assert without.levels == [None] and without.budgets_of(without.attacks[0]) == [None]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("budgets = [50, 5]", "budgets = []"), "'budgets' must be a non-empty list"),
        (lambda t: t.replace("budgets = [50, 5]", "budgets = [5, 5]"), "distinct positive integers"),
        (lambda t: t.replace("budgets = [50, 5]", "budgets = [0, 5]"), "distinct positive integers"),
        (lambda t: t.replace("budgets = [50, 5]", 'budgets = "1000"'), "'budgets' must be a non-empty list"),
        (lambda t: t.replace("budgets = [50, 5]", "budgets = [true]"), "'budgets' must be a non-empty list"),
        (lambda t: t.replace("accounts = 3", "accounts = 0"), "'accounts' must be a positive integer"),
        (lambda t: t.replace("accounts = 3", "accounts = 2.5"), "'accounts' must be a positive integer"),
        (lambda t: t.replace("accounts = 3", "accounts = true"), "'accounts' must be a positive integer"),
        (lambda t: t.replace("budgets = [50, 5]", "budgets = [5]\nutility_tolerance = -1"),
         "'utility_tolerance' must be a number"),
    ],
)
def test_bad_budgets_and_accounts_are_refused_with_the_place(edit: Any, message: str) -> None:
    with pytest.raises(GameFileError) as caught:
        parse_game(edit(GAME), source="budgets.toml")
    assert str(caught.value).startswith("budgets.toml: ") and message in str(caught.value)


# --- playing budgets and accounts -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[GameResult, dict[str, Path]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(ATTACKS, "test_one_row", one_row_per_query)
        patch.setitem(ATTACKS, "test_accounts", accounts_probe)
        result = run_game(parse_game(GAME))
    return result, write_report(result, tmp_path_factory.mktemp("budgets"))


def test_each_attack_plays_at_each_budget_and_stops_when_it_has_the_labels(
    played: tuple[GameResult, dict[str, Path]],
) -> None:
    result, _ = played
    exact = {c.budget: c for c in result.cells if c.attack == "test_one_row" and c.defense == "none"}
    assert set(exact) == {5, 50}
    assert exact[5].status == "failed" and "budget of 5" in exact[5].error  # 41 queries do not fit in 5
    # 41 queries of 50: the rest of the budget is left unused.
    assert exact[50].status == "ok" and exact[50].queries == 41 and exact[50].outcome.exact_recovery
    assert [c.budget for c in result.cells if c.attack == "boosting-8"] == [8, 8]


def test_a_game_attacker_has_its_accounts_each_with_its_own_defense_state(
    played: tuple[GameResult, dict[str, Path]],
) -> None:
    result, _ = played
    ladder = next(c for c in result.cells if c.attack == "three-accounts" and c.defense == "ladder")
    assert ladder.accounts == 3 and ladder.details["accounts"] == 3
    # Three accounts, one Ladder each: the same file gets a score released three times.
    assert len(ladder.details["released"]) == 3 and None not in ladder.details["released"]
    assert ladder.queries == 3


def test_a_live_game_refuses_several_accounts() -> None:
    class Site:
        url = "http://127.0.0.1:9"

    with pytest.raises(GameFileError, match="several accounts, which only an offline game plays"):
        run_game(parse_game(GAME), site=Site())  # type: ignore[arg-type]


def test_the_report_writes_the_frontier_as_json_and_svg(played: tuple[GameResult, dict[str, Path]]) -> None:
    _, paths = played
    document = json.loads(paths["frontier_json"].read_text())
    assert document["budgets"] == [5, 50] and document["utility_tolerance"] == 0.05
    points = {(p["defense"], p["budget"]): p for p in document["points"]}
    assert set(points) == {(d, b) for d in ("none", "ladder") for b in (5, 50)}
    # At 5 submissions only the 4-submission account probe (a majority-free guess) fits; at 50 the exact attack
    # recovers every label on the undefended board.
    assert points[("none", 50)]["leakage"] == 1.0 and points[("none", 50)]["attack"] == "test_one_row"
    assert points[("none", 5)]["attack"] != "test_one_row"
    assert document["recommended"]["balanced-40"]["budget"] == 50
    svg = paths["frontier_svg"].read_text()
    assert svg.count("<circle class=\"on-frontier\"") + svg.count("<circle class=\"dominated\"") == 4
    assert svg.count('class="recommended"') == 1
    page = paths["html"].read_text()
    assert "What each defense does not protect" in page and "The Ladder releases a new score only" in page
    assert "Budget (submissions)" in page


# --- the frontier on a hand-made matrix ---------------------------------------------------------------------------


def dominated_by_brute_force(points: list[tuple[float, float]]) -> list[bool]:
    """A point is on the frontier iff removing every other point never leaves one that is better on both
    (checked over every pair, both orders, with explicit ≤/< cases)."""
    out = []
    for i, (c, v) in enumerate(points):
        beaten = False
        for j, (c2, v2) in enumerate(points):
            if i == j:
                continue
            if (c2 < c and v2 <= v) or (c2 <= c and v2 < v):
                beaten = True
        out.append(not beaten)
    return out


def test_the_pareto_set_of_a_hand_made_matrix() -> None:
    # cost, leakage: none, rounding, noise, ladder, rr, combined
    points = [(0.0, 1.0), (0.0, 1.0), (0.01, 0.9), (0.05, 0.0), (0.3, 0.4), (0.5, 0.0)]
    assert pareto(points) == [True, True, True, True, False, False]
    rng = np.random.default_rng(0)
    for _ in range(200):
        size = int(rng.integers(1, 8))
        grid = [(float(rng.integers(0, 4)) / 4, float(rng.integers(0, 4)) / 4) for _ in range(size)]
        assert pareto(grid) == dominated_by_brute_force(grid)
        # The least leaky point of every cost prefix is on the frontier (a direct consequence of the definition).
        for limit in {c for c, _ in grid}:
            within = [p for p in grid if p[0] <= limit]
            least = min(within, key=lambda p: (p[1], p[0]))
            assert pareto(grid)[grid.index(least)]


def point(defense: str, budget: int | None, cost: float, leak: float, on: bool = True) -> ChainPoint:
    return ChainPoint("d", defense, budget, cost, leak, 1 - cost, 1.0, 0.0, 0.5, 0.5 + leak / 2, 0.0, "a", budget,
                      10.0, on)


def test_the_recommended_chain_is_the_least_leaky_within_the_tolerance_at_the_largest_budget() -> None:
    points = [
        point("none", 10, 0.0, 1.0), point("ladder", 10, 0.04, 0.0), point("rr", 10, 0.3, 0.0),
        point("none", 100, 0.0, 1.0), point("ladder", 100, 0.04, 0.6), point("noise", 100, 0.01, 0.6),
        point("rr", 100, 0.3, 0.1),
    ]
    chosen = recommend(points, 0.05)["d"]
    # At 100 submissions: rr leaks least but costs 0.3; of the rest, ladder and noise tie on leakage and the
    # cheaper one, noise, wins (ladder would win at 10 submissions).
    assert chosen.budget == 100 and chosen.point is not None and chosen.point.defense == "noise"
    assert recommend(points, 0.5)["d"].point.defense == "rr"  # type: ignore[union-attr]
    none_within = [point("a", 1, 0.2, 0.5), point("b", 1, 0.3, 0.1)]
    assert recommend(none_within, 0.1)["d"].point is None
    # By brute force over tolerances: the recommendation is within it and nothing within it leaks less.
    for tolerance in (0.0, 0.01, 0.04, 0.05, 0.3, 1.0):
        top = [p for p in points if p.budget == 100]
        pick = recommend(points, tolerance)["d"].point
        assert pick is not None and pick.cost <= tolerance
        assert all(p.leakage >= pick.leakage for p in top if p.cost <= tolerance)
        assert pareto([(p.cost, p.leakage) for p in top])[top.index(pick)]


def test_leakage_cost_and_budget_rules() -> None:
    assert leakage(0.6, 0.6) == 0.0 and leakage(1.0, 0.6) == 1.0 and leakage(0.4, 0.6) == 0.0
    assert utility_cost(float("nan")) == 1.0 and utility_cost(-1.0) == 2.0
    assert counts_at(1000, 10000) and not counts_at(10000, 1000) and counts_at(None, None)
    assert not counts_at(None, 1000)  # an uncapped run is not an attack within a cap
    assert nice_step(0.45) == 0.1


def synthetic_result(rows: list[tuple[str, str, int, float]], tolerance: float = 0.05) -> GameResult:
    """A played game made by hand: (defense, attack, budget, accuracy) per cell, one seed; τ by defense."""
    tau = {"none": 1.0, "rounding": 1.0, "ladder": 0.97, "rr": 0.4}
    cells = []
    for defense, attack, budget, accuracy in rows:
        outcome = AttackerOutcome(accuracy, 1.0, accuracy, accuracy == 1.0, None, None, 1, 1, 5,
                                  exact_fraction=accuracy if accuracy == 1.0 else 0.0, majority_rate=0.6)
        utility = HonestUtility(tau[defense], True, 0.0, 0.0, 0, 4)
        cells.append(Cell("d", defense, attack, 0, "ok", "", 100, budget // 2, 0.1, outcome, utility, {},
                          budget=budget))
    chains: dict[str, list[dict[str, Any]]] = {
        "none": [], "rounding": [{"name": "rounding"}], "ladder": [{"name": "ladder", "mode": "fixed", "eta": 0.01}],
        "rr": [{"name": "randomized_response", "p": 0.3}],
    }
    defenses = [DefenseSpec(name, chain) for name, chain in chains.items()]
    spec = GameSpec("hand", [0], [], defenses, [], budgets=[100, 1000], utility_tolerance=tolerance)
    return GameResult(spec, cells, [], 1.0)


def test_chain_points_take_the_strongest_attack_within_each_budget() -> None:
    result = synthetic_result([
        ("none", "auto", 100, 1.0), ("none", "auto", 1000, 1.0),
        ("rounding", "auto", 100, 0.8), ("rounding", "auto", 1000, 1.0),
        ("ladder", "auto", 100, 0.6), ("ladder", "auto", 1000, 0.7), ("ladder", "slow", 1000, 0.9),
        ("rr", "auto", 100, 0.6), ("rr", "auto", 1000, 0.6),
    ])
    verdicts = chain_verdicts(result, attack_lines(result.cells))["d"]
    assert [v.defense for v in verdicts] == ["none", "rounding", "ladder", "rr"]
    ladder = next(v for v in verdicts if v.defense == "ladder")
    assert ladder.point.budget == 1000 and ladder.point.attack == "slow"
    assert ladder.point.leakage == pytest.approx(0.75)  # (0.9 − 0.6) / 0.4
    # Within the tolerance 0.05 are none, rounding (leakage 1) and ladder (0.75, cost 0.03): ladder.
    assert [v.defense for v in verdicts if v.recommended] == ["ladder"]
    assert any("The Ladder releases" in line for line in ladder.caveats)
    assert ladder.caveats[-1].startswith("Measured here: within 1,000 submissions the strongest attack (slow) got 90")


def test_every_defense_has_a_statement_of_what_it_does_not_protect() -> None:
    from defenses import available

    assert set(available()) <= set(CAVEATS)
    p = point("rr", 1000, 0.3, 0.9)
    fixed = chain_caveats([{"name": "randomized_response", "p": 0.05, "mode": "fixed"}], p)
    assert "capped at 1 − p" in fixed[0] and fixed[-1].startswith("Measured here")
    assert "averaging" in chain_caveats([{"name": "noise", "kind": "laplace", "scale": 1e-3}], p)[0]
    assert chain_caveats([], p)[0].startswith("No defense")


def test_the_chart_draws_every_point_ring_and_frontier_line() -> None:
    points = [point(d, b, c, v, on) for (d, c), b in itertools.product(
        [("none", 0.0), ("rounding", 0.0), ("ladder", 0.04), ("rr", 0.6)], [10, 100])
        for v, on in [(1.0 if d in ("none", "rounding") else 0.2, d != "rr")]]
    svg = frontier_svg(points, recommend(points, 0.05), 0.05, title="hand <made>")
    assert svg.startswith("<svg xmlns=") and "hand &lt;made&gt;" in svg  # escaped
    assert len(re.findall(r'<circle class="(on-frontier|dominated)"', svg)) == 8
    assert svg.count('<polyline class="frontier-line"') == 2 and svg.count('class="recommended"') == 1
    # Every chain sits at its true cost; chains on one spot share one label instead of hiding each other's.
    xs = {m.group(1): float(m.group(2)) for m in re.finditer(r'data-defense="(\w+)">\s*<line x1="([\d.]+)"', svg)}
    assert xs["none"] == xs["rounding"] < xs["ladder"] < xs["rr"]
    assert re.findall(r'class="chain-label"[^>]*>([^<]*)<', svg) == ["1, 2", "3", "4"]
    assert 'viewBox="0 0 1100 ' in svg
