"""The demo competitions' data for participants: scikit-learn's breast-cancer set, split exactly as the honest
population splits it (:func:`games.population.dataset_split`) — ``train.csv`` (the training rows with ``target``),
``test.csv`` (the hidden test rows' features under the ids the site scores, never their ``target``) — and the
Markdown description that says what to predict and how it is scored."""

from __future__ import annotations

import hashlib
from typing import Any

DATASET = "breast_cancer"
TARGET = "target"
FILE_DESCRIPTIONS = {
    "train.csv": "Training rows: id, the 30 features and target (1 = benign, 0 = malignant).",
    "test.csv": "Test rows: id and the 30 features; their target is hidden. Predict one row per id.",
}


def _column(name: str) -> str:
    return name.strip().replace(" ", "_")


def _csv(header: list[str], ids: list[str], rows: Any, targets: Any = None) -> bytes:
    lines = [",".join(header)]
    for position, row_id in enumerate(ids):
        values = [repr(float(v)) for v in rows[position]]  # the shortest text that reads back the same float
        if targets is not None:
            values.append(str(int(targets[position])))
        lines.append(",".join([row_id, *values]))
    return ("\n".join(lines) + "\n").encode()


def demo_data_files(*, seed: int = 0, test_size: float = 0.3) -> dict[str, bytes]:
    """``{"train.csv": ..., "test.csv": ...}``; the test ids are the hidden set's (``str(position)`` of the test
    rows, as :func:`games.population.honest_population` names them), the train ids ``train_<n>``."""
    from games.population import dataset_split

    data, train_rows, test_rows = dataset_split(DATASET, seed=seed, test_size=test_size)
    features = [_column(name) for name in data.feature_names]
    train = _csv(["id", *features, TARGET], [f"train_{n}" for n in range(len(train_rows))], data.data[train_rows],
                 data.target[train_rows])
    test = _csv(["id", *features], [str(position) for position in range(len(test_rows))], data.data[test_rows])
    return {"train.csv": train, "test.csv": test}


def demo_description(files: dict[str, bytes], *, defended: bool = False) -> str:
    """What participants read on the competition page (Markdown)."""
    n_train, n_test = (files[name].count(b"\n") - 1 for name in ("train.csv", "test.csv"))
    release = ("The host's defenses (see the rules below) stand between the true score and what is shown."
               if defended else "Scores are shown to 5 decimals.")
    return f"""## Task

Each row describes a breast mass by 30 features computed from a digitized image of a fine-needle aspirate
(scikit-learn's copy of the Wisconsin Diagnostic Breast Cancer data). Predict **`target`: 1 if the mass is
benign, 0 if it is malignant**.

## Data

- `train.csv` — {n_train} rows: `id`, the 30 features and `target`.
- `test.csv` — {n_test} rows: `id` and the 30 features; their `target` is what you predict.
- The sample submission lists the test ids in the order the site expects.

## Submission and scoring

Upload a CSV with header `id,target` and one row per test id, `target` being your probability that the mass is
benign. Submissions are scored by binary log loss (natural logarithm; probabilities clipped to
[1e-15, 1 − 1e-15]; lower is better). The public leaderboard scores a fixed 30 % of the test rows, the private
leaderboard the other 70 %. {release}
"""


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()
