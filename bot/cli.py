"""``leaderboard-bot``: point the bundled attacker at a live competition and see what leaks.

    leaderboard-bot --url URL --competition SLUG [--token-file PATH | --token TOKEN ...] [--attack NAME]
                    [--budget Q] [--json PATH]      (one token also from $LEADERBOARD_TOKEN)
                    [--param KEY=VALUE ...] [--on-quota wait|stop] [--checkpoint PATH] [--restart]
                    [--fingerprint-budget F] [--seed S] [--upload json|csv] [--window N] [--no-progress]

Steps: read the metadata and sample submission (:class:`~bot.http_oracle.HttpOracle`, on the one HTTP client
:class:`~bot.client.LeaderboardClient`); run ``attacks.run("auto", …)`` — fingerprint the board, pick the
strongest applicable attack (or the one ``--attack`` names) and play it within ``--budget`` (one submission
kept for the final one), never below the majority class — checkpointing every query (:mod:`bot.checkpoint`)
so an interrupted run resumes without re-submitting; independent queries (an attack's round) go out up to
``--window`` at a time, answered and checkpointed in order, so the queries and labels are those of a
one-at-a-time run (``--window 1``); submit the recovered labels as a prediction staking each
row's confidence (exact labels at ``1 - 1e-15``); write the JSON summary, with ``auto``'s reasoning.
On a model competition ``auto`` is ``mutnet`` (:mod:`attacks.mutnet.attack`): every query an honest public-data
model under the Mutator Network head, labels keyed by rank or feature fingerprint (``--param key=hash``), and
the final submission the follow-up model that looks them up.

Several accounts: ``--token`` repeated, or a ``--token-file`` of one token per line, gives the bot one account per
token (``HttpOracle``'s ``accounts``; the first token's is the main one, which makes the final submission);
``auto`` then plays them as it plays ``LocalOracle(accounts=k)`` — e.g. one submission per fresh account behind a
Ladder (``fresh_accounts``) — and the checkpoint records which account made each query. Tokens are never
printed or written; the bot prints how many accounts it plays. With ``--team NAME`` every token's account joins the
team (the first creates or joins it, the others are invited and accept; refused before any change when it cannot
be done: :func:`bot.teams.team_steps_for_tokens`) — a team has one quota, so the accounts then share it.

Exit status: 0 done; 1 error (message on stderr); 75 (``EX_TEMPFAIL``) stopped early — quota reached with
``--on-quota stop`` or ``--budget`` used up before the attack finished — with a checkpoint from which the
same command resumes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from attacks.confirm import confident_predictions
from attacks.fingerprint import DEFAULT_BUDGET
from attacks.registry import run
from attacks.result import AttackFailed
from bot.checkpoint import BudgetExhausted, Checkpoint, CheckpointMismatch, ReplayOracle, new_header
from bot.client import ClientError, LeaderboardClient, QuotaExceeded
from bot.http_oracle import DEFAULT_WINDOW, HttpOracle
from bot.teams import team_steps_for_tokens

EXIT_STOPPED = 75
#: Confidence of the final submission: at the default clipping eps = 1e-15 a right label costs ~1e-15.
CONFIDENT = 1e-15


#: The environment variable a token may come from (a command line is visible to every user's ``ps``).
TOKEN_ENV = "LEADERBOARD_TOKEN"


def resolve_tokens(args: argparse.Namespace) -> list[str]:
    """The API tokens, one per account, in order: every ``--token``, else the lines of ``--token-file``
    (:func:`read_token_file`), else ``$LEADERBOARD_TOKEN`` (one token). A token given twice is refused: two
    accounts would be one participant. Error messages name positions, never a token."""
    if args.token:
        tokens = [str(token).strip() for token in args.token]
        first: dict[str, int] = {}
        for position, token in enumerate(tokens, start=1):
            if not token:
                raise ValueError(f"--token number {position} is empty")
            if token in first:
                raise ValueError(f"--token number {position} repeats --token number {first[token]}: each account "
                                 "needs a token of its own")
            first[token] = position
        return tokens
    if args.token_file is not None:
        return read_token_file(args.token_file)
    if os.environ.get(TOKEN_ENV, "").strip():
        return [os.environ[TOKEN_ENV].strip()]
    raise ValueError(f"no API token: pass --token-file PATH, set {TOKEN_ENV}, or pass --token")


def read_token_file(path: Path) -> list[str]:
    r"""The tokens of a token file: one per line, surrounding spaces stripped; blank lines and lines starting with
    ``#`` are ignored. A line of several words or a token repeated on a later line is refused, naming the lines.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "tokens"
    >>> _ = path.write_text("# bot accounts\nabc\n\n  def  \n")
    >>> read_token_file(path)
    ['abc', 'def']
    >>> _ = path.write_text("abc\ndef\nabc\n")
    >>> read_token_file(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: line 3 of the token file ... repeats the token of line 1: each account needs a token of its own
    """
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read the token file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ValueError(f"the token file {path} is not text: one token per line") from None
    tokens: list[str] = []
    first: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        token = line.strip()
        if not token or token.startswith("#"):
            continue
        if len(token.split()) > 1:
            raise ValueError(f"line {number} of the token file {path} holds more than one word: one token per line")
        if token in first:
            raise ValueError(f"line {number} of the token file {path} repeats the token of line {first[token]}: "
                             "each account needs a token of its own")
        first[token] = number
        tokens.append(token)
    if not tokens:
        raise ValueError(f"the token file {path} is empty: one token per line (blank lines and # comments are "
                         "ignored)")
    return tokens


def parse_params(pairs: list[str] | None) -> dict[str, Any]:
    """``["budget=100", "accept=improvement", "noise_bound=1e-4"]`` → typed values (JSON where it parses).

    >>> parse_params(["budget=100", "accept=improvement", "check=false", "scale=1e-4"])
    {'budget': 100, 'accept': 'improvement', 'check': False, 'scale': 0.0001}
    """
    params: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param expects key=value, got {pair!r}")
        try:
            params[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            params[key.strip()] = text
    return params


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="leaderboard-bot",
        description="Fingerprint a live competition through its REST API, run the strongest applicable label-"
        "inference attack, submit the recovered labels and write a JSON summary.",
    )
    parser.add_argument("--url", required=True, help="the site's base URL, e.g. http://127.0.0.1:8000")
    parser.add_argument("--competition", required=True, help="the competition's slug")
    parser.add_argument("--token", action="append", default=None,
                        help="a participant's API token; repeat it to play several accounts, one per token "
                        f"(visible to `ps`: prefer --token-file or ${TOKEN_ENV})")
    parser.add_argument("--token-file", type=Path, default=None, metavar="PATH",
                        help="read the API tokens from this file, one per line, an account each (blank lines and "
                        "# comments ignored; used when no --token is given)")
    parser.add_argument("--attack", default="auto",
                        help="auto (default: the strongest attack the fingerprint allows) or an attack to force, "
                        "played after the fingerprint; mutnet (what auto plays on a model competition) carries "
                        "every query in a MutNet model (--param key=hash: rows keyed by a feature hash)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="an attack parameter (repeatable); values are read as JSON when they parse")
    parser.add_argument("--budget", type=int, default=None, metavar="Q",
                        help="at most Q submissions in total (probes, attack and final submission)")
    parser.add_argument("--fingerprint-budget", type=int, default=DEFAULT_BUDGET, metavar="F",
                        help=f"at most F probe submissions for the fingerprint (default {DEFAULT_BUDGET}; 0 = none)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the summary here")
    parser.add_argument("--checkpoint", type=Path, default=None, metavar="PATH",
                        help="checkpoint file, or a directory for <slug>.checkpoint.jsonl (default: next to "
                        "--json, else the current directory)")
    parser.add_argument("--restart", action="store_true", help="discard an existing checkpoint and start over")
    parser.add_argument("--on-quota", choices=("wait", "stop"), default="wait",
                        help="over quota: wait for the UTC reset (default) or stop with a resumable checkpoint")
    parser.add_argument("--upload", choices=("json", "csv"), default="csv",
                        help="upload format: csv (default; the site parses it fastest) or json (a positional list); "
                        "either is retried safely under one Idempotency-Key")
    parser.add_argument("--window", type=_positive, default=DEFAULT_WINDOW, metavar="N",
                        help=f"at most N submissions in flight at once (default {DEFAULT_WINDOW}; 1 = one at a time); "
                        "never more than the quota left, and the same queries and labels whatever N")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    parser.add_argument("--no-final", action="store_true", help="do not submit the recovered labels at the end")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    teams = parser.add_argument_group("teams", "done before the attack, with every token's account")
    teams.add_argument("--team", default=None, metavar="NAME",
                       help="be in team NAME: create it, accept its pending invitation, or use it if already in it; "
                       "with several tokens the first does this and every other token's account is invited and "
                       "accepts (all of them then share the team's one quota)")
    teams.add_argument("--invite", action="append", default=[], metavar="USERNAME",
                       help="invite USERNAME to the --team (repeatable)")
    teams.add_argument("--team-only", action="store_true", help="do the team steps, then stop (no attack)")
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def checkpoint_path(args: argparse.Namespace) -> Path:
    name = f"{args.competition}.checkpoint.jsonl"
    if args.checkpoint is not None:
        return args.checkpoint / name if args.checkpoint.is_dir() else args.checkpoint
    if args.json is not None:
        return args.json.with_name(args.json.stem + ".checkpoint.jsonl")
    return Path.cwd() / f"leaderboard-bot-{name}"


class Progress:
    """A tqdm bar over submissions: replayed (from the checkpoint) and fresh ones, and quota waits."""

    def __init__(self, *, total: int | None, disable: bool) -> None:
        self.bar = tqdm(total=total, unit="q", desc="leaderboard-bot", disable=disable, dynamic_ncols=True)
        self.replayed = 0
        self.fresh = 0

    def query(self, replayed: bool) -> None:
        if replayed:
            self.replayed += 1
        else:
            self.fresh += 1
        self.bar.update(1)
        if (self.replayed + self.fresh) % 25 == 0:
            self.bar.set_postfix(fresh=self.fresh, replayed=self.replayed, refresh=False)

    def phase(self, text: str) -> None:
        self.bar.set_description(f"leaderboard-bot [{text}]")

    def wait(self, seconds: float, reason: str) -> None:
        self.bar.write(f"leaderboard-bot: {reason}; waiting {seconds:.0f} s for the quota to reset")

    def close(self) -> None:
        self.bar.close()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        params = parse_params(args.param)
        args.tokens = resolve_tokens(args)
    except ValueError as exc:
        print(f"leaderboard-bot: {exc}", file=sys.stderr)
        return 2
    if (args.invite or args.team_only) and not args.team:
        print("leaderboard-bot: --invite and --team-only need --team NAME", file=sys.stderr)
        return 2
    if args.team:
        try:
            with contextlib.ExitStack() as opened:
                clients = [opened.enter_context(LeaderboardClient(args.url, token)) for token in args.tokens]
                steps = team_steps_for_tokens(clients, args.competition, args.team, args.invite)
        except ClientError as exc:
            print(f"leaderboard-bot: team {args.team!r}: {exc.detail}", file=sys.stderr)
            return 1
        invited = f"; invited: {', '.join(steps.invited)}" if steps.invited else ""
        accounts = f"; accounts: {', '.join(steps.accounts)}" if steps.accounts else ""
        print(f"leaderboard-bot: team {steps.team.name!r} {steps.action} (members: {', '.join(steps.team.members)})"
              f"{invited}{accounts}", file=sys.stderr)
        if args.team_only:
            if args.json is not None:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps({"competition": args.competition, "url": args.url, "status": "team",
                                                 "team": steps.summary()}, indent=2) + "\n")
            return 0
    started = time.perf_counter()
    progress = Progress(total=args.budget, disable=args.no_progress)
    summary: dict[str, Any] = {"competition": args.competition, "url": args.url, "status": "error"}
    code = 1
    try:
        code = _run(args, params, progress, summary, started)
    except QuotaExceeded as exc:
        summary.update(status="stopped", stop_reason=f"quota: {exc.message}",
                       resets_at=exc.resets_at.isoformat() if exc.resets_at else None)
        print(f"leaderboard-bot: stopped, over quota: {exc.message}. "
              f"Run the same command again to resume from {summary.get('checkpoint')}.", file=sys.stderr)
        code = EXIT_STOPPED
    except BudgetExhausted as exc:
        summary.update(status="stopped", stop_reason=f"budget: {exc}")
        print(f"leaderboard-bot: stopped, {exc}. Run again with a larger --budget to resume from "
              f"{summary.get('checkpoint')}.", file=sys.stderr)
        code = EXIT_STOPPED
    except (AttackFailed, ClientError, CheckpointMismatch, ValueError) as exc:
        summary.update(status="error", error=f"{type(exc).__name__}: {exc}")
        print(f"leaderboard-bot: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 1
    finally:
        progress.close()
        oracle = summary.pop("_oracle", None)
        if isinstance(oracle, ReplayOracle):
            oracle.checkpoint.close()
            summary.setdefault("queries", oracle.queries)
            summary.update(replayed=oracle.replayed, fresh=oracle.fresh,
                           accounts_used=sum(1 for count in oracle.queries_by_account if count))
            inner = oracle.inner
            if isinstance(inner, HttpOracle):
                summary["http"] = vars(inner.stats)
        summary["seconds"] = time.perf_counter() - started
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(summary, indent=2, default=_json_default) + "\n")
    return code


def _run(
    args: argparse.Namespace, params: dict[str, Any], progress: Progress, summary: dict[str, Any], started: float
) -> int:
    progress.phase("metadata")
    server = HttpOracle(args.url, args.competition, args.tokens, on_quota=args.on_quota, upload=args.upload,
                        on_wait=progress.wait, window=args.window)
    path = checkpoint_path(args)
    checkpoint = Checkpoint.open(
        path, new_header(args.competition, server.n_rows, args.url, attack=args.attack, params=params, seed=args.seed,
                         accounts=server.accounts),
        restart=args.restart,
    )
    oracle = ReplayOracle(server, checkpoint, budget=args.budget, on_query=progress.query)
    summary.update(_oracle=oracle, checkpoint=str(path), n_rows=server.n_rows, metric=server.metric,
                   window=args.window, accounts=server.accounts)
    each = ", one per token" if server.accounts > 1 else ""
    progress.bar.write(f"leaderboard-bot: playing {_accounts(server.accounts)}{each}")
    if checkpoint.entries:
        progress.bar.write(f"leaderboard-bot: resuming from {path} ({len(checkpoint.entries)} answered queries)")

    progress.phase("auto")
    forced = None if args.attack in (None, "auto") else args.attack
    result = run(
        "auto", oracle, budget=args.budget, reserve=0 if args.no_final else 1,
        fingerprint_budget=args.fingerprint_budget, seed=args.seed, attack=forced, params=params or None,
    )
    details = result.details
    course = result.course
    assert course is not None, "auto returns its course"
    confidence = result.fill_confidence()
    carrier = details.pop("carrier", None)  # on a model competition: the MutNet ModelOracle (attacks.mutnet)
    # ids; on a model competition, the MutNet head's keys (ranks in its feature order, or feature fingerprints)
    names = server.row_names if carrier is None else carrier.row_names
    summary.update(
        fingerprint=course.fingerprint,
        attack=course.attack if carrier is None else "mutnet",
        fallback=course.fallback,
        params=course.plan_params,
        reason=course.plan_reason,
        reasoning=course.reasoning,
        mutnet=details.get("mutnet"),
        attack_queries=course.attack_queries,
        attack_seconds=result.seconds,
        details=course.attack_details,
        recovered=result.exact,
        guessed=course.guessed,
        labels={names[i]: int(y) for i, y in enumerate(result.labels.tolist()) if y >= 0},
        confidence={names[i]: round(float(confidence[i]), 6) for i in range(len(names))
                    if result.labels[i] >= 0 and confidence[i] < 1.0},
    )
    if course.cut_by_budget:
        raise BudgetExhausted(f"the query budget of {args.budget} ran out before {course.attack} finished")

    if not args.no_final:
        progress.phase("final")
        oracle.account = 0  # the main account (the first token) makes the final submission
        final: Any = confident_predictions(result.labels, server.n_classes, confidence, eps=CONFIDENT)
        if carrier is not None:
            # The follow-up model: the exact labels looked up by key, the honest base's prediction elsewhere.
            final = carrier.follow_up(result.labels, confidence)
        released = oracle.submit(final)
        summary.update(final_public_score=None if released is None else float(released),
                       final_public_score_text=oracle.last_released_text)
    used = sum(1 for count in oracle.queries_by_account if count)
    summary.update(status="complete", queries=oracle.queries, seconds=time.perf_counter() - started)
    progress.close()
    guessed = f" (+{course.guessed} guessed)" if course.guessed else ""
    played = course.attack if carrier is None else f"mutnet ({course.attack} through models)"
    accounts = f" from {used} of {_accounts(server.accounts)}" if server.accounts > 1 else ""
    print(
        f"leaderboard-bot: {played} recovered {result.exact}/{server.n_rows} labels{guessed} in "
        f"{oracle.queries} submissions{accounts} ({course.fingerprint_queries} fingerprint + "
        f"{course.attack_queries} attack{'' if args.no_final else ' + 1 final'}; {oracle.replayed} replayed from "
        f"the checkpoint) in {time.perf_counter() - started:.1f} s; final public score "
        f"{summary.get('final_public_score_text')}"
    )
    return 0


def _accounts(count: int) -> str:
    """``1 account``, ``30 accounts``."""
    return f"{count} account{'' if count == 1 else 's'}"


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
