"""Any attack against a model competition: :class:`ModelOracle` turns each query's prediction vector into a
MutNet model (an honest base model under :func:`~attacks.mutnet.head.ranked_mutator_head`) and hands it to
``submit_model``, which uploads it and returns the released score.

Row ``i`` of a query is the hidden row of rank ``i`` in the head's feature order (:class:`FeatureRank`), the
same in every query, so an attack sees an ordinary leaderboard whose rows are permuted, spends exactly the
queries it spends on prediction files, and its labels are keyed by rank; a follow-up model with the same
``FeatureRank`` puts each learned label back on its row. The head computes in float64, so the scorer reads
exactly the predictions the attack chose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx

from attacks.mutnet.head import FeatureRank, ranked_mutator_head
from attacks.oracle import Released


class ModelOracle:
    """An :class:`~attacks.oracle.Oracle` over a model competition of ``n_rows`` hidden rows with
    ``n_features`` features. ``base`` is the honest ONNX model the head sits on; ``submit_model(bytes)``
    uploads a model and returns the released score (``None``: nothing released)."""

    def __init__(
        self,
        base: onnx.ModelProto,
        submit_model: Callable[[bytes], Released],
        *,
        n_rows: int,
        n_features: int,
        n_classes: int = 2,
        metric: str = "binary_logloss",
        eps: float = 1e-15,
        decimals: int | None = 5,
        public_fraction: float | None = None,
        seed: int = 0,
    ) -> None:
        self.base = base
        self.submit_model = submit_model
        self.rank = FeatureRank(n_features=n_features, n_rows=n_rows, seed=seed)
        self.n_rows, self.n_classes, self.metric, self.eps = n_rows, n_classes, metric, eps
        self._decimals = decimals
        self.public_fraction = public_fraction
        self.queries = 0

    @property
    def decimals(self) -> int | None:
        return self._decimals

    def model_for(self, predictions: Any) -> bytes:
        """The MutNet model that emits ``predictions`` (rank order) on the hidden rows."""
        table = np.asarray(predictions, dtype=np.float64)
        return ranked_mutator_head(self.base, table, self.rank).SerializeToString()

    def submit(self, predictions: Any) -> Released:
        released = self.submit_model(self.model_for(predictions))
        self.queries += 1
        return released
