"""The accounts axis of a game: parsed and validated, played with k accounts sharing the budget, reported per
account count beside the information bound, the recommendation saying with how many accounts it was measured,
and an attack that failed reading "failed (reason)" on every surface."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attacks.information import transcript_bits
from attacks.oracle import Oracle
from attacks.registry import ATTACKS
from attacks.result import AttackFailed
from games import GameFileError, parse_game, run_game
from games.bounds import Bound, information_bound
from games.frontier import accounts_cells, chain_points
from games.report import attack_lines, failed_legend, finished_summary, summarize, write_report
from games.runner import GameResult

REASON = "no labeling fits the released scores"

GAME = """
[game]
name = "accounts"
seeds = [0]
budgets = [200]
accounts = [30, 1]

[[datasets]]
name = "balanced-100-public"
source = "balanced"
n_rows = 100
public_fraction = 0.3

[[defenses]]
name = "ladder-parameter-free"
chain = [{name = "ladder", mode = "parameter_free"}, {name = "rounding", decimals = 5}]

[[defenses]]
name = "rounding-5"
chain = [{name = "rounding", decimals = 5}]

[[attacks]]
name = "auto"

[[attacks]]
name = "test_fail"
accounts = 1
"""


def always_fails(oracle: Oracle) -> np.ndarray:
    oracle.submit(np.full(oracle.n_rows, 0.5))
    raise AttackFailed(REASON)


@pytest.fixture(autouse=True)
def test_attacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ATTACKS, "test_fail", always_fails)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[GameResult, dict[str, Path]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(ATTACKS, "test_fail", always_fails)
        result = run_game(parse_game(GAME))
        return result, write_report(result, tmp_path_factory.mktemp("accounts"))


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


# --- the game file ---------------------------------------------------------------------------------------------


def test_the_accounts_axis_is_a_game_dimension_and_an_attacks_own_count_wins() -> None:
    spec = parse_game(GAME)
    assert spec.accounts == [1, 30] and spec.account_levels == [1, 30]  # sorted
    auto, fail = spec.attacks
    assert spec.accounts_of(auto) == [1, 30] and spec.accounts_of(fail) == [1]
    assert spec.plays_of(auto) == [(200, 1), (200, 30)]
    assert spec.n_cells == 1 * 2 * (2 + 1) * 1
    without = parse_game(GAME.replace("accounts = [30, 1]", ""))
    assert without.accounts is None and without.accounts_of(without.attacks[0]) == [1]
    assert without.account_levels == [1] and without.n_cells == 4
    assert parse_game(spec.document(), source=spec.source) == spec  # travels to a worker unchanged


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[]", "'accounts' must be a non-empty list of distinct integers from 1 to 100,000"),
        ("[0, 30]", "'accounts' must be a non-empty list"),
        ("[1, 1]", "'accounts' must be a non-empty list of distinct"),
        ("[1, 2.5]", "'accounts' must be a non-empty list"),
        ("[true]", "'accounts' must be a non-empty list"),
        ('"30"', "'accounts' must be a non-empty list"),
        ("[1, 1000000]", "from 1 to 100,000"),
    ],
)
def test_bad_account_counts_are_refused_with_the_place(value: str, message: str) -> None:
    with pytest.raises(GameFileError) as caught:
        parse_game(GAME.replace("accounts = [30, 1]", f"accounts = {value}"), source="accounts.toml")
    assert str(caught.value).startswith("accounts.toml: [game]: ") and message in str(caught.value)
    assert "participants the attacker controls" in str(caught.value)


def test_an_attacks_own_account_count_is_checked_too() -> None:
    with pytest.raises(GameFileError, match=r"\[\[attacks\]\] #2 \('test_fail'\): 'accounts' must be a positive"):
        parse_game(GAME.replace("accounts = 1\n", "accounts = 0\n"))


def test_a_live_game_refuses_the_accounts_axis() -> None:
    class Site:
        url = "http://127.0.0.1:9"

    with pytest.raises(GameFileError, match="auto use several accounts, which only an offline game plays"):
        run_game(parse_game(GAME), site=Site())  # type: ignore[arg-type]


# --- playing with k accounts -----------------------------------------------------------------------------------


def test_the_runner_gives_each_cell_its_accounts_within_one_budget(played: tuple[GameResult, Any]) -> None:
    result, _ = played
    auto = {(c.defense, c.accounts): c for c in result.cells if c.attack == "auto"}
    assert set(auto) == {(d, k) for d in ("ladder-parameter-free", "rounding-5") for k in (1, 30)}
    assert all(c.budget == 200 and c.queries <= 200 for c in auto.values())  # every account's in one budget
    one, thirty = auto[("ladder-parameter-free", 1)], auto[("ladder-parameter-free", 30)]
    assert one.status == thirty.status == "ok"
    # Behind the parameter-free Ladder one account reads no public label beyond the majority; 30 accounts, one
    # first release each, read more (every public label, on this board).
    assert thirty.outcome.label_accuracy > one.outcome.label_accuracy
    public = sum(thirty.scored_classes)
    assert public == 30 and thirty.outcome.exact_fraction * thirty.n_rows >= public - 1


def test_the_frontier_takes_the_worst_case_over_the_accounts_and_says_how_many(played: tuple[GameResult, Any]) -> None:
    result, paths = played
    lines = attack_lines(result.cells)
    ladder = next(p for p in chain_points(result, lines) if p.defense == "ladder-parameter-free")
    best = max(c.outcome.label_accuracy for c in result.cells if c.defense == ladder.defense and c.status == "ok")
    assert ladder.label_accuracy == best and ladder.accounts == 30 and ladder.accounts_tried == 30
    document = json.loads(paths["frontier_json"].read_text())
    assert document["accounts"] == [1, 30]
    rows = {(r["defense"], r["accounts"]): r for r in document["by_accounts"]}
    assert rows[("ladder-parameter-free", 30)]["label_accuracy"] > rows[("ladder-parameter-free", 1)]["label_accuracy"]
    # Every cell beside its information bound, on the 30 public rows the released score depends on.
    cells = accounts_cells(result, lines)
    assert [(c.defense, c.accounts) for c in cells] == [(d, k) for d in ("ladder-parameter-free", "rounding-5")
                                                        for k in (1, 30)]
    for cell in cells:
        assert cell.bound is not None and cell.bound.scored_rows == 30 and cell.bound.n_rows == 100
        assert cell.label_accuracy is not None and cell.attack == "auto"
        exact_rows = (cell.exact_fraction or 0.0) * 100
        assert exact_rows <= cell.bound.labels + 1e-9  # what was read exactly is within what the releases carry


def test_the_recommendation_names_the_accounts_it_was_measured_with(played: tuple[GameResult, Any]) -> None:
    _, paths = played
    page = paths["html"].read_text()
    answer = page[page.index("The answer"):page.index("<h2>Privacy–utility frontier</h2>")]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer))
    assert "with up to 30 accounts" in text
    assert "safe" not in text.lower()
    assert "a lower bound on what leaks, not a limit on every attacker" in text or "No chain" in text
    # One column per account count, each beside its bound.
    assert re.search(r"<th>1 account</th><th>Bound</th><th>30 accounts</th><th>Bound</th>", answer)
    assert "every public label (30 of 100)" in answer


# --- the information bound -------------------------------------------------------------------------------------


def test_the_bound_is_the_transcripts_bits_in_labels_and_grows_with_accounts_behind_a_fixed_ladder() -> None:
    spec = parse_game(GAME)
    fixed = [{"name": "ladder", "mode": "fixed", "eta": 0.01}]
    one = information_bound(spec, fixed, scored_classes=[2500, 2500], budget=1000, accounts=1)
    many = information_bound(spec, fixed, scored_classes=[2500, 2500], budget=1000, accounts=30)
    assert one is not None and many is not None
    expected = transcript_bits(fixed, metric="binary_logloss", n_rows=5000, decimals=None, accounts=1, queries=1000)
    assert expected is not None and one.bits == pytest.approx(expected)
    assert one.labels < 5000 and one.labels == int(one.bits)  # balanced: one bit a label
    assert many.labels == 5000 and many.text() == "every label"
    assert information_bound(spec, fixed, scored_classes=[2500, 2500], budget=None, accounts=1) is None
    assert Bound(10.0, 10, 30, 100).text() == "≤ 10 of the 30 public labels (of 100)"


# --- a failed attack reads "failed (reason)" everywhere --------------------------------------------------------


def test_a_failed_attack_reads_failed_with_its_reason_on_every_surface(played: tuple[GameResult, Any]) -> None:
    result, paths = played
    failed = f"failed ({REASON})"
    summary_md = paths["summary_md"].read_text()
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in summary_md.splitlines()
            if "| test_fail |" in line]
    assert len(rows) == 2 and all(row[6] == failed and row[8] == "–" for row in rows)  # label acc., exact
    for row in (r for r in read_csv(paths["summary_csv"]) if r["attack"] == "test_fail"):
        assert row["failure"] == failed and row["label_accuracy"] == "" and row["exact_recovery_rate"] == ""
    for row in (r for r in read_csv(paths["cells_csv"]) if r["attack"] == "test_fail"):
        assert row["status"] == "failed" and row["error"] == REASON and row["label_accuracy"] == ""
    document = json.loads(paths["json"].read_text())
    assert {c["label_accuracy"] for c in document["cells"] if c["attack"] == "test_fail"} == {None}
    page = paths["html"].read_text()
    lines = re.findall(r'<tr><td class="t">[^<]*</td><td class="t">[^<]*</td><td class="t">test_fail</td>.*?</tr>',
                       page, flags=re.S)
    assert len(lines) == 2 and all(failed in line and "0 %" not in line for line in lines)
    # The chart: not drawn at 0, named in the legend with the reason.
    drawn = finished_summary(summarize(result.cells, result.game), attack_lines(result.cells))
    legend = failed_legend([row for row in drawn if row["label_accuracy"] is None])
    assert legend == [f"test_fail · 2 chains: {failed}"]


def test_where_every_attack_failed_the_frontier_says_why() -> None:
    text = GAME.replace('[[attacks]]\nname = "auto"\n\n', "").replace("accounts = [30, 1]", "")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(ATTACKS, "test_fail", always_fails)
        result = run_game(parse_game(text))
    lines = attack_lines(result.cells)
    points = chain_points(result, lines)
    assert all(p.attack is None and p.failure == f"failed ({REASON})" for p in points)
    assert all(c.failure == f"failed ({REASON})" for c in accounts_cells(result, lines))


def test_the_readmes_answer_names_the_accounts_and_the_bound(played: tuple[GameResult, Any]) -> None:
    from benchmarks.standard_game import answer_text

    result, _ = played
    text = answer_text(result)
    header = text.splitlines()[0]
    assert "200 submissions, 1 account: labels right · bound" in header and "30 accounts: labels right" in header
    verdicts = [line for line in text.splitlines() if line.startswith("**balanced-100-public")]
    assert len(verdicts) == 1 and "up to 30 accounts (tried: 1, 30)" in verdicts[0]
    assert "safe" not in text.lower().replace("unsafe", "")
    # Where the accounts changed the answer, each count's figure, generated from the run.
    changed = text[text.index("Where more accounts read more"):].splitlines()[1]
    assert changed.startswith("- balanced-100-public · `ladder-parameter-free`: 1 account: ")
    assert "30 accounts: " in changed
