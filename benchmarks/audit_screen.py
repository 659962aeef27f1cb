"""The host's audit with its accounts axis behind the sybil screen (``games.audit`` with ``screen=True``,
``games.screened_board``): per board and account count, the public labels ``auto`` reads without the screen and
with the screen holding the accounts it clusters (hold mode), the attacker accounts let through (that got a
release before the hold), the accounts and submissions held, the accounts that had submitted at the first flag,
and the honest accounts flagged (the audit's 10 simulated models, each an account, screened beside the attacker).

Boards (5 decimals, a 30 % public split, the participants' quota 5 a day × 10 days, ``auto`` only): scikit-learn's
breast cancer (569 rows) and seeded 306-row (70 % ones) and 100-row (balanced) vectors, behind the parameter-free
Ladder or the README's ``combined`` chain (fresh randomized response 2 %, Laplace 1e-4, parameter-free Ladder). The
attacker's sign-ups are synthetic: a hurried attacker, its accounts from 3 addresses over 3 hours, one user agent.
A careful attacker (distinct addresses, spread sign-ups, camouflaged probes) may pass the screen; every figure is
what the library's attacks read, a lower bound on the leakage.

    .venv/bin/python -m benchmarks.audit_screen [--accounts 2,10,30,100,1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer

from games.audit import AuditSetup, Quota, audit

CHAINS: dict[str, list[dict[str, object]]] = {
    "ladder-parameter-free": [{"name": "ladder", "mode": "parameter_free"}],
    "combined": [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
                 {"name": "noise", "kind": "laplace", "scale": 1e-4},
                 {"name": "ladder", "mode": "parameter_free"}],
}


def boards() -> dict[str, np.ndarray]:
    return {
        "breast_cancer": load_breast_cancer().target.astype(np.int64),
        "skewed_306": (np.random.default_rng(306).random(306) < 0.7).astype(np.int64),
        "balanced_100": np.random.default_rng(100).permutation(np.arange(100) % 2).astype(np.int64),
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accounts", default="2,10,30,100,1000")
    args = parser.parse_args()
    counts = [int(k) for k in args.accounts.split(",")]
    print("| board | chain | public rows | majority | accounts | read, no screen | read, hold | let through | "
          "accounts held | submissions held | flagged after | honest flagged | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for board, labels in boards().items():
        for chain, defenses in CHAINS.items():
            started = time.perf_counter()
            report = audit(AuditSetup(labels, defenses=defenses, public_fraction=0.3, secret=7),
                           accounts=counts, quota=Quota(daily_limit=5, days=10), attack_names=["auto"],
                           time_limit=1200.0)
            seconds = time.perf_counter() - started
            for cell in report.axis:
                screen = cell.screen or {}
                if screen.get("status") != "ok":
                    continue
                flagged = "never" if screen["flagged_at"] is None else f"{screen['flagged_at']:,}"
                print(f"| {board} | {chain} | {report.n_public} | {_pct(report.majority['public'])} | "
                      f"{cell.accounts:,} | {_pct(cell.public)} ({cell.exact_public_rows}) | "
                      f"{_pct(screen['public'])} ({screen['exact_public_rows']}) | {screen['let_through']:,} | "
                      f"{screen['held_accounts']:,} | {screen['held_submissions']:,} | {flagged} | "
                      f"{screen['honest_flagged']} of {screen['honest_accounts']} | {seconds:.0f} |")


if __name__ == "__main__":
    main()
