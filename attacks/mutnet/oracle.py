"""Any attack against a model competition: :class:`ModelOracle` turns each query's prediction vector into a
MutNet model (an honest base model under :func:`~attacks.mutnet.head.ranked_mutator_head`) and hands it to
``submit_model``, which uploads it and returns the released score.

Two ways to key the rows, both computed inside the graph from a row's features:

* ``key="rank"`` (:class:`FeatureRank`): row ``i`` of a query is the hidden row of rank ``i`` in the head's
  feature order, the same in every query, so an attack sees an ordinary leaderboard whose rows are permuted
  and spends exactly the queries it spends on prediction files. The rank compares rows with each other, so it
  needs the host to run the model on the whole test set at once (the site does; the order does not matter).
* ``key="hash"`` (:class:`FeatureHash`): each row's own fingerprint, a bucket in ``0..buckets-1``, so the
  host may run the model in any batches and any order (one row at a time included). The attack then sees a
  leaderboard of ``buckets`` virtual rows of which only the occupied buckets holding a public row count —
  exactly a public split of ``n_public`` rows among ``buckets`` (``public_fraction = n_public / buckets``),
  which the split-aware attacks decode: labels keyed by fingerprint. It costs more queries (the attack must
  also find the occupied buckets) and two public rows sharing a bucket break the exact decoding (it fails
  loudly; another ``seed`` is another hash).

Either way the labels come back keyed, and :meth:`follow_up` is the model that puts them back on their rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import onnx

from attacks.mutnet.head import FeatureHash, FeatureRank, follow_up_model, ranked_mutator_head
from attacks.oracle import Released
from attacks.result import AttackFailed, SubmissionRefused

KEYS = ("rank", "hash")


class HeadRefused(AttackFailed):
    """The host refused the very first model with the rank head (it runs the model on fewer rows than the whole
    test set at once, so ``TopK`` over all rows cannot run): the caller may switch to the feature-hash head."""


def default_buckets(n_public: int) -> int:
    """Fingerprints for ``n_public`` public rows: about ``n_public²`` (odd), so the expected number of public
    pairs sharing one is about 1/2 (the birthday bound) — a collision makes the exact decoding fail loudly."""
    return max(509, n_public * n_public | 1)


def public_count(n_rows: int, public_fraction: float | None) -> int:
    """The number of public rows, as the site's split draws it (:func:`scoring.hidden.public_split_mask`)."""
    if public_fraction is None or public_fraction >= 1.0:
        return n_rows
    n_public = round(public_fraction * n_rows)
    return min(max(n_public, 1), n_rows - 1) if public_fraction > 0.0 and n_rows >= 2 else n_public


class ModelOracle:
    """An :class:`~attacks.oracle.Oracle` over a model competition of ``n_rows`` hidden rows with
    ``n_features`` features. ``base`` is the honest ONNX model the head sits on; ``submit_model(bytes)``
    uploads a model and returns the released score (``None``: nothing released); ``submit_many_models``, when
    given, sends independent models together (the bot's pipelined path).

    With ``key="hash"`` its ``n_rows`` is ``buckets`` (virtual rows, one per fingerprint) and ``n_public`` the
    real number of public rows; ``hidden_rows`` is always the real count."""

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
        key: str = "rank",
        buckets: int | None = None,
        submit_many_models: Callable[[list[bytes]], list[Released]] | None = None,
    ) -> None:
        if key not in KEYS:
            raise ValueError(f"key must be one of {', '.join(KEYS)}, got {key!r}")
        self.base = base
        self.submit_model = submit_model
        self.submit_many_models = submit_many_models
        self.key = key
        self.hidden_rows = n_rows
        self.n_classes, self.metric, self.eps = n_classes, metric, eps
        self._decimals = decimals
        self.queries = 0
        self.answered = 0  # queries the host ran (not refused): a refused first rank-head model is HeadRefused
        self.exact_only = False  # auto: fail rather than guess when the exact attack breaks (another hash seed next)
        self.keyer: FeatureRank | FeatureHash
        if key == "rank":
            self.keyer = self.rank = FeatureRank(n_features=n_features, n_rows=n_rows, seed=seed)
            self.n_rows = n_rows
            self.public_fraction = public_fraction
            self.n_public: int | None = None
        else:
            self.n_public = public_count(n_rows, public_fraction)
            buckets = buckets or default_buckets(self.n_public)
            self.keyer = FeatureHash(n_features=n_features, buckets=buckets, seed=seed)
            self.n_rows = buckets
            self.public_fraction = self.n_public / buckets

    @property
    def decimals(self) -> int | None:
        return self._decimals

    @property
    def row_names(self) -> list[str]:
        """What row ``i`` of a query is: a rank in the head's feature order, or a feature fingerprint."""
        return [f"{self.key} {i}" for i in range(self.n_rows)]

    def model_for(self, predictions: Any) -> bytes:
        """The MutNet model that emits ``predictions`` (one row per key) on the hidden rows."""
        table = np.asarray(predictions, dtype=np.float64)
        return ranked_mutator_head(self.base, table, self.keyer).SerializeToString()

    def follow_up(self, labels: Any, confidence: Any = None) -> bytes:
        """The follow-up model: each key with an exact label (``confidence`` 1, or every label ``>= 0`` when no
        confidence is given) gets it, every other row the honest base's own prediction."""
        learned = np.asarray(labels, dtype=np.int64).copy()
        if confidence is not None:
            learned[np.asarray(confidence, dtype=np.float64) < 1.0] = -1
        return follow_up_model(self.base, learned, self.keyer, n_classes=self.n_classes).SerializeToString()

    def submit(self, predictions: Any) -> Released:
        data = self.model_for(predictions)
        self.queries += 1
        with self._refusals():
            released = self.submit_model(data)
        self.answered += 1
        return released

    def submit_many(self, predictions: Sequence[Any]) -> list[Released]:
        """Independent queries: together through ``submit_many_models`` when given, else one after another."""
        if self.submit_many_models is None:
            return [self.submit(vector) for vector in predictions]
        models = [self.model_for(vector) for vector in predictions]
        self.queries += len(models)
        with self._refusals():
            values = self.submit_many_models(models)
        self.answered += len(values)
        return values

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        try:
            yield
        except SubmissionRefused as exc:
            if self.key == "rank" and self.answered == 0:
                raise HeadRefused(f"the host refused the first rank-head model ({exc}); it may run the rows in "
                                  "batches: the feature-hash head does not need the whole test set at once") from exc
            raise
