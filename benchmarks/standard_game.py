"""Play the standard game (``games/files/standard.toml``) and write its table and charts into the documentation.

Writes ``docs/figures/standard_game.md`` (the summary table, Markdown), ``docs/figures/standard_game_frontier.svg``
and ``.json`` (the privacy–utility frontier per budget, the recommended chain) and
``docs/figures/standard_game_queries.png`` (accuracy vs queries); the full report (CSV, JSON, HTML) goes to ``--out``.
The answer — the recommended chain per data set with its measured leakage and honest cost, and what each chain does
not protect, with this run's figures — goes to ``docs/figures/standard_game_answer.md`` and between the markers of
the documentation's results page (``docs/results_games.md``).

    .venv/bin/python -m benchmarks.standard_game [--jobs 2] [--out var/games/standard] [--game PATH] [--no-page]
        [--seeds 0] [--budgets ...] [--accounts ...] [--keep FILE | --replay FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from games import load_game, run_game
from games.frontier import AccountsCell
from games.report import (
    attack_lines,
    chain_verdicts,
    frontier_table,
    markdown_table,
    notes_of,
    summarize,
    write_report,
)
from games.runner import GameResult

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
#: The documentation page that carries the answer between its standard-game markers.
RESULTS_PAGE = ROOT / "docs" / "results_games.md"
MARK_START = "<!-- standard-game:start -->"
MARK_END = "<!-- standard-game:end -->"


def splice_page(page: Path, section: str) -> None:
    """Replace the text between the page's standard-game markers with ``section``."""
    text = page.read_text(encoding="utf-8")
    if MARK_START not in text or MARK_END not in text:
        raise SystemExit(f"{page} has no {MARK_START} ... {MARK_END} markers")
    head, rest = text.split(MARK_START, 1)
    _, tail = rest.split(MARK_END, 1)
    page.write_text(f"{head}{MARK_START}\n{section}{MARK_END}{tail}", encoding="utf-8")


#: Leakage from which the frontier's pick is named the least leaky chain rather than recommended.
HALF_LEAKED = 0.5


def answer_text(result: GameResult) -> str:
    """The game's answer: the frontier table (with a column per account count beside its information bound),
    then per data set the recommended chain — with the budget and the accounts it was measured with, as what the
    library's attacks found, never as "safe" — and what each chain does not protect (with this run's figures)."""
    from games.frontier import accounts_cells, chain_points, recommend

    lines = attack_lines(result.cells)
    points = chain_points(result, lines)
    recommended = recommend(points, result.game.utility_tolerance)
    by_accounts = accounts_cells(result, lines)
    tried = ", ".join(f"{k:,}" for k in result.game.account_levels)
    out = [frontier_table(points, recommended, by_accounts)]
    for dataset, choice in recommended.items():
        budget = "no cap" if choice.budget is None else f"{choice.budget:,} submissions"
        if choice.point is None:
            out.append(f"\n**{dataset}**: no chain keeps the honest cost within {choice.tolerance}.\n")
        else:
            p = choice.point
            most = p.accounts_tried
            accounts = "one account" if most == 1 else f"up to {most:,} accounts (tried: {tried})"
            accuracy = f"every attack {p.failure or 'failed'}" if p.label_accuracy is None else (
                f"{100 * p.label_accuracy:.1f} % of labels right ({p.attack}"
                + ("" if p.accounts == 1 else f" with {p.accounts:,} accounts") + ")")
            widest = next((c for c in by_accounts if (c.dataset, c.defense) == (dataset, p.defense)
                           and c.accounts == result.game.account_levels[-1]), None)
            bound = "" if widest is None or widest.bound is None else (
                f" The releases could carry {widest.bound.text()} to an attacker with {widest.accounts:,} "
                f"account{'s' if widest.accounts > 1 else ''} ({widest.bound.bits:,.0f} bits at most).")
            if p.leakage >= 0.99:
                out.append(
                    f"\n**{dataset}: no chain within the honest-cost tolerance ({choice.tolerance}) protects the "
                    f"labels** — the least leaky of them still leaks {p.leakage:.2f} at {budget} with {accounts}, "
                    f"so the frontier's pick is the cheapest, `{p.defense}` ({accuracy} against "
                    f"{100 * (p.majority_rate or 0):.1f} % for the majority class). The chains that do protect cost "
                    "honest players more (see the table).\n"
                )
                continue
            found = ("no label beyond the majority class" if p.leakage == 0 else f"leakage {p.leakage:.2f}")
            # A chain that leaks most of what the majority guess misses is the least bad, not a recommendation.
            head = (f"recommended `{p.defense}`" if p.leakage < HALF_LEAKED else
                    f"the least leaky chain within the honest-cost tolerance, `{p.defense}`, still leaks most labels")
            out.append(
                f"\n**{dataset}: {head}** — at {budget} with {accounts}, the strongest of our "
                f"attacks got {accuracy} against {100 * (p.majority_rate or 0):.1f} % for the majority class: "
                f"{found}. That is what the library's attacks found, a lower bound on what leaks, not a limit on "
                f"every attacker.{bound} Honest cost 1 − τ = {p.cost:.3f} (tolerance {choice.tolerance}), best "
                f"model wins in {100 * (p.best_wins_rate or 0):.0f} % of seeds.\n"
            )
    changed = accounts_changes(by_accounts)
    if changed:
        top = result.game.levels[-1]
        within = "without a cap" if top is None else f"within {top:,} submissions"
        out.append(f"\nWhere more accounts read more ({within}, the strongest attack with at most that many accounts; "
                   "the majority class in brackets):\n")
        out.extend(f"- {line}\n" for line in changed)
    out.append("\nWhat each defense does not protect, and what this run measured through it:\n")
    for note in notes_of(chain_verdicts(result, lines, points)):
        out.append(f"- {note.statement} Measured: " + "; ".join(note.measured) + ".\n")
    return "".join(out)


