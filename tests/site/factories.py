"""Builders of test inputs shared by the site tests and the integration scenario (no pytest here, so a
subprocess can import it)."""

from __future__ import annotations

from typing import Any

import numpy as np

N_ROWS = 40
LABEL_SEED = 20261121


def labels_csv(labels: np.ndarray | list[int], ids: list[str] | None = None) -> bytes:
    ids = ids or [f"r{i:03d}" for i in range(len(labels))]
    return ("id,label\n" + "".join(f"{i},{int(y)}\n" for i, y in zip(ids, labels, strict=True))).encode()


def predictions_csv(competition: Any, values: np.ndarray | list[float]) -> bytes:
    """A valid upload for ``competition`` in hidden-id order (binary: one probability per row)."""
    from leaderboard.competitions.selectors import competition_scoring_spec

    ids = competition_scoring_spec(competition=competition).hidden.ids
    header = ",".join(competition.submission_columns)
    rows = []
    for row_id, value in zip(ids, values, strict=True):
        cells = [repr(float(v)) for v in np.ravel(value)]
        rows.append(",".join([row_id, *cells]))
    return (header + "\n" + "\n".join(rows) + "\n").encode()


def features_csv(features: np.ndarray, ids: list[str] | None = None) -> bytes:
    """A host's hidden test features, ``id,f1,...,fd``, rows in the order given (ids as :func:`labels_csv`)."""
    ids = ids or [f"r{i:03d}" for i in range(len(features))]
    header = "id," + ",".join(f"f{j + 1}" for j in range(features.shape[1]))
    rows = [",".join([row_id, *(repr(float(v)) for v in row)]) for row_id, row in zip(ids, features, strict=True)]
    return (header + "\n" + "\n".join(rows) + "\n").encode()
