"""Attacks on the Ladder (Blum & Hardt, ICML 2015): ``ladder_fixed`` (threshold questions on the fixed step's
deterministic acceptance boundary, after Hardt 2017), ``ladder_free`` (the parameter-free Ladder's paired
test, passed with ballast rows) and ``ladder`` (tells the two apart from the first release and plays the
right one). See :mod:`attacks.ladder.fixed` and :mod:`attacks.ladder.free`."""

from __future__ import annotations

from typing import Any

from attacks.ladder.fixed import ladder_fixed_attack
from attacks.ladder.free import ladder_free_attack
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackResult

__all__ = ["ladder_fixed", "ladder_fixed_attack"]


@register("ladder_fixed", exact=False)
def ladder_fixed(oracle: Oracle, **params: Any) -> AttackResult:
    """:func:`attacks.ladder.fixed.ladder_fixed_attack` (it checks itself: every answer must fit the model)."""
    return ladder_fixed_attack(oracle, **params)


@register("ladder_free", exact=False)
def ladder_free(oracle: Oracle, **params: Any) -> AttackResult:
    """:func:`attacks.ladder.free.ladder_free_attack` (it checks itself: every release must fit one labeling)."""
    return ladder_free_attack(oracle, **params)
