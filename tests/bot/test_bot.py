"""The bot's offline parts: fingerprinting, the plan (attack choice), checkpoint/replay, and the final prediction —
all against in-process :class:`LocalOracle` boards (the live path is in ``tests/e2e/test_bot.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle, run
from attacks.fingerprint import fingerprint
from attacks.plan import choose, load_attacks
from bot.checkpoint import (
    BudgetExhausted,
    Checkpoint,
    CheckpointMismatch,
    ReplayOracle,
    prediction_digest,
)
from bot.cli import confident_predictions, parse_params

LABELS = np.random.default_rng(7).integers(0, 2, 300)


def _board(**kwargs: Any) -> LocalOracle:
    return LocalOracle(LABELS, decimals=kwargs.pop("decimals", 5), seed=11, **kwargs)


def test_it_sees_a_plain_board_as_plain() -> None:
    report = fingerprint(_board())
    assert report.probes == 8
    assert report.decimals == 5
    assert report.noise is False and report.ladder is False and report.subsetting is False
    # Three row probes, two when the ones are the majority (the edge probe is then sent again: Ladder check).
    assert report.rows_moved == report.rows_probed == (2 if LABELS.mean() > 0.5 else 3)
    assert report.scored_rows_estimate == pytest.approx(300, rel=0.05)


def test_it_counts_decimals_from_released_texts() -> None:
    assert fingerprint(_board(decimals=3), budget=2).decimals == 3
    full = fingerprint(_board(decimals=None), budget=2)
    assert full.full_precision is True and full.decimals is None


def test_it_sees_noise_by_repeating_a_probe() -> None:
    report = fingerprint(_board(defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}]))
    assert report.noise is True
    assert report.noise_spread > 1e-5


def test_it_sees_a_ladder_from_a_sticky_released_score() -> None:
    report = fingerprint(_board(defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}]))
    assert report.ladder is True


def test_it_sees_that_only_the_public_split_moves_the_score() -> None:
    report = fingerprint(_board(public_fraction=0.3), budget=12, seed=3)
    assert report.only_public_moves is True
    assert report.rows_moved < report.rows_probed
    assert report.scored_rows_estimate == pytest.approx(90, rel=0.1)


def test_it_sees_subsetting_when_the_same_row_moves_differently() -> None:
    seen = [
        fingerprint(_board(defenses=[{"name": "subsetting", "fraction": 0.5}]), budget=12, seed=seed).subsetting
        for seed in range(4)
    ]
    assert any(seen)


def test_it_stays_within_its_budget() -> None:
    board = _board()
    report = fingerprint(board, budget=3)
    assert report.probes == board.queries == 3


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, "capacity"),
        ({"defenses": [{"name": "noise", "kind": "laplace", "scale": 1e-3}]}, "capacity"),
        ({"defenses": [{"name": "ladder", "mode": "fixed", "eta": 0.01}]}, "ladder"),
        ({"arithmetic": "mpfr:200", "decimals": None}, "prime_batched"),
    ],
)
def test_it_picks_the_strongest_applicable_attack(kwargs: dict[str, Any], expected: str) -> None:
    board = _board(**kwargs)
    plan = choose(board, fingerprint(board))
    assert plan.attack == expected, plan.reason
    if expected == "ladder":  # continues the account the fingerprint's edge probes opened
        assert plan.params["start"]["leader"] > 1.0


@pytest.mark.parametrize("public_fraction", [None, 0.3])
def test_under_laplace_noise_the_chosen_attack_recovers_every_label_it_claims(public_fraction: float | None) -> None:
    # Laplace noise of scale 1e-3 on the mean: robust_batched fails here; capacity with a wide bound does not.
    board = _board(public_fraction=public_fraction, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}])
    plan = choose(board, fingerprint(board))
    assert plan.params["noise_bound"] >= 10 * 1e-3, plan.reason
    result = run(plan.attack, board, **plan.params)
    claimed = result.labels >= 0
    assert (result.labels[claimed] == LABELS[claimed]).all()
    expected_share = 1.0 if public_fraction is None else public_fraction
    assert claimed.mean() == pytest.approx(expected_share, abs=0.01)


def test_it_picks_the_split_aware_attack_when_only_public_rows_count() -> None:
    board = _board(public_fraction=0.3)
    plan = choose(board, fingerprint(board))
    if "capacity_split" in load_attacks():
        assert plan.attack == "capacity_split"
    else:
        assert plan.attack != "capacity"


def test_a_forced_attack_takes_its_parameters() -> None:
    board = _board()
    plan = choose(board, fingerprint(board, budget=0), forced="boosting", params=parse_params(["budget=5", "seed=3"]))
    assert (plan.attack, plan.params, plan.forced) == ("boosting", {"budget": 5, "seed": 3}, True)
    with pytest.raises(ValueError, match="unknown attack"):
        choose(board, fingerprint(board, budget=0), forced="no_such_attack")


def test_it_rejects_a_malformed_param() -> None:
    with pytest.raises(ValueError, match="key=value"):
        parse_params(["k"])


def _header() -> dict[str, Any]:
    return {"competition": "c", "n_rows": len(LABELS)}


def test_a_resumed_attack_replays_without_querying_the_board(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(), Checkpoint.open(path, _header()), budget=10)
    with pytest.raises(BudgetExhausted):
        run("capacity", first)
    assert first.queries == 10
    first.checkpoint.close()

    board = _board()
    resumed = ReplayOracle(board, Checkpoint.open(path, _header()))
    result = run("capacity", resumed)
    assert (result.labels == LABELS).all()
    assert resumed.replayed == 10
    assert board.queries == result.queries - 10  # nothing asked twice

    uninterrupted = run("capacity", _board())
    assert result.queries == uninterrupted.queries
    assert (result.labels == uninterrupted.labels).all()


def test_a_changed_attack_is_caught_instead_of_mixing_runs(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(), Checkpoint.open(path, _header()))
    run("capacity", first, budget=3)
    first.checkpoint.close()
    resumed = ReplayOracle(_board(), Checkpoint.open(path, _header()))
    with pytest.raises(CheckpointMismatch, match="--restart"):
        run("prime_batched", resumed)


def test_a_checkpoint_of_another_competition_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(), Checkpoint.open(path, _header()))
    first.submit(np.full(len(LABELS), 0.5))
    first.checkpoint.close()
    with pytest.raises(CheckpointMismatch, match="competition"):
        Checkpoint.open(path, {"competition": "other", "n_rows": len(LABELS)})
    assert Checkpoint.open(path, {"competition": "other", "n_rows": len(LABELS)}, restart=True).entries == []


def test_a_torn_last_line_is_dropped_and_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(), Checkpoint.open(path, _header()))
    for value in (0.5, 0.6):
        first.submit(np.full(len(LABELS), value))
    first.checkpoint.close()
    text = path.read_text()
    path.write_text(text[: len(text) - 20])  # a kill in the middle of writing the last line
    checkpoint = Checkpoint.open(path, _header())
    assert len(checkpoint.entries) == 1
    board = _board()
    again = ReplayOracle(board, checkpoint)
    again.submit(np.full(len(LABELS), 0.5))
    again.submit(np.full(len(LABELS), 0.6))
    assert (again.replayed, board.queries) == (1, 1)


def test_digests_tell_vectors_apart_and_ignore_container_types() -> None:
    assert prediction_digest([0.25, 0.75]) == prediction_digest(np.array([0.25, 0.75]))
    assert prediction_digest([0.25, 0.75]) != prediction_digest([0.75, 0.25])
    assert prediction_digest(["0.1", "0.2"]) != prediction_digest(["0.1", "0.20000000000000000001"])


def test_the_final_prediction_is_confident_where_labels_are_claimed() -> None:
    board = _board()
    assert board.submit(confident_predictions(LABELS, 2)) == 0.0
    multiclass = confident_predictions(np.array([2, -1]), 3)
    assert multiclass[0].tolist() == [1e-15, 1e-15, 1 - 2e-15]
    assert multiclass[1].tolist() == pytest.approx([1 / 3] * 3)


def test_the_token_comes_from_the_command_line_a_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import build_parser, main, resolve_tokens

    base = ["--url", "http://127.0.0.1:9", "--competition", "c"]
    monkeypatch.delenv("LEADERBOARD_TOKEN", raising=False)
    assert main(base) == 2 and "no API token" in capsys.readouterr().err  # nothing tried without a token
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    monkeypatch.setenv("LEADERBOARD_TOKEN", "from-env")
    assert resolve_tokens(build_parser().parse_args(base)) == ["from-env"]
    assert resolve_tokens(build_parser().parse_args([*base, "--token-file", str(token_file)])) == ["from-file"]
    both = [*base, "--token", "argv", "--token-file", str(token_file)]
    assert resolve_tokens(build_parser().parse_args(both)) == ["argv"]
    token_file.write_text("\n")
    with pytest.raises(ValueError, match="is empty"):
        resolve_tokens(build_parser().parse_args([*base, "--token-file", str(token_file)]))


def test_an_auto_run_cut_by_the_budget_is_a_prefix_of_the_full_run(tmp_path: Path) -> None:
    # The bot plays attacks.run("auto", ...) with its --budget; a run the budget cuts must replay into the
    # longer run, query for query, or the checkpoint could not resume it.
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(), Checkpoint.open(path, _header()), budget=15)
    cut = run("auto", first, budget=15, reserve=1)
    assert cut.details["cut_by_budget"] is True and first.queries == 15
    first.checkpoint.close()
    board = _board()
    resumed = ReplayOracle(board, Checkpoint.open(path, _header()))
    full = run("auto", resumed, reserve=1)
    assert resumed.replayed == 15 and board.queries == full.queries - 15
    assert (full.labels == LABELS).all() and full.details["cut_by_budget"] is False
