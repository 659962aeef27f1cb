"""A model competition's query is a model's bytes: the checkpoint keys it by those bytes, so a resumed run that
sends the same model replays its answer and a different model is caught as another run's."""

from __future__ import annotations

from bot.checkpoint import prediction_digest


def test_a_model_query_is_digested_by_its_bytes() -> None:
    assert prediction_digest(b"model one") == prediction_digest(b"model one")
    assert prediction_digest(b"model one") != prediction_digest(b"model two")
    assert prediction_digest(b"\x00") != prediction_digest([0.0])  # a model is never a prediction vector
