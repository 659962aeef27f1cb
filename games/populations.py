"""The honest participants of a game: real scikit-learn models (:mod:`games.population`) for data sets with
features, simulated models of graded quality for bare label vectors (e.g. an IMDB-sized balanced vector)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from games.gamefile import DatasetSpec


@dataclass(frozen=True)
class GamePopulation:
    """Hidden rows (``ids``, ``labels``) and each honest model's test-set probabilities, in submission order
    (P(class 1) per row for binary data, an ``(n, K)`` matrix otherwise)."""

    dataset: str
    ids: list[str]
    labels: np.ndarray
    n_classes: int
    predictions: dict[str, np.ndarray]

    @property
    def n_rows(self) -> int:
        return len(self.ids)


@lru_cache(maxsize=8)
def load_population(dataset: DatasetSpec) -> GamePopulation:
    """The population of a game's data set, seeded by its ``population_seed`` (cached: training the models
    takes seconds, and a population is never modified)."""
    if dataset.source == "balanced":
        assert dataset.n_rows is not None
        return synthetic_population(dataset.n_rows, seed=dataset.population_seed)
    from games.population import honest_population

    population = honest_population(
        seed=dataset.population_seed, test_size=dataset.test_fraction, dataset=dataset.source
    )
    return GamePopulation(
        dataset=dataset.name,
        ids=[str(i) for i in population.ids],
        labels=np.asarray(population.labels, dtype=np.int64),
        n_classes=int(population.n_classes),
        predictions={name: np.asarray(p, dtype=np.float64) for name, p in population.predictions.items()},
    )


def synthetic_population(n_rows: int, seed: int = 0, n_models: int = 10) -> GamePopulation:
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
    signed = 2.0 * labels - 1.0
    predictions: dict[str, np.ndarray] = {}
    for k, strength in enumerate(np.linspace(2.5, 0.0, n_models)):
        logits = strength * signed + rng.normal(0.0, 1.0, n_rows)
        predictions[f"simulated_{k:02d}_s{strength:.2f}"] = 1.0 / (1.0 + np.exp(-logits))
    return GamePopulation(f"balanced_{n_rows}", [str(i) for i in range(n_rows)], labels, 2, predictions)
