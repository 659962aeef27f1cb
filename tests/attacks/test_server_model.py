"""The one server model every attack family uses: its bound holds against the real scoring core, and the
families' windows are that bound (no family carries its own float error model)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

import attacks.capacity.design as capacity_design
import attacks.paper000.probes as paper000_probes
import attacks.paper004.server as paper004_server
from attacks import LocalOracle
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.server_model import CERTIFIED_MARGIN, ServerModel

EXACT_BITS = 400


def _exact_summed_loss(values: list[str] | np.ndarray, labels: np.ndarray, eps: float) -> tuple[object, float]:
    """Σ of the exact binary log losses of the values as given (decimal text or float64), and Σ|loss|."""
    with local_precision(EXACT_BITS):
        total = mpfr(0)
        for value, label in zip(list(values), labels.tolist(), strict=True):
            p = mpfr(value) if isinstance(value, str) else mpfr(float(value))
            p = min(max(p, mpfr(repr(eps))), 1 - mpfr(repr(eps)))
            total += -gmpy2.log(p if label == 1 else 1 - p)
        return total, float(total)


@pytest.mark.parametrize(
    ("n", "decimals", "arithmetic"),
    [(50, None, "float64"), (3000, None, "float64"), (700, 5, "float64"), (200, 8, "float64"),
     (150, None, "mpfr:60"), (150, 6, "mpfr:80")],
)
def test_the_bound_holds_for_what_the_scoring_core_releases(n: int, decimals: int | None, arithmetic: str) -> None:
    rng = np.random.default_rng(n + (decimals or 0))
    for trial in range(4):
        labels = rng.integers(0, 2, n)
        oracle = LocalOracle(labels, decimals=decimals, arithmetic=arithmetic, seed=trial)
        model = ServerModel.of(oracle)
        probabilities = rng.uniform(1e-6, 1 - 1e-6, n)
        submitted: list[str] | np.ndarray = (
            probabilities if model.is_float64 else [format(p, ".17e") for p in probabilities.tolist()]
        )
        if not model.is_float64:  # the server reads the text at φ bits: the attacker knows that reading
            with local_precision(model.phi):
                submitted = [format(mpfr(t), ".40e") for t in submitted]
        exact, magnitude = _exact_summed_loss(submitted, labels, oracle.eps)
        rows = sum(model.row_error(loss) for loss in (magnitude / n,) * n)
        with local_precision(EXACT_BITS):
            released = model.observe(oracle.submit(submitted), EXACT_BITS)
            gap = abs(n * released - exact)
            assert gap <= model.error_bound(magnitude * 1.01, rows * 4)


def test_the_summation_follows_the_servers_arithmetic() -> None:
    float64 = ServerModel(n_rows=1000)
    mpfr_server = ServerModel(n_rows=1000, bits=80)
    assert float64.summation_depth() == 10 + 13  # numpy's pairwise sum: ⌈log2 N⌉ plus a block's roundings
    assert mpfr_server.summation_depth() == 1002  # logloss_mpfr adds the rows one by one
    assert ServerModel(n_rows=1000, n_scored=300).summation_depth() == 9 + 13  # only the scored rows are summed
    assert float(ServerModel(n_rows=10, decimals=3).release_error()) == pytest.approx(10 * 0.0005)
    assert float(ServerModel(n_rows=10, noise_bound=1e-4).noise_error()) == pytest.approx(1e-3)


def test_a_released_decimal_is_read_back_exactly() -> None:
    oracle = LocalOracle(np.array([0, 1, 1, 0, 1, 1, 0]), decimals=5)
    released = oracle.submit([0.3, 0.8, 0.6, 0.1, 0.7, 0.9, 0.2])
    model = ServerModel.of(oracle)
    assert isinstance(released, float)
    text = str(Decimal(repr(released)))
    assert len(text.split(".")[1]) <= 5
    with local_precision(200):
        assert model.observe(released, 200) == mpfr(text)  # the decimal, not its nearest double
        assert model.observe(released, 200) != mpfr(released)
    assert ServerModel(n_rows=7).observe(0.1) == mpfr(0.1)  # a full-precision float is its binary value
    assert ServerModel(n_rows=7, bits=80).observe(Decimal("0.125")) == mpfr("0.125")


def test_a_bigger_margin_only_scales_the_roundings() -> None:
    model = ServerModel(n_rows=500, decimals=4, noise_bound=1e-6)
    one = model.error_bound(400.0, 1e-12)
    two = model.error_bound(400.0, 1e-12, margin=2)
    assert two - one == pytest.approx(float(model.arithmetic_error(400.0, 1e-12)), rel=1e-12)
    assert one > model.release_error() + model.noise_error()


def test_every_family_plans_with_the_one_model() -> None:
    oracle = LocalOracle(np.zeros(306, dtype=np.int64), decimals=5)
    base = ServerModel.of(oracle)
    paper000 = paper000_probes.ServerModel.of(oracle)
    paper004 = paper004_server.ServerModel.of(oracle)
    lattice = capacity_design.ServerModel.build(306, oracle.eps, oracle.decimals)
    for family in (paper000, paper004, lattice):
        assert isinstance(family, ServerModel)
        assert (family.n_rows, family.eps, family.decimals, family.phi) == (base.n_rows, base.eps, 5, 53)
    # paper 004: the model's bound with the certified margin, logs and reading of the predictions as rows
    rows = base.rows_error(300.0, 306) + base.read_error(400.0)
    assert paper004.sum_tolerance(300.0, 400.0) == base.error_bound(300.0, rows, margin=CERTIFIED_MARGIN)
    # capacity: the lattice step is just above twice the model's bound for a design query
    width = capacity_design.window_width(306, 5, 0.0, oracle.eps)
    assert lattice.unit == pytest.approx(width, rel=1e-5)
    a_max = capacity_design.max_weight_real(oracle.eps)
    total = 306 * (capacity_design.LN2 + 1e-12) + 8.0 * a_max + 64 * capacity_design.LN2
    design_rows = 306 * base.row_error(capacity_design.LN2) + 64 * base.row_error(a_max + 1.0)
    assert width == pytest.approx(float(2 * base.error_bound(total, design_rows)), rel=1e-15)
    # paper 000: a probe's window is the model's bound with the certified margin plus the attacker's rounding
    probe = paper000_probes.binary_probe(paper000, [mpfr(1) / 3, mpfr(2) / 3])
    with local_precision(paper000.work_bits):
        bound = base.error_bound(probe.max_total, probe.row_error, mean=probe.max_total / 306, margin=2)
        assert 0 <= paper000.window(probe) - bound <= mpfr(2) ** (17 - paper000.work_bits) * (probe.max_total + 1)
