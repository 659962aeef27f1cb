"""A model competition's board offline: every query an attack makes becomes a MutNet model
(:class:`attacks.mutnet.ModelOracle`: the ranked Mutator Network head on an honest linear base), run with
onnxruntime on the hidden features, and its output scored by the competition's own ``LocalOracle`` — what the
site's worker does with an uploaded model, minus the sandbox (these are the host's own graphs, not a
participant's). The audit and the games play model competitions through it.

The attack's rows are the hidden rows in the head's feature order (:func:`feature_ranks`); a caller comparing
its labels with the truth puts the truth in that order (:func:`in_rank_order`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.mutnet import FeatureRank, ModelOracle, linear_base
from attacks.oracle import LocalOracle, Released

#: The head's projection seed (any fixed value: the attacker picks it; the audit fixes it for reproducibility).
RANK_SEED = 1


def _run(data: bytes, features: np.ndarray, output: str) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    (values,) = session.run([output], {"X": np.asarray(features, dtype=np.float32)})
    return np.asarray(values)


def feature_ranks(features: np.ndarray, *, seed: int = RANK_SEED) -> np.ndarray:
    """Each hidden row's rank in the head's order (row ``i`` of an attack's query goes to the row of rank ``i``)."""
    rank = FeatureRank(n_features=features.shape[1], n_rows=len(features), seed=seed)
    return np.asarray(_run(rank.rank_model().SerializeToString(), features, "rank"), dtype=np.int64)


def in_rank_order(values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``values`` (one per hidden row, in hidden order) rearranged so that entry ``ranks[i]`` is ``values[i]``."""
    out = np.empty_like(values)
    out[ranks] = values
    return out


class ModelBoard(ModelOracle):
    """A :class:`ModelOracle` whose models are run on ``features`` and scored by ``board``; every other attribute
    an attack may read (``arithmetic``, ``feedback``, ``spec``, ...) and the attacker's ``account`` are the
    board's."""

    def __init__(self, board: LocalOracle, features: np.ndarray, *, seed: int = RANK_SEED) -> None:
        self.board = board
        self.features = np.asarray(features, dtype=np.float64)
        k = int(board.n_classes)
        super().__init__(
            linear_base(self.features.shape[1], k), self._score, n_rows=len(self.features),
            n_features=self.features.shape[1], n_classes=k, metric=board.metric, eps=board.eps,
            decimals=board.decimals, public_fraction=board.public_fraction, seed=seed,
        )

    def _score(self, data: bytes) -> Released:
        output = _run(data, self.features, "probabilities").astype(np.float64)
        return self.board.submit(output[:, 0] if self.n_classes == 2 else output)

    @property
    def account(self) -> int:
        return int(self.board.account)

    @account.setter
    def account(self, value: int) -> None:
        self.board.account = value

    def __getattr__(self, name: str) -> Any:
        if name == "board":  # not set yet (during __init__): no recursion
            raise AttributeError(name)
        return getattr(self.board, name)
