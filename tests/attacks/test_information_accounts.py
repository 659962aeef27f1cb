"""The transcript bound beside each cell of the audit's accounts axis (attacks.information.transcript_bits) against
brute force: on tiny boards, every labeling is scored and the distinct transcripts a fixed (or adaptive) strategy
sees over several accounts are counted; their log2 never exceeds the bound."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle
from attacks import information as info

N_ROWS, EPS, DECIMALS = 8, 0.1, 1  # eps 0.1: a span of ln 9, so the counts are small enough to be tight


def _transcripts(chain: list[dict[str, Any]], accounts: int, queries: int, *, adaptive: bool) -> int:
    pool = [np.clip(np.random.default_rng(seed).uniform(0, 1, N_ROWS), 0.01, 0.99) for seed in range(5)]
    seen = set()
    for labels in itertools.product((0, 1), repeat=N_ROWS):
        board = LocalOracle(list(labels), eps=EPS, decimals=DECIMALS, defenses=chain, accounts=accounts)
        released: list[Any] = []
        for q in range(queries):
            pick = hash(tuple(released)) % len(pool) if adaptive else q
            board.account = q % accounts
            released.append(board.submit(pool[pick]))
        seen.add(tuple(released))
    return len(seen)


@pytest.mark.parametrize("chain", [
    [],
    [{"name": "ladder", "mode": "fixed", "eta": 0.5}],
    [{"name": "ladder", "mode": "parameter_free"}],
    [{"name": "threshold", "t": 0.7}],
    [{"name": "threshold", "t": [0.5, 0.6, 0.7, 0.8]}],
], ids=["plain", "fixed-ladder", "free-ladder", "threshold", "medals"])
@pytest.mark.parametrize("accounts", [1, 3])
def test_the_transcript_bound_holds_over_every_labeling(chain: list[dict[str, Any]], accounts: int) -> None:
    bound = info.transcript_bits(chain, metric="binary_logloss", n_rows=N_ROWS, decimals=DECIMALS, accounts=accounts,
                                 queries=3, eps=EPS)
    assert bound is not None
    for adaptive in (False, True):
        assert math.log2(_transcripts(chain, accounts, 3, adaptive=adaptive)) <= bound + 1e-9


def test_the_fixed_ladder_bound_grows_with_accounts_and_is_below_the_plain_count() -> None:
    ladder = [{"name": "ladder", "mode": "fixed", "eta": 0.01}]
    found = [info.transcript_bits(ladder, metric="binary_logloss", n_rows=92, decimals=5, accounts=k, queries=60)
             for k in (1, 2, 10, 30, 60, 1000)]
    bits = [b for b in found if b is not None]
    assert len(bits) == len(found)
    assert bits == sorted(bits) and bits[-1] == bits[-2]  # past a submission an account, no more bits
    assert bits[0] < 60 * info.rounding_bits(92, 5)
    # One account through a fixed Ladder: never more than the one-account transcript count.
    one = info.transcript_bits(ladder, metric="binary_logloss", n_rows=5000, decimals=5, accounts=1, queries=200)
    assert one is not None and one <= info.ladder_bits(0.01, 200, initial=info.loss_range() + 0.02)


def test_label_stage_defenses_attenuate_and_hidden_state_adds_a_bit() -> None:
    base = info.release_bits([], metric="binary_logloss", n_rows=2201, decimals=5)
    rr = info.release_bits([{"name": "randomized_response", "p": 0.5, "mode": "fresh"}], metric="binary_logloss",
                           n_rows=2201, decimals=5)
    assert base is not None and rr == 0.0  # p = ½: the released score is independent of the labels
    free = info.release_bits([{"name": "randomized_response", "p": 0.5, "mode": "fresh"},
                              {"name": "ladder", "mode": "parameter_free"}], metric="binary_logloss",
                             n_rows=2201, decimals=5)
    assert free == pytest.approx(1 + base)  # the Ladder's test saw the rows: no attenuation claimed
    noisy = info.release_bits([{"name": "noise", "kind": "laplace", "scale": 1e-4}], metric="binary_logloss",
                              n_rows=2201, decimals=5)
    assert noisy is not None and noisy < base
    assert info.release_bits([{"name": "rank"}], metric="binary_logloss", n_rows=10, decimals=5) is None
    brier = info.release_bits([], metric="brier", n_rows=100, decimals=3)
    assert brier is not None and brier == pytest.approx(math.log2(math.floor(1.001 * 1000) + 3))


@pytest.mark.parametrize("scale", [0.05, 0.2])
def test_the_noisy_release_bound_stays_above_the_channel_capacity(scale: float) -> None:
    # Accuracy on a 1-row board spans [0, 1]; Blahut–Arimoto on the discretised Laplace channel at 2 decimals.
    w = info.discretized_noise_channel("laplace", scale, 1.0, 0.01, 41, tail=8.0)
    bound = info.release_bits([{"name": "noise", "kind": "laplace", "scale": scale}], metric="accuracy", n_rows=10**6,
                              decimals=2)
    assert bound is not None and info.blahut_arimoto(w) <= bound


def test_labels_worth_divides_by_the_entropy_of_a_label() -> None:
    assert info.labels_worth(10.0, [50, 50]) == pytest.approx(10.0)
    assert info.labels_worth(10.0, [75, 25]) == pytest.approx(10.0 / info.binary_entropy(0.25))
    assert info.labels_worth(1e6, [3, 3, 3]) == 9.0


def test_a_privacy_budget_caps_each_account_only_on_a_pure_dp_chain() -> None:
    budget: dict[str, Any] = {"name": "privacy_budget", "epsilon": 0.5, "composition": "basic"}
    pure: list[dict[str, Any]] = [{"name": "noise", "kind": "laplace", "epsilon": 0.1}, budget]
    laddered: list[dict[str, Any]] = [{"name": "noise", "kind": "laplace", "epsilon": 0.1},
                                      {"name": "ladder", "mode": "parameter_free"}, budget]
    cap = 200 * 0.5 * math.log2(math.e)
    one = info.transcript_bits(pure, metric="binary_logloss", n_rows=200, decimals=5, accounts=1, queries=1000)
    three = info.transcript_bits(pure, metric="binary_logloss", n_rows=200, decimals=5, accounts=3, queries=1000)
    assert one is not None and three is not None and one <= cap + 1e-9 and three <= 3 * cap + 1e-9 and one < three
    # The parameter-free Ladder's test reads the rows beside the noisy score: its releases are not 0.5-DP.
    open_bits = info.transcript_bits(laddered, metric="binary_logloss", n_rows=200, decimals=5, accounts=1,
                                     queries=1000)
    assert open_bits is not None and open_bits > cap
