"""The majority-class floor on hard-label boards (attacks.hard_label_floor): constant vectors read the majority
class of the scored rows, and ``auto``'s labels are never below it on any split."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.hard_label_floor import Recorder, check_queries, read_majority
from attacks.registry import ATTACKS
from attacks.result import AttackResult

LADDER_ACCEPT: list[dict[str, Any]] = [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}]
RANK: list[dict[str, Any]] = [{"name": "rank"}]
# Log loss at the edge: beats it when right on more than half the rows.
BADGE: list[dict[str, Any]] = [{"name": "threshold", "t": 17.0}]
BOARDS: dict[str, list[dict[str, Any]]] = {"accept_reject": LADDER_ACCEPT, "rank": RANK, "badge": BADGE}


def _labels(n: int, share: float | None, seed: int, majority: int = 0) -> np.ndarray:
    """``n`` labels: ``share`` of them class ``majority`` exactly (shuffled), or a fair coin each (``None``)."""
    rng = np.random.default_rng([2026, seed])  # not the attacks' own generators (default_rng(seed))
    if share is None:
        return rng.integers(0, 2, n)
    count = round(share * n)
    return rng.permutation(np.where(np.arange(n) < count, majority, 1 - majority))


def _scored_majority(y: np.ndarray, scored: np.ndarray) -> int:
    return int(np.argmax(np.bincount(y[scored], minlength=2)))


def _read(result: AttackResult) -> int:
    lines = [line for line in result.details["reasoning"] if line.startswith("majority class: ")]
    assert lines and lines[0].split()[2].rstrip(",").isdigit(), lines
    return int(lines[0].split()[2].rstrip(","))


@pytest.mark.parametrize("split", [None, 0.5], ids=["every-row", "half-public"])
@pytest.mark.parametrize("share", [0.68, None], ids=["68-32", "balanced"])
@pytest.mark.parametrize("metric", ["binary_logloss", "accuracy"])
@pytest.mark.parametrize("board", list(BOARDS))
def test_auto_is_never_below_the_scored_rows_majority_class_on_any_split(
    board: str, metric: str, share: float | None, split: float | None
) -> None:
    chain = [{"name": "threshold", "t": 0.5}] if board == "badge" and metric == "accuracy" else BOARDS[board]
    failures = []
    for seed in (1, 2, 3):
        y = _labels(300, share, seed)
        oracle = LocalOracle(y, metric=metric, decimals=5, defenses=chain, public_fraction=split, seed=seed)
        result = attacks.run("auto", oracle, budget=400, seed=seed)
        public = oracle.spec.hidden.public_mask
        majority = _scored_majority(y, public)
        read = _read(result)
        # The constants read the scored rows' majority: exactly on a rank board or a badge; on a Ladder, a class
        # whose share is within the Ladder's margin (one standard error, about 1/sqrt(rows)) of the majority's.
        margin = 1.0 / np.sqrt(public.sum()) if board == "accept_reject" else 0.0
        assert float((y[public] == read).mean()) >= float((y[public] == majority).mean()) - margin
        if share is not None:
            assert read == majority
        assert result.queries == oracle.queries <= 400
        assert (result.fill_confidence() < 1.0).all()  # guesses, never called exact
        for name, rows in (("public", public), ("private", ~public)):
            if not rows.any():
                continue
            ours = float((result.labels[rows] == y[rows]).mean())
            floor = float((y[rows] == read).mean())  # the constant the board let anyone read
            if ours < floor:
                failures.append(f"seed {seed}, {name}: {ours:.3f} < the majority constant's {floor:.3f}")
        if split is not None:
            # A split the board does not reveal: the constants only (two queries), every row the majority class.
            assert oracle.queries == 2 and (result.labels == read).all()
    assert not failures, failures


@pytest.mark.parametrize("majority", [0, 1])
@pytest.mark.parametrize("board", ["accept_reject", "rank"])
def test_two_constants_read_the_majority_class_on_a_ladder_or_rank_board(board: str, majority: int) -> None:
    y = _labels(500, 0.6, 7, majority)
    recorder = Recorder(LocalOracle(y, decimals=5, defenses=BOARDS[board], seed=7))
    reading = read_majority(recorder)
    assert reading.majority == majority and reading.queries == 2 == recorder.queries


def test_k_constants_read_the_majority_of_three_classes_on_a_rank_board() -> None:
    y = np.random.default_rng(8).permutation(np.repeat([0, 1, 2], [90, 150, 60]))
    recorder = Recorder(LocalOracle(y, metric="multiclass_logloss", n_classes=3, decimals=5, defenses=RANK, seed=8))
    reading = read_majority(recorder)
    assert reading.majority == 1 and reading.queries == 3


def test_a_badge_every_constant_earns_reads_no_majority_and_says_so() -> None:
    # Accuracy above 0.2: both constants (0.6 and 0.4) earn the badge, so the board does not single one out.
    y = _labels(300, 0.6, 9)
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=[{"name": "threshold", "t": 0.2}], seed=9)
    reading = read_majority(Recorder(oracle))
    assert reading.majority is None and "do not single one class out" in reading.reason
    result = attacks.run("auto", LocalOracle(y, metric="accuracy", decimals=5,
                                             defenses=[{"name": "threshold", "t": 0.2}], seed=9), budget=100)
    assert any("not read" in line and "no majority-class floor" in line for line in result.details["reasoning"])


def _toy(name: str, accuracy_of: np.ndarray | None) -> None:
    """Register a label-only toy attack: one accepted vector at the edge of labels right on a chosen share of rows
    (built from ``accuracy_of``, the truth, flipped on a seeded part), or a random one (``None``)."""

    def toy(oracle: Any, *, budget: int | None = None, seed: int = 0, share: float = 0.5) -> AttackResult:
        rng = np.random.default_rng(seed)
        n = oracle.n_rows
        if accuracy_of is None:
            guess = rng.integers(0, 2, n)
        else:
            guess = np.where(rng.random(n) < share, accuracy_of, 1 - accuracy_of)
        # Confidence towards the guess at 0.6: a vector the board's first release after the constants takes.
        oracle.submit(np.where(guess == 1, 0.6, 0.4))
        return AttackResult(name, guess.astype(np.int64), confidence=np.full(n, 0.5))

    ATTACKS[name] = toy


@pytest.mark.parametrize("board", ["accept_reject", "rank", "badge"])
def test_labels_below_the_majority_go_back_and_labels_above_it_stand(board: str) -> None:
    y = _labels(400, 0.7, 11)
    _toy("toy_floor_truth", y)
    try:
        weak = attacks.run("auto", LocalOracle(y, decimals=5, defenses=BOARDS[board], seed=11), budget=60,
                           attack="toy_floor_truth", params={"share": 0.55})
        strong = attacks.run("auto", LocalOracle(y, decimals=5, defenses=BOARDS[board], seed=11), budget=60,
                             attack="toy_floor_truth", params={"share": 0.95})
    finally:
        del ATTACKS["toy_floor_truth"]
    majority = float((y == 0).mean())
    # 55 % right is below the majority's 70 %: the floor brings it to the majority at least.
    assert weak.accuracy(y) >= majority
    # 95 % right is far above it: the floor lets it stand (at least the most confident part of it).
    assert strong.accuracy(y) > majority + 0.1
    for result in (weak, strong):
        assert result.details["floor"]["check_queries"] <= check_queries(LocalOracle(y, defenses=BOARDS[board]))


def test_the_constants_and_the_check_stay_within_the_budget_and_the_callers_reserve() -> None:
    y = _labels(300, 0.68, 12)
    for budget in (1, 2, 3, 6, 7, 50):
        oracle = LocalOracle(y, decimals=5, defenses=LADDER_ACCEPT, seed=12)
        result = attacks.run("auto", oracle, budget=budget, reserve=1, seed=12)
        assert oracle.queries <= budget - 1
        if budget - 1 >= 2:  # room for the two constants: the majority class at least, on every row
            assert result.accuracy(y) >= float((y == 0).mean())


@pytest.mark.parametrize("metric", ["binary_logloss", "accuracy"])
@pytest.mark.parametrize("board", list(BOARDS))
def test_where_the_label_only_attacks_fall_below_the_majority_auto_does_not(board: str, metric: str) -> None:
    # 1,000 rows, 68/32, 200 queries: too few for brep or boosting to beat a constant guess.
    chain = [{"name": "threshold", "t": 0.5}] if board == "badge" and metric == "accuracy" else BOARDS[board]
    y = _labels(1000, 0.68, 5)
    majority = float((y == 0).mean())
    for name in ("brep", "boosting"):
        played = attacks.run(name, LocalOracle(y, metric=metric, decimals=5, defenses=chain, seed=5), budget=200,
                             seed=5)
        assert played.accuracy(y) < majority, name  # the board this test is about
    oracle = LocalOracle(y, metric=metric, decimals=5, defenses=chain, seed=5)
    result = attacks.run("auto", oracle, budget=200, seed=5)
    assert result.accuracy(y) >= majority and oracle.queries <= 200
    assert result.details["floor"]["check_queries"] <= check_queries(oracle)


def test_a_named_attack_says_whether_its_guess_was_weighed_against_the_majority_class() -> None:
    y = _labels(300, 0.68, 13)
    brep = attacks.run("brep", LocalOracle(y, decimals=5, defenses=LADDER_ACCEPT, seed=13), budget=40, seed=13)
    assert brep.details["majority_floor"].startswith("not checked: 300 guessed label(s)")
    boosting = attacks.run("boosting", LocalOracle(y, decimals=5, seed=13), budget=40, seed=13)
    assert boosting.details["majority_floor"].startswith("checked by boosting against the majority class")
    auto = attacks.run("auto", LocalOracle(y, decimals=5, defenses=LADDER_ACCEPT, seed=13), budget=40, seed=13)
    assert "majority_floor" not in auto.details and auto.details["floor"] is not None  # auto floors its own
    exact = attacks.run("capacity", LocalOracle(y[:40], decimals=5, seed=13))
    assert "majority_floor" not in exact.details  # exact labels, vouched for


@pytest.mark.parametrize("accounts", [1, 2])
@pytest.mark.parametrize("metric", ["multiclass_logloss", "accuracy", "softmax_ce"])
@pytest.mark.parametrize("board", ["accept_reject", "rank"])
def test_three_classes_and_a_spare_account_stay_within_the_budget_and_above_the_majority(
    board: str, metric: str, accounts: int
) -> None:
    y = np.random.default_rng([2026, 14]).choice(3, 300, p=[0.6, 0.3, 0.1])
    oracle = LocalOracle(y, metric=metric, n_classes=3, decimals=5, defenses=BOARDS[board], seed=14,
                         accounts=accounts)
    result = attacks.run("auto", oracle, budget=300, seed=14)
    assert oracle.queries <= 300 and result.accuracy(y) >= float(np.mean(y == 0))
    if accounts == 2:  # the constants and the check on the spare account, the attack on its own
        assert oracle.queries_by_account[1] == 3 + result.details["floor"]["check_queries"]


@pytest.mark.parametrize("share", [0.68, None], ids=["68-32", "balanced"])
def test_on_a_board_rank_the_constants_places_read_the_majority_and_the_labels_are_floored(
    share: float | None,
) -> None:
    # A rival (account 1) scores half the rows right: the majority constant places first, the minority's second.
    y = _labels(1000, share, 15)
    board = [{"name": "rank", "among": "board"}]
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=board, seed=15, accounts=2)
    oracle.account = 1
    oracle.submit(np.where(np.arange(1000) % 2 == 0, y, 1 - y).astype(float))
    oracle.account = 0
    result = attacks.run("auto", oracle, budget=200, seed=15)
    majority = _scored_majority(y, np.ones(1000, dtype=bool))
    assert _read(result) == majority
    assert result.accuracy(y) >= float(np.mean(y == majority))
    assert oracle.queries_by_account[1] == 1 and oracle.queries_by_account[0] <= 200  # the rival's is not played
