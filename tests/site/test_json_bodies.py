"""JSON bodies are refused by their shape before ``json.loads`` builds them: uploads (bounded by the competition's
rows and columns), the prediction endpoint and the control endpoints (``select``); accepted shapes still pass."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rest_framework.exceptions import ParseError

from leaderboard.api.json_bounds import DEFAULT_BOUNDS, BoundedJSONParser, json_shape_refusal, submission_bounds
from leaderboard.api.views import PREDICT_MAX_VALUES, PredictApi
from tests.site.factories import N_ROWS

pytestmark = pytest.mark.django_db

HOSTILE_UPLOADS = {
    "empty lists": (b'{"predictions": [' + b",".join([b"[]"] * (N_ROWS * 50)) + b"]}", "arrays and objects"),
    "deep nesting": (b'{"predictions": ' + b"[" * 30 + b"]" * 30 + b"}", "nests 31 levels deep"),
    "many numbers": (b'{"predictions": [' + b",".join([b"0"] * (N_ROWS * 50)) + b"]}", "values"),
    "many keys": (b'{"predictions": {' + b",".join(b'"%d": 0' % i for i in range(N_ROWS * 50)) + b"}}", "values"),
    "empty objects": (b'{"predictions": [' + b",".join([b"{}"] * (N_ROWS * 50)) + b"]}", "arrays and objects"),
}


@pytest.mark.parametrize("name", list(HOSTILE_UPLOADS))
def test_a_hostile_json_upload_is_refused_with_the_reason(clients: dict[str, Any], competition: Any, name: str) -> None:
    body, reason = HOSTILE_UPLOADS[name]
    response = clients["participant"].post(
        f"/api/v1/competitions/{competition.slug}/submissions/", data=body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert reason in detail and "at most" in detail and f"{N_ROWS} rows" in detail


def test_brackets_and_commas_inside_strings_do_not_count() -> None:
    ids = [f"row[{i}],{{x}}:y" for i in range(N_ROWS)]
    body = ('{"predictions": [' + ",".join(f'{{"id": "{i}", "target": "0.5"}}' for i in ids) + "]}").encode()
    assert json_shape_refusal(body, submission_bounds(n_rows=N_ROWS, n_values=1)) is None
    escaped = b'{"predictions": ["a\\"[[[[[[[[[[,,,,,,,,,,"]}'
    assert json_shape_refusal(escaped, submission_bounds(n_rows=1, n_values=1)) is None


def test_every_accepted_shape_fits_its_bounds_for_multiclass_rows() -> None:
    rows, k = 50, 4
    values = ", ".join(["0.25"] * k)
    bounds = submission_bounds(n_rows=rows, n_values=k)
    shapes = [
        "[" + ", ".join(f"[{values}]" for _ in range(rows)) + "]",
        "{" + ", ".join(f'"{i}": [{values}]' for i in range(rows)) + "}",
        "[" + ", ".join(f'{{"id": "{i}", ' + ", ".join(f'"c{c}": 0.25' for c in range(k)) + "}" for i in range(rows))
        + "]",
    ]
    for shape in shapes:
        assert json_shape_refusal(f'{{"predictions": {shape}}}'.encode(), bounds) is None, shape


def test_the_select_endpoint_refuses_a_hostile_body(clients: dict[str, Any]) -> None:
    body = b'{"selected": [' + b",".join([b"[]"] * (DEFAULT_BOUNDS.containers + 1)) + b"]}"
    response = clients["participant"].post("/api/v1/submissions/1/select/", data=body, content_type="application/json")
    assert response.status_code == 400 and "arrays and objects" in response.json()["detail"]


def test_the_prediction_endpoint_bounds_follow_the_batch_limit() -> None:
    from leaderboard.inversion.services import MAX_BATCH_VALUES

    assert PREDICT_MAX_VALUES == MAX_BATCH_VALUES
    assert BoundedJSONParser in PredictApi.parser_classes
    hostile = b'{"inputs": [' + b",".join([b"[]"] * (PREDICT_MAX_VALUES + 100)) + b"]}"
    with pytest.raises(ParseError, match="arrays and objects"):
        BoundedJSONParser().parse(io.BytesIO(hostile), "application/json", {"view": PredictApi()})
    fine = b'{"inputs": [' + b",".join([b"[0.5, 0.5]"] * 1000) + b"]}"
    assert BoundedJSONParser().parse(io.BytesIO(fine), "application/json", {"view": PredictApi()})["inputs"][0] == [
        0.5, 0.5
    ]
