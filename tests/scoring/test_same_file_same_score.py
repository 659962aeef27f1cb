"""``same_file_same_score`` (issue 9, item 4): the noise is keyed by what the reported metrics read of the
predictions, so an upload changed only where no metric can see it gets the same release — not a fresh noise draw
of the same true score, which averaging would recover exactly. Changes a metric can see still get fresh noise:
the option is no defense against averaging near-copies (``scoring.pipeline.content_digest`` says why)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from defenses import DefenseChain
from scoring import Arithmetic, HiddenTestSet, ScoringSpec, parse, public_split_mask
from scoring.release import release_submission

N = 300
NOISE = [{"name": "noise", "kind": "laplace", "scale": 0.01}]


def _spec(metric: str = "binary_logloss", **kwargs: object) -> ScoringSpec:
    rng = np.random.default_rng(7)
    hidden = HiddenTestSet(tuple(f"r{i}" for i in range(N)), rng.integers(0, 2, N), 2, public_split_mask(N, 0.3, 99))
    options: dict[str, object] = {"decimals": None, "chain": DefenseChain.from_json(NOISE), "secret": 5,
                                  "same_file_same_score": True, "metric_name": metric, **kwargs}
    return ScoringSpec(hidden, **options)  # type: ignore[arg-type]


def _csv(spec: ScoringSpec, cells: list[str]) -> bytes:
    return ("id,target\n" + "".join(f"{i},{c}\n" for i, c in zip(spec.hidden.ids, cells, strict=True))).encode()


def _released(spec: ScoringSpec, upload: bytes, submission_id: int) -> dict[str, str | None]:
    release = release_submission(spec, parse(spec, upload), submission_id=submission_id)
    return {f"{m}/{s}": release.released_text(m, s) for m in spec.reported_metrics for s in ("public", "private")}


BASE = np.random.default_rng(3).uniform(0.05, 0.95, N)
BASE[:5] = 1e-20  # a confident model: a few rows inside the clipped region


def _cells(values: np.ndarray) -> list[str]:
    return [repr(float(v)) for v in values]


Variant = Callable[[np.ndarray], list[str]]

# Each was a fresh noise draw of exactly the same true score before (and averaging them recovered it).
INVISIBLE: list[tuple[str, str, Variant]] = [
    ("binary_logloss", "re-encoded", lambda v: [f"{x:.17e}" for x in v]),
    ("binary_logloss", "moved inside the clipped region", lambda v: _cells(np.where(v < 1e-15, 1e-17, v))),
    ("auc", "a monotone transform", lambda v: _cells(v**3)),
    ("accuracy", "moved without crossing 0.5", lambda v: _cells(np.where(v >= 0.5, (1 + v) / 2, v / 2))),
]


@pytest.mark.parametrize(("metric", "change", "variant"), INVISIBLE, ids=[c for _, c, _ in INVISIBLE])
def test_a_change_no_metric_can_see_gets_the_same_release(metric: str, change: str, variant: Variant) -> None:
    spec = _spec(metric)
    original = _released(spec, _csv(spec, _cells(BASE)), 1)
    assert _released(spec, _csv(spec, variant(BASE)), 2) == original


def test_mpfr_texts_that_read_as_the_same_phi_bit_values_get_the_same_release() -> None:
    spec = _spec(arithmetic=Arithmetic.parse("mpfr:80"))
    cells = [f"{x:.6f}" for x in BASE[5:]]
    padded = [c + "000" for c in cells]  # "0.123456" and "0.123456000": one value, one score
    first = _released(spec, _csv(spec, ["0"] * 5 + cells), 1)
    assert _released(spec, _csv(spec, ["0.0"] * 5 + padded), 2) == first


def test_a_visible_change_however_small_still_gets_fresh_noise() -> None:
    # What the option does not stop (documented): one row moved by 1e-9 is a new file to the metric.
    spec = _spec()
    jittered = BASE.copy()
    jittered[100] += 1e-9
    first, second = _released(spec, _csv(spec, _cells(BASE)), 1), _released(spec, _csv(spec, _cells(jittered)), 2)
    assert first["binary_logloss/public"] != second["binary_logloss/public"]


def test_a_key_covers_every_reported_metric() -> None:
    # Two rows swapped inside the clipped region: log loss cannot tell, AUC can — so with AUC reported beside
    # the log loss the uploads must not share a draw (their releases would differ by exactly the AUC change).
    spec = _spec(also_report=("auc",))
    values = BASE.copy()
    values[:2] = (1e-20, 1e-18)
    swapped = values.copy()
    swapped[:2] = (1e-18, 1e-20)
    assert _released(_spec(), _csv(spec, _cells(values)), 1) == _released(_spec(), _csv(spec, _cells(swapped)), 2)
    first, second = _released(spec, _csv(spec, _cells(values)), 1), _released(spec, _csv(spec, _cells(swapped)), 2)
    assert first["binary_logloss/public"] != second["binary_logloss/public"]


def test_without_the_option_every_submission_gets_its_own_draw() -> None:
    spec = _spec(same_file_same_score=False)
    upload = _csv(spec, _cells(BASE))
    assert _released(spec, upload, 1) != _released(spec, upload, 2)
