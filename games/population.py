"""The honest participants of a game: real scikit-learn models of varied quality trained on a real labelled
data set (:func:`honest_population`), or simulated models of graded quality for a bare label vector such as an
IMDB-sized balanced one (:func:`synthetic_population`); :func:`load_population` picks one for a game file's
data set (DESIGN.md, "Games").

The benchmarks and the game runner use it to measure what a defense costs honest participants. Pure: no
Django, no I/O beyond the data sets scikit-learn ships.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from games.gamefile import DatasetSpec


@dataclass(frozen=True)
class Population:
    """Hidden test rows (``ids``: their positions here, ``"0"`` to ``"n-1"``, so the site's canonical order by
    id is this order and a live game's rows and public split are the offline game's; ``labels``) and each
    honest model's predicted probabilities on them, in submission order.

    ``predictions[name]`` is a 1-D array of P(class 1) for binary data, else an ``(n, K)`` matrix. ``features``:
    the hidden rows' features (real data sets only), what a model competition runs the models on.
    """

    dataset: str
    ids: list[str]
    labels: np.ndarray
    n_classes: int
    predictions: dict[str, np.ndarray]
    features: np.ndarray | None = None

    @property
    def names(self) -> list[str]:
        return list(self.predictions)

    @property
    def n_rows(self) -> int:
        return len(self.ids)


def _models(seed: int) -> dict[str, Any]:
    # Imported here so that importing ``attacks`` does not load scikit-learn.
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.dummy import DummyClassifier
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    def scaled(model: Any) -> Any:
        return make_pipeline(StandardScaler(), model)

    return {
        "logreg": scaled(LogisticRegression(max_iter=2000)),
        "logreg_strong_l2": scaled(LogisticRegression(C=0.002, max_iter=2000)),
        "linear_svm_calibrated": scaled(CalibratedClassifierCV(LinearSVC(C=0.1), cv=5)),
        "lda": LinearDiscriminantAnalysis(),
        "gaussian_nb": GaussianNB(),
        "knn_15": scaled(KNeighborsClassifier(n_neighbors=15)),
        "knn_3_unscaled": KNeighborsClassifier(n_neighbors=3),
        "random_forest": RandomForestClassifier(n_estimators=200, random_state=seed),
        "gradient_boosting": GradientBoostingClassifier(random_state=seed),
        "tree_depth_2_calibrated": CalibratedClassifierCV(
            DecisionTreeClassifier(max_depth=2, random_state=seed), cv=5, method="isotonic"
        ),
        "stump_sigmoid": CalibratedClassifierCV(DecisionTreeClassifier(max_depth=1, random_state=seed), cv=5),
        "prior_only": DummyClassifier(strategy="prior"),
    }


def _one_feature(model_factory: Callable[[], Any], column: int) -> Any:
    """A model that sees a single feature (a weak but honest participant)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    return make_pipeline(ColumnTransformer([("one", "passthrough", [column])]), model_factory())


def dataset_split(dataset: str, *, seed: int = 0, test_size: float = 0.3) -> tuple[Any, np.ndarray, np.ndarray]:
    """scikit-learn's bundled ``dataset`` (its ``Bunch``) and the stratified train/test split seeded by ``seed``:
    the training rows and the hidden test rows, in the order the population (and the demo's data files) use."""
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split

    loaders = {"breast_cancer": load_breast_cancer, "digits": load_digits}
    try:
        data = loaders[dataset]()
    except KeyError:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(loaders)}") from None
    train_rows, test_rows = train_test_split(
        np.arange(len(data.target)), test_size=test_size, random_state=seed, stratify=data.target
    )
    return data, np.asarray(train_rows), np.asarray(test_rows)


def honest_population(*, seed: int = 0, test_size: float = 0.3, dataset: str = "breast_cancer") -> Population:
    """Train the population on ``dataset``'s training rows (a stratified split seeded by ``seed``; ``test_size``
    of the rows, default 30 %, are the hidden test rows) and predict its test rows.

    ``dataset``: ``"breast_cancer"`` (569 rows, binary; FIELD_NOTES) or ``"digits"`` (1,797 rows, 10 classes).
    Thirteen models, from a constant prior to gradient boosting, some calibrated: rankings are non-trivial.

    >>> population = honest_population(seed=0)  # doctest: +SKIP
    >>> len(population.names) >= 10  # doctest: +SKIP
    True
    """
    from sklearn.linear_model import LogisticRegression

    data, train_rows, test_rows = dataset_split(dataset, seed=seed, test_size=test_size)
    x_train, x_test = data.data[train_rows], data.data[test_rows]
    y_train, y_test = data.target[train_rows], data.target[test_rows]
    n_classes = int(np.max(data.target)) + 1
    models = _models(seed)
    models["logreg_one_feature"] = _one_feature(lambda: LogisticRegression(max_iter=2000), column=0)
    predictions: dict[str, np.ndarray] = {}
    for name, model in models.items():
        model.fit(x_train, y_train)
        proba = np.asarray(model.predict_proba(x_test), dtype=np.float64)
        predictions[name] = proba[:, 1] if n_classes == 2 else proba
    ids = [str(position) for position in range(len(test_rows))]  # the site orders rows by id: keep this order
    return Population(dataset, ids, np.asarray(y_test, dtype=np.int64), n_classes, predictions,
                      features=np.asarray(x_test, dtype=np.float64))


