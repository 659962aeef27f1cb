"""The host's leakage audit core (games.audit) at small N: a leaderboard that leaks fully is audited at 100 %,
one that withholds every score at the majority-class rate; the quota, the budget ladder, the time limit, the
progress reports and the stored-split check behave as documented."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from games.audit import (
    FALLS,
    LOWER_BOUND,
    AuditError,
    AuditSetup,
    Quota,
    account_counts,
    audit,
    battery,
    budget_ladder,
    compare_majority,
    default_budget,
    format_table,
    percent,
    quota_from_schedule,
    rung_mark,
)

N_ROWS = 40
WITHHOLD_ALL = [
    {"name": "noise", "kind": "laplace", "epsilon": 1.0},
    {"name": "privacy_budget", "epsilon": 0.5, "composition": "basic"},  # below one release's ε: nothing shown
]


@pytest.fixture
def labels() -> np.ndarray:
    labels = np.zeros(N_ROWS, dtype=np.int64)
    labels[:13] = 1  # a clear majority (class 0: 27 of 40) so "the majority rate" is not a coin flip
    return np.random.default_rng(20261123).permutation(labels)


def test_a_board_that_leaks_fully_is_audited_at_100_percent(labels: np.ndarray) -> None:
    report = audit(AuditSetup(labels, public_fraction=None, secret=7), budget=80, quota=Quota(total_limit=60),
                   honest_models=4)
    result = report.as_dict()
    assert report.at_quota["budget"] == 60 and report.at_quota["public"] == 1.0
    assert report.verdict.startswith(
        "Within your quota of 60 submissions (total limit 60) the library's attacks read 100 % of public labels")
    assert report.verdict.endswith(LOWER_BOUND)
    auto = next(curve for curve in report.curves if curve.attack == "auto")
    assert [p.budget for p in auto.points] == report.ladder == [10, 20, 40, 60, 80]
    # 40 rows at 5 decimals take capacity a handful of queries: the verdict says how early it is all over.
    assert report.at_quota["reached_at"] == 10 and "reached within 10 submissions" in report.verdict
    top = auto.at(80)
    assert top is not None and top.exact_public == 1.0  # exact labels, vouched for
    assert result["n_private"] == 0 and result["majority"]["private"] is None
    assert "verdict: Within your quota" in format_table(result)


def test_a_board_that_withholds_everything_leaves_the_majority_rate(labels: np.ndarray) -> None:
    report = audit(AuditSetup(labels, defenses=WITHHOLD_ALL, public_fraction=0.5, secret=11), budget=40,
                   quota=Quota(daily_limit=5, days=4), honest_models=4)
    public_majority = report.majority["public"]
    assert public_majority is not None and public_majority > 0.5
    for curve in report.curves:
        for point in curve.points:
            # Nothing released: no attack recovers more than the majority class's share (nor, with no balance
            # measured, even that: unrecovered rows count as wrong).
            assert point.status == "ok" and point.public is not None and point.public <= public_majority
    assert "read nothing beyond the majority class" in report.verdict or "read nothing of" in report.verdict
    assert "no more than" not in report.verdict.split("Private rows")[0]  # never a limit on every attacker
    # The bound: each account's transcript is 0.5-DP in every label (basic composition of Laplace releases), so
    # one account's releases carry less than the 20 public labels; more accounts, more bits.
    one = report.axis[0].bound
    assert one is not None and one["bits"] <= 20 * 0.5 * math.log2(math.e) + 1e-3 and one["labels"] < 20
    bits = [cell.bound["bits"] for cell in report.axis if cell.bound is not None]
    assert bits == sorted(bits) and len(bits) == len(report.axis)
    assert report.at_quota["budget"] == 20  # 5 a day × 4 days
    assert report.honest["chain"]["honest_withheld"] == 4  # every honest model's score withheld too


def test_the_quota_counts_utc_days_until_the_close_and_the_total_limit() -> None:
    now = datetime(2027, 3, 1, 23, 0, tzinfo=UTC)
    never = quota_from_schedule(daily_limit=5, total_limit=None, opens_at=None, closes_at=None, now=now)
    assert never.submissions is None and never.summary() == "unbounded (5 a day, no close date)"
    closes = datetime(2027, 3, 11, 0, 0, tzinfo=UTC)  # midnight: the 11th has no submission time left
    quota = quota_from_schedule(daily_limit=5, total_limit=None, opens_at=None, closes_at=closes, now=now)
    assert quota.days == 10 and quota.submissions == 50
    capped = quota_from_schedule(daily_limit=5, total_limit=30, opens_at=None, closes_at=closes, now=now)
    assert capped.submissions == 30
    later = datetime(2027, 3, 9, 12, 0, tzinfo=UTC)  # not open yet: counted from the opening
    assert quota_from_schedule(daily_limit=2, total_limit=None, opens_at=later, closes_at=closes, now=now).days == 2
    assert quota_from_schedule(daily_limit=5, total_limit=None, opens_at=None, closes_at=now, now=now).submissions == 0


def test_the_budget_ladder_halves_and_holds_the_quota() -> None:
    assert budget_ladder(2000, quota=150) == [15, 31, 62, 125, 150, 250, 500, 1000, 2000]
    assert budget_ladder(2000, quota=5000) == [15, 31, 62, 125, 250, 500, 1000, 2000]
    assert default_budget(150) == 600 and default_budget(None) == 2000 and default_budget(10_000) == 2000


def test_several_accounts_multiply_the_quota(labels: np.ndarray) -> None:
    report = audit(AuditSetup(labels, public_fraction=None), budget=40, accounts=2, quota=Quota(total_limit=10),
                   attack_names=["auto"], honest_models=2)
    assert report.quota["submissions"] == 20 and report.at_quota["budget"] == 20
    assert "per account × 2 accounts" in report.verdict and "attacks with 2 accounts" in report.verdict
    assert report.account_counts == [2] and [cell.budget for cell in report.axis] == [20]


def test_progress_rises_to_one_and_the_time_limit_skips_what_would_not_fit(labels: np.ndarray) -> None:
    seen: list[float] = []
    report = audit(AuditSetup(labels, public_fraction=None), budget=80, time_limit=0.0, accounts=[1, 30],
                   progress=lambda fraction, step: seen.append(fraction), honest_models=2)
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    skipped = [p for curve in report.curves for p in curve.points if p.status == "skipped"]
    assert skipped and len(report.notes) == len(skipped) + 1  # and the 30 accounts' auto

    assert "no attack finished" in report.verdict and "accounts axis did not finish" in report.verdict
    assert all(cell.status == "skipped" for cell in report.axis) and report.sign_ups["half"] is None


def test_the_battery_fits_the_board(labels: np.ndarray) -> None:
    split = AuditSetup(labels, public_fraction=0.3).oracle()
    whole = AuditSetup(labels, public_fraction=None).oracle()
    assert battery(split)[0] == "auto" and "capacity_split" in battery(split) and "capacity" not in battery(split)
    assert {"capacity", "noisy", "boosting"} <= set(battery(whole)) and "noisy_split" not in battery(whole)
    assert "noisy_split" in battery(split) and "noisy" not in battery(split)
    multiclass = AuditSetup(np.arange(30) % 3, metric="multiclass_logloss").oracle()
    assert "prime_powers" in battery(multiclass) and "boosting" not in battery(multiclass)
    assert "bregman_powers" not in battery(multiclass)  # a public split: paper 001's designs score every row
    itakura = AuditSetup(labels, metric="itakura_saito", public_fraction=None).oracle()
    assert "bregman_powers" in battery(itakura) and "capacity" in battery(itakura)
    # The likelihood decoder reaches every board one_vs_rest reduces to binary log loss, and no other.
    assert "one_vs_rest" in battery(itakura) and "one_vs_rest" not in battery(whole)
    # Paper 001's losses with a public split: only the split-aware construction applies.
    brier_split = AuditSetup(np.arange(30) % 3, metric="brier", public_fraction=0.3).oracle()
    assert "capacity_split" in battery(brier_split) and "capacity" not in battery(brier_split)
    assert "bregman_powers" not in battery(brier_split) and "one_vs_rest" not in battery(brier_split)
    badge = AuditSetup(labels, metric="accuracy", public_fraction=None,
                       defenses=[{"name": "threshold", "t": 0.5}]).oracle()
    assert "brep" in battery(badge) and "boosting" not in battery(badge)
    # Issue 11: the K-ary capacity attacks fit multiclass log loss, split-aware where the board has a split.
    whole_multiclass = AuditSetup(np.arange(30) % 3, metric="multiclass_logloss", public_fraction=None).oracle()
    assert "capacity_split" in battery(multiclass) and "capacity" not in battery(multiclass)
    assert "capacity" in battery(whole_multiclass) and "capacity_split" not in battery(whole_multiclass)
    # Paper 001 §4 / App. D: the logit boards get the attacks of their metric's name (every row scored).
    softmax = AuditSetup(np.arange(30) % 3, metric="softmax_ce", public_fraction=None).oracle()
    sigmoid = AuditSetup(labels, metric="sigmoid_ce", public_fraction=None).oracle()
    assert "softmax_ce" in battery(softmax) and "sigmoid_ce" not in battery(softmax)
    assert "sigmoid_ce" in battery(sigmoid) and "softmax_ce" not in battery(sigmoid)


def test_the_stored_split_is_attacked_even_one_the_secret_does_not_draw(labels: np.ndarray) -> None:
    setup = AuditSetup(labels, public_fraction=0.5, secret=3)
    drawn = setup.oracle().spec.hidden.public_mask
    # A host's own split (a solution file's Usage column) is attacked as stored, never redrawn from the secret.
    hosts = AuditSetup(labels, public_fraction=0.5, secret=3, public_mask=~drawn).oracle()
    assert np.array_equal(hosts.spec.hidden.public_mask, ~drawn)
    with pytest.raises(AuditError, match="budget"):
        audit(setup, budget=0)
    with pytest.raises(AuditError, match="unknown attack"):
        audit(setup, budget=10, attack_names=["no_such_attack"])


def test_a_multiclass_board_is_audited_with_its_honest_cost() -> None:
    labels = np.random.default_rng(5).integers(0, 3, 30)
    report = audit(AuditSetup(labels, metric="multiclass_logloss", public_fraction=None), budget=40,
                   quota=Quota(total_limit=40), honest_models=3)
    assert report.at_quota["public"] == 1.0
    assert "error" not in report.honest and report.honest["models"] == 3


def test_a_model_competition_is_audited_through_mutnet_models() -> None:
    """With hidden features the battery plays through models (the Mutator Network head, run with onnxruntime on
    the features): the labels it recovers, compared row for row, are the competition's own."""
    from games.model_board import ModelBoard, feature_ranks, in_rank_order

    rng = np.random.default_rng(5)
    features = rng.standard_normal((30, 4))
    labels = rng.integers(0, 2, 30)
    setup = AuditSetup(labels, public_fraction=None, secret=3, features=features)
    assert isinstance(setup.attack_oracle(), ModelBoard)
    report = audit(setup, budget=20, quota=Quota(total_limit=20), attack_names=["auto"], honest_models=2)
    auto = report.curves[0].at(20)
    assert auto is not None and auto.exact_public == 1.0, report.curves
    assert any("model competition" in note for note in report.notes)
    # The ranks are a permutation and the truth is moved to match the attack's rows.
    ranks = feature_ranks(features)
    assert sorted(ranks) == list(range(30))
    assert (in_rank_order(labels, ranks)[ranks] == labels).all()


