"""``LocalModelBoard``: a model competition offline, for tests, benchmarks and games — the host's side of it.

It holds the hidden features and labels; a query is an ONNX model (bytes), which it runs with onnxruntime in
this process (the site runs it in the sandbox; the attacker's own models here, nothing hostile) and scores
through a :class:`~attacks.oracle.LocalOracle` — the same release as a prediction file. ``batch_size`` and
``order_seed`` make it run the rows as a host might that the attacker cannot see: in batches (1 = one row at a
time) and in a shuffled order, each output put back on its own row before scoring. A model that fails to run
is a refused submission, as on the site.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.oracle import LocalOracle, Released
from attacks.result import SubmissionRefused


class LocalModelBoard:
    """A model competition over ``features`` (``[N, d]``) and ``labels``; ``board_options`` go to
    :class:`LocalOracle` (metric, decimals, public_fraction, seed, defenses, …)."""

    takes_models = True

    def __init__(
        self,
        features: np.ndarray,
        labels: Any,
        *,
        batch_size: int | None = None,
        order_seed: int | None = None,
        output: str = "probabilities",
        **board_options: Any,
    ) -> None:
        self.features = np.asarray(features, dtype=np.float32)
        self.board = LocalOracle(labels, **board_options)
        if len(self.features) != self.board.n_rows:
            raise ValueError("one feature row per label is needed")
        self.n_features = self.features.shape[1]
        self.batch_size = batch_size
        self.order_seed = order_seed
        self.output = output
        self.queries = 0

    def __getattr__(self, name: str) -> Any:
        # n_rows, n_classes, metric, eps, decimals, public_fraction, …: the board's own.
        if name == "board":
            raise AttributeError(name)
        return getattr(self.board, name)

    def run(self, data: bytes) -> np.ndarray:
        """The model's output on every hidden row (row order), run as this host runs models."""
        import onnxruntime

        session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
        input_name = session.get_inputs()[0].name
        n = len(self.features)
        order = np.arange(n) if self.order_seed is None else np.random.default_rng(self.order_seed).permutation(n)
        size = n if self.batch_size is None else self.batch_size
        parts = []
        for start in range(0, n, size):
            rows = order[start:start + size]
            (out,) = session.run([self.output], {input_name: self.features[rows]})
            parts.append(np.asarray(out, dtype=np.float64).reshape(len(rows), -1))
        outputs = np.empty((n, parts[0].shape[1]))
        outputs[order] = np.concatenate(parts)
        return outputs

    def submit(self, data: bytes) -> Released:
        """Run the model ``data`` on the hidden rows and release its score (one query)."""
        self.queries += 1
        try:
            outputs = self.run(data)
        except Exception as exc:  # onnxruntime's errors: the site fails such a submission
            raise SubmissionRefused(f"the model failed to run: {type(exc).__name__}") from exc
        return self.board.submit(outputs[:, 0] if outputs.shape[1] == 1 else outputs)

    def submit_many(self, models: list[bytes]) -> list[Released]:
        return [self.submit(data) for data in models]
