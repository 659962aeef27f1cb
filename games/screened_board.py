"""A board behind the sybil screen in hold mode: what a multi-account attack still reads when the host screens
every submission (:mod:`defenses.sybil_screen`) and holds the releases of the accounts it clusters.

:class:`ScreenedBoard` wraps the attacker's board (a :class:`attacks.LocalOracle` with several accounts). Each
attacker account gets a synthetic sign-up trace (:func:`attacker_traces`: by default the accounts signed up from
:data:`ADDRESSES` addresses over :data:`SIGNUP_HOURS` hours, a script's user agent — a hurried attacker, not a
careful one); an honest crowd (the audit's simulated models, each an account submitting once) can be screened beside
it. After every submission of an account not yet held, the :class:`~defenses.sybil_screen.Screener` runs over
everything submitted so far (the site screens each upload before it reads a label). Once an account is in a flagged
cluster its releases are withheld — that submission and every later one, and so are those of every later account
that joins the cluster — as the site holds them until the host decides: the attack gets ``None`` (nothing
released), as from a chain that refuses a submission, and the submission counts against the budget. The board
counts what the hold cost the attacker (:class:`ScreenTally`): the accounts that got a release (let through), the
accounts held, the submissions held, how many accounts had submitted at the first flag, and any honest account
flagged.

What it measures is what the library's attacks read against this screen with these traces: a lower bound on the
leakage, never a limit on every attacker. A careful attacker (a distinct address per account, sign-ups spread over
days, probes camouflaged as model outputs) may pass the screen (:data:`CAREFUL`).

Pure: numpy, the attacks' oracle protocol and the screen; no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from attacks.oracle import Oracle, Released
from defenses.sybil_screen import AccountTrace, ScreenConfig, Screener, SubmissionTrace

#: The attacker's sign-ups by default: this many addresses ...
ADDRESSES = 3
#: ... over this many hours (seeded uniform times), one script's user agent.
SIGNUP_HOURS = 3.0
USER_AGENT = "python-requests/2.31"
#: The epoch second the synthetic sign-ups start at, and the seconds between two submissions.
START = 1.7e9
STEP = 60.0
HOUR = 3600.0
#: The screen regroups after every submission of the attacker's up to this many; past it, at each account's first
#: submission and once every ``screened // REGROUP_SHARE`` submissions (the tally's ``lagged`` counts the others).
EXACT_SCREENS = 2_000
REGROUP_SHARE = 50
#: What the default traces are, for a report.
TRACES = (f"synthetic sign-ups of a hurried attacker: its accounts signed up from {ADDRESSES} addresses over "
          f"{SIGNUP_HOURS:g} hours, one script's user agent")
#: What every screened figure says of itself.
CAREFUL = ("A careful attacker (a distinct address per account, sign-ups spread over days, probes camouflaged as "
           "model outputs) may pass the screen.")
#: The honest crowd's accounts sign up from their own addresses, a day apart.
CROWD_PREFIX = "honest"
ATTACKER_PREFIX = "sybil"


def attacker_traces(accounts: int, *, seed: int = 0, addresses: int = ADDRESSES,
                    hours: float = SIGNUP_HOURS) -> list[AccountTrace]:
    """Sign-up traces of ``accounts`` attacker accounts (``sybil0`` …): round-robin over ``addresses`` documentation
    addresses (203.0.113.x), at seeded uniform times over ``hours`` hours (sorted, so ``sybil0`` signed up first),
    one script's user agent.

    >>> [(t.account, t.address) for t in attacker_traces(4)]
    [('sybil0', '203.0.113.1'), ('sybil1', '203.0.113.2'), ('sybil2', '203.0.113.3'), ('sybil3', '203.0.113.1')]
    """
    times = START + np.sort(np.random.default_rng(seed).uniform(0.0, hours * HOUR, accounts))
    return [AccountTrace(f"{ATTACKER_PREFIX}{i}", float(times[i]), f"203.0.113.{i % addresses + 1}", USER_AGENT)
            for i in range(accounts)]


def crowd(predictions: Sequence[np.ndarray], *, seed: int = 0) -> tuple[list[AccountTrace], list[SubmissionTrace]]:
    """An honest crowd: each model an account (``honest0`` …) with its own address, signed up a day apart, that
    submitted its output once before the attacker's first submission."""
    rng = np.random.default_rng(seed + 1)
    traces, submissions = [], []
    for i, vector in enumerate(predictions):
        signed = START - (len(predictions) - i) * 24 * HOUR + float(rng.uniform(0, HOUR))
        name = f"{CROWD_PREFIX}{i}"
        traces.append(AccountTrace(name, signed, f"100.64.{i // 250}.{i % 250 + 1}", "Mozilla/5.0 (X11; Linux x86_64)"))
        submissions.append(SubmissionTrace(name, signed + HOUR, np.asarray(vector, dtype=np.float64)))
    return traces, submissions