def test_the_accounts_axis_counts_the_sign_ups_a_ladder_board_takes() -> None:
    """200 rows, 30 % public, 5 decimals, the parameter-free Ladder: with one account the library's attacks read
    nothing beyond the public majority class; thirty sign-ups, one submission each, read every public label
    exactly. The verdict says how many sign-ups that took and that it is a lower bound, never a limit."""
    labels = (np.random.default_rng(200).random(200) < 0.7).astype(np.int64)
    setup = AuditSetup(labels, defenses=[{"name": "ladder", "mode": "parameter_free"}], public_fraction=0.3, secret=3)
    report = audit(setup, accounts=[30, 1], quota=Quota(daily_limit=5, days=10), attack_names=["auto"],
                   honest_models=2)
    one, thirty = report.axis
    assert report.account_counts == [1, 30] and (one.accounts, thirty.accounts) == (1, 30)
    assert (one.budget, thirty.budget) == (50, 200)  # each count's quota, within the audited budget
    public_majority = report.majority["public"]
    assert public_majority is not None and one.public is not None
    assert abs(one.public - public_majority) <= 0.005 and one.vs_majority["public"] == "at"
    assert thirty.public == 1.0 and thirty.exact_public == 1.0 and thirty.vs_majority["public"] == "above"
    assert thirty.exact_public_rows == report.n_public == 60
    assert report.sign_ups["half"] == 30 and report.sign_ups["all"] == 30
    # The bound beside each cell: what was read exactly fits in it.
    for cell in report.axis:
        assert cell.bound is not None and cell.bound["rows"] == 60
        if cell.exact_public_rows == 60:
            assert cell.bound["bits"] >= report.sign_ups["entropy_bits"] - 1e-3
    text = report.verdict
    assert "read nothing beyond the majority class" in text
    assert "tried (1, 30), the fewest with which the library's attacks read half of your public labels exactly: " \
        "30 accounts; all of them: 30 accounts" in text
    assert text.endswith(LOWER_BOUND) and "recovers" not in text and "no more than the majority" not in text
    table = format_table(report.as_dict())
    assert "accounts axis" in table and "Sign-ups: of the account counts tried (1, 30)" in table


