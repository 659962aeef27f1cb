"""The sybil screen (defenses/sybil_screen.py): it catches the library's own multi-account attacks from the
submissions they actually make, it does not flag honest people who share an address and submit similar models,
it finds near-duplicate files, its work grows linearly with the accounts (counted, not timed), and it refuses
malformed input with a clear ValueError."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle, run
from defenses.sybil_screen import (
    AccountTrace,
    Cluster,
    ScreenConfig,
    Screener,
    SubmissionTrace,
    account_verdict,
    probe_likeness,
    screen,
    screen_with_work,
)
from games.population import synthetic_population

HOUR = 3600.0
DAY = 24 * HOUR
LADDER: list[dict[str, Any]] = [{"name": "ladder", "mode": "parameter_free"}]
COMBINED: list[dict[str, Any]] = [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
            {"name": "noise", "kind": "laplace", "scale": 1e-4},
            {"name": "ladder", "mode": "parameter_free"}]


class Recorder(LocalOracle):
    """A LocalOracle that keeps every submission with the account it was made as."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[tuple[int, np.ndarray]] = []

    def submit_all(self, predictions: Any) -> Any:
        self.log.append((self.account, np.array(predictions, dtype=np.float64)))
        return super().submit_all(predictions)


def recorded_attack(chain: list[dict[str, Any]], accounts: int = 60, rows: int = 300,
                    seed: int = 5) -> list[tuple[int, np.ndarray]]:
    labels = (np.random.default_rng(seed).random(rows) < 0.6).astype(np.int64)
    board = Recorder(labels, decimals=5, defenses=chain, seed=seed, accounts=accounts)
    run("auto", board, budget=200)
    return board.log


def attacker_traces(accounts: int, careful: bool) -> list[AccountTrace]:
    """Sign-ups: a hurried attacker from three addresses, a few minutes apart, one browser; a careful one from a
    distinct address and browser each, a day or so apart."""
    rng = np.random.default_rng(11)
    if careful:
        return [AccountTrace(f"sybil{i}", 1e9 + i * DAY + float(rng.uniform(0, 6 * HOUR)),
                             f"198.51.{i // 250}.{i % 250}", f"Mozilla/5.0 build {i}") for i in range(accounts)]
    return [AccountTrace(f"sybil{i}", 1e9 + i * 120.0, f"203.0.113.{i % 3}", "python-requests/2.31")
            for i in range(accounts)]


def submissions_of(log: list[tuple[int, np.ndarray]], prefix: str = "sybil",
                   start: float = 2e9) -> list[SubmissionTrace]:
    return [SubmissionTrace(f"{prefix}{account}", start + i * 60.0, vector) for i, (account, vector) in enumerate(log)]


def honest_population(accounts: int = 30, rows: int = 300, seed: int = 3) -> tuple[list[AccountTrace],
                                                                                     list[SubmissionTrace]]:
    """Honest students behind one university NAT: they sign up in one lecture with one browser, each submits a
    simulated model several times (the model, a rounded copy, its hard labels, an ensemble with a neighbour), and
    five of them submit the identical tutorial model."""
    population = synthetic_population(rows, seed=seed, n_models=accounts)
    models = list(population.predictions.values())
    traces = [AccountTrace(f"student{i}", 1e9 + i * 45.0, "192.0.2.1", "Mozilla/5.0 (X11; Linux x86_64)")
              for i in range(accounts)]
    subs: list[SubmissionTrace] = []
    for i, model in enumerate(models):
        name = f"student{i}"
        versions = [model, np.round(model, 3), (model > 0.5).astype(np.float64),
                    0.5 * (model + models[(i + 1) % accounts])]
        subs += [SubmissionTrace(name, 2e9 + i * 10.0 + j, v) for j, v in enumerate(versions)]
    for i in range(5):
        subs.append(SubmissionTrace(f"student{i}", 3e9 + i, models[0]))
    subs.append(SubmissionTrace("student7", 3e9 + 10, np.full(rows, 0.5)))  # the sample submission
    return traces, subs


def block_probe(rows: int, start: int, width: int = 4, constant: float = 0.5) -> np.ndarray:
    vector = np.full(rows, constant)
    logits = 2.0 ** np.arange(width)
    vector[start:start + width] = 1.0 / (1.0 + np.exp(-logits))
    return vector


