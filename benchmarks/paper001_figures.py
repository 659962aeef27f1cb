"""Paper 001's Figures 1–2: the Itakura–Saito loss on binary labels (Figures 1(a) and 2): the largest N one query
recovers in full, and the queries a multi-query attack needs for all 2,201 labels (Titanic's size), against
the noise bound τ ∈ {1e-4, 1e-3, 1e-2, 1e-1, 1}, beside the paper's.

The server releases the full float64 mean (``decimals=None``, as in the paper's float64 simulation) plus noise
uniform in ``[−τ, τ]``; "recovered in full" means every trial (seeded random labelings plus all zeros, all
ones, alternating and one positive) returns every label. Three columns each:

* **paper** — the numbers the paper's text gives: Figure 2's "100 % accuracy using M ≥ 220 [queries] with
  τ = 0.0001, and M ≥ 1100 with τ = 1" on Titanic (Figure 1's points are only plotted);
* **Cor. 1** — the paper's own construction re-run here: Corollary 1's ``θ_i = (1 + 3^(2^i·N·τ))^-1``
  decoded by LabelInf (Eq. 1, exhaustive over 2^N, in float64 like the paper), unclipped (the clipping
  ``eps`` = 1e-300) so that the construction is not cut short by the board's ``eps``; multi-query (§3.2) uses
  the largest batch that decodes with θ built on the whole N (the ``N`` of ``3^(2^i·N·τ)`` is the data set's);
* **ours** — ``bregman_powers`` (Theorem 1 solved on the whole loss: ``θ ≈ 1/(2^i·s)`` rather than
  ``3^-(2^i·N·τ)``), on the board's eps = 1e-15, sized by the server model and checked by the same trials.

The binary CE loss (Figure 1(b), Figure 3) and softmax cross-entropy on 10-class digits labels (Figure 1(d),
Figure 2) are in :mod:`benchmarks.paper001_ce` (``--part ce`` / ``--part softmax``).

    .venv/bin/python -m benchmarks.paper001_figures [--trials 10] [--rows 2201] [--part is|ce|softmax|all] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from functools import partial
from typing import Any

import numpy as np

from attacks import AttackFailed, run
from attacks.paper000.probes import ServerModel
from attacks.paper001.design import plan_batch
from attacks.paper001.losses import LossFamily, family_for
from attacks.planning import largest_feasible
from benchmarks.paper001_ce import UniformNoiseOracle
from scoring.metrics import get_metric

TAUS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
PAPER_QUERIES = {1e-4: 220, 1.0: 1100}  # Figure 2, Titanic (2,201 rows), stated in §6's text
MAX_LABELINF = 20


def itakura_saito_board(labels: np.ndarray, *, tau: float, eps: float, seed: int) -> UniformNoiseOracle:
    """The exact float64 Itakura–Saito score plus noise uniform in ``[-tau, tau]`` (binary labels)."""
    return UniformNoiseOracle(labels, metric="itakura_saito", n_classes=2, tau=tau, seed=seed, eps=eps)


def trials(n: int, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    one = np.zeros(n, dtype=np.int64)
    one[n // 2] = 1
    return [rng.integers(0, 2, n) for _ in range(count)] + [
        np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64), np.arange(n) % 2, one]


# --- the paper's construction: Corollary 1 + LabelInf ----------------------------------------------------------


def corollary1_thetas(size: int, n_rows: int, tau: float) -> np.ndarray:
    """Corollary 1: ``θ_i = (1 + 3^(2^i·N·τ))^-1``, i = 1..m (0 where it underflows)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.power(3.0, np.exp2(np.arange(1, size + 1)) * n_rows * tau))


def labelinf(thetas: np.ndarray, n_rows: int, released: float) -> np.ndarray:
    """Eq. (1) in float64: the batch labeling whose Itakura–Saito score (other rows at 1/2) is nearest."""
    m = len(thetas)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        one = 1.0 / thetas + np.log(thetas) - 1.0
        zero = 1.0 / (1.0 - thetas) + np.log1p(-thetas) - 1.0
    half = (n_rows - m) * (2.0 + math.log(0.5) - 1.0)
    codes = np.array(list(itertools.product((0, 1), repeat=m)), dtype=bool)
    scores = (np.where(codes, one, zero).sum(axis=1) + half) / n_rows
    return codes[int(np.nanargmin(np.abs(scores - released)))].astype(np.int64)


