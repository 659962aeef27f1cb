"""``mutnet`` (paper 001, Section 5, Theorem 6): the Mutator Network head that makes any classifier emit chosen
prediction vectors, as pure ONNX-graph builders (:mod:`attacks.mutnet.head`), :class:`ModelOracle` (any attack
played through models), :class:`LocalModelBoard` (a model competition offline) and the registered attack
``mutnet`` (:mod:`attacks.mutnet.attack`). The names below load lazily, so importing the library (which
registers ``mutnet``) does not load ``onnx``."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "FeatureHash": "head", "FeatureKey": "head", "FeatureRank": "head", "emitted_values": "head",
    "follow_up_model": "head", "keyed_mutator_head": "head", "linear_base": "head", "logit": "head",
    "mutator_head": "head", "ranked_mutator_head": "head", "ModelOracle": "oracle", "public_count": "oracle",
    "LocalModelBoard": "board", "HonestBase": "base", "honest_base": "base",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'attacks.mutnet' has no attribute {name!r}")
    return getattr(import_module(f"attacks.mutnet.{module}"), name)
