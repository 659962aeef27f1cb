"""``mutnet`` (paper 001, Section 5, Theorem 6): the Mutator Network head that makes any classifier emit chosen
prediction vectors, as pure ONNX-graph builders (:mod:`attacks.mutnet.head`). Not imported by ``attacks`` itself,
so importing the library does not load ``onnx``."""

from attacks.mutnet.head import (
    FeatureKey,
    FeatureRank,
    emitted_values,
    keyed_mutator_head,
    linear_base,
    logit,
    mutator_head,
    ranked_mutator_head,
)
from attacks.mutnet.oracle import ModelOracle

__all__ = [
    "FeatureKey", "FeatureRank", "ModelOracle", "emitted_values", "keyed_mutator_head", "linear_base", "logit",
    "mutator_head", "ranked_mutator_head",
]