def corollary1_recovers(
    n_rows: int, batch: int, tau: float, labels: np.ndarray, seed: int, batches: int | None = None
) -> bool:
    """Corollary 1 batches of ``batch`` rows (the rest at 1/2), each decoded by LabelInf (the first
    ``batches`` of them, default all)."""
    oracle = itakura_saito_board(labels, tau=tau, eps=1e-300, seed=seed)
    thetas = corollary1_thetas(batch, n_rows, tau)
    if not np.all(thetas > 0):
        return False
    for start in range(0, n_rows if batches is None else min(n_rows, batches * batch), batch):
        rows = np.arange(start, min(start + batch, n_rows))
        predictions = np.full(n_rows, 0.5)
        predictions[rows] = thetas[: len(rows)]
        if labelinf(thetas[: len(rows)], n_rows, oracle.submit(predictions)).tolist() != labels[rows].tolist():
            return False
    return True


def corollary1_single(tau: float, count: int) -> int:
    best = 0
    for n in range(1, MAX_LABELINF + 1):
        if not all(corollary1_recovers(n, n, tau, y, seed=i) for i, y in enumerate(trials(n, count, seed=n))):
            break
        best = n
    return best


def corollary1_multi(n_rows: int, tau: float, count: int) -> int:
    """The largest batch m for which Corollary 1 at this N (its θ uses the whole N: ``3^(2^i·N·τ)``) decodes
    the first 10 batches of every trial, then checked on a whole labeling; 0 if none."""
    best = 0
    for m in range(1, MAX_LABELINF + 1):
        if not all(corollary1_recovers(n_rows, m, tau, y, seed=i, batches=10)
                   for i, y in enumerate(trials(n_rows, count, seed=m))):
            break
        best = m
    labels = np.random.default_rng(7).integers(0, 2, n_rows)
    return best if best and corollary1_recovers(n_rows, best, tau, labels, seed=7) else 0


# --- ours: bregman_powers ---------------------------------------------------------------------------------------


def ours_single(tau: float, count: int) -> int:
    """The largest N the server model certifies for one query, checked by running the attack on the trials."""
    family = family_for("itakura_saito")
    best = 0
    for n in range(1, 63):
        model = ServerModel(n_rows=n, n_classes=2, eps=1e-15, decimals=None, noise_bound=tau)
        if plan_batch(model, family, n, "powers") is None:
            break
        best = n
    for i, labels in enumerate(trials(best, count, seed=best)):
        oracle = itakura_saito_board(labels, tau=tau, eps=1e-15, seed=i)
        result = run("bregman_powers", oracle, tau=tau, verify=False)
        if result.queries != 1 or result.labels.tolist() != labels.tolist():
            raise AssertionError(f"τ = {tau}: N = {best} was certified but not recovered in one query")
    return best


def ours_queries(n_rows: int, tau: float, seed: int) -> int:
    labels = np.random.default_rng(seed).integers(0, 2, n_rows)
    oracle = itakura_saito_board(labels, tau=tau, eps=1e-15, seed=seed)
    result = run("bregman_powers", oracle, tau=tau, verify=False)
    if result.labels.tolist() != labels.tolist():
        raise AssertionError(f"τ = {tau}: the multi-query attack returned wrong labels")
    return result.queries


def _carries(model: ServerModel, family: LossFamily, construction: str, size: int) -> bool:
    return plan_batch(model, family, size, construction) is not None


def labels_per_query(n_rows: int, decimals: int) -> None:
    """App. B.1 in numbers: the batch each construction plans on a float64 board of ``n_rows`` rows at
    ``decimals`` released decimals and no noise, per loss and K (planning only, no query)."""
    print(f"\nlabels per query (Construction 1 powers / Construction 2 primes), N = {n_rows:,}, {decimals} decimals, "
          "float64, eps = 1e-15; the K-ary counting bound K^m ≤ m·M + 1 (M = one row's largest move / (N·10^-d))")
    print(f"{'loss':>16} | " + " | ".join(f"{f'K = {k}':^17}" for k in (2, 6, 10)))
    for metric in ("kl", "itakura_saito", "brier", "norm_like"):
        cells = []
        for k in (2, 6, 10):
            model = ServerModel(n_rows=n_rows, n_classes=k, eps=1e-15, decimals=decimals)
            family = family_for(metric)
            sizes = [largest_feasible(62, partial(_carries, model, family, c)) for c in ("powers", "primes")]
            spread = get_metric(metric).label_spread
            reach = spread(1e-15, k) if spread is not None else math.nan
            big = reach / (n_rows * 10.0**-decimals)
            bound = max(m for m in range(1, 200) if k**m <= m * big + 1)
            cells.append(f"{sizes[0]:>3} / {sizes[1]:>2}  ({bound:>2})")
        print(f"{metric:>16} | " + " | ".join(f"{c:^17}" for c in cells))


