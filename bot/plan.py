"""The bot's plan: the attack choice lives in :mod:`attacks.plan` (``attacks.run("auto", …)`` uses it); this
module keeps the command line's parameter parsing and the names the bot has always exported."""

from __future__ import annotations

import json
from typing import Any

from attacks.plan import (
    NOISE_BOUND_FACTOR,
    NOISE_SCALE_FACTOR,
    Plan,
    choose,
    load_attacks,
)

__all__ = ["NOISE_BOUND_FACTOR", "NOISE_SCALE_FACTOR", "Plan", "choose", "load_attacks", "parse_params"]


def parse_params(pairs: list[str] | None) -> dict[str, Any]:
    """``["k=100", "accept=improvement", "noise_bound=1e-4"]`` → typed values (JSON where it parses).

    >>> parse_params(["k=100", "accept=improvement", "check=false", "scale=1e-4"])
    {'k': 100, 'accept': 'improvement', 'check': False, 'scale': 0.0001}
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
