"""The label-only endpoint as an attack sees it: ``predict(inputs) → labels`` under a query budget.

:class:`LocalLabelOracle` answers in process with the site's own code (:func:`scoring.inversion.predict_labels`:
the same validation and the same target), and charges one query per input as the site does; the bot's
HTTP oracle answers the same protocol from a live site.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from scoring.inversion import InversionTask, MlpClassifier, predict_labels


class BudgetExhausted(Exception):
    """The endpoint refused a batch: fewer queries are left than inputs were sent (``left`` of them)."""

    def __init__(self, message: str, *, left: int) -> None:
        super().__init__(message)
        self.left = left


@runtime_checkable
class LabelOracle(Protocol):
    """A prediction endpoint that releases only the predicted class; ``queries_left`` is ``None`` if unlimited."""

    task: InversionTask

    @property
    def queries_left(self) -> int | None: ...

    def predict(self, inputs: np.ndarray) -> list[int]:
        """The predicted class of each row; raises :class:`BudgetExhausted` when the budget cannot cover it."""
        ...


class LocalLabelOracle:
    """The endpoint in process: the site's validation and prediction, a per-participant query budget.

    >>> task = InversionTask(n_features=2, n_classes=2, image_shape=(1, 2), low=0.0, high=1.0)
    >>> oracle = LocalLabelOracle(MlpClassifier((np.eye(2),), (np.zeros(2),)), task, budget=3)
    >>> oracle.predict(np.array([[0.0, 1.0], [1.0, 0.0]])), oracle.queries_left
    ([1, 0], 1)
    """

    def __init__(self, target: MlpClassifier, task: InversionTask, *, budget: int | None = None) -> None:
        self.target, self.task, self.budget = target, task, budget
        self.queries = 0

    @property
    def queries_left(self) -> int | None:
        return None if self.budget is None else self.budget - self.queries

    def predict(self, inputs: np.ndarray) -> list[int]:
        rows = np.atleast_2d(np.asarray(inputs, dtype=np.float64))
        labels: list[int] = []
        for start in range(0, len(rows), self.task.max_batch):
            batch = rows[start:start + self.task.max_batch]
            left = self.queries_left
            if left is not None and len(batch) > left:
                raise BudgetExhausted(f"{left} queries left, {len(batch)} inputs sent", left=left)
            labels += predict_labels(self.target, self.task, batch.tolist())
            self.queries += len(batch)
        return labels
