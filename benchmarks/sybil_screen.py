"""The sybil screen (``defenses/sybil_screen.py``) against the library's own multi-account attacks and against honest
populations: is the attack caught, after how many of its accounts, what the attacker still reads when the screen
holds the cluster's releases from the flag on, and how many honest accounts are flagged.

Attack cells: ``auto`` with k accounts (k = 10, 100, 1,000) on a ``LocalOracle`` behind a Ladder chain (the
parameter-free Ladder, or the README's ``combined`` chain: fresh randomized response 2 %, Laplace 1e-4,
parameter-free Ladder), 5 decimals, as ``benchmarks/fresh_accounts.py`` builds them. The oracle records each
account's submissions. Each attacker account gets a sign-up trace: *hurried* (three addresses, one browser, the
accounts signed up over two hours, a minute or so apart) or *careful* (a distinct address and browser each, a day or
so apart). Beside the attacker, an honest crowd on the same board (``games.population.simulated_population``: 30
models of graded quality, each an account submitting 3–5 versions; ten of them behind the attacker's first address,
signing up in the same hour) is screened with it. The screen runs after every submission:

* **flag at** — the attacker's accounts that had submitted when one of them was first in a flagged cluster;
* **caught** — the attacker's submitting accounts in a flagged cluster at the end (without a hold);
* **read, no screen / read, hold** — labels right: the attack run plainly, and re-run against an oracle that releases
  nothing (``None``) to every account of a flagged cluster from the flag on (hold mode), screening after every
  submission; beside it the majority rate (what a constant guess reads);
* **honest flagged** — honest crowd accounts in a flagged cluster at any point;
* **probes on an honest base** (k = 100) — the screen's view of the same recorded probes laid onto a model's output
  (each row's logit moved by the probe's offset from ½): the evasion a careful attacker would try next.

Honest cells: the games' model zoos (``games.population.honest_population``: breast cancer, 13 models, 171 hidden
rows; digits, 13 models, 540 rows, 10 classes) and ``synthetic_population`` (5,000 rows), on seeds 0–2. Every model
is an account (one in three behind one NAT address, all signing up within an hour, one browser) submitting its
output, a copy rounded to 3 decimals, its hard labels, an ensemble with the next model, and five accounts submit the
same tutorial model; screened after every submission. False-positive rate: accounts ever flagged / accounts.

    .venv/bin/python -m benchmarks.sybil_screen [--accounts 10,100,1000] [--seeds 0,1,2] [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.datasets import load_breast_cancer

from attacks import LocalOracle, run
from attacks.oracle import Released
from defenses.sybil_screen import AccountTrace, ScreenConfig, Screener, SubmissionTrace
from games.population import honest_population, simulated_population, synthetic_population

DECIMALS = 5
HOUR = 3600.0
DAY = 24 * HOUR
START = 1.7e9
NAT = "192.0.2.1"
CHAINS: dict[str, list[dict[str, Any]]] = {
    "ladder-parameter-free": [{"name": "ladder", "mode": "parameter_free"}],
    "combined": [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
                 {"name": "noise", "kind": "laplace", "scale": 1e-4},
                 {"name": "ladder", "mode": "parameter_free"}],
}


def attacker_traces(k: int, style: str, rng: np.random.Generator) -> list[AccountTrace]:
    if style == "careful":
        return [AccountTrace(f"sybil{i}", START + i * DAY + float(rng.uniform(0, 8 * HOUR)),
                             f"198.51.{i // 250}.{i % 250}", f"Mozilla/5.0 (variant {i})") for i in range(k)]
    addresses = [NAT, "203.0.113.7", "203.0.113.8"]
    times = START + np.sort(rng.uniform(0, 2 * HOUR, k))
    return [AccountTrace(f"sybil{i}", float(times[i]), addresses[i % 3], "python-requests/2.31") for i in range(k)]


def crowd(labels: np.ndarray, rng: np.random.Generator, models: int = 30) -> tuple[list[AccountTrace],
                                                                                   list[SubmissionTrace]]:
    """An honest crowd on the attack's board: each model an account submitting 3–5 versions over days."""
    population = simulated_population(labels, seed=int(rng.integers(1 << 30)), n_models=models)
    outputs = list(population.predictions.values())
    traces, subs = [], []
    for i, output in enumerate(outputs):
        name = f"honest{i}"
        near_nat = i < 10
        signed = START + (float(rng.uniform(0, HOUR)) if near_nat else float(rng.uniform(0, 10 * DAY)))
        traces.append(AccountTrace(name, signed, NAT if near_nat else f"100.64.{i}.1",
                                   "Mozilla/5.0 (X11; Linux x86_64)"))
        versions = _versions(output, outputs[(i + 1) % len(outputs)])[: 3 + i % 3]
        subs += [SubmissionTrace(name, signed + HOUR * (1 + j) + float(rng.uniform(0, DAY)), v)
                 for j, v in enumerate(versions)]
    return traces, subs