def itakura_saito_part(rows: int, count: int) -> None:
    print(f"Itakura–Saito loss, binary labels, float64 server, noise uniform in [−τ, τ]; {count} random "
          "+ 4 fixed labelings per point")
    print(f"{'τ':>7} | {'1 query: largest N':^27} | {f'queries for all {rows:,} labels':^31}")
    print(f"{'':>7} | {'paper':>7} {'Cor. 1':>8} {'ours':>8} | {'paper':>7} {'Cor. 1':>8} {'ours':>12}")
    for tau in TAUS:
        single_paper = corollary1_single(tau, count)
        single_ours = ours_single(tau, count)
        batch_paper = corollary1_multi(rows, tau, count)
        multi_paper = str(math.ceil(rows / batch_paper)) if batch_paper else "fails"
        try:
            multi_ours = str(ours_queries(rows, tau, seed=7))
        except AttackFailed as error:
            multi_ours = f"refused ({error})"[:40]
        stated = PAPER_QUERIES.get(tau) if rows == 2201 else None  # the paper's are for Titanic's 2,201
        print(f"{tau:>7g} | {'—':>7} {single_paper:>8} {single_ours:>8} | "
              f"{stated if stated else '—':>7} {multi_paper:>8} {multi_ours:>12}")


def _ce_row(tau: float, single: list[Any], multi: list[Any]) -> str:
    cells = " ".join(f"{v:>{w}}" for v, w in zip(["—", *single], (6, 7, 7, 10, 8, 8), strict=False))
    more = " ".join(f"{v:>{w}}" for v, w in zip(["—", *multi], (6, 7, 7, 10, 8, 8), strict=False))
    return f"{tau:>7g} | {cells} | {more}"


def cross_entropy_part(rows: int, count: int) -> None:
    """Figure 1(b) and Figures 2–3 for the binary CE loss (Titanic-sized, N = ``rows``)."""
    from benchmarks import paper001_ce as ce

    labels = np.random.default_rng(7).integers(0, 2, rows)
    print(f"\nbinary CE loss (binary_logloss), N = {rows:,} (Titanic), float64 server, every digit released, noise "
          f"uniform in [−τ, τ]; {count} random + 4 fixed labelings per point; eps = 1e-300 unless @1e-15; the paper "
          "plots these (Fig. 1(b), Fig. 3) without numbers")
    print(f"{'τ':>7} | {'1 query: largest N':^51} | {f'queries for all {rows:,} labels':^51}")
    head = f"{'paper':>6} {'Thm 10':>7} {'Thm 3':>7} {'ce_robust':>10} {'powers':>8} {'@1e-15':>8}"
    print(f"{'':>7} | {head} | {head}")
    for tau in TAUS:
        single: list[Any] = [ce.paper_single(2, tau, c, logits=False, count=count, pool=None)
                             for c in ("thm10", "thm3")]
        single += [ce.ours_single(a, "binary_logloss", 2, tau, c, None, count, None, eps=e)
                   for a, c, e in (("ce_robust", "theorem3", ce.PAPER_EPS), ("bregman_powers", "powers", ce.PAPER_EPS),
                                   ("bregman_powers", "powers", 1e-15))]
        multi: list[Any] = [ce.paper_multi(labels, 2, tau, c, logits=False, count=count, pool=None)
                            for c in ("thm10", "thm3")]
        multi += [ce.ours_queries(a, "binary_logloss", labels, 2, tau, eps=e)
                  for a, e in (("ce_robust", ce.PAPER_EPS), ("bregman_powers", ce.PAPER_EPS),
                               ("bregman_powers", 1e-15))]
        print(_ce_row(tau, single, multi))


