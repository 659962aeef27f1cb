"""The audit's accounts axis behind the sybil screen in hold mode (games.screened_board): on a small Ladder board
30 accounts read every public label unscreened and only the majority behind the screen, with the accounts let
through and the submissions held counted; honest accounts are never held; the text and the verdict say the figures
are a lower bound and that a careful attacker may pass the screen."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attacks.oracle import LocalOracle
from games.audit import LOWER_BOUND, AuditSetup, Quota, audit, format_table
from games.population import simulated_population
from games.screened_board import CAREFUL, ScreenedBoard, attacker_traces, crowd

LADDER = [{"name": "ladder", "mode": "parameter_free"}]


@pytest.fixture(scope="module")
def labels() -> np.ndarray:
    return (np.random.default_rng(200).random(200) < 0.7).astype(np.int64)


@pytest.fixture(scope="module")
def report(labels: np.ndarray) -> dict:
    setup = AuditSetup(labels, defenses=LADDER, public_fraction=0.3, secret=3)
    return audit(setup, accounts=[1, 30], quota=Quota(daily_limit=5, days=10), attack_names=["auto"],
                 honest_models=4).as_dict()


def test_the_screen_holds_thirty_accounts_to_fewer_labels_and_counts_the_cost(report: dict) -> None:
    one, thirty = report["axis"]
    assert one["screen"] is None  # one account is never a cluster
    screened = thirty["screen"]
    assert thirty["public"] == 1.0 and screened["status"] == "ok"
    assert screened["public"] < thirty["public"] and screened["right_public"] < 60
    assert screened["public"] <= report["majority"]["public"] + 0.005  # nothing beyond the public majority
    # What the hold cost: a few accounts got a release before the screen clustered them; most were held.
    assert 1 <= screened["let_through"] < screened["accounts_used"] <= 30 and screened["held_accounts"] >= 10
    assert screened["held_submissions"] > 0 and screened["flagged_at"] is not None and screened["lagged"] == 0
    assert screened["let_through"] + screened["held_accounts"] >= screened["accounts_used"]
    assert screened["honest_accounts"] == 4 and screened["honest_flagged"] == 0
    assert report["screen"]["mode"] == "hold" and "3 addresses over 3 hours" in report["screen"]["traces"]
    json.dumps(report)  # stored as JSON by the site


def test_the_text_and_the_verdict_say_it_is_a_lower_bound(report: dict) -> None:
    table = format_table(report)
    assert "behind the sybil screen (hold mode; synthetic sign-ups" in table
    assert "let through" in table and "held subs" in table
    screened = table[table.index("behind the sybil screen"):].splitlines()
    row = next(line.split() for line in screened if line.strip().startswith("30 "))
    assert row[:5] == ["30", "100.0", "%", "71.7", "%"]  # accounts, no screen, hold
    verdict = report["verdict"]
    assert "Behind the sybil screen holding flagged accounts" in verdict and "let through before the hold" in verdict
    assert CAREFUL in verdict and verdict.endswith(LOWER_BOUND) and "safe" not in verdict.lower()


def test_without_the_screen_nothing_is_added(labels: np.ndarray) -> None:
    setup = AuditSetup(labels[:60], defenses=LADDER, public_fraction=None, secret=3)
    report = audit(setup, budget=20, accounts=[1, 3], attack_names=["auto"], honest_models=2, screen=False)
    assert report.screen == {} and all(cell.screen is None for cell in report.axis)
    assert "sybil screen" not in report.verdict and "sybil screen" not in format_table(report.as_dict())


def test_honest_accounts_behind_the_attackers_traces_are_never_held(labels: np.ndarray) -> None:
    """Ten honest models, each an account signed up with the attacker's default traces (three addresses, three
    hours, one user agent), each submitting its output, a rounded copy and its hard labels: nobody is flagged."""
    population = simulated_population(labels, seed=5, n_models=10)
    board = LocalOracle(labels, decimals=5, defenses=LADDER, public_fraction=0.3, seed=3, accounts=10)
    screened = ScreenedBoard(board, crowd=crowd(list(simulated_population(labels, seed=6).predictions.values())))
    released = []
    for account, output in enumerate(population.predictions.values()):
        screened.account = account
        for version in (output, np.round(output, 3), (output > 0.5).astype(np.float64)):
            released.append(screened.submit(version))
    tally = screened.tally
    assert all(value is not None for value in released) and board.queries == 30
    assert tally.held_accounts == tally.held_submissions == tally.honest_flagged == 0 and tally.flagged_at is None
    assert tally.let_through == tally.accounts_used == 10 and tally.released == 30


def test_a_held_submission_counts_and_releases_nothing_on_every_metric(labels: np.ndarray) -> None:
    board = LocalOracle(labels, decimals=5, accounts=4, also_report=("auc",))
    screened = ScreenedBoard(board, traces=attacker_traces(4, seed=1))
    for account in range(3):
        screened.account = account
        probe = np.full(200, 0.5)
        probe[10 * account:10 * account + 4] = [0.2, 0.1, 0.05, 0.025]
        answer = screened.submit_all(probe)
    assert answer == {"binary_logloss": None, "auc": None}
    assert board.queries == 3 and board.queries_by_account[:3] == [1, 1, 1]
    assert screened.tally.let_through == 1 and screened.tally.held_submissions == 2