@pytest.fixture(scope="module")
def ladder_log() -> list[tuple[int, np.ndarray]]:
    return recorded_attack(LADDER)


@pytest.fixture(scope="module")
def combined_log() -> list[tuple[int, np.ndarray]]:
    return recorded_attack(COMBINED)


def attack_accounts(log: list[tuple[int, np.ndarray]]) -> set[str]:
    """The accounts of a recorded attack that submitted more than a constant (the probes the screen can see)."""
    return {f"sybil{a}" for a, v in log if np.ptp(v) > 0}


@pytest.mark.parametrize("careful", [False, True])
@pytest.mark.parametrize("chain", ["ladder", "combined"])
def test_catches_a_recorded_fresh_accounts_attack(chain: str, careful: bool, ladder_log: Any,
                                                  combined_log: Any) -> None:
    log = ladder_log if chain == "ladder" else combined_log
    used = {f"sybil{a}" for a, _ in log}
    assert len(used) >= 20  # the attack did spend fresh accounts
    clusters = screen(attacker_traces(70, careful), submissions_of(log))  # ten sign-ups never submit
    assert clusters, "the attack was not flagged"
    top = clusters[0]
    assert top.suspicion >= 0.5
    kinds = {e.kind for e in top.evidence}
    assert {"probe_like", "complementary"} <= kinds
    probing = attack_accounts(log)
    caught = probing & set(top.accounts)
    assert len(caught) >= 0.8 * len(probing)
    if not careful:  # the sign-up traces add to it and pull in the accounts that submitted only constants
        assert {"same_address", "signup_burst"} <= kinds
        assert top.suspicion >= 0.7
        constants = {f"sybil{a}" for a, _ in log} - probing  # submitted only constants (fingerprint probes)
        assert constants and constants <= set(top.accounts)
        reserve = {f"sybil{i}" for i in range(70)} - used  # never submitted: never flagged
        assert reserve and not reserve & set(top.accounts)
    for evidence in top.evidence:
        assert evidence.kind in {"probe_like", "complementary", "near_identical", "same_address", "signup_burst",
                                 "same_user_agent"}
        assert "label" not in evidence.detail.lower() and "score" not in evidence.detail.lower()


def test_an_attack_is_flagged_after_a_few_accounts(ladder_log: Any) -> None:
    """Screened after every submission, the attack is flagged once two or three accounts have probed."""
    subs = submissions_of(ladder_log)
    traces = attacker_traces(60, careful=True)
    for count in range(1, len(subs) + 1):
        if screen(traces, subs[:count]):
            break
    accounts = {s.account for s in subs[:count]}
    assert len(accounts) <= 6


def test_honest_students_behind_one_address_are_not_flagged() -> None:
    traces, subs = honest_population()
    assert screen(traces, subs) == []
    # With the threshold lowered the host sees why they were grouped — sign-up traces and a shared file only,
    # capped below the default threshold.
    low = screen(traces, subs, ScreenConfig(threshold=0.1))
    assert len(low) == 1
    assert low[0].suspicion <= ScreenConfig().trace_cap < ScreenConfig().threshold
    assert {e.kind for e in low[0].evidence} == {"same_address", "signup_burst", "near_identical"}
    near = next(e for e in low[0].evidence if e.kind == "near_identical")
    assert set(near.accounts) == {f"student{i}" for i in range(5)}


def test_honest_students_on_the_attackers_address_stay_unflagged(ladder_log: Any) -> None:
    """An attacker behind the university's NAT, signing up in the same lecture: the attacker's accounts are flagged,
    the students who submit models are not attached to the cluster."""
    traces, subs = honest_population()
    attacker = [AccountTrace(f"sybil{i}", 1e9 + 30.0 * i, "192.0.2.1", "Mozilla/5.0 (X11; Linux x86_64)")
                for i in range(60)]
    clusters = screen(traces + attacker, subs + submissions_of(ladder_log))
    assert len(clusters) == 1
    assert not any(name.startswith("student") for name in clusters[0].accounts)
    assert account_verdict(clusters, "student3") is None
    assert account_verdict(clusters, next(iter(attack_accounts(ladder_log)))) is clusters[0]


