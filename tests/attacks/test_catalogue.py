"""The attack catalogue: every attack registers a spec beside its function, ``auto`` and the audit read them, and
a new attack is one new module."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import attacks
from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.fingerprint import Fingerprint
from attacks.oracle import LocalOracle
from attacks.plan import choose_for, explain
from attacks.registry import ATTACKS, CATALOGUE, catalogue, spec
from games.audit import battery, forced_params

TOY = '''
"""A toy attack: one spike a row on a noise-free float64 binary log-loss board that scores every row."""

import numpy as np

from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.registry import register
from attacks.result import AttackResult


def fits(facts: BoardFacts) -> Plan | Refusal:
    if not (facts.binary_logloss and facts.open_release and not facts.split and not facts.noise
            and facts.decimals is None):
        return Refusal("toy_spikes", "full-precision binary log loss scoring every row only")
    return Plan("toy_spikes", {}, "the toy's board: one spike a row", rank=60, cost=facts.n_rows)


@register("toy_spikes", truncatable=True, fits=fits, paper="a test", board="full-precision binary log loss",
          queries="N")
def toy_spikes(oracle, *, budget=None):
    """Row i at 0.9, the rest at 1/2: the score falls below ln 2 exactly when row i's label is 1."""
    n = oracle.n_rows
    labels = np.full(n, -1, dtype=np.int64)
    for row in range(n if budget is None else min(n, budget)):
        vector = np.full(n, 0.5)
        vector[row] = 0.9
        labels[row] = int(oracle.submit(vector) < np.log(2.0))
    return AttackResult("toy_spikes", labels)