def test_each_split_is_compared_with_its_own_majority_and_below_it_reads_nothing() -> None:
    """A forced attack below the majority class is marked so, on each split against that split's own majority."""
    labels = np.zeros(60, dtype=np.int64)
    labels[:12] = 1  # public and private majorities differ with the split below
    labels = np.random.default_rng(3).permutation(labels)
    setup = AuditSetup(labels, public_fraction=0.5, secret=5, defenses=WITHHOLD_ALL)
    report = audit(setup, budget=20, accounts=[1], quota=Quota(total_limit=20), honest_models=2)
    result = report.as_dict()
    for curve in result["curves"]:
        for point in curve["points"]:
            if point["status"] == "ok":
                for split in ("public", "private"):
                    assert point["vs_majority"][split] == compare_majority(point[split], result["majority"][split])
    private = report.majority["private"]
    assert private is not None and f"their own majority class ({percent(private)})" in report.verdict
    marked = [point for curve in result["curves"] for point in curve["points"]
              if point["status"] == "ok" and point["vs_majority"]["public"] == "below"]
    assert all("below the majority class" in line for line in format_table(result).splitlines()
               if any(f"{100 * p['public']:.1f} %" in line and line.strip().startswith(c["attack"])
                      for c in result["curves"] for p in c["points"] if p in marked))


