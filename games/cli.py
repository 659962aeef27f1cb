"""``leaderboard-game run GAMEFILE --out DIR [--mode offline] [--backend local|celery]``: play a game and write
its report; ``leaderboard-game clean --url URL``: remove what live games left on a site."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from games.distributed import run_units
from games.executors import BackendError, make_executor
from games.gamefile import GameFileError, GameSpec, load_game
from games.journal import FILENAME, Journal
from games.progress import ProgressBar
from games.report import write_report
from games.runner import GameResult, run_game
from games.terminal import compact_table, frontier_of, recommendation_lines

GAMES = Path(__file__).resolve().parent / "files"


def resolve_gamefile(name: str) -> Path:
    """A path as given, or the name of a shipped game (``quick``, ``standard``, …) in ``games/files``."""
    path = Path(name)
    shipped = GAMES / (name if name.endswith(".toml") else f"{name}.toml")
    return shipped if not path.exists() and shipped.exists() else path


def shipped_games() -> list[str]:
    """The names of the game files shipped in ``games/files``, read from the folder so the help never omits one."""
    return sorted(path.stem for path in GAMES.glob("*.toml"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="leaderboard-game", description="Attacker-vs-defender games on a simulated leaderboard."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="play every cell of a game file and write CSV, JSON, PNG and HTML")
    run.add_argument(
        "gamefile", help=f"the game file (TOML), or the name of a shipped game: {', '.join(shipped_games())}"
    )
    run.add_argument("--out", required=True, help="directory for the report (created if needed)")
    run.add_argument(
        "--mode", choices=("offline", "live"), default="offline",
        help="offline: LocalOracle in process (default); live: the attacker plays a running site over HTTP",
    )
    run.add_argument(
        "--url", default=None,
        help="live mode: the site to play, any Leaderboard Lab site over HTTP (needs --host-token); default: start "
        "a site of our own",
    )
    run.add_argument(
        "--host-token", default=None,
        help="live mode with --url: an API token allowed to create competitions and participants on that site (a "
        "staff account's; e.g. from manage.py create_participant --staff NAME there); default: the environment "
        "variable LEADERBOARD_HOST_TOKEN",
    )
    run.add_argument("--jobs", type=int, default=1, help="worker processes (default 1; results do not depend on it)")
    run.add_argument(
        "--backend", default="local",
        help="offline mode: where the cells run: local (this machine, --jobs processes; default) or celery (as "
        "tasks to the site's Celery workers, on any machine sharing the broker). Results do not depend on it",
    )
    run.add_argument("--broker", default=None,
                     help="celery backend: the site's broker URL (default: the environment variable REDIS_URL, else "
                     "redis://127.0.0.1:6379/0)")
    run.add_argument("--queue", default=None,
                     help="celery backend: the queue the workers consume (default: LEADERBOARD_CELERY_QUEUE, else "
                     "the site's 'leaderboard')")
    run.add_argument("--chunk", type=int, default=1,
                     help="celery backend: cells per task (default 1); more pays the broker's per-task cost (a few "
                     "ms) once for several fast cells, at the price of a coarser spread")
    run.add_argument(
        "--resume", action="store_true",
        help="keep a journal of finished cells in --out (journal.jsonl) and do not play them again: after an "
        "interruption, or when the game grew (more seeds, attacks, defenses); always on with a backend but local",
    )
    run.add_argument("--fresh", action="store_true", help="discard the journal in --out and play every cell")
    run.add_argument("--quiet", action="store_true", help="print only the summary table")
    check = sub.add_parser("check", help="validate a game file without running it")
    check.add_argument("gamefile")
    clean = sub.add_parser(
        "clean", help="remove the competitions live games made on a site (unlisted game-…), with their submissions "
        "and attacker accounts",
    )
    clean.add_argument("--url", required=True, help="the site")
    clean.add_argument("--host-token", default=None,
                       help="the host's API token (the one the games ran with); default: LEADERBOARD_HOST_TOKEN")
    clean.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    return parser


def clean(args: argparse.Namespace) -> int:
    """``leaderboard-game clean``: the site removes this host's game competitions; prints what went."""
    from bot.client import ClientError, LeaderboardClient

    token = args.host_token or os.environ.get("LEADERBOARD_HOST_TOKEN", "")
    if not token:
        print("leaderboard-game: clean needs the host token the games ran with: --host-token TOKEN or the "
              "environment variable LEADERBOARD_HOST_TOKEN", file=sys.stderr)
        return 2
    try:
        with LeaderboardClient(args.url.rstrip("/"), token) as client:
            done = client.clean_games(dry_run=args.dry_run)
    except ClientError as exc:
        print(f"leaderboard-game: {exc}", file=sys.stderr)
        return 1
    for slug in done.get("competitions") or []:
        print(f"  {slug}")
    print(done.get("summary", ""))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``leaderboard-game`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "clean":
        return clean(args)
    try:
        spec = load_game(resolve_gamefile(args.gamefile))
    except GameFileError as exc:
        print(f"leaderboard-game: {exc}", file=sys.stderr)
        return 2
    if args.command == "check":
        print(f"{args.gamefile}: OK, {spec.n_cells} cells")
        return 0
    progress = None if args.quiet else (lambda message: print(message, file=sys.stderr, flush=True))
    host_token = args.host_token or os.environ.get("LEADERBOARD_HOST_TOKEN", "")
    if args.mode == "live" and args.url and not host_token:
        print("leaderboard-game: --mode live --url needs a host token: --host-token TOKEN or the environment "
              "variable LEADERBOARD_HOST_TOKEN (an API token allowed to create competitions on that site)",
              file=sys.stderr)
        return 2
    if args.mode == "live" and (args.backend != "local" or args.resume or args.fresh):
        print("leaderboard-game: --backend, --resume and --fresh apply to offline games (a live game's cells play "
              "against the site one by one)", file=sys.stderr)
        return 2
    journaled = args.mode != "live" and (args.backend != "local" or args.resume or args.fresh)
    try:
        if args.mode == "live":
            from games.live import LiveSite, local_site

            with contextlib.ExitStack() as stack:
                site = LiveSite(args.url, host_token) if args.url else stack.enter_context(local_site())
                result = run_game(spec, progress=progress, site=site)
        elif journaled:
            result = _run_units(spec, args)
        else:
            result = run_game(spec, progress=progress, jobs=max(1, args.jobs))
    except GameFileError as exc:
        print(f"leaderboard-game: {exc}", file=sys.stderr)
        return 2
    except BackendError as exc:
        print(f"leaderboard-game: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if journaled:
            print(f"\nleaderboard-game: interrupted; the finished cells are in {Path(args.out) / FILENAME}: run the "
                  "same command again to play only the others", file=sys.stderr)
        else:
            print("\nleaderboard-game: interrupted (with --resume a run keeps its finished cells)", file=sys.stderr)
        return 130
    paths = write_report(result, args.out)
    points, recommended = frontier_of(result)
    print(compact_table(points, recommended), end="")
    print("\n" + "\n".join(recommendation_lines(points, recommended)))
    print(f"\n{len(result.cells)} cells ({result.mode}) in {result.seconds:.1f} s.")
    print(f"Every attack, every column: {paths['summary_md']}")
    print(f"Report: {paths['html']}")
    return 0


def _run_units(spec: GameSpec, args: argparse.Namespace) -> GameResult:
    """The game as units on the chosen backend, journaled in ``--out`` (see :mod:`games.distributed`)."""
    options: dict[str, Any] = {"jobs": max(1, args.jobs)}
    if args.backend != "local":
        options.update({key: value for key, value in (("broker", args.broker), ("queue", args.queue)) if value})
        options["chunk"] = max(1, args.chunk)

    def bar(total: int, resumed: int, what: str) -> ProgressBar:
        return ProgressBar(total, resumed=resumed, what=what)

    executor = make_executor(args.backend, **options)
    try:
        with Journal(Path(args.out) / FILENAME, fresh=args.fresh) as journal:
            return run_units(spec, executor, journal=journal, bar=None if args.quiet else bar)
    finally:
        executor.close()


if __name__ == "__main__":
    raise SystemExit(main())