def _versions(output: np.ndarray, neighbour: np.ndarray) -> list[np.ndarray]:
    hard = (output > 0.5).astype(np.float64) if output.ndim == 1 else np.eye(output.shape[1])[output.argmax(1)]
    return [output, np.round(output, 3), hard, 0.5 * (output + neighbour), np.clip(output * 0.98 + 0.01, 0, 1)]


class Recorder(LocalOracle):
    """A board that records each submission (account, vector) and, when ``hold`` is set, screens after every
    submission and releases nothing to the accounts of a flagged cluster from then on."""

    def __init__(self, *args: Any, screener: Screener | None = None, hold: bool = False,
                 clock: Iterator[float] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[tuple[int, np.ndarray]] = []
        self.screener = screener
        self.hold = hold
        self.clock = clock
        self.held: set[str] = set()
        self.flag_at: int | None = None  # attacker accounts that had submitted at the first flag
        self.withheld = 0

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        vector = np.array(predictions, dtype=np.float64)
        self.log.append((self.account, vector))
        name = f"sybil{self.account}"
        if self.screener is not None and self.clock is not None:
            if name not in self.held:
                self.screener.add(SubmissionTrace(name, next(self.clock), vector))
                flagged = {a for c in self.screener.clusters() for a in c.accounts if a.startswith("sybil")}
                if flagged and self.flag_at is None:
                    self.flag_at = len({a for a, _ in self.log})
                if self.hold:
                    self.held |= flagged
            if self.hold and name in self.held:
                self.queries += 1
                self.withheld += 1
                return {metric: None for metric in self.specs}
        return super().submit_all(predictions)


@dataclass
class AttackCell:
    board: str
    chain: str
    k: int
    style: str
    used: int
    flag_at: int | None
    caught: str
    read_plain: float
    read_held: float
    majority: float
    honest_flagged: str
    seconds: float


def attack_cell(board: str, labels: np.ndarray, chain: str, k: int, style: str, budget: int,
                plain: tuple[float, list[tuple[int, np.ndarray]]] | None) -> tuple[AttackCell, tuple[float, Any]]:
    started = time.perf_counter()
    rng = np.random.default_rng(k * 7 + len(style))
    majority = float(max(labels.mean(), 1 - labels.mean()))
    if plain is None:  # the attack as it plays unscreened: what it submits and reads
        board_plain = Recorder(labels, decimals=DECIMALS, defenses=CHAINS[chain], seed=7, accounts=k)
        result = run("auto", board_plain, budget=budget)
        plain = (float((result.labels == labels).mean()), board_plain.log)
    read_plain, log = plain
    sybils = attacker_traces(k, style, rng)
    honest_traces, honest_subs = crowd(labels, rng)
    # Screened without a hold: the whole recorded attack interleaved with the crowd, after every submission.
    screener = Screener(sybils + honest_traces, ScreenConfig(mode="flag"))
    events = sorted([(s.at, 1, s) for s in honest_subs]
                    + [(START + 2 * HOUR + 60.0 * i, 0, SubmissionTrace(f"sybil{a}", START + 2 * HOUR + 60.0 * i, v))
                       for i, (a, v) in enumerate(log)], key=lambda e: (e[0], e[1]))
    honest_ever: set[str] = set()
    for _, _, sub in events:
        screener.add(sub)
        for cluster in screener.clusters():
            honest_ever |= {a for a in cluster.accounts if a.startswith("honest")}
    final = screener.clusters()
    submitting = {f"sybil{a}" for a, _ in log}
    caught_accounts = submitting & {a for c in final for a in c.accounts}
    # Hold mode: the attack re-run, screened after each of its submissions (the crowd's already screened).
    held_screener = Screener(sybils + honest_traces, ScreenConfig(mode="hold"))
    for sub in sorted(honest_subs, key=lambda s: s.at):
        held_screener.add(sub)
    clock = iter(START + 2 * HOUR + 60.0 * i for i in range(10**9))
    board_held = Recorder(labels, decimals=DECIMALS, defenses=CHAINS[chain], seed=7, accounts=k,
                          screener=held_screener, hold=True, clock=clock)
    try:
        held = run("auto", board_held, budget=budget)
        read_held = float((held.labels == labels).mean())
    except Exception:  # an attack that cannot cope with silence reads the majority at best
        read_held = majority
    cell = AttackCell(board, chain, k, style, len(submitting), board_held.flag_at,
                      f"{len(caught_accounts)}/{len(submitting)}", read_plain, read_held, majority,
                      f"{len(honest_ever)}/{len(honest_traces)}", time.perf_counter() - started)
    return cell, plain


def disguised_cell(labels: np.ndarray, log: list[tuple[int, np.ndarray]], k: int) -> tuple[str, str]:
    """The screen's view of the same probes laid onto an honest-looking base (the ``camouflage`` attack's idea):
    each row's logit moved by the probe's offset from ½ on top of a fixed model's output. Not an attack run — what
    the screen sees if the attacker disguised its probes so. Careful sign-ups, the crowd beside it."""
    rng = np.random.default_rng(k + 99)
    base = simulated_population(labels, seed=5, n_models=3).predictions
    base_logit = _logit(next(iter(base.values())))
    traces, subs = crowd(labels, rng)
    screener = Screener(attacker_traces(k, "careful", rng) + traces, ScreenConfig())
    for sub in sorted(subs, key=lambda s: s.at):
        screener.add(sub)
    honest_ever: set[str] = set()
    for i, (account, vector) in enumerate(log):
        shifted = 1.0 / (1.0 + np.exp(-(base_logit + _logit(vector))))
        screener.add(SubmissionTrace(f"sybil{account}", START + 2 * HOUR + 60.0 * i, shifted))
        for cluster in screener.clusters():
            honest_ever |= {a for a in cluster.accounts if a.startswith("honest")}
    submitting = {f"sybil{a}" for a, _ in log}
    caught = submitting & {a for c in screener.clusters() for a in c.accounts}
    return f"{len(caught)}/{len(submitting)}", f"{len(honest_ever)}/{len(traces)}"


def _logit(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, 1e-12, 1 - 1e-12)
    return np.asarray(np.log(q) - np.log1p(-q))


def honest_cells(seeds: list[int]) -> list[tuple[str, int, int, int, int]]:
    """(population, seed, accounts, submissions, accounts ever flagged) per honest population."""
    out = []
    for seed in seeds:
        populations = {
            "breast_cancer zoo": honest_population(seed=seed, dataset="breast_cancer"),
            "digits zoo (10 classes)": honest_population(seed=seed, dataset="digits"),
            "synthetic 5,000 rows": synthetic_population(5000, seed=seed, n_models=40),
        }
        for name, population in populations.items():
            rng = np.random.default_rng(seed)
            outputs = list(population.predictions.values())
            traces, subs = [], []
            for i, output in enumerate(outputs):
                account = f"p{i}"
                nat = i % 3 == 0
                signed = START + (float(rng.uniform(0, HOUR)) if nat else float(rng.uniform(0, 5 * DAY)))
                traces.append(AccountTrace(account, signed, NAT if nat else f"100.64.{i}.1",
                                           "Mozilla/5.0 (X11; Linux x86_64)" if nat else f"Browser/{i % 4}"))
                for j, version in enumerate(_versions(output, outputs[(i + 1) % len(outputs)])[:4]):
                    subs.append(SubmissionTrace(account, signed + HOUR * (j + 1) + float(rng.uniform(0, DAY)), version))
            for i in range(5):  # five students submit the same tutorial model
                subs.append(SubmissionTrace(f"p{i}", START + 6 * DAY + i, outputs[0]))
            screener = Screener(traces, ScreenConfig())
            ever: set[str] = set()
            for sub in sorted(subs, key=lambda s: s.at):
                screener.add(sub)
                for cluster in screener.clusters():
                    ever |= set(cluster.accounts)
            out.append((name, seed, len(traces), len(subs), len(ever)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", default="10,100,1000")
    parser.add_argument("--budget", type=int, default=5000)
    parser.add_argument("--chains", default=",".join(CHAINS))
    parser.add_argument("--styles", default="hurried,careful")
    parser.add_argument("--seeds", default="0,1,2", help="the honest populations' seeds")
    parser.add_argument("--quick", action="store_true", help="k = 10, 100 and one honest seed")
    args = parser.parse_args()
    accounts = [int(a) for a in args.accounts.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.quick:
        accounts, seeds = [a for a in accounts if a <= 100], seeds[:1]
    boards = {"breast_cancer": load_breast_cancer().target.astype(np.int64),
              "skewed_306": (np.random.default_rng(306).random(306) < 0.68).astype(np.int64)}
    print("| board | chain | accounts k | sign-ups | accounts used | flag at (accounts) | caught | "
          "read, no screen | read, hold | majority | honest flagged | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in accounts:
        # k = 1,000 on the 306-row board: the same attack, a smaller board (the run stays within minutes).
        board = "skewed_306" if k >= 1000 else "breast_cancer"
        labels = boards[board]
        for chain in args.chains.split(","):
            plain = None
            for style in args.styles.split(","):
                cell, plain = attack_cell(board, labels, chain, k, style, args.budget, plain)
                flag = "never" if cell.flag_at is None else str(cell.flag_at)
                print(f"| {board} ({len(labels)} rows) | {chain} | {k:,} | {style} | {cell.used:,} | {flag} | "
                      f"{cell.caught} | {cell.read_plain:.3f} | {cell.read_held:.3f} | {cell.majority:.3f} | "
                      f"{cell.honest_flagged} | {cell.seconds:.1f} |", flush=True)
            if plain is not None and k == 100:
                caught, honest = disguised_cell(labels, plain[1], k)
                print(f"| {board} ({len(labels)} rows) | {chain} | {k:,} | careful, probes on an honest base | "
                      f"{len({a for a, _ in plain[1]}):,} | – | {caught} | – | – | – | {honest} | – |", flush=True)
    print()
    print("| honest population | seed | accounts | submissions | accounts ever flagged | false-positive rate |")
    print("|---|---|---|---|---|---|")
    total_accounts = total_flagged = 0
    for name, seed, n_accounts, n_subs, flagged in honest_cells(seeds):
        total_accounts += n_accounts
        total_flagged += flagged
        print(f"| {name} | {seed} | {n_accounts} | {n_subs} | {flagged} | {flagged / n_accounts:.3f} |", flush=True)
    print(f"| all | – | {total_accounts} | – | {total_flagged} | {total_flagged / max(total_accounts, 1):.3f} |")


if __name__ == "__main__":
    main()
