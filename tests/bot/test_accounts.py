"""The bot with several accounts: tokens from the command line or a file, ``HttpOracle``'s ``accounts``/``account``
against a fake site whose participants each have their own Ladder (the real scoring core:
``LocalOracle(accounts=k)`` behind real HTTP), per-token quotas, and checkpoints that record and replay the account
of every query. The live site is in ``tests/e2e/test_bot_accounts.py``."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle, run
from bot.checkpoint import BudgetExhausted, Checkpoint, CheckpointMismatch, ReplayOracle, prediction_digest
from bot.cli import build_parser, main, read_token_file, resolve_tokens
from bot.client import PollSchedule, QuotaExceeded
from bot.http_oracle import HttpOracle, account_tokens
from tests.bot.support import JsonHandler, serving

SLUG = "sybil"
N = 120
PUBLIC = 0.3
SPLIT_SEED = 17
LABELS = np.random.default_rng(120).integers(0, 2, N)
LADDER = [{"name": "ladder", "mode": "parameter_free"}]
BASE = ["--url", "http://127.0.0.1:9", "--competition", SLUG]


def _tokens(k: int) -> list[str]:
    return [f"tok{i:03d}-{'x' * 20}" for i in range(k)]


def _board(accounts: int) -> LocalOracle:
    """The in-process twin of the fake site: the same labels, split and per-account Ladder."""
    return LocalOracle(LABELS, defenses=LADDER, public_fraction=PUBLIC, seed=SPLIT_SEED, accounts=accounts)


# --- tokens ---------------------------------------------------------------------------------------------------


def test_several_tokens_come_from_a_repeated_token_flag() -> None:
    args = build_parser().parse_args([*BASE, "--token", "a1", "--token", " b2 ", "--token", "c3"])
    assert resolve_tokens(args) == ["a1", "b2", "c3"]


def test_a_token_file_holds_one_token_per_line_and_ignores_blank_lines_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text("# the lab's bot accounts\n\nfirst\n  second  \n# retired: third\nfourth\n\n")
    assert read_token_file(path) == ["first", "second", "fourth"]
    args = build_parser().parse_args([*BASE, "--token-file", str(path)])
    assert resolve_tokens(args) == ["first", "second", "fourth"]


def test_one_token_still_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEADERBOARD_TOKEN", " env-token ")
    assert resolve_tokens(build_parser().parse_args(BASE)) == ["env-token"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("alpha\nbeta\nalpha\n", "line 3 of the token file .* repeats the token of line 1"),
        ("alpha beta\n", "line 1 of the token file .* holds more than one word"),
        ("# nothing but a comment\n\n", "is empty"),
    ],
)
def test_a_bad_token_file_is_refused_with_its_line_and_without_printing_a_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as caught:
        read_token_file(path)
    assert "alpha" not in str(caught.value) and "beta" not in str(caught.value)
    assert main([*BASE, "--token-file", str(path)]) == 2  # refused before anything is sent
    err = capsys.readouterr().err
    assert re.search(message, err) and "alpha" not in err


def test_a_token_given_twice_on_the_command_line_is_refused_without_printing_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*BASE, "--token", "s3cret", "--token", "other", "--token", "s3cret"]) == 2
    err = capsys.readouterr().err
    assert "--token number 3 repeats --token number 1" in err and "s3cret" not in err
    with pytest.raises(ValueError, match="token 2 repeats token 1"):
        account_tokens(["same", "same"])
    with pytest.raises(ValueError, match="at least one account"):
        account_tokens([])


# --- a fake site of several participants ----------------------------------------------------------------------


@dataclass
class SybilSite:
    """A site whose participants are ``tokens``: each upload is scored by ``board`` as the token's account (its own
    Ladder), as the real site keeps a defense's state per participant. ``daily_limit`` is per token; ``posts``
    lists the account of every accepted upload, ``refused`` the account of every 429."""

    tokens: list[str]
    daily_limit: int | None = None
    board: LocalOracle = field(init=False)
    released: dict[int, str] = field(default_factory=dict)
    posts: list[int] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)
    quota_asked: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.board = _board(len(self.tokens))

    def account(self, header: str | None) -> int:
        token = (header or "").removeprefix("Token ")
        assert token in self.tokens, "a request without a participant's token"
        return self.tokens.index(token)

    def used(self, account: int) -> int:
        return self.posts.count(account)

    def metadata(self) -> dict[str, Any]:
        return {"slug": SLUG, "n_rows": N, "n_classes": 2, "metric": "binary_logloss", "score_decimals": 5,
                "eps": 1e-15, "arithmetic": "float64", "public_fraction": PUBLIC, "daily_limit": self.daily_limit,
                "total_limit": None, "disclosed_defenses": ""}

    def quota(self, account: int) -> dict[str, Any]:
        left = None if self.daily_limit is None else self.daily_limit - self.used(account)
        return {"daily_limit": self.daily_limit, "used_today": self.used(account), "remaining_today": left,
                "total_limit": None, "used_total": self.used(account), "remaining_total": None,
                "resets_at": "2026-11-29T00:00:00Z"}


def _handler(site: SybilSite) -> type[JsonHandler]:
    class Handler(JsonHandler):
        disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms delayed-ACK stall

        def do_GET(self) -> None:
            account = site.account(self.headers["Authorization"])
            if self.path == f"/api/v1/competitions/{SLUG}/":
                return self._send(200, site.metadata())
            if self.path == f"/api/v1/competitions/{SLUG}/sample-submission/":
                return self._send(200, "id,target\n" + "".join(f"r{i:03d},0.5\n" for i in range(N)))
            if self.path == f"/api/v1/competitions/{SLUG}/quota/":
                with site.lock:
                    site.quota_asked.append(account)
                    return self._send(200, site.quota(account))
            match = re.fullmatch(r"/api/v1/submissions/(\d+)/", self.path)
            assert match, self.path
            with site.lock:
                text = site.released[int(match.group(1))]
            return self._send(200, {"id": int(match.group(1)), "status": "scored", "public_score_text": text})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            account = site.account(self.headers["Authorization"])
            with site.lock:
                if site.daily_limit is not None and site.used(account) >= site.daily_limit:
                    site.refused.append(account)
                    return self._send(429, {"detail": f"daily limit of {site.daily_limit} submissions reached",
                                            "resets_at": "2026-11-29T00:00:00Z"})
                site.board.account = account
                value = site.board.submit(body["predictions"])
                site.posts.append(account)
                site.released[len(site.posts)] = "" if value is None else f"{value:.5f}"
                return self._send(202, {"id": len(site.posts), "status": "queued"})

    return Handler


@pytest.fixture
def sybil() -> Iterator[tuple[SybilSite, str]]:
    fake = SybilSite(_tokens(30))
    with serving(_handler(fake)) as url:
        yield fake, url


def _oracle(url: str, tokens: str | Sequence[str], **kwargs: Any) -> HttpOracle:
    return HttpOracle(url, SLUG, tokens, upload="json",
                      poll=PollSchedule(initial=0.001, factor=1.5, maximum=0.01, timeout=30.0), **kwargs)


def test_each_submission_goes_with_the_token_of_the_current_account(sybil: tuple[SybilSite, str]) -> None:
    fake, url = sybil
    oracle = _oracle(url, fake.tokens[:4])
    assert (oracle.accounts, oracle.account, oracle.queries_by_account) == (4, 0, [0, 0, 0, 0])
    for account in (2, 0, 3, 2):
        oracle.account = account
        oracle.submit(np.full(N, 0.5))
    assert fake.posts == [2, 0, 3, 2]
    assert oracle.queries == 4 and oracle.queries_by_account == [1, 0, 2, 1]
    oracle.account = 4
    with pytest.raises(ValueError, match="account 4 does not exist: this board has 4 account"):
        oracle.submit(np.full(N, 0.5))
    assert len(fake.posts) == 4


def test_a_pipelined_batch_goes_with_the_current_accounts_token_and_quota(sybil: tuple[SybilSite, str]) -> None:
    fake, url = sybil
    fake.daily_limit = 50
    oracle = _oracle(url, fake.tokens[:3], window=4)
    oracle.account = 1
    vectors = [np.where(np.arange(N) == i, 0.9, 0.5) for i in range(6)]
    twin = _board(3)
    twin.account = 1
    assert oracle.submit_many(vectors) == twin.submit_many(vectors)
    assert fake.posts == [1] * 6 and set(fake.quota_asked) == {1}
    assert oracle.queries_by_account == [0, 6, 0]


def test_over_one_tokens_quota_the_stop_names_its_position_and_the_other_accounts_go_on(
    sybil: tuple[SybilSite, str],
) -> None:
    fake, url = sybil
    fake.daily_limit = 1
    oracle = _oracle(url, fake.tokens[:3], on_quota="stop")
    oracle.submit(np.full(N, 0.5))
    with pytest.raises(QuotaExceeded, match=r"token 1 of 3: daily limit of 1 submissions reached") as caught:
        oracle.submit(np.full(N, 0.4))
    assert fake.tokens[0] not in str(caught.value)
    oracle.account = 1  # another participant: its own quota
    oracle.submit(np.full(N, 0.4))
    assert fake.posts == [0, 1] and fake.refused == [0] and oracle.queries_by_account == [1, 1, 0]


def _exact(result: Any) -> np.ndarray:
    """Rows the attack vouches for (confidence 1)."""
    return np.asarray(result.fill_confidence() >= 1.0)


def test_auto_plays_several_tokens_live_as_it_plays_several_accounts_in_process(
    sybil: tuple[SybilSite, str],
) -> None:
    # A 30 % public split behind the parameter-free Ladder: one account reads no label exactly (the Ladder
    # withholds whatever does not improve), 30 accounts read every public one with a first release each.
    fake, url = sybil
    live = _oracle(url, fake.tokens)
    on_site = run("auto", live, budget=25, seed=0)
    in_process_board = _board(30)
    in_process = run("auto", in_process_board, budget=25, seed=0)
    assert on_site.course is not None and on_site.course.attack == "fresh_accounts"
    assert (on_site.labels == in_process.labels).all()
    assert live.queries_by_account == in_process_board.queries_by_account == [fake.posts.count(i) for i in range(30)]
    exact = _exact(on_site)
    public = in_process_board.spec.hidden.public_mask
    assert exact.sum() == public.sum() and (exact == public).all()
    assert (on_site.labels[exact] == LABELS[exact]).all()

    alone = run("auto", _oracle(url, fake.tokens[29]), budget=25, seed=0)  # the last token: an unused account
    assert _exact(alone).sum() < exact.sum()


# --- checkpoints with accounts ----------------------------------------------------------------------------------


def _header(accounts: int | None = None) -> dict[str, Any]:
    return {"competition": SLUG, "n_rows": N, **({} if accounts is None else {"accounts": accounts})}


def _records(path: Path) -> list[dict[str, Any]]:
    """Every answered query of a checkpoint (not the "posted" lines of accepted uploads), in order."""
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [r for r in records if r["kind"] != "posted"]


def test_a_checkpoint_records_each_querys_account_and_a_resumed_run_replays_it(
    sybil: tuple[SybilSite, str], tmp_path: Path
) -> None:
    fake, url = sybil
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_oracle(url, fake.tokens), Checkpoint.open(path, _header(30)), budget=8)
    with pytest.raises(BudgetExhausted):
        run("auto", first, seed=0)
    first.checkpoint.close()
    recorded = [r.get("account", 0) for r in _records(path)]
    assert recorded == fake.posts and len(set(recorded)) > 2  # several accounts, each line says which
    assert all(fake.tokens[0] not in line for line in path.read_text().splitlines())

    resumed_oracle = ReplayOracle(_oracle(url, fake.tokens), Checkpoint.open(path, _header(30)))
    resumed = run("auto", resumed_oracle, seed=0)
    resumed_oracle.checkpoint.close()
    assert resumed_oracle.replayed == 8 and len(fake.posts) == resumed.queries  # nothing submitted twice
    uninterrupted_board = _board(30)
    uninterrupted = run("auto", uninterrupted_board, seed=0)
    assert (resumed.labels == uninterrupted.labels).all() and resumed.queries == uninterrupted.queries
    assert resumed_oracle.queries_by_account == uninterrupted_board.queries_by_account
    assert [r.get("account", 0) for r in _records(path)] == fake.posts


def test_a_query_replayed_as_another_account_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(3), Checkpoint.open(path, _header(3)))
    first.account = 2
    first.submit(np.full(N, 0.5))
    first.checkpoint.close()
    assert _records(path)[0]["account"] == 2

    same = ReplayOracle(_board(3), Checkpoint.open(path, _header(3)))
    same.account = 2
    assert same.submit(np.full(N, 0.5)) is not None and same.replayed == 1 and same.inner.queries == 0
    other = ReplayOracle(_board(3), Checkpoint.open(path, _header(3)))
    with pytest.raises(CheckpointMismatch, match=r"query 1 was made as account 3 .* as account 1"):
        other.submit(np.full(N, 0.5))


def test_a_checkpoint_from_before_accounts_loads_as_the_first_account(tmp_path: Path) -> None:
    # The format written before accounts existed: no "accounts" in the header, no "account" on a line.
    board = _board(1)
    vectors = [np.full(N, 0.5), np.where(np.arange(N) < 3, 0.9, 0.5)]
    path = tmp_path / "old.checkpoint.jsonl"
    header = {"checkpoint": 1, "competition": SLUG, "n_rows": N, "url": "http://old", "attack": "auto"}
    lines: list[dict[str, Any]] = [header]
    for index, vector in enumerate(vectors):
        value = board.submit(vector)
        lines.append({"i": index, "sha256": prediction_digest(vector), "released": repr(value), "kind": "float"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    for accounts in (1, 3):
        inner = _board(accounts)
        resumed = ReplayOracle(inner, Checkpoint.open(path, _header(accounts)))
        assert [resumed.submit(v) for v in vectors] == [float(line["released"]) for line in lines[1:]]
        assert resumed.replayed == 2 and inner.queries == 0 and resumed.queries_by_account[0] == 2
        resumed.checkpoint.close()


def test_a_resume_with_another_number_of_accounts_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.checkpoint.jsonl"
    first = ReplayOracle(_board(3), Checkpoint.open(path, _header(3)))
    first.submit(np.full(N, 0.5))
    first.checkpoint.close()
    with pytest.raises(CheckpointMismatch, match=r"3 account.*this one has 2.*same tokens in the same order"):
        Checkpoint.open(path, _header(2))
    assert Checkpoint.open(path, _header(3)).entries  # the same number resumes
