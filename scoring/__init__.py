"""The pure scoring core: parsing and validation, metrics, splits, the φ-bit arithmetic, the one function
(:func:`evaluate`) that turns predictions into raw and released scores of one metric, the release model
(:func:`release_submission`: every reported metric through the chain) and the board policy (:mod:`scoring.board`).

No Django, no Celery, no I/O beyond what it is handed (DESIGN.md, "Layers and the rule between them").
"""

from __future__ import annotations

from scoring.arithmetic import FLOAT64, Arithmetic
from scoring.errors import ConfigurationError, NonFiniteScoreError, ScoringError, SubmissionError
from scoring.hidden import HiddenTestSet, parse_features_csv, parse_labels_csv, public_split_mask
from scoring.metrics import METRICS, Metric, get_metric
from scoring.parsing import ParsedPredictions, SubmissionFormat, sample_submission_csv
from scoring.pipeline import Evaluation, ScoringSpec, SplitResult, evaluate, parse, release_text
from scoring.release import Release, release_keys, release_submission

__all__ = [
    "FLOAT64",
    "METRICS",
    "Arithmetic",
    "ConfigurationError",
    "Evaluation",
    "HiddenTestSet",
    "Metric",
    "NonFiniteScoreError",
    "ParsedPredictions",
    "Release",
    "ScoringError",
    "ScoringSpec",
    "SplitResult",
    "SubmissionError",
    "SubmissionFormat",
    "evaluate",
    "get_metric",
    "parse",
    "parse_features_csv",
    "parse_labels_csv",
    "public_split_mask",
    "release_keys",
    "release_submission",
    "release_text",
    "sample_submission_csv",
]
