"""Play the standard game (``games/files/standard.toml``) and write the README's table and charts.

Writes ``docs/figures/standard_game.md`` (the summary table, Markdown), ``docs/figures/standard_game_frontier.png``
(privacy–utility frontier) and ``docs/figures/standard_game_queries.png`` (accuracy vs queries); the full report
(CSV, JSON, HTML) goes to ``--out``.

    .venv/bin/python -m benchmarks.standard_game [--jobs 2] [--out var/games/standard] [--game PATH]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from games import load_game, run_game
from games.report import defense_table, markdown_table, summarize, write_report

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
README_START = "<!-- standard-game:start -->"
README_END = "<!-- standard-game:end -->"


def splice_readme(readme: Path, section: str) -> None:
    """Replace the text between the README's standard-game markers with ``section``."""
    text = readme.read_text(encoding="utf-8")
    if README_START not in text or README_END not in text:
        raise SystemExit(f"{readme} has no {README_START} ... {README_END} markers")
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    readme.write_text(f"{head}{README_START}\n{section}{README_END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=str(ROOT / "games" / "files" / "standard.toml"))
    parser.add_argument("--out", default=str(ROOT / "var" / "games" / "standard"))
    parser.add_argument("--figures", default=str(FIGURES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-readme", dest="readme", action="store_false", help="leave README.md as it is")
    args = parser.parse_args(argv)
    spec = load_game(args.game)
    started = time.perf_counter()
    result = run_game(spec, progress=lambda line: print(line, file=sys.stderr, flush=True), jobs=args.jobs)
    paths = write_report(result, args.out)
    figures = Path(args.figures)
    figures.mkdir(parents=True, exist_ok=True)
    table = markdown_table(summarize(result.cells))
    cores = f"{args.jobs} worker process{'es' if args.jobs > 1 else ''}"
    (figures / "standard_game.md").write_text(
        f"Standard game (`games/files/standard.toml`, {result.mode}): {spec.n_cells} cells, "
        f"{time.perf_counter() - started:.0f} s with {cores}. Regenerate: `python -m benchmarks.standard_game`.\n\n"
        + table,
        encoding="utf-8",
    )
    shutil.copyfile(paths["frontier_png"], figures / "standard_game_frontier.png")
    shutil.copyfile(paths["queries_png"], figures / "standard_game_queries.png")
    by_defense = defense_table(summarize(result.cells))
    if args.readme:
        splice_readme(
            ROOT / "README.md",
            f"{spec.n_cells} cells ({len(spec.seeds)} seeds each) in {time.perf_counter() - started:.0f} s; "
            "the full table is [docs/figures/standard_game.md](docs/figures/standard_game.md), "
            "the HTML report is served at `/games/standard/` after a run.\n\n" + by_defense
            + "\n![privacy–utility frontier](docs/figures/standard_game_frontier.png)\n",
        )
    print(by_defense, end="")
    print(f"\nreport: {paths['html']}; figures: {figures}/standard_game_*")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
