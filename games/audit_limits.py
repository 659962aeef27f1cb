"""The audit's limits, apart from :mod:`games.audit` so the site can check a host's request (and a command can
print its help) without loading the attacks."""

from __future__ import annotations

#: The largest budget an audit plays (a runtime bound: every ladder rung replays the attack from scratch).
MAX_BUDGET = 20_000
#: The account counts of the accounts axis when the host names none: "how many sign-ups does it take".
DEFAULT_ACCOUNTS = (1, 2, 10, 30, 100, 1000)
#: The most accounts one count may give the attacker, and the most counts one audit tries.
MAX_ACCOUNTS = 10_000
MAX_COUNTS = 12
