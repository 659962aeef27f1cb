"""The ``noisy`` attack against additive and multiplicative noise, beside the information bound.

For each data set (breast cancer's 171-row test split from ``games.population``, seeded 2,201-row vectors with
Titanic's balance, and with ``--large`` 25,000 balanced rows) and each noise defense at 5 released decimals with
``same_file_same_score``: label accuracy, submissions used (probes included), the per-query information bound
of :mod:`attacks.information` (the sound amplitude bound, and the uniform-prior one in brackets), the fewest
submissions that bound allows (``N·h(π)/C``), the ratio used/fewest and the wall time. ``before`` is the same
attack with the earlier design and settings (random signs only, 24 probes, a first batch of 0.45·N design
queries, steps of 0.05·N), run on the same boards; it is skipped at 25,000 rows (the earlier code held the dense
float64 matrix there: 2 GB and more). ``--large`` adds 25,000 rows: minutes per defense.

    .venv/bin/python -m benchmarks.noisy_attacks [--sizes 171,2201] [--large] [--seeds 1] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle
from attacks import information as info

CHAINS: dict[str, list[dict[str, object]]] = {
    "rounding only": [],
    "laplace 1e-3": [{"name": "noise", "kind": "laplace", "scale": 1e-3}],
    "laplace 1e-2": [{"name": "noise", "kind": "laplace", "scale": 1e-2}],
    "gaussian 1e-2": [{"name": "noise", "kind": "gaussian", "scale": 1e-2}],
    "multiplicative 1e-3": [{"name": "noise", "kind": "multiplicative", "alpha": 1e-3}],
}


#: The earlier settings, for the ``before`` column.
BEFORE: dict[str, Any] = {"probes": 24, "start_ratio": 0.45, "step_ratio": 0.05, "groups": "never"}


def true_bound(chain: list[dict[str, object]], n: int) -> tuple[float, float | None]:
    """(sound bound, uniform-prior bound) in bits per query for the chain's real parameters."""
    if not chain:
        return info.rounding_bits(n, 5), None
    d = chain[0]
    if d["kind"] == "multiplicative":
        return info.multiplicative_noise_bits(float(d["alpha"]), n, 5), None  # type: ignore[arg-type]
    kind, scale = str(d["kind"]), float(d["scale"])  # type: ignore[arg-type]
    return info.additive_noise_bits(kind, scale, n, 5), info.uniform_prior_bits(kind, scale, n)


def labels_for(size: int, seed: int) -> tuple[str, np.ndarray]:
    if size == 171:
        from games.population import honest_population

        return "breast cancer", honest_population(seed=seed).labels
    balance = 711 / 2201 if size == 2201 else 0.5
    return f"seeded {size:,}", (np.random.default_rng(seed).random(size) < balance).astype(np.int64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="171,2201")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--chains", default=",".join(CHAINS))
    parser.add_argument("--large", action="store_true", help="add the 25,000-row vectors (a few minutes each)")
    parser.add_argument("--no-before", action="store_true", help="skip the earlier settings' column")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    header = ("data", "defense", "accuracy", "queries", "bound bits/q", "fewest queries", "ratio", "seconds",
              "before: queries", "before: ratio")
    sep = " | " if args.markdown else "  "
    print(sep.join(header))
    if args.markdown:
        print("|".join("---" for _ in header))
    sizes = [int(s) for s in args.sizes.split(",")] + ([25_000] if args.large else [])
    for size in sizes:
        for name in args.chains.split(","):
            chain = CHAINS[name]
            accs, queries, secs, before = [], [], [], []
            for seed in range(args.seeds):
                data, y = labels_for(size, seed)
                oracle = LocalOracle(y, decimals=5, defenses=chain, same_file_same_score=True, seed=100 + seed)
                started = time.perf_counter()
                result = attacks.run("noisy", oracle)
                secs.append(time.perf_counter() - started)
                accs.append(result.accuracy(y))
                queries.append(result.queries)
                if not args.no_before and size < 25_000:
                    oracle = LocalOracle(y, decimals=5, defenses=chain, same_file_same_score=True, seed=100 + seed)
                    old = attacks.run("noisy", oracle, **BEFORE)
                    before.append(old.queries if old.accuracy(y) == 1.0 else math.nan)
            sound, prior = true_bound(chain, len(y))
            balance = float(np.mean(y))
            fewest = info.queries_lower_bound(len(y), sound, balance)
            bits = f"{sound:.1f}" + (f" [{prior:.1f}]" if prior is not None else "")
            q = float(np.mean(queries))
            qb = float(np.mean(before)) if before else math.nan
            row = (data, name, f"{np.mean(accs):.4f}", f"{q:.0f}", bits, f"{fewest:.0f}",
                   f"{q / fewest:.1f}x" if math.isfinite(fewest) else "-", f"{np.mean(secs):.1f}",
                   "-" if math.isnan(qb) else f"{qb:.0f}", "-" if math.isnan(qb) else f"{qb / fewest:.1f}x")
            print(sep.join(row), flush=True)


if __name__ == "__main__":
    main()
