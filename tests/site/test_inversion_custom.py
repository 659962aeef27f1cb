"""A host's own model-inversion challenge: two small scikit-learn MLPs trained here (seeded, tiny), exported to
the arrays-only .npz, made into a challenge by the command and by the host API (multipart). The endpoint answers
the custom target's labels (checked against scikit-learn itself), submissions are scored by the custom evaluator,
public data turns the reference attack on, and hostile files are a 400 naming the file — never a 500."""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from attacks.inversion.export import export_mlp
from leaderboard.competitions.models import Competition
from leaderboard.inversion.models import InversionChallenge
from tests.site.conftest import api_client

CLASSES = ["cat", "dog", "eel"]
SCALE = 4.0  # the models were fitted on pixels / 4; participants send pixels in [0, 4]


@lru_cache(maxsize=1)
def _models() -> tuple[Any, Any, np.ndarray]:
    """Target (8 hidden units) and evaluator (12, another seed) on 3 classes of 3×3 images, and public images."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    rng = np.random.default_rng(12)
    centres = rng.uniform(0.5, 3.5, (4, 9))
    labels = rng.integers(0, 4, 400)
    x = np.clip(centres[labels] + rng.normal(0, 0.4, (400, 9)), 0.0, 4.0)
    private = labels < 3
    names = np.array(CLASSES)[labels[private]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        target = MLPClassifier((8,), max_iter=200, random_state=0).fit(x[private] / SCALE, names)
        evaluator = MLPClassifier((12,), max_iter=200, random_state=1).fit(x[private] / SCALE, names)
    return target, evaluator, x[~private]


def _files() -> dict[str, bytes]:
    target, evaluator, public = _models()
    csv = "".join(",".join(f"{v:.4f}" for v in row) + "\n" for row in public.tolist()).encode()
    return {"target": export_mlp(target, input_scale=SCALE), "evaluator": export_mlp(evaluator, input_scale=SCALE),
            "public": csv}


def _sklearn_labels(model: Any, x: np.ndarray) -> list[int]:
    return [CLASSES.index(c) for c in model.predict(x / SCALE)]


def _write(tmp_path: Path, **contents: bytes) -> dict[str, str]:
    paths = {}
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
        paths[name] = str(tmp_path / name)
    return paths


@pytest.mark.django_db
def test_a_custom_challenge_answers_the_targets_labels_and_scores_with_the_evaluator(
    tmp_path: Path, host: Any, participant: Any, submit: Callable[..., Any], score_all: Callable[[], list[str]]
) -> None:
    target, evaluator, _ = _models()
    paths = _write(tmp_path, **{"t.npz": _files()["target"], "e.npz": _files()["evaluator"]})
    out = io.StringIO()
    call_command("create_inversion_challenge", "mine", "--target", paths["t.npz"], "--evaluator", paths["e.npz"],
                 "--image-shape", "3x3", "--pixel-range", "0", "4", "--class-names", "cat,dog,eel", "--budget", "40",
                 "--host", host.username, stdout=out)
    assert "created model-inversion challenge 'mine': 3 private classes, 40 queries" in out.getvalue()
    assert "reference attack (BREP-MI) was skipped" in out.getvalue()
    terms = api_client(None).get("/api/v1/competitions/mine/").json()["model_inversion"]
    assert terms["image_shape"] == [3, 3] and terms["pixel_range"] == [0.0, 4.0] and terms["class_names"] == CLASSES

    client = api_client(participant)
    inputs = np.random.default_rng(0).uniform(0, 4, (30, 9)).round(3)
    answer = client.post("/api/v1/competitions/mine/predict/", {"inputs": inputs.tolist()}, format="json").json()
    assert answer["labels"] == _sklearn_labels(target, inputs) and answer["queries_left"] == 10

    # Reconstructions on which target and evaluator disagree, so the score tells which one judged them.
    pool = np.random.default_rng(1).uniform(0, 4, (2000, 9)).round(3)
    by_target, by_evaluator = np.array(_sklearn_labels(target, pool)), np.array(_sklearn_labels(evaluator, pool))
    picks = [pool[(by_evaluator == c) & (by_target != c)][0] if c == 0 else pool[by_evaluator == c][0]
             for c in range(3)]
    images = np.vstack(picks)
    evaluator_hits = np.array(_sklearn_labels(evaluator, images)) == np.arange(3)
    assert evaluator_hits.tolist() != (np.array(_sklearn_labels(target, images)) == np.arange(3)).tolist()
    challenge = InversionChallenge.objects.get(competition__slug="mine")
    submit(challenge.competition, participant, json.dumps({"reconstructions": images.tolist()}).encode(), kind="json")
    assert score_all() == ["scored"]
    rows = api_client(participant).get("/api/v1/competitions/mine/leaderboard/").json()["rows"]
    assert [row["score"] for row in rows] == [pytest.approx(evaluator_hits.mean())]

    web = api_client(None)
    web.force_login(host)
    page = web.get("/c/mine/host/inversion/").content.decode()
    assert "No public data was given, so the reference attack (BREP-MI) was skipped" in page


@pytest.mark.django_db
def test_the_host_api_creates_a_custom_challenge_from_multipart_files_with_its_reference_attack(
    participant: Any,
) -> None:
    staff = User.objects.create_user("staffer", is_staff=True)
    files = _files()
    form: dict[str, Any] = {
            "slug": "mine-api", "query_budget": "300", "image_shape": "3x3", "pixel_low": "0", "pixel_high": "4",
            "class_names": CLASSES, "target": SimpleUploadedFile("t.npz", files["target"]),
            "evaluator": SimpleUploadedFile("e.npz", files["evaluator"]),
            "public": SimpleUploadedFile("public.csv", files["public"])}
    refused = api_client(participant).post("/api/v1/host/inversion-challenges/", form, format="multipart")
    assert refused.status_code == 403
    for upload in ("target", "evaluator", "public"):
        form[upload].seek(0)
    created = api_client(staff).post("/api/v1/host/inversion-challenges/", form, format="multipart")
    assert created.status_code == 201, created.content
    assert created.json()["model_inversion"]["class_names"] == CLASSES
    challenge = InversionChallenge.objects.get(competition__slug="mine-api")
    assert challenge.competition.host == staff and challenge.query_budget == 300
    assert challenge.reference is not None and challenge.reference.shape == (3, 9)
    assert "BREP-MI" in challenge.reference_note and "public images" in challenge.reference_note
    target = _models()[0]
    x = np.random.default_rng(2).uniform(0, 4, (5, 9))
    assert challenge.target.predict(x).tolist() == _sklearn_labels(target, x)
    web = api_client(None)
    web.force_login(staff)
    assert web.get("/c/mine-api/host/inversion/").content.decode().count("<svg") == 3


def _hostile_npz() -> dict[str, bytes]:
    def npz(**arrays: Any) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    good = {"w0": np.ones((9, 3)), "b0": np.zeros(3), "input_scale": np.array(1.0)}
    return {
        "nan.npz": npz(**{**good, "w0": np.full((9, 3), np.nan)}),
        "shapes.npz": npz(**{**good, "b0": np.zeros(5)}),
        "object.npz": npz(**{**good, "b0": np.array([object()] * 3, dtype=object)}),
        "pickle.npz": b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.",
        "four-features.npz": npz(**{**good, "w0": np.ones((4, 3))}),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(_hostile_npz()))
def test_a_hostile_npz_through_the_api_is_a_400_naming_the_file_and_creates_nothing(name: str) -> None:
    staff = User.objects.create_user("staffer", is_staff=True)
    form = {"slug": "evil", "target": SimpleUploadedFile("t.npz", _files()["target"]),
            "evaluator": SimpleUploadedFile(name, _hostile_npz()[name])}
    answer = api_client(staff).post("/api/v1/host/inversion-challenges/", form, format="multipart")
    assert answer.status_code == 400, answer.content
    assert f"evaluator ({name})" in answer.json()["detail"]
    assert not Competition.objects.filter(slug="evil").exists()


@pytest.mark.django_db
def test_bad_requests_for_a_custom_challenge_are_400s_or_command_errors(tmp_path: Path, host: Any) -> None:
    staff = User.objects.create_user("staffer", is_staff=True)
    client = api_client(staff)
    files = _files()
    no_evaluator = client.post("/api/v1/host/inversion-challenges/",
                               {"slug": "x", "target": SimpleUploadedFile("t.npz", files["target"])},
                               format="multipart")
    assert no_evaluator.status_code == 400
    assert no_evaluator.json() == {"evaluator": ["a custom challenge needs this .npz file"]}
    digits_with_files = client.post("/api/v1/host/inversion-challenges/", {
        "slug": "x", "bundle": "digits", "public": SimpleUploadedFile("p.csv", files["public"])}, format="multipart")
    assert digits_with_files.status_code == 400 and "bundle" in digits_with_files.json()
    bad_shape = client.post("/api/v1/host/inversion-challenges/", {
        "slug": "x", "image_shape": "2x4", "target": SimpleUploadedFile("t.npz", files["target"]),
        "evaluator": SimpleUploadedFile("e.npz", files["evaluator"])}, format="multipart")
    assert bad_shape.status_code == 400 and "does not hold the models' 9 inputs" in bad_shape.json()["detail"]
    outside = client.post("/api/v1/host/inversion-challenges/", {
        "slug": "x", "pixel_high": "1", "target": SimpleUploadedFile("t.npz", files["target"]),
        "evaluator": SimpleUploadedFile("e.npz", files["evaluator"]),
        "public": SimpleUploadedFile("p.csv", files["public"])}, format="multipart")
    assert outside.status_code == 400 and "public (p.csv): values must lie in the pixel range" in outside.json()[
        "detail"]
    paths = _write(tmp_path, **{"t.npz": files["target"], "evil.npz": _hostile_npz()["nan.npz"]})
    with pytest.raises(CommandError, match=r"--evaluator evil\.npz: array 'w0' has a NaN"):
        call_command("create_inversion_challenge", "x", "--target", paths["t.npz"], "--evaluator", paths["evil.npz"])
    with pytest.raises(CommandError, match="needs both --target and --evaluator"):
        call_command("create_inversion_challenge", "x", "--target", paths["t.npz"])
    with pytest.raises(CommandError, match="class names: expected 3"):
        call_command("create_inversion_challenge", "x", "--target", paths["t.npz"], "--evaluator", paths["t.npz"],
                     "--class-names", "a", "b")
    assert not Competition.objects.filter(slug="x").exists()
    paths = _write(tmp_path, **{"t.npz": files["target"], "e.npz": files["evaluator"], "p.csv": files["public"]})
    call_command("create_inversion_challenge", "x", "--target", paths["t.npz"], "--evaluator", paths["e.npz"],
                 "--pixel-range", "0", "4", "--budget", "30", stdout=io.StringIO())
    with pytest.raises(CommandError, match="slug 'x' already exists"):
        call_command("create_inversion_challenge", "x", "--target", paths["t.npz"], "--evaluator", paths["e.npz"],
                     "--public", paths["p.csv"], "--pixel-range", "0", "4")


def test_the_export_tool_turns_a_pickled_model_into_the_npz_the_site_reads(tmp_path: Path) -> None:
    import pickle

    from attacks.inversion.export import main
    from scoring.inversion_files import read_mlp_npz

    target = _models()[0]
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(target))
    assert main([str(tmp_path / "model.pkl"), str(tmp_path / "out.npz"), "--input-scale", str(SCALE)]) == 0
    exported = read_mlp_npz((tmp_path / "out.npz").read_bytes(), name="out.npz")
    x = np.random.default_rng(3).uniform(0, 4, (40, 9))
    assert exported.predict(x).tolist() == _sklearn_labels(target, x) and exported.input_scale == SCALE
    from sklearn.neural_network import MLPClassifier

    tanh = MLPClassifier((3,), activation="tanh")
    tanh.coefs_, tanh.intercepts_, tanh.classes_ = target.coefs_, target.intercepts_, target.classes_
    (tmp_path / "tanh.pkl").write_bytes(pickle.dumps(tanh))
    assert main([str(tmp_path / "tanh.pkl"), str(tmp_path / "tanh.npz")]) == 1 and not (tmp_path / "tanh.npz").exists()


@pytest.mark.django_db
def test_the_admin_adds_a_custom_challenge_from_files_and_shows_refusals() -> None:
    admin = User.objects.create_superuser("root", password="pw")
    web = api_client(None)
    web.force_login(admin)
    files = _files()
    assert web.get("/admin/inversion/inversionchallenge/add/").status_code == 200
    evil = web.post("/admin/inversion/inversionchallenge/add/", {
        "slug": "adm", "query_budget": "50", "pixel_low": "0", "pixel_high": "4",
        "target": SimpleUploadedFile("t.npz", files["target"]),
        "evaluator": SimpleUploadedFile("evil.npz", _hostile_npz()["object.npz"])})
    assert evil.status_code == 200 and "evaluator (evil.npz): array &#x27;b0&#x27; must hold real numbers" in (
        evil.content.decode())
    created = web.post("/admin/inversion/inversionchallenge/add/", {
        "slug": "adm", "query_budget": "50", "pixel_low": "0", "pixel_high": "4", "class_names": "cat,dog,eel",
        "target": SimpleUploadedFile("t.npz", files["target"]),
        "evaluator": SimpleUploadedFile("e.npz", files["evaluator"])})
    assert created.status_code == 302
    challenge = InversionChallenge.objects.get(competition__slug="adm")
    assert challenge.class_names == CLASSES and challenge.competition.host == admin and challenge.reference is None