def test_near_duplicate_probes_are_found() -> None:
    rows = 200
    probe = block_probe(rows, 40)
    jittered = probe + np.random.default_rng(1).uniform(-1e-6, 1e-6, rows)
    subs = [SubmissionTrace("a", 1.0, probe), SubmissionTrace("b", 2.0, jittered),
            SubmissionTrace("c", 3.0, np.random.default_rng(2).random(rows))]
    clusters = screen([], subs)
    assert [c.accounts for c in clusters] == [("a", "b")]
    kinds = [e.kind for e in clusters[0].evidence]
    assert "near_identical" in kinds and "complementary" not in kinds


def test_complementary_blocks_link_accounts_with_no_traces() -> None:
    rows = 400
    subs = [SubmissionTrace(f"acct{i}", float(i), block_probe(rows, 5 * i, width=5)) for i in range(6)]
    clusters = screen([], subs)
    assert len(clusters) == 1 and clusters[0].accounts == tuple(sorted(f"acct{i}" for i in range(6)))
    complementary = next(e for e in clusters[0].evidence if e.kind == "complementary")
    assert "30 rows" in complementary.detail
    # One probe is not a cluster.
    assert screen([], subs[:1]) == []


def test_probe_likeness() -> None:
    rows = 1000
    assert probe_likeness(block_probe(rows, 10)) > 0.9
    assert probe_likeness(np.full(rows, 0.5)) == 0.0  # the sample submission
    assert probe_likeness(np.random.default_rng(0).random(rows)) == 0.0
    assert probe_likeness((np.random.default_rng(0).random(rows) < 0.6).astype(float)) == 0.0  # hard labels
    for model in synthetic_population(rows, seed=2).predictions.values():
        assert probe_likeness(model) == 0.0
    matrix = np.full((rows, 3), 1 / 3)
    matrix[:4] = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.6, 0.2, 0.2], [0.2, 0.2, 0.6]]
    assert probe_likeness(matrix) > 0.5
    assert probe_likeness(matrix[:, :1]) > 0.5  # (n, 1) is a column vector


def test_account_verdict_and_modes() -> None:
    rows = 300
    subs = [SubmissionTrace(f"acct{i}", float(i), block_probe(rows, 4 * i)) for i in range(3)]
    clusters = screen([], subs)
    assert isinstance(account_verdict(clusters, "acct1"), Cluster)
    assert account_verdict(clusters, "nobody") is None
    assert account_verdict(clusters, "acct1", ScreenConfig(mode="off")) is None
    assert screen([], subs, ScreenConfig(mode="off")) == []
    assert screen([], subs, ScreenConfig(mode="hold")) == clusters
    assert account_verdict(clusters, "acct1", ScreenConfig(min_accounts=4)) is None


def scaled_population(accounts: int, rows: int) -> tuple[list[AccountTrace], list[SubmissionTrace]]:
    rng = np.random.default_rng(accounts)
    traces = [AccountTrace(f"u{i}", 1e9 + float(rng.uniform(0, 30 * DAY)), f"10.0.{i % 7}.1") for i in range(accounts)]
    subs = []
    for i in range(accounts):
        vector = block_probe(rows, int(rng.integers(0, rows - 5))) if i % 2 else rng.random(rows)
        subs.append(SubmissionTrace(f"u{i}", 2e9 + i, vector))
    return traces, subs


def test_work_grows_linearly_with_accounts_and_rows() -> None:
    """Counted work (cells read, hash-table entries, explicit pair comparisons) doubles when the accounts or the
    rows double: no all-pairs comparison of accounts."""
    totals = {}
    for accounts, rows in [(100, 500), (200, 500), (400, 500), (200, 1000)]:
        _, work = screen_with_work(*scaled_population(accounts, rows))
        totals[accounts, rows] = work
        assert work.pair_checks <= 4 * accounts
    assert 1.8 <= totals[200, 500].total / totals[100, 500].total <= 2.2
    assert 1.8 <= totals[400, 500].total / totals[200, 500].total <= 2.2
    assert 1.8 <= totals[200, 1000].total / totals[200, 500].total <= 2.2