@dataclass
class ScreenTally:
    """What the hold cost the attacker: ``accounts_used`` submitted at least once; ``let_through`` got at least one
    release; ``held_accounts`` were held (in a flagged cluster); ``held_submissions`` were withheld, ``released``
    were not; ``flagged_at``: the accounts that had submitted when the first attacker account was held (``None``:
    never); ``honest_flagged`` of ``honest_accounts`` crowd accounts were ever in a flagged cluster; ``lagged``:
    submissions past :data:`EXACT_SCREENS` released without a regroup right after them (0: screened exactly)."""

    accounts_used: int = 0
    let_through: int = 0
    held_accounts: int = 0
    held_submissions: int = 0
    released: int = 0
    flagged_at: int | None = None
    honest_accounts: int = 0
    honest_flagged: int = 0
    lagged: int = 0

    def row(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _State:
    screener: Screener
    used: set[int] = field(default_factory=set)
    used_before: set[int] = field(default_factory=set)
    released_to: set[int] = field(default_factory=set)
    held: set[int] = field(default_factory=set)
    honest_flagged: set[str] = field(default_factory=set)
    honest_accounts: int = 0
    held_submissions: int = 0
    released: int = 0
    flagged_at: int | None = None
    clock: float = START + (SIGNUP_HOURS + 1) * HOUR
    screened: int = 0  # submissions added to the screen
    regrouped_at: int = 0  # ``screened`` when the screen last regrouped
    lagged: int = 0  # submissions released without a regroup right after them (past EXACT_SCREENS)


class ScreenedBoard:
    """``inner`` (an attacker's board with several accounts) behind the sybil screen in hold mode (module docstring).

    Every attribute but the submissions is the inner board's, read and set (``account``, ``accounts``, ``feedback``,
    ``queries``, …), so an attack sees the same board; a held submission returns ``None`` (``submit_all``: ``None``
    for every metric) and still counts in ``queries`` (and the account's ``queries_by_account``).
    ``traces``: the attacker accounts' sign-ups (default :func:`attacker_traces` of ``inner.accounts``);
    ``crowd``: honest accounts' traces and submissions screened first (:func:`crowd`); ``config``: the screen's
    (its mode is set to ``hold``).

    >>> from attacks.oracle import LocalOracle
    >>> board = ScreenedBoard(LocalOracle([0, 1] * 20, decimals=5, accounts=3))
    >>> probe = lambda start: np.r_[np.full(start, 0.5), [0.2, 0.1, 0.05], np.full(37 - start, 0.5)]
    >>> [board.submit(probe(0)) is None, board.account]
    [False, 0]
    >>> board.account = 1
    >>> board.submit(probe(3)) is None, board.tally.held_accounts, board.tally.let_through, board.queries
    (True, 2, 1, 2)
    """

    def __init__(self, inner: Oracle, *, traces: Sequence[AccountTrace] | None = None,
                 crowd: tuple[Sequence[AccountTrace], Sequence[SubmissionTrace]] = ((), ()),
                 config: ScreenConfig | None = None, seed: int = 0) -> None:
        accounts = int(getattr(inner, "accounts", 1) or 1)
        config = ScreenConfig(mode="hold") if config is None else ScreenConfig(**{**asdict(config), "mode": "hold"})
        crowd_traces, crowd_submissions = crowd
        sign_ups = list(attacker_traces(accounts, seed=seed) if traces is None else traces)
        screener = Screener([*sign_ups, *crowd_traces], config)
        for submission in sorted(crowd_submissions, key=lambda s: s.at):
            screener.add(submission)
        state = _State(screener, honest_accounts=len(crowd_traces))
        if crowd_submissions:
            state.honest_flagged |= _honest_in(screener)
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_state", state)

    @property
    def inner(self) -> Oracle:
        return self._inner  # type: ignore[no-any-return]

    @property
    def queries(self) -> int:
        return self._inner.queries  # type: ignore[no-any-return]

    @queries.setter
    def queries(self, value: int) -> None:
        self._inner.queries = value

    @property
    def decimals(self) -> int | None:
        return self._inner.decimals  # type: ignore[no-any-return]

    @property
    def tally(self) -> ScreenTally:
        """What the hold has cost the attacker so far."""
        state: _State = self._state
        return ScreenTally(
            accounts_used=len(state.used), let_through=len(state.released_to), held_accounts=len(state.held),
            held_submissions=state.held_submissions, released=state.released, flagged_at=state.flagged_at,
            honest_accounts=state.honest_accounts, honest_flagged=len(state.honest_flagged), lagged=state.lagged,
        )

    def _holds(self, predictions: Any) -> bool:
        """Screen one submission of the current account; whether its release is withheld (counting it if so)."""
        state: _State = self._state
        account = int(getattr(self._inner, "account", 0) or 0)
        state.used.add(account)
        if account not in state.held:
            first = account not in state.used_before
            state.used_before.add(account)
            try:
                vector = np.asarray(predictions, dtype=np.float64)
                state.screener.add(SubmissionTrace(f"{ATTACKER_PREFIX}{account}", state.clock, vector))
                state.screened += 1
            except (TypeError, ValueError):
                pass  # the board itself says what is wrong with it; an unreadable upload is not screened
            state.clock += STEP
            # Regrouping reads every kept submission's features: after every submission up to EXACT_SCREENS, then
            # at each account's first submission and every REGROUP_SHARE-th of the kept ones (work bounded on a
            # 100,000-submission one-account attack; a hold may then come up to that many submissions late).
            since = state.screened - state.regrouped_at
            if first or state.screened <= EXACT_SCREENS or since >= max(1, state.screened // REGROUP_SHARE):
                clusters = state.screener.clusters()
                state.regrouped_at = state.screened
            else:
                clusters = []
                state.lagged += 1
            flagged = {name for cluster in clusters for name in cluster.accounts}
            attackers = {int(name[len(ATTACKER_PREFIX):]) for name in flagged if name.startswith(ATTACKER_PREFIX)}
            if attackers - state.held and state.flagged_at is None:
                state.flagged_at = len(state.used)
            state.held |= attackers
            state.honest_flagged |= {name for name in flagged if name.startswith(CROWD_PREFIX)}
        if account in state.held:
            state.held_submissions += 1
            self._inner.queries += 1  # counted as on the site, and the next submission id moves on
            by_account = getattr(self._inner, "queries_by_account", None)
            if isinstance(by_account, list) and 0 <= account < len(by_account):
                by_account[account] += 1
            return True
        state.released_to.add(account)
        state.released += 1
        return False

    def submit(self, predictions: Any) -> Released:
        if self._holds(predictions):
            return None
        return self._inner.submit(predictions)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name == "submit_all":

            def submit_all(predictions: Any) -> Any:
                if self._holds(predictions):
                    metrics = [self._inner.metric, *getattr(self._inner, "also_report", ())]
                    return dict.fromkeys(metrics)
                return value(predictions)

            return submit_all
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(getattr(type(self), name, None), property) and name == "queries":
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)  # the attacker's ``account`` and the like are the board's


def _honest_in(screener: Screener) -> set[str]:
    return {name for cluster in screener.clusters() for name in cluster.accounts if name.startswith(CROWD_PREFIX)}
