"""The host's screen of a submitted model (paper 001, Section 5): can the host tell a MutNet model from an honest
one? Four detectors, each independent, and their union:

* ``graph`` — :func:`sandbox.inspect.inspect_graph` (the graph alone: dead ReLU, dead branch, batch coupling,
  feature lookup/hash, constant tables);
* ``outputs`` — :func:`defenses.model_outputs.output_signals` (the outputs on the hidden rows beside their
  features: unpredictable from neighbours, near constant);
* ``probes`` — :func:`defenses.probe_detector.probe_signals` on the scored predictions, as for a file;
* ``behaviour`` — the model run again by the host: on the rows in reverse order and in two halves (a classifier
  scores each row on its own; a head that ranks the batch does not), and on the features moved by ``±1e-3`` of
  each feature's spread, every feature up then every feature down (a classifier barely moves; a hash of the
  features jumps). A row counts as moved only if both nudges move it: a tree whose float32 threshold sits on an
  integer feature value (digits) moves rows one way.

``run`` is how the host runs the model: features ``[n, d]`` → the scored predictions (binary: P(class 1),
``[n]``; else ``[n, K]``). The site runs it in the sandbox; the benchmark in process. A run that fails on a
batch the scoring run did not fail on is itself a sign (the ranked head is built for one batch size).

Measured by ``benchmarks/mutnet_detection.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from defenses.model_outputs import output_signals
from defenses.probe_detector import probe_signals
from sandbox.inspect import inspect_graph

Runner = Callable[[np.ndarray], np.ndarray]
DETECTORS = ("graph", "outputs", "probes", "behaviour")
#: A row-wise model gives the same row the same output in any batch, up to float32 kernel differences.
BATCH_TOLERANCE = 1e-4
#: Features moved by this share of their standard deviation ...
NUDGE = 1e-3
#: ... move honest outputs by more than ``MOVE`` on at most a few rows (a tree threshold crossed); flag above
#: ``UNSTABLE_SHARE`` of the rows.
MOVE = 0.05
UNSTABLE_SHARE = 0.05


@dataclass
class Screening:
    """Signals per detector (empty: nothing found)."""

    signals: dict[str, list[str]] = field(default_factory=lambda: {name: [] for name in DETECTORS})

    def flagged_by(self, detector: str) -> bool:
        return bool(self.signals.get(detector))

    @property
    def flagged(self) -> bool:
        return any(self.signals.values())

    def summary(self) -> str:
        found = [f"{name}: {'; '.join(lines)}" for name, lines in self.signals.items() if lines]
        return " | ".join(found) or "nothing found"


def behaviour_signals(run: Runner, features: np.ndarray, reference: np.ndarray) -> list[str]:
    """Batch dependence and instability of ``run`` around ``features`` (``reference``: its output on them)."""
    x = np.asarray(features, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    signals: list[str] = []
    half = len(x) // 2
    batches = {
        "the rows in reverse order": lambda: run(x[::-1])[::-1],
        "the rows in two halves": lambda: np.concatenate([run(x[:half]), run(x[half:])]),
    }
    for name, again in batches.items():
        try:
            other = np.asarray(again(), dtype=np.float64)
        except Exception as exc:  # the model failing on another batch is the finding
            signals.append(f"batch_dependent: the model fails on {name} ({type(exc).__name__})")
            continue
        if other.shape != reference.shape or not np.allclose(other, reference, rtol=0, atol=BATCH_TOLERANCE):
            signals.append(f"batch_dependent: a row's output changes with {name}")
    step = NUDGE * x.std(axis=0)  # every feature the same way: a threshold sitting on a value is crossed one way
    changes = []
    for sign in (1.0, -1.0):  # both ways: a tree threshold at a data value moves rows one way only
        try:
            moved = np.asarray(run(x + sign * step), dtype=np.float64)
        except Exception as exc:  # likewise on nudged features
            return [*signals, f"unstable: the model fails on nudged features ({type(exc).__name__})"]
        change = np.abs(moved - reference)
        changes.append(change if change.ndim == 1 else change.max(axis=1))
    share = float((np.minimum(*changes) > MOVE).mean())
    if share > UNSTABLE_SHARE:
        signals.append(f"unstable: {share:.0%} of the rows move by more than {MOVE:g} both ways when the features "
                       f"move by {NUDGE:g} of their spread")
    return signals


def screen_model(data: bytes, features: np.ndarray, run: Runner, *, n_rows: int | None = None,
                 seed: int = 0, behaviour: bool = True) -> Screening:
    """Every detector on one model (``data``: the ONNX bytes) and the hidden ``features``."""
    try:
        predictions = np.asarray(run(features), dtype=np.float64)
    except Exception as exc:  # the scoring run would fail too; nothing else to look at
        screening = Screening()
        screening.signals["graph"] = _graph_lines(data, n_rows)
        screening.signals["behaviour"] = [f"failed: the model does not run ({type(exc).__name__})"]
        return screening
    screening = screen_outputs(data, features, predictions, n_rows=n_rows, seed=seed)
    if behaviour:
        screening.signals["behaviour"] = behaviour_signals(run, features, predictions)
    return screening


def screen_outputs(data: bytes, features: np.ndarray, predictions: np.ndarray, *, n_rows: int | None = None,
                   seed: int = 0) -> Screening:
    """The detectors that need no further run of the model: the graph, and the outputs of the scoring run
    (what the site's worker has in hand)."""
    screening = Screening()
    screening.signals["graph"] = _graph_lines(data, n_rows)
    screening.signals["outputs"] = output_signals(predictions, features, seed=seed)
    screening.signals["probes"] = probe_signals(np.asarray(predictions, dtype=np.float64))
    return screening


def _graph_lines(data: bytes, n_rows: int | None) -> list[str]:
    return [f"{name}: {lines[0]}" for name, lines in inspect_graph(data, n_rows=n_rows).signals.items()]