@pytest.mark.parametrize(("vector", "message"), [
    (np.array([0.5, np.nan, 0.5]), "finite"),
    (np.array([0.5, np.inf]), "finite"),
    (np.array([]), "at least one row"),
    (np.zeros((3, 0)), "at least one row"),
    (np.zeros((2, 2, 2)), "1-D"),
    (np.float64(0.5), "1-D"),
    (["a", "b"], "numeric"),
])
def test_hostile_vectors_raise_a_clear_value_error(vector: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        probe_likeness(vector)
    with pytest.raises(ValueError, match=r"submission 1 of account 'x'.*" + message):
        screen([], [SubmissionTrace("ok", 0.0, np.full(20, 0.5)), SubmissionTrace("x", 1.0, vector)])


def test_hostile_traces_and_configs_raise_a_clear_value_error() -> None:
    assert screen([], []) == []
    with pytest.raises(ValueError, match="two sign-up traces"):
        screen([AccountTrace("a", 1.0), AccountTrace("a", 2.0)], [])
    with pytest.raises(ValueError, match="finite"):
        screen([AccountTrace("a", float("nan"))], [])
    with pytest.raises(ValueError, match="non-empty string"):
        screen([], [SubmissionTrace("", 1.0, np.zeros(3))])
    with pytest.raises(ValueError, match="SubmissionTrace"):
        screen([], [np.zeros(3)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="mode"):
        ScreenConfig(mode="ban")
    with pytest.raises(ValueError, match="min_accounts"):
        ScreenConfig(min_accounts=1)


def test_mixed_shapes_are_screened_apart() -> None:
    """Vectors of another shape (a resubmission on another board's rows) never meet in one bucket."""
    subs = [SubmissionTrace("a", 1.0, block_probe(100, 0)), SubmissionTrace("b", 2.0, block_probe(120, 10))]
    assert screen([], subs) == []


def test_random_hard_label_queries_are_probes_but_honest_hard_labels_are_not() -> None:
    """Blum & Hardt's boosting queries (random 0/1 vectors, ``auto``'s fallback once its probes are held) agree with
    the other participants' consensus on about half of the rows; an honest model's hard labels on most."""
    traces, subs = honest_population(accounts=12, rows=400)
    rng = np.random.default_rng(4)
    randoms = [SubmissionTrace(f"rand{i}", 4e9 + i, (rng.random(400) < 0.5).astype(np.float64)) for i in range(3)]
    clusters = screen(traces, subs + randoms)
    assert [c.accounts for c in clusters] == [("rand0", "rand1", "rand2")]
    assert "consensus" in next(e for e in clusters[0].evidence if e.kind == "complementary").detail
    assert screen(traces, subs) == []  # the students' own hard labels (in honest_population) are not queries
    assert screen([], randoms) == []  # no consensus to compare with: nothing is called random


def test_the_screener_after_every_submission_equals_the_screen() -> None:
    traces, subs = honest_population(accounts=12, rows=400)
    rng = np.random.default_rng(8)
    subs = subs + [SubmissionTrace(f"rand{i}", 4e9 + i, (rng.random(400) < 0.5).astype(np.float64)) for i in range(3)]
    subs += [SubmissionTrace(f"blk{i}", 5e9 + i, block_probe(400, 6 * i)) for i in range(3)]
    screener = Screener(traces)
    for count, sub in enumerate(subs, start=1):
        screener.add(sub)
        if count % 7 == 0 or count == len(subs):
            assert screener.clusters() == screen(traces, subs[:count])
    assert len(screener.clusters()) == 2


def test_probes_laid_on_an_honest_base_are_found_as_edits_of_one_file() -> None:
    """The careful attacker's next move: the same block probes on a model's output (each row's logit moved by the
    probe's offset). No spike any more, but the files agree exactly on every row outside their blocks."""
    traces, subs = honest_population(accounts=12, rows=400)
    base = synthetic_population(400, seed=9, n_models=2).predictions
    logit = np.log(next(iter(base.values()))) - np.log1p(-next(iter(base.values())))
    disguised = []
    for i in range(4):
        probe = block_probe(400, 5 * i, width=5)
        shifted = 1.0 / (1.0 + np.exp(-(logit + np.log(probe) - np.log1p(-probe))))
        assert probe_likeness(shifted) == 0.0
        disguised.append(SubmissionTrace(f"camo{i}", 5e9 + i, shifted))
    clusters = screen(traces, subs + disguised)
    assert [c.accounts for c in clusters] == [tuple(f"camo{i}" for i in range(4))]
    assert "edits of one base" in " ".join(e.detail for e in clusters[0].evidence)
