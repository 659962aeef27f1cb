"""Model-inversion challenges (paper 002's setting): the pure core the site and the local oracle share.

A host keeps two classifiers of the private classes as plain arrays (:class:`MlpClassifier`, no pickles): the
**target**, whose predicted class is all a participant may ask for (:func:`predict_labels`: labels only, never
a probability or a logit), and the **evaluator**, which judges the participants' reconstructions (one input per
private class): the attack accuracy is the fraction of classes whose reconstruction the evaluator puts in that
class (:func:`evaluate_reconstructions`). Inputs are validated here, with messages that name the problem.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.errors import SubmissionError

__all__ = [
    "InversionResult",
    "InversionTask",
    "MlpClassifier",
    "check_inputs",
    "evaluate_reconstructions",
    "parse_reconstructions",
    "predict_labels",
]


@dataclass(frozen=True)
class MlpClassifier:
    """A ReLU multilayer perceptron as arrays: ``x / input_scale`` through ``weights[i]`` (in × out) and
    ``biases[i]``, ReLU between layers, the class of the largest output (ties: the first).

    >>> clf = MlpClassifier((np.eye(2),), (np.zeros(2),), input_scale=1.0)
    >>> clf.predict(np.array([[0.2, 0.9], [3.0, 1.0]])).tolist()
    [1, 0]
    >>> MlpClassifier.from_bytes(clf.to_bytes()).predict(np.array([[0.0, 1.0]])).tolist()
    [1]
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    input_scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.weights or len(self.weights) != len(self.biases):
            raise ValueError("an MLP needs as many bias vectors as weight matrices, at least one")
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            if w.ndim != 2 or b.shape != (w.shape[1],):
                raise ValueError(f"layer {i}: weights {w.shape} and biases {b.shape} do not fit")
            if i and w.shape[0] != self.weights[i - 1].shape[1]:
                raise ValueError(f"layer {i} takes {w.shape[0]} inputs but layer {i - 1} gives {w.shape[1]}")

    @property
    def n_features(self) -> int:
        return int(self.weights[0].shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.weights[-1].shape[1])

    def _outputs(self, x: np.ndarray) -> np.ndarray:
        h = np.asarray(x, dtype=np.float64) / self.input_scale
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
        return h

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The predicted class of each row of ``x`` (shape ``(m, n_features)``)."""
        return np.argmax(self._outputs(x), axis=1).astype(np.int64)

    @classmethod
    def from_sklearn(cls, model: Any, input_scale: float = 1.0, *, any_classes: bool = False) -> MlpClassifier:
        """From a fitted ``sklearn.neural_network.MLPClassifier`` with ReLU activation and classes 0..K-1 (with
        ``any_classes``, class ``i`` is ``model.classes_[i]``, whatever its value; a two-class model has one
        logistic output: kept as the two outputs ``(0, z)``)."""
        if getattr(model, "activation", "relu") != "relu":
            raise ValueError("only ReLU MLPs are supported")
        if not any_classes and list(model.classes_) != list(range(len(model.classes_))):
            raise ValueError(f"classes must be 0..K-1, got {list(model.classes_)}")
        weights = [np.asarray(w, dtype=np.float64) for w in model.coefs_]
        biases = [np.asarray(b, dtype=np.float64) for b in model.intercepts_]
        if weights[-1].shape[1] == 1:
            weights[-1] = np.hstack([np.zeros_like(weights[-1]), weights[-1]])
            biases[-1] = np.concatenate([[0.0], biases[-1]])
        return cls(tuple(weights), tuple(biases), input_scale)

    def to_bytes(self) -> bytes:
        """``.npz`` bytes (no pickles): ``w0, b0, w1, b1, …`` and ``input_scale``."""
        arrays: dict[str, np.ndarray] = {"input_scale": np.array(self.input_scale)}
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)  # type: ignore[arg-type]
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> MlpClassifier:
        with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as stored:
            n_layers = sum(1 for name in stored.files if name.startswith("w"))
            weights = tuple(np.asarray(stored[f"w{i}"], dtype=np.float64) for i in range(n_layers))
            biases = tuple(np.asarray(stored[f"b{i}"], dtype=np.float64) for i in range(n_layers))
            return cls(weights, biases, float(stored["input_scale"]))


@dataclass(frozen=True)
class InversionTask:
    """What a participant is told about a challenge: the input size and shape (an image's ``height × width``),
    the pixel range, the number of private classes and how many inputs one request may carry."""

    n_features: int
    n_classes: int
    image_shape: tuple[int, int]
    low: float = 0.0
    high: float = 16.0
    max_batch: int = 256

    def public(self) -> dict[str, Any]:
        return {
            "n_features": self.n_features, "n_classes": self.n_classes, "image_shape": list(self.image_shape),
            "pixel_range": [self.low, self.high], "max_batch": self.max_batch,
        }


def check_inputs(task: InversionTask, inputs: Any, *, what: str = "input", max_rows: int | None = None) -> np.ndarray:
    """A ``(m, n_features)`` float64 array of finite values within the pixel range, or :class:`SubmissionError`
    naming the first offending row (row numbers from 1) — the participant's own data, so safe to quote."""
    limit = task.max_batch if max_rows is None else max_rows
    if not isinstance(inputs, Sequence) or isinstance(inputs, str | bytes) or not inputs:
        raise SubmissionError(f"expected a non-empty list of {what}s, each a list of {task.n_features} numbers")
    if len(inputs) > limit:
        raise SubmissionError(f"at most {limit} {what}s per request, got {len(inputs)}")
    rows = []
    for i, row in enumerate(inputs, start=1):
        if not isinstance(row, Sequence) or isinstance(row, str | bytes) or len(row) != task.n_features:
            raise SubmissionError(f"{what} {i}: expected a list of {task.n_features} numbers")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in row):
            raise SubmissionError(f"{what} {i}: every value must be a number")
        values = np.asarray(row, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise SubmissionError(f"{what} {i}: values must be finite")
        if values.min() < task.low or values.max() > task.high:
            raise SubmissionError(f"{what} {i}: values must lie in [{task.low:g}, {task.high:g}]")
        rows.append(values)
    return np.vstack(rows)


def predict_labels(target: MlpClassifier, task: InversionTask, inputs: Any) -> list[int]:
    """The endpoint's answer: the target's predicted class of each input, as plain ints — nothing else."""
    return [int(label) for label in target.predict(check_inputs(task, inputs))]


def parse_reconstructions(task: InversionTask, data: bytes) -> np.ndarray:
    """A reconstructions upload: JSON ``{"reconstructions": [[…n_features numbers…] × n_classes]}``, the i-th
    list being the reconstruction of private class i. Returns the ``(n_classes, n_features)`` array."""
    try:
        body = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SubmissionError(f"the body is not valid JSON: {exc}") from None
    if not isinstance(body, dict) or "reconstructions" not in body:
        raise SubmissionError('expected a JSON object {"reconstructions": [...one input per private class...]}')
    values = check_inputs(task, body["reconstructions"], what="reconstruction", max_rows=task.n_classes)
    if len(values) != task.n_classes:
        raise SubmissionError(f"expected {task.n_classes} reconstructions (one per private class), got {len(values)}")
    return values


@dataclass(frozen=True)
class InversionResult:
    """The evaluator's verdict: ``hits[c]`` whether class ``c``'s reconstruction is classified as ``c``."""

    hits: tuple[bool, ...]

    @property
    def accuracy(self) -> float:
        return sum(self.hits) / len(self.hits)

    @property
    def recovered(self) -> int:
        return sum(self.hits)


def evaluate_reconstructions(evaluator: MlpClassifier, reconstructions: np.ndarray) -> InversionResult:
    """Attack accuracy (paper 002, Section 5.1): row ``c`` of ``reconstructions`` counts when the evaluator
    classifies it as class ``c``.

    >>> evaluator = MlpClassifier((np.eye(2),), (np.zeros(2),))
    >>> evaluate_reconstructions(evaluator, np.array([[1.0, 0.0], [1.0, 0.5]])).hits
    (True, False)
    """
    predicted = evaluator.predict(reconstructions)
    return InversionResult(tuple(bool(p == c) for c, p in enumerate(predicted)))