'''


@pytest.fixture
def toy_module(tmp_path: Path) -> Iterator[str]:
    """A temporary module registering ``toy_spikes``; removed from the catalogue afterwards."""
    (tmp_path / "toy_spikes_module.py").write_text(textwrap.dedent(TOY))
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("toy_spikes_module")
        yield "toy_spikes"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("toy_spikes_module", None)
        ATTACKS.pop("toy_spikes", None)
        CATALOGUE.pop("toy_spikes", None)


def test_a_new_attack_is_one_module_and_auto_plays_it_where_it_fits_best(toy_module: str) -> None:
    labels = np.random.default_rng(3).integers(0, 2, 40)
    result = attacks.run("auto", LocalOracle(labels, decimals=None), budget=200)
    assert result.details["attack"] == toy_module, result.details["reasoning"]
    assert result.details["plan"]["reason"] == "the toy's board: one spike a row"
    assert np.array_equal(result.labels, labels)
    # Where it does not fit (a rounded board), the catalogue's own choice plays, unchanged.
    rounded = attacks.run("auto", LocalOracle(labels, decimals=5), budget=200)
    assert rounded.details["attack"] == "capacity"


def test_a_new_attack_joins_the_tables_read_off_the_catalogue(toy_module: str) -> None:
    assert toy_module in attacks.available()
    assert spec(toy_module).truncatable and spec(toy_module).exact
    facts = BoardFacts.of(LocalOracle([0, 1, 1, 0], decimals=None), Fingerprint(decimals=None, full_precision=True))
    assert choose_for(facts).attack == toy_module
    assert forced_params(toy_module, 100) == {}  # it does not spend a budget it is given: auto's play sizes it


def test_every_attack_that_declares_a_fit_answers_for_every_board() -> None:
    boards = [
        LocalOracle(np.arange(12) % 2, decimals=5),
        LocalOracle(np.arange(12) % 2, decimals=5, public_fraction=0.5),
        LocalOracle(np.arange(12) % 3, metric="multiclass_logloss", decimals=5),
        LocalOracle(np.arange(12) % 3, metric="brier", decimals=5),
        LocalOracle(np.arange(12) % 2, decimals=5, arithmetic="mpfr:60"),
    ]
    seen = [None, Fingerprint(decimals=5), Fingerprint(decimals=5, noise=True, noise_spread=1e-4),
            Fingerprint(decimals=5, ladder=True), Fingerprint(decimals=5, rejected=2)]
    for oracle in boards:
        for report in seen:
            facts = BoardFacts.of(oracle, report)
            answers = explain(facts)
            assert {a.attack for a in answers} == set(attacks.available())
            for answer in answers:
                if isinstance(answer, Refusal):
                    assert answer.reason, answer  # every refusal says why
                else:
                    assert answer.attack in attacks.available() and answer.rank < float("inf")
            # The best-ranked plan is the one chosen; a best guess is ranked below every exact plan.
            plans = [a for a in answers if isinstance(a, Plan)]
            assert choose_for(facts).attack == plans[0].attack
            ranks = [p.rank for p in plans]
            assert ranks == sorted(ranks)
            assert all(p.stage == Stage.GUESS for p in plans if p.rank >= 1000)


def test_behind_refusals_a_ladder_or_a_fresh_subset_only_the_attacks_made_for_them_fit() -> None:
    oracle = LocalOracle(np.arange(20) % 2, decimals=5)
    for report, made_for in [(Fingerprint(decimals=5, rejected=1), {"camouflage"}),
                             (Fingerprint(decimals=5, ladder=True, ladder_start={"leader": 0.6}), {"ladder"}),
                             (Fingerprint(decimals=5, subsetting=True), {"subsetting"})]:
        fitting = {a.attack for a in explain(BoardFacts.of(oracle, report)) if isinstance(a, Plan)}
        assert fitting - {"boosting", "majority"} == made_for, report


def test_the_audit_battery_and_forced_parameters_are_read_off_the_specs() -> None:
    whole = LocalOracle(np.arange(30) % 2, decimals=5)
    applicable = {s.name for s in catalogue() if s.applies is not None and s.applies(BoardFacts.of(whole))}
    assert battery(whole)[0] == "auto" and set(battery(whole)[1:]) == applicable
    assert {"capacity", "noisy", "boosting"} <= applicable
    for name in attacks.available():
        keys = set(forced_params(name, 500))
        assert keys == ({"budget"} if spec(name).spends_budget else set()), name


def test_the_attack_table_in_the_docs_is_generated_from_the_catalogue() -> None:
    from attacks.table import DOC, markdown

    assert DOC.read_text(encoding="utf-8") == markdown(), "run: python -m attacks.table --write"
    for name in attacks.available():
        assert f"| `{name}` |" in markdown()
        assert spec(name).paper, f"{name}: its spec names no paper"


def test_every_attack_documents_its_paper_queries_precision_and_a_runnable_example() -> None:
    # The docs table is read off the specs and each docstring's example runs as a doctest (pytest runs the
    # attacks package with --doctest-modules): no attack may leave a column empty or its example out.
    missing = []
    for entry in catalogue():
        for column in ("paper", "queries", "precision"):
            if not getattr(entry, column).strip():
                missing.append(f"{entry.name}: no {column}")
        if ">>>" not in (entry.fn.__doc__ or ""):
            missing.append(f"{entry.name}: no >>> example in {entry.fn.__module__}.{entry.fn.__qualname__}")
    assert not missing, "\n".join(missing)
    assert {entry.name for entry in catalogue()} == set(attacks.available())


def test_rescue_plans_come_only_after_every_exact_plan_failed() -> None:
    from dataclasses import replace

    from attacks.plan import rescues

    oracle = LocalOracle(np.arange(200) % 2, decimals=5, accounts=2)
    clean = BoardFacts.of(oracle, Fingerprint(decimals=5, noise=False, balance=[0.5, 0.5]), budget_left=500)
    assert rescues(clean) == [] and all(not p.rescue for p in explain(clean) if isinstance(p, Plan))
    failed = replace(clean, exact_failed=True, failed="capacity")
    assert [p.attack for p in rescues(failed)] == ["thresholdout"]  # a clean board where an exact plan failed
    assert rescues(replace(failed, failed="thresholdout")) == []
    withheld = BoardFacts.of(oracle, Fingerprint(decimals=5, noise=True, noise_spread=1e-3), budget_left=500)
    options = rescues(replace(withheld, exact_failed=True, failed="capacity", withheld=3))
    assert [p.attack for p in options] == ["budgeted"] and options[0].params["first_account"] == 1
    assert rescues(replace(failed, budget_left=1)) == []  # no queries left to rescue with


def test_what_the_host_discloses_reaches_the_board_facts() -> None:
    told = LocalOracle([0, 1, 1, 0], decimals=5, same_file_same_score=True, disclosed={"epsilon": 10.0})
    facts = BoardFacts.of(told)
    assert facts.disclosed == {"same_file_same_score": True, "epsilon": 10.0}
    assert BoardFacts.of(LocalOracle([0, 1])).disclosed == {"same_file_same_score": False}
