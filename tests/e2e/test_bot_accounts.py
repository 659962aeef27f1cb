"""End to end: the bot with several tokens against a live stack (gunicorn + a real Celery worker + the real Redis +
a fresh PostgreSQL database), driven only through its command line and the public REST API.

A 120-row competition with a 30 % public split behind the parameter-free Ladder: with one token the Ladder
withholds every query that does not improve and the bot vouches for no label; with 30 participants' tokens in a
file, each account's first submission is released and the bot reads every public label. The 30-token run is
killed part-way and resumed from its checkpoint, which records the account of every query.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attacks.plan import load_attacks
from tests.e2e.bot_support import REPO, LiveStack, fresh_postgres, live_stack, redis_available

pytestmark = pytest.mark.e2e

N_ROWS = 120
PUBLIC = 0.3
LABELS = np.random.default_rng(20261128).integers(0, 2, N_ROWS)
LADDER = [{"name": "ladder", "mode": "parameter_free"}]
ACCOUNTS = 30
BUDGET = 25


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveStack]:
    if not redis_available():
        pytest.fail("the bot's end-to-end tests need Redis at 127.0.0.1:6379")
    load_attacks()
    with fresh_postgres("lbl_bot_accounts") as database_url, \
            live_stack(tmp_path_factory.mktemp("bot-accounts"), database_url=database_url) as live:
        yield live


def _argv(stack: LiveStack, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "bot", "--url", stack.url, "--competition", "bot-sybil", "--json", str(out),
            "--no-progress", "--budget", str(BUDGET), *extra]


def _bot(stack: LiveStack, out: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(_argv(stack, out, *extra), cwd=REPO, env=stack.env, capture_output=True, text=True,
                          timeout=300)
    summary = json.loads(out.read_text()) if out.exists() else {}
    return done.returncode, summary, done.stdout + done.stderr


def _answered(checkpoint: Path) -> list[dict[str, Any]]:
    """Every answered query of a checkpoint, in order (not the "posted" lines of accepted uploads)."""
    records = [json.loads(line) for line in checkpoint.read_text().splitlines()[1:] if line.endswith("}")]
    return [r for r in records if r["kind"] != "posted"]


def _killed_after(stack: LiveStack, out: Path, checkpoint: Path, answers: int, *extra: str) -> None:
    """Run the bot and kill it (no chance to clean up) once its checkpoint holds ``answers`` answered queries."""
    process = subprocess.Popen(_argv(stack, out, *extra), cwd=REPO, env=stack.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if checkpoint.exists() and len(_answered(checkpoint)) >= answers:
                break
            time.sleep(0.01)
        process.kill()
    finally:
        process.wait()


def _exact(summary: dict[str, Any]) -> dict[int, int]:
    """The labels the bot vouches for: every label it submitted that carries no confidence below 1."""
    return {int(key[1:]): label for key, label in summary["labels"].items() if key not in summary["confidence"]}


def _final_raw_public(stack: LiveStack, username: str) -> float:
    """The host's raw public score of ``username``'s last submission (the bot's final one)."""
    mine = [s for s in stack.host.host_submissions("bot-sybil") if s.participant == username]
    final = max(mine, key=lambda s: s.id)
    assert final.raw_public is not None
    return final.raw_public


def test_several_tokens_read_public_labels_one_token_cannot_and_resume_by_account(
    stack: LiveStack, tmp_path: Path
) -> None:
    stack.competition("bot-sybil", LABELS, decimals=5, public_fraction=PUBLIC, defenses=LADDER)
    n_public = round(PUBLIC * N_ROWS)

    solo_token = stack.participant("sybil-solo")
    code, solo, output = _bot(stack, tmp_path / "solo" / "summary.json", "--token", solo_token)
    assert code == 0, output + stack.logs()
    assert solo["accounts"] == 1 and solo["accounts_used"] == 1 and "playing 1 account" in output

    tokens = [stack.participant(f"sybil-{i:02d}") for i in range(ACCOUNTS)]
    token_file = tmp_path / "tokens.txt"
    token_file.write_text("# the sybils\n" + "\n".join(tokens) + "\n\n")
    out = tmp_path / "sybils" / "summary.json"
    checkpoint = out.with_name("summary.checkpoint.jsonl")
    _killed_after(stack, out, checkpoint, 8, "--token-file", str(token_file))
    answered = _answered(checkpoint)
    assert json.loads(checkpoint.read_text().splitlines()[0])["accounts"] == ACCOUNTS
    assert len(answered) >= 8 and len({r.get("account", 0) for r in answered}) > 2  # each line names its account

    code, sybils, output = _bot(stack, out, "--token-file", str(token_file))
    assert code == 0, output + stack.logs()
    assert "playing 30 accounts" in output and sybils["accounts"] == ACCOUNTS
    assert sybils["attack"] == "fresh_accounts", sybils["reasoning"]
    assert sybils["replayed"] >= len(answered) - 1  # a line torn by the kill is asked again
    # Nothing submitted twice (an upload accepted before the kill is polled, unless the kill tore its line).
    assert stack.submissions_count("bot-sybil") - solo["queries"] - sybils["queries"] in (0, 1)
    made_by = {s.participant for s in stack.host.host_submissions("bot-sybil")} - {"sybil-solo"}
    assert len(made_by) == sybils["accounts_used"] > 2
    assert f"from {sybils['accounts_used']} of 30 accounts" in output

    # Every public label read, and only those vouched for: the final submission (made by the first token) stakes
    # them at 1 - 1e-15 and the rest at its posterior; one wrong public label alone would cost ln(10) / 36.
    read, alone = _exact(sybils), _exact(solo)
    assert len(read) == n_public and all(LABELS[row] == label for row, label in read.items())
    assert len(alone) < len(read) and set(read) - set(alone)
    assert _final_raw_public(stack, "sybil-00") < math.log(10) / n_public < _final_raw_public(stack, "sybil-solo")

    # No token is printed or written anywhere the bot writes.
    written = output + out.read_text() + checkpoint.read_text()
    assert not any(token in written for token in [solo_token, *tokens])


def test_thirty_tokens_read_no_more_than_the_majority_behind_a_competition_scoped_ladder(
    stack: LiveStack, tmp_path: Path
) -> None:
    """The same attack on a board whose Ladder is one for the whole competition: a new account's first submission
    meets the board's best, so the fresh accounts buy nothing and the bot vouches for no label."""
    stack.competition("board-ladder", LABELS, decimals=5, public_fraction=PUBLIC,
                      defenses=[{**LADDER[0], "scope": "competition"}])
    tokens = [stack.participant(f"board-sybil-{i:02d}") for i in range(ACCOUNTS)]
    token_file = tmp_path / "tokens.txt"
    token_file.write_text("\n".join(tokens) + "\n")
    out = tmp_path / "board" / "summary.json"
    argv = [sys.executable, "-m", "bot", "--url", stack.url, "--competition", "board-ladder", "--json", str(out),
            "--no-progress", "--budget", str(BUDGET), "--token-file", str(token_file)]
    done = subprocess.run(argv, cwd=REPO, env=stack.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr + stack.logs()
    summary = json.loads(out.read_text())
    assert _exact(summary) == {}, summary["reasoning"]
    by_row = {int(key[1:]): label for key, label in summary["labels"].items()}
    assert len(by_row) == N_ROWS  # every row guessed, none vouched for
    guessed = np.array([by_row[i] for i in range(N_ROWS)])
    majority = max(float(LABELS.mean()), 1 - float(LABELS.mean()))
    assert float(np.mean(guessed == LABELS)) <= majority + 0.02, summary["reasoning"]