def test_account_counts_are_checked() -> None:
    assert account_counts([1000, 1, 30]) == [1, 30, 1000]
    with pytest.raises(AuditError, match="accounts"):
        account_counts([0])
    with pytest.raises(AuditError, match="account counts"):
        account_counts(list(range(1, 20)))


def test_a_curve_that_falls_is_credited_with_the_best_run_within_each_budget_and_said_in_words() -> None:
    """An attacker can stop early: a budget is credited with the best run within it, and a fall is explained."""
    labels = np.random.default_rng(40).integers(0, 2, 40)
    setup = AuditSetup(labels, decimals=2, public_fraction=0.5, secret=3)
    report = audit(setup, budget=40, accounts=[1], quota=Quota(total_limit=40), attack_names=["blocks_split"],
                   honest_models=2, screen=False)
    (curve,) = report.curves
    at_20, at_40 = curve.at(20), curve.at(40)
    # The measured fall: this attack reads every public label in 20 submissions and less in a fresh 40-run.
    assert at_20 is not None and at_40 is not None and at_20.public == 1.0 and (at_40.public or 0) < 1.0
    assert at_40.best is not None and at_40.best["budget"] == 20 and at_40.best["public"] == 1.0
    assert report.at_quota["public"] == 1.0 and report.at_quota["run"] == 20 and report.at_quota["budget"] == 40
    assert "read 100 % of public labels right" in report.verdict and "reached within 20 submissions" in report.verdict
    assert FALLS in report.verdict and report.verdict.endswith(LOWER_BOUND)
    (fall,) = report.falls
    assert fall.startswith(f"blocks_split read less with more submissions: {percent(at_40.public or 0)} of public "
                           "labels right at 40") and "against 100 % at 20" in fall
    assert "an attacker can stop early, so within 40 submissions it reads at least the 100 %" in fall
    table = format_table(report.as_dict())
    assert "100.0 % @20" in table and f"note: {fall}" in table


def test_the_rung_the_verdict_reads_is_called_the_quota_only_when_it_is() -> None:
    labels = np.random.default_rng(41).integers(0, 2, 40)
    unbounded = audit(AuditSetup(labels, public_fraction=None), budget=20, accounts=[1], quota=Quota(daily_limit=5),
                      attack_names=["auto"], honest_models=2, screen=False)
    table = format_table(unbounded.as_dict())
    assert unbounded.quota["submissions"] is None and unbounded.at_quota["budget"] == 20
    assert "* marks the budget the verdict reads: the audited budget; the quota is unbounded" in table
    assert "quota: unbounded (5 a day, no close date)" in table
    assert rung_mark(None, 20) == "the audited budget; the quota is unbounded"
    assert rung_mark(20, 20) == "quota" and rung_mark(60, 20) == "the audited budget; the quota allows 60"


def test_the_table_puts_each_splits_majority_beside_its_accuracy() -> None:
    labels = np.zeros(60, dtype=np.int64)
    labels[:12] = 1
    labels = np.random.default_rng(3).permutation(labels)
    report = audit(AuditSetup(labels, public_fraction=0.5, secret=5), budget=20, accounts=[1],
                   quota=Quota(total_limit=20), attack_names=["auto"], honest_models=2, screen=False)
    result = report.as_dict()
    public, private = result["majority"]["public"], result["majority"]["private"]
    assert public != private  # the splits' majorities differ: each figure must sit by its own
    header, _rule, *rows = format_table(result).split("\n\n")[1].splitlines()
    assert header.split()[3:7] == ["public", "(majority", "private", "(majority"]
    for row in rows:
        if row.startswith("auto"):
            assert f"{100 * public:.1f} %)" in row and f"{100 * private:.1f} %)" in row
            assert row.index(f"{100 * public:.1f} %)") < row.index(f"{100 * private:.1f} %)")
