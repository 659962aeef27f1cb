"""The demo's data files: real breast-cancer rows, the test ids the site scores, no hidden label in test.csv."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from games.population import dataset_split
from launcher.demo_data import demo_data_files, demo_description


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return demo_data_files()


def _table(content: bytes) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(content.decode())))
    return rows[0], rows[1:]


def test_test_csv_holds_the_hidden_ids_and_features_and_no_label(files: dict[str, bytes]) -> None:
    data, _train_rows, test_rows = dataset_split("breast_cancer")
    header, rows = _table(files["test.csv"])
    hidden_labels = data.target[test_rows]

    assert header[0] == "id" and len(header) == 31 and "target" not in header
    assert [row[0] for row in rows] == [str(position) for position in range(len(test_rows))]
    values = np.asarray([[float(v) for v in row[1:]] for row in rows])
    assert np.array_equal(values, data.data[test_rows])  # read back exactly
    assert not any(np.array_equal(values[:, k], hidden_labels) for k in range(values.shape[1]))


def test_train_csv_has_the_label_and_a_model_trained_on_it_predicts_the_hidden_rows(files: dict[str, bytes]) -> None:
    data, train_rows, test_rows = dataset_split("breast_cancer")
    header, rows = _table(files["train.csv"])
    _, test = _table(files["test.csv"])

    assert header[-1] == "target" and len(rows) == len(train_rows)
    assert not {row[0] for row in rows} & {row[0] for row in test}
    x, y = np.asarray([[float(v) for v in row[1:-1]] for row in rows]), np.asarray([int(row[-1]) for row in rows])
    assert np.array_equal(y, data.target[train_rows])
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(x, y)
    probabilities = model.predict_proba(np.asarray([[float(v) for v in row[1:]] for row in test]))[:, 1]
    assert log_loss(data.target[test_rows], probabilities) < 0.2


def test_the_description_says_what_to_predict_and_how_it_is_scored(files: dict[str, bytes]) -> None:
    text = " ".join(demo_description(files).split())
    assert "1 if the mass is benign, 0 if it is malignant" in text and "binary log loss" in text
    assert "`train.csv` — 398 rows" in text and "`test.csv` — 171 rows" in text
    assert "5 decimals" in text and "5 decimals" not in demo_description(files, defended=True)