def accounts_changes(by_accounts: Sequence[AccountsCell]) -> list[str]:
    """One line per data set and chain whose labels right change with the account count: each count's figure."""
    chains: dict[tuple[str, str], list[AccountsCell]] = {}
    for cell in by_accounts:
        chains.setdefault((cell.dataset, cell.defense), []).append(cell)
    lines = []
    for (dataset, defense), cells in chains.items():
        figures = [c.label_accuracy for c in cells]
        if len(set(figures)) < 2:
            continue
        parts = [
            f"{c.accounts:,} account{'s' if c.accounts > 1 else ''}: "
            + (c.failure or "failed" if c.label_accuracy is None else f"{100 * c.label_accuracy:.1f} %")
            for c in cells
        ]
        majority = "–" if cells[0].majority_rate is None else f"{100 * cells[0].majority_rate:.1f} %"
        lines.append(f"{dataset} · `{defense}`: " + ", ".join(parts) + f" ({majority})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=str(ROOT / "games" / "files" / "standard.toml"))
    parser.add_argument("--out", default=str(ROOT / "var" / "games" / "standard"))
    parser.add_argument("--figures", default=str(FIGURES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-page", dest="page", action="store_false",
                        help=f"leave {RESULTS_PAGE.relative_to(ROOT)} as it is")
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="play only these seeds (a reduced run; the figures then say so)")
    parser.add_argument("--datasets", nargs="+", default=None,
                        help="play only these data sets (a reduced run; the figures then say so)")
    parser.add_argument("--budgets", type=int, nargs="+", default=None,
                        help="attacker budgets instead of the game's (a reduced run; the figures then say so)")
    parser.add_argument("--accounts", type=int, nargs="+", default=None,
                        help="attacker account counts instead of the game's (a reduced run; the figures then say so)")
    parser.add_argument("--keep", default=None,
                        help="also pickle the played game here (re-render a report without re-playing it)")
    parser.add_argument("--replay", default=None,
                        help="write the outputs of a game kept with --keep instead of playing one")
    args = parser.parse_args(argv)
    spec = load_game(args.game)
    if args.seeds:
        spec = dataclasses.replace(spec, seeds=list(args.seeds))
    if args.budgets:
        spec = dataclasses.replace(spec, budgets=sorted(set(args.budgets)))
    if args.accounts:
        spec = dataclasses.replace(spec, accounts=sorted(set(args.accounts)))
    if args.datasets:
        unknown = set(args.datasets) - {d.name for d in spec.datasets}
        if unknown:
            parser.error(f"unknown data set(s) {', '.join(sorted(unknown))}")
        spec = dataclasses.replace(spec, datasets=[d for d in spec.datasets if d.name in args.datasets])
    if args.replay:
        result = pickle.loads(Path(args.replay).read_bytes())  # our own file, written by --keep
        spec = result.game
    else:
        result = run_game(spec, progress=lambda line: print(line, file=sys.stderr, flush=True), jobs=args.jobs)
    if args.keep:
        Path(args.keep).write_bytes(pickle.dumps(result))
    paths = write_report(result, args.out)
    figures = Path(args.figures)
    figures.mkdir(parents=True, exist_ok=True)
    table = markdown_table(summarize(result.cells, result.game))
    cores = f"{args.jobs} worker process{'es' if args.jobs > 1 else ''}"
    (figures / "standard_game.md").write_text(
        f"Standard game (`games/files/standard.toml`, {result.mode}): {spec.n_cells} cells, "
        f"{result.seconds:.0f} s with {cores}. Regenerate: `python -m benchmarks.standard_game`.\n\n"
        + table,
        encoding="utf-8",
    )
    shutil.copyfile(paths["frontier_svg"], figures / "standard_game_frontier.svg")
    shutil.copyfile(paths["frontier_json"], figures / "standard_game_frontier.json")
    shutil.copyfile(paths["queries_png"], figures / "standard_game_queries.png")
    answer = answer_text(result)
    seeds = f"{len(spec.seeds)} seeds each" if len(spec.seeds) > 1 else f"seed {spec.seeds[0]} only: a reduced run"
    head = (
        f"{spec.n_cells} cells ({seeds}; attacker budgets "
        f"{', '.join(f'{b:,}' for b in spec.levels if b is not None) or 'uncapped'}; attacker accounts "
        f"{', '.join(f'{k:,}' for k in spec.account_levels)}, sharing each budget) in "
        f"{result.seconds:.0f} s with {cores}; "
    )

    def section(prefix: str) -> str:
        """The answer with its links relative to the page it lands in (``prefix``: that page to the figures)."""
        return (
            head + f"the full table is [every cell]({prefix}standard_game.md), the frontier's figures "
            f"[standard_game_frontier.json]({prefix}standard_game_frontier.json), the HTML report is served at "
            "`/games/standard/` after a run.\n\n" + answer
            + f"\n![privacy–utility frontier]({prefix}standard_game_frontier.svg)\n"
        )

    (figures / "standard_game_answer.md").write_text(section(""), encoding="utf-8")
    if args.page:
        prefix = Path(os.path.relpath(figures, RESULTS_PAGE.parent)).as_posix() + "/"
        splice_page(RESULTS_PAGE, section(prefix))
    print(answer, end="")
    print(f"\nreport: {paths['html']}; figures: {figures}/standard_game_*")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