def load_population(dataset: DatasetSpec) -> Population:
    """The population of a game's data set, seeded by its ``population_seed`` (cached by source, seed and size:
    training the models takes seconds, and a population is never modified; two data sets that differ only in
    name or in how they are played, files or models, share it)."""
    if dataset.source == "balanced":
        assert dataset.n_rows is not None
        return _synthetic(dataset.n_rows, dataset.population_seed)
    population = _honest(dataset.population_seed, dataset.test_fraction, dataset.source)
    return replace(population, dataset=dataset.name)


@lru_cache(maxsize=8)
def _honest(seed: int, test_size: float, source: str) -> Population:
    return honest_population(seed=seed, test_size=test_size, dataset=source)


@lru_cache(maxsize=8)
def _synthetic(n_rows: int, seed: int) -> Population:
    return synthetic_population(n_rows, seed=seed)


def synthetic_population(n_rows: int, seed: int = 0, n_models: int = 10) -> Population:
    """A seeded balanced 0/1 vector of ``n_rows`` (``n_rows // 2`` ones) and ``n_models`` simulated models.

    Model ``k`` predicts ``sigmoid(s_k (2y - 1) + N(0, 1))`` with signal strengths ``s_k`` evenly spread from
    2.5 (good) down to 0 (chance), so the population spans good to useless models, like a real one.

    >>> population = synthetic_population(100, seed=1)
    >>> int(population.labels.sum()), len(population.predictions)
    (50, 10)
    """
    if n_rows < 2:
        raise ValueError(f"n_rows must be at least 2, got {n_rows}")
    rng = np.random.default_rng(seed)
    labels = np.zeros(n_rows, dtype=np.int64)
    labels[: n_rows // 2] = 1
    rng.shuffle(labels)
    predictions = _simulated_models(labels, 2, rng, n_models)
    return Population(f"balanced_{n_rows}", [str(i) for i in range(n_rows)], labels, 2, predictions)


def simulated_population(
    labels: np.ndarray, *, n_classes: int | None = None, seed: int = 0, n_models: int = 10, name: str = "labels"
) -> Population:
    """Simulated models of graded quality for a given label vector (a competition's own hidden labels), as
    :func:`synthetic_population` makes them: binary, P(class 1) = ``sigmoid(s_k (2y - 1) + N(0, 1))``;
    multiclass, the softmax of ``s_k`` on the true class plus ``N(0, 1)`` on every class; ``s_k`` from 2.5
    (good) down to 0 (chance).

    >>> population = simulated_population(np.array([0, 1, 2, 1]), seed=3, n_models=4)
    >>> population.n_classes, population.predictions["simulated_00_s2.50"].shape
    (3, (4, 3))
    """
    labels = np.asarray(labels, dtype=np.int64)
    k = n_classes or max(int(labels.max(initial=0)) + 1, 2)
    predictions = _simulated_models(labels, k, np.random.default_rng(seed), n_models)
    return Population(name, [str(i) for i in range(len(labels))], labels, k, predictions)


def _simulated_models(
    labels: np.ndarray, n_classes: int, rng: np.random.Generator, n_models: int
) -> dict[str, np.ndarray]:
    n_rows = len(labels)
    predictions: dict[str, np.ndarray] = {}
    for k, strength in enumerate(np.linspace(2.5, 0.0, n_models)):
        if n_classes == 2:
            logits = strength * (2.0 * labels - 1.0) + rng.normal(0.0, 1.0, n_rows)
            predictions[f"simulated_{k:02d}_s{strength:.2f}"] = 1.0 / (1.0 + np.exp(-logits))
        else:
            scores = strength * np.eye(n_classes)[labels] + rng.normal(0.0, 1.0, (n_rows, n_classes))
            scores = np.exp(scores - scores.max(axis=1, keepdims=True))
            predictions[f"simulated_{k:02d}_s{strength:.2f}"] = scores / scores.sum(axis=1, keepdims=True)
    return predictions
