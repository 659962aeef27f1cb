"""``auto`` on a privacy-budget board whose host discloses the chain, given k accounts: labels right beside what
``budgeted`` reads by hand (told ε), ``auto`` not told, the majority class and the information bound.

The board: Laplace noise at ε per release (calibrated to the log loss's sensitivity) and a privacy budget of
``20·ε`` per participant (20 releases an account), 5 decimals, every row scored. Disclosed as the chain JSON of
those two defenses. Label vectors (none tuned to): scikit-learn's breast cancer (569 rows, 63 % benign), its digits
as "digit < 5" (1,797 rows, balanced), and a seeded 2,201-row vector with 68 % ones.

The bound: ``k·20`` releases carry at most ``k·20·C`` bits (:func:`attacks.information.privacy_budget_bits`, ``C``
the capacity bound of one release under that noise, :func:`attacks.information.additive_noise_bits`); by the
rate-distortion bound for independent labels of share ``π`` no labeling that uses ``B`` bits is right on more than
``1 − D`` of the rows, ``h(π) − h(D) = B/N`` (:func:`accuracy_bound`).

    .venv/bin/python -m benchmarks.budget_accounts [--accounts 1,10,30] [--epsilons 10,100] [--sets ...]
"""

from __future__ import annotations

import argparse
import time

from attacks import LocalOracle, run
from attacks.information import additive_noise_bits, binary_entropy, loss_range, privacy_budget_bits
from benchmarks.fresh_accounts import label_sets  # the same label vectors as the accounts table

DECIMALS = 5
RELEASES = 20


def chain(eps: float) -> list[dict[str, object]]:
    return [{"name": "noise", "kind": "laplace", "epsilon": eps},
            {"name": "privacy_budget", "epsilon": RELEASES * eps, "composition": "basic"},
            {"name": "rounding", "decimals": DECIMALS}]


def disclosure(eps: float) -> dict[str, object]:
    return {"defenses": chain(eps)[:2]}


def accuracy_bound(n_rows: int, share: float, bits: float) -> float:
    """The most a labeling can be right on (expected share of rows) from ``bits`` of information about ``n_rows``
    independent labels of share ``share``: ``1 − D`` with ``h(share) − h(D) = bits / n_rows`` (rate distortion).

    >>> accuracy_bound(100, 0.7, 0.0), accuracy_bound(100, 0.5, 1000.0)
    (0.7, 1.0)
    """
    low = min(share, 1 - share)
    rate = bits / n_rows
    if rate >= binary_entropy(low):
        return 1.0
    lo, hi = 0.0, low  # h(D) is increasing on [0, min(π, 1 − π)]: solve h(D) = h(π) − rate
    for _ in range(60):
        mid = (lo + hi) / 2
        if binary_entropy(low) - binary_entropy(mid) > rate:
            lo = mid
        else:
            hi = mid
    return 1.0 - (lo + hi) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", default="1,10,30")
    parser.add_argument("--epsilons", default="10,100")
    parser.add_argument("--sets", default="breast_cancer,digits<5,skewed_2201")
    parser.add_argument("--budget", type=int, default=5000, help="queries auto may send (every account's together)")
    args = parser.parse_args()
    sets = label_sets()
    print("| labels | ε a release | accounts | auto, told | fingerprint releases | budgeted by hand (told ε) | "
          "auto, not told | majority | bound | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for set_name in args.sets.split(","):
        y = sets[set_name]
        n = len(y)
        share = float(y.mean())
        majority = max(share, 1 - share)
        for eps in (float(e) for e in args.epsilons.split(",")):
            scale = loss_range() / n / eps
            per_release = additive_noise_bits("laplace", scale, n, DECIMALS)
            for k in (int(a) for a in args.accounts.split(",")):
                started = time.perf_counter()
                told = run("auto", LocalOracle(y, defenses=chain(eps), seed=7, accounts=k,
                                               disclosed=disclosure(eps)), budget=args.budget)
                hand = run("budgeted", LocalOracle(y, defenses=chain(eps), seed=7, accounts=k), epsilon=eps)
                blind = run("auto", LocalOracle(y, defenses=chain(eps), seed=7, accounts=k), budget=args.budget)
                bound = accuracy_bound(n, share, privacy_budget_bits(k * RELEASES, per_release))
                print(f"| {set_name} ({n}) | {eps:g} | {k} | {told.accuracy(y):.3f} | "
                      f"{told.details['fingerprint_queries']} | {hand.accuracy(y):.3f} | {blind.accuracy(y):.3f} | "
                      f"{majority:.3f} | {bound:.3f} | {time.perf_counter() - started:.1f} |", flush=True)
    print(f"\nA = {loss_range():.2f}: one row's whole swing of the summed loss; the noise on it is A/ε.")


if __name__ == "__main__":
    main()