def softmax_part(count: int, rows: int | None) -> None:
    """Figure 1(d) and Figure 2 for softmax cross-entropy on 10-class labels (scikit-learn's digits)."""
    from sklearn.datasets import load_digits

    from benchmarks import paper001_ce as ce

    digits = np.asarray(load_digits().target, dtype=np.int64)
    labels = digits if rows is None else digits[:rows]
    n = len(labels)
    print(f"\nsoftmax cross-entropy on logits (softmax_ce), 10 classes: scikit-learn's digits labels (N = {n:,}), "
          f"float64 server, every digit released, noise uniform in [−τ, τ]; {count} labelings drawn from the "
          "digits labels + 4 fixed per point; eps = 1e-300 unless @1e-15; the paper plots these (Fig. 1(d), "
          "Fig. 2) without numbers")
    print(f"{'τ':>7} | {'1 query: largest N':^43} | {f'queries for all {n:,} labels':^43}")
    head = f"{'paper':>6} {'Thm 3':>7} {'ce_robust':>10} {'softmax':>8} {'@1e-15':>8}"
    print(f"{'':>7} | {head} | {head}")
    for tau in TAUS:
        single: list[Any] = [ce.paper_single(10, tau, "thm3", logits=True, count=count, pool=digits)]
        single += [ce.ours_single(a, "softmax_ce", 10, tau, c, "softmax_ce", count, digits, eps=e)
                   for a, c, e in (("ce_robust", "theorem3", ce.PAPER_EPS), ("softmax_ce", "powers", ce.PAPER_EPS),
                                   ("softmax_ce", "powers", 1e-15))]
        multi: list[Any] = [ce.paper_multi(labels, 10, tau, "thm3", logits=True, count=count, pool=digits)]
        multi += [ce.ours_queries(a, "softmax_ce", labels, 10, tau, eps=e)
                  for a, e in (("ce_robust", ce.PAPER_EPS), ("softmax_ce", ce.PAPER_EPS), ("softmax_ce", 1e-15))]
        cells = " ".join(f"{v:>{w}}" for v, w in zip(["—", *single], (6, 7, 10, 8, 8), strict=True))
        more = " ".join(f"{v:>{w}}" for v, w in zip(["—", *multi], (6, 7, 10, 8, 8), strict=True))
        print(f"{tau:>7g} | {cells} | {more}")


def _carries_logits(model: ServerModel, metric: str, construction: str, size: int) -> bool:
    from attacks.paper001.activations import plan_logits

    return plan_logits(model, metric, size, construction) is not None


def activation_cost(n_rows: int) -> None:
    """App. G's "extra bits" of the logit losses, in labels a query: the largest batch each construction plans
    in probability space (CE loss) and through the inverse activation (sigmoid/softmax CE on logits), on a
    float64 board of ``n_rows`` rows without noise (planning only, no query)."""
    from attacks.paper001.activations import CROSS_ENTROPY

    print(f"\nlabels a query, CE on probabilities / on logits (App. G's extra bits), N = {n_rows:,}, float64, no noise")
    print(f"{'eps':>7} {'K':>3} {'decimals':>8} | {'Theorem 3':>9} | {'powers':>9} | {'primes':>9}")
    for eps in (1e-15, 1e-300):
        for k in (2, 10):
            for decimals in (5, None):
                model = ServerModel(n_rows=n_rows, n_classes=k, eps=eps, decimals=decimals)
                metric = "sigmoid_ce" if k == 2 else "softmax_ce"
                cells = []
                for construction in ("theorem3", "powers", "primes"):
                    plain = largest_feasible(62, partial(_carries, model, CROSS_ENTROPY, construction))
                    logits = largest_feasible(62, partial(_carries_logits, model, metric, construction))
                    cells.append(f"{plain:>4} / {logits:<2}")
                print(f"{eps:>7g} {k:>3} {decimals!s:>8} | " + " | ".join(f"{c:>9}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10, help="random labelings per point (plus 4 fixed ones)")
    parser.add_argument("--rows", type=int, default=2201, help="N of the binary multi-query columns (Titanic: 2,201)")
    parser.add_argument("--part", choices=("is", "ce", "softmax", "all"), default="all",
                        help="Itakura–Saito (Fig. 1(a), 2), binary CE (Fig. 1(b), 3), softmax CE on digits "
                        "(Fig. 1(d), 2)")
    parser.add_argument("--quick", action="store_true", help="2 random trials a point, N = 300 / 400 (a smoke run)")
    args = parser.parse_args()
    count = 2 if args.quick else args.trials
    rows = 300 if args.quick else args.rows
    started = time.perf_counter()
    if args.part in ("is", "all"):
        itakura_saito_part(rows, count)
        labels_per_query(rows, 5)
    if args.part in ("ce", "all"):
        cross_entropy_part(rows, count)
    if args.part in ("softmax", "all"):
        softmax_part(count, 400 if args.quick else None)
        activation_cost(rows)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
