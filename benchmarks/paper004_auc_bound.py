"""Paper 004 §3's "at most ⌈N/90⌉ queries" (AUC + log loss released at float64) against the counting bound and
against what our two constructions measure.

The paper counts ``10^15 (10^15 + 1)`` values for an (AUC, log loss) pair at 15 significant digits (99.7 bits),
concludes that a query can carry up to ``6φ = 90`` labels and that ``⌈N/90⌉`` queries suffice (2 below N = 180).
That is a necessary condition turned into a sufficient one, and its count is wrong for the AUC: once the number
of positives ``P`` is fixed, the AUC is ``U / (P·(N−P))`` with ``U`` a multiple of 1/2, so it takes at most
``2·P·(N−P) + 1`` values, not 10^15. The log loss is a float64 in ``[0, ln(1/eps)]``, and all labelings but
one score at least ``ln 2 / N`` (each row's costlier label costs at least ``ln 2``): about 2^56 values. So a
query carries at most ``log2(#log-loss floats) + log2(2·P·(N−P) + 1)`` bits (70–85, not 99.7), and naming one
of the ``C(N, P)`` labelings takes at least ``⌈log2 C(N, P) / that⌉`` queries, adaptively or not
(:func:`attacks.information.auc_logloss_bits`) — more than ``⌈N/90⌉`` for balanced labels at every N below,
and 3, not 2, at N = 179. A decoder that must vouch for its answer under the
server model's worst-case error (``attacks.server_model``) cannot use all of those float64 values: the
"tolerance" column counts the log loss at its tolerance ``Δ`` (``2^m ≤ m·A/(2Δ) + 1``, ``Δ`` at the smallest
magnitude a query of ours reaches) beside the AUC's full count.

Measured: ``auc_logloss`` (the log loss codes the rows, the AUC splits windows) and ``auc_logloss_ranks`` (the
AUC also codes rows by their ranks), each run against a ``LocalOracle`` (float64, full release, eps = 1e-15,
seeded balanced labels), asserting exact recovery; the first probe (counting the positives) is included.

    .venv/bin/python -m benchmarks.paper004_auc_bound [--skip-large]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from attacks import LocalOracle, run
from attacks.information import auc_logloss_bits, auc_release_count, labelings_bits, loss_range, paper004_tuple_bits
from attacks.paper004.auc_ranks import query_tolerance
from attacks.paper004.server import ServerModel

SIZES = (179, 306, 569, 2_201, 25_000)
EPS = 1e-15
PAPER_LABELS_PER_QUERY = 90  # 6φ with φ = 15 (paper 004, §3)


@dataclass(frozen=True)
class Bounds:
    n_rows: int
    positives: int
    paper_queries: int
    codomain_bits: float
    codomain_queries: int
    tolerance_bits: float
    tolerance_queries: int
    labelings_bits: float


def balanced(n_rows: int, seed: int = 4) -> np.ndarray:
    labels = np.zeros(n_rows, dtype=np.int64)
    labels[: n_rows // 2] = 1
    return np.random.default_rng(seed).permutation(labels)


def oracle(labels: np.ndarray) -> LocalOracle:
    return LocalOracle(labels, decimals=None, eps=EPS, also_report=("auc",))


def tolerance_log_loss_bits(model: ServerModel) -> float:
    """``log2(m·A/(2Δ) + 1)`` at the largest ``m`` with ``2^m`` at most that: the log loss's distinguishable
    values over the span of ``m`` rows at the server model's tolerance ``Δ`` for the smallest magnitude a query
    of ours can have (every other row decoded and at an extreme: :func:`query_tolerance` with no row at 1/2)."""
    a = loss_range(EPS)
    m = 1
    while 2.0 ** (m + 1) <= (m + 1) * a / (2 * query_tolerance(model, 0, m + 1)) + 1:
        m += 1
    return math.log2(m * a / (2 * query_tolerance(model, 0, m)) + 1)


def bounds(labels: np.ndarray) -> Bounds:
    n, p = len(labels), int(labels.sum())
    needed = labelings_bits(n, p)
    codomain = auc_logloss_bits(n, p, None, EPS)
    tolerance = tolerance_log_loss_bits(ServerModel.of(oracle(labels))) + math.log2(auc_release_count(p, n - p, None))
    return Bounds(
        n, p, -(-n // PAPER_LABELS_PER_QUERY), codomain, math.ceil(needed / codomain),
        tolerance, math.ceil(needed / tolerance), needed,
    )


def measure(attack: str, labels: np.ndarray) -> tuple[int, float, float]:
    """(queries, median labels per coding query, seconds); asserts exact recovery."""
    started = time.perf_counter()
    result = run(attack, oracle(labels), confirm=False)
    seconds = time.perf_counter() - started
    assert (result.labels == labels).all(), f"{attack} mis-decoded N = {len(labels)}"
    if attack == "auc_logloss_ranks":
        per_query = float(statistics.median(result.details["labels_per_query"]))
    else:
        per_query = float(result.details["batch_size"])
    return result.queries, per_query, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true", help="leave out N = 25,000 (about a minute)")
    args = parser.parse_args()
    sizes = [n for n in SIZES if not (args.skip_large and n > 5_000)]
    print(
        f"Paper 004 §3: {paper004_tuple_bits():.1f} bits per (AUC, log loss) pair at 15 digits -> "
        f"{PAPER_LABELS_PER_QUERY} labels per query, ⌈N/{PAPER_LABELS_PER_QUERY}⌉ queries.\n"
        "Balanced labels, float64, full release, eps = 1e-15. Bits are per query; queries are lower bounds "
        "⌈log2 C(N,P) / bits⌉ (bounds) or measured (attacks, with the probe that counts the positives).\n"
    )
    header = (
        f"{'N':>6} {'P':>6} {'log2C(N,P)':>10} │ {'paper':>5} │ {'codomain':>8} {'≥ q':>5} │ {'tolerance':>9} "
        f"{'≥ q':>5} │ {'auc_logloss l/q':>15} {'q':>5} │ {'auc_logloss_ranks l/q':>21} {'q':>5} {'s':>6} │ "
        f"{'paper/ours':>10} {'bound/ours':>10} {'tol/ours':>8}"
    )
    print(header)
    print("─" * len(header))
    for n in sizes:
        labels = balanced(n)
        b = bounds(labels)
        q_old, per_old, _ = measure("auc_logloss", labels)
        q_new, per_new, seconds = measure("auc_logloss_ranks", labels)
        print(
            f"{n:>6} {b.positives:>6} {b.labelings_bits:>10.1f} │ {b.paper_queries:>5} │ {b.codomain_bits:>8.1f} "
            f"{b.codomain_queries:>5} │ {b.tolerance_bits:>9.1f} {b.tolerance_queries:>5} │ {per_old:>15.0f} "
            f"{q_old:>5} │ {per_new:>21.0f} {q_new:>5} {seconds:>6.1f} │ {b.paper_queries / q_new:>10.0%} "
            f"{b.codomain_queries / q_new:>10.0%} {b.tolerance_queries / q_new:>8.0%}"
        )
    print(
        "\ncodomain: log2(float64 values in [ln2/N, ln(1/eps)] + 1) + log2(2P(N−P)+1) bits; tolerance: the log loss "
        "counted at the server model's worst-case error instead of every float64."
    )


if __name__ == "__main__":
    main()
