"""``auto`` on hard-label boards (defenses.feedback): the label-only attacks, within the budget, no false claim."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import LocalOracle

LADDER_ACCEPT = [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}]
BADGE = [{"name": "threshold", "t": 0.5}]
RANK = [{"name": "rank"}]


def _labels(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, n)


@pytest.mark.parametrize(("chain", "attack"), [(LADDER_ACCEPT, "brep"), (RANK, "brep"), (BADGE, "boosting")],
                         ids=["accept-reject", "rank", "badge"])
def test_it_plays_the_label_only_attack_of_the_board_within_the_budget(
    chain: list[dict[str, object]], attack: str
) -> None:
    y = _labels(400, 1)
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=chain, seed=1)
    result = attacks.run("auto", oracle, budget=300, reserve=1)
    assert result.details["attack"] == attack and result.details["fingerprint_queries"] == 0
    assert oracle.queries <= 299  # the reserve stays unspent
    assert (result.labels >= 0).all() and (result.fill_confidence() < 1.0).all()  # guesses, never "exact"
    assert any("hard label" in line for line in result.details["reasoning"])


def test_on_a_badge_its_votes_beat_a_coin() -> None:
    # 4,000 rows, a badge at chance: boosting's accepted vectors carry about sqrt(k/n) of the labels.
    y = _labels(4000, 2)
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=BADGE, seed=2)
    result = attacks.run("auto", oracle, budget=400)
    assert result.accuracy(y) > 0.53  # a coin: 0.5 ± 0.008 (1σ)


def test_a_multiclass_badge_goes_to_brep() -> None:
    y = np.random.default_rng(3).integers(0, 3, 300)
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=[{"name": "threshold", "t": 0.3}], seed=3)
    result = attacks.run("auto", oracle, budget=100)
    assert result.details["attack"] == "brep" and oracle.queries <= 100


def test_nothing_accepted_leaves_the_rows_unknown_rather_than_guessed() -> None:
    # A badge nobody random reaches: no vector is accepted and the class balance cannot be read from labels.
    y = _labels(300, 4)
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=[{"name": "threshold", "t": 0.95}], seed=4)
    result = attacks.run("auto", oracle, budget=50)
    assert (result.labels == -1).all() and oracle.queries <= 50
    assert any("gave nothing" in line for line in result.details["reasoning"])


def test_on_a_board_rank_beating_every_rivals_best_is_a_badge_its_votes_beat_a_coin() -> None:
    # The rival (account 1) scores chance, 0.5 accuracy: rank 1 then means "beats chance", as on a badge at 0.5.
    y = _labels(4000, 5)
    oracle = LocalOracle(y, metric="accuracy", decimals=5, defenses=[{"name": "rank", "among": "board"}], seed=5,
                         accounts=2)
    oracle.account = 1
    oracle.submit(np.where(np.arange(4000) < 2000, y, 1 - y).astype(float))  # exactly half right
    oracle.account = 0
    result = attacks.run("auto", oracle, budget=400)
    assert result.details["attack"] == "boosting"
    assert oracle.queries_by_account[1] == 1  # auto plays its own account only
    assert result.accuracy(y) > 0.53  # a coin: 0.5 ± 0.008 (1σ)
