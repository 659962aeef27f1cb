"""A host's model files are read strictly: the arrays-only .npz round-trips, and every hostile file (pickles,
object arrays, NaN, inconsistent shapes, unexpected keys, lying headers, decompression bombs) is refused with a
message that names the file and the problem — and never by unpickling anything."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest

import scoring.inversion_files as files
from scoring.inversion import MlpClassifier
from scoring.inversion_files import ModelFileError, read_mlp_npz, read_public_images

RNG = np.random.default_rng(3)
GOOD = MlpClassifier((RNG.normal(size=(4, 3)), RNG.normal(size=(3, 2))), (RNG.normal(size=3), RNG.normal(size=2)),
                     2.0)


def _npz(**arrays: object) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def _good_arrays() -> dict[str, object]:
    return {"w0": GOOD.weights[0], "b0": GOOD.biases[0], "w1": GOOD.weights[1], "b1": GOOD.biases[1],
            "input_scale": np.array(2.0)}


def test_an_exported_model_reads_back_with_the_same_predictions() -> None:
    x = RNG.uniform(0, 2, (50, 4))
    model = read_mlp_npz(GOOD.to_bytes(), name="target.npz")
    assert model.predict(x).tolist() == GOOD.predict(x).tolist() and model.input_scale == 2.0
    # Compressed archives and float32/int arrays are fine too.
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{k: np.asarray(v, dtype=np.float32) for k, v in _good_arrays().items()})  # type: ignore[arg-type]
    assert read_mlp_npz(buffer.getvalue()).n_classes == 2


class _Boom:
    """Unpickling this would run code: the reader must refuse before it could."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("unpickled!",))


def _lying_header() -> bytes:
    # A member whose header claims a 10^6 × 10^6 array behind 64 bytes of data.
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("w0.npy", header.getvalue() + b"\0" * 64)
        for key in ("b0", "input_scale"):
            member = io.BytesIO()
            np.save(member, np.zeros(3) if key == "b0" else np.array(1.0))
            archive.writestr(f"{key}.npy", member.getvalue())
    return buffer.getvalue()


HOSTILE: dict[str, tuple[bytes | dict[str, object], str]] = {
    "a pickle": (pickle.dumps(_Boom()), "not an .npz archive"),
    "a pickled object array": ({**_good_arrays(), "w0": np.array([[_Boom()]] * 4, dtype=object)}, "object arrays"),
    "a NaN weight": ({**_good_arrays(), "w1": np.full((3, 2), np.nan)}, "'w1' has a NaN or infinite value"),
    "an infinite scale": ({**_good_arrays(), "input_scale": np.array(np.inf)}, "'input_scale' has a NaN"),
    "a negative scale": ({**_good_arrays(), "input_scale": np.array(-1.0)}, "input_scale must be one positive"),
    "shapes that do not chain": ({**_good_arrays(), "w1": np.ones((5, 2))}, "layer 1 takes 5 inputs"),
    "a bias of the wrong size": ({**_good_arrays(), "b0": np.ones(7)}, "layer 0: weights (4, 3) and biases (7,)"),
    "an unexpected key": ({**_good_arrays(), "__reduce__": np.ones(1)}, "unexpected array '__reduce__.npy'"),
    "a missing layer": ({"w0": np.ones((4, 3)), "b0": np.ones(3), "w2": np.ones((3, 2)), "b2": np.ones(2),
                         "input_scale": np.array(1.0)}, "missing: b1, w1"),
    "strings": ({**_good_arrays(), "b0": np.array(["a", "b", "c"])}, "must hold real numbers"),
    "complex numbers": ({**_good_arrays(), "b0": np.ones(3, dtype=complex)}, "must hold real numbers"),
    "one class": ({"w0": np.ones((4, 1)), "b0": np.ones(1), "input_scale": np.array(1.0)}, "has 1 classes"),
    "a header that lies about its size": (_lying_header(), "more data than the file holds"),
    "garbage": (b"PK\x03\x04 not really a zip", "not a readable .npz archive"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_model_file_is_refused_naming_the_file_and_the_problem(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    content, problem = HOSTILE[case]
    data = content if isinstance(content, bytes) else _npz(**content)
    monkeypatch.setattr(pickle, "loads", lambda *_a, **_k: pytest.fail("unpickled"))
    with pytest.raises(ModelFileError) as refused:
        read_mlp_npz(data, name="evil.npz")
    assert str(refused.value).startswith("evil.npz: ") and problem in str(refused.value)


def test_oversized_files_and_decompression_bombs_are_refused_before_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_MODEL_BYTES", 20_000)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{**_good_arrays(), "w0": np.zeros((4, 3000)), "b0": np.zeros(3000)})  # type: ignore[arg-type]
    bomb = buffer.getvalue()
    assert len(bomb) < 20_000  # small on the wire, 120 KB once decompressed
    with pytest.raises(ModelFileError, match="more than 20000 bytes once decompressed"):
        read_mlp_npz(bomb, name="bomb.npz")
    with pytest.raises(ModelFileError, match=r"big.npz: \d+ bytes, more than the 20000"):
        read_mlp_npz(_npz(**_good_arrays()) + b"\0" * 20_000, name="big.npz")
    monkeypatch.setattr(files, "MAX_PARAMETERS", 10)
    with pytest.raises(ModelFileError, match="more than 10 weights"):
        read_mlp_npz(GOOD.to_bytes(), name="wide.npz")


def test_public_images_read_from_csv_or_npy_and_refuse_the_rest() -> None:
    images = RNG.uniform(0, 1, (5, 4))
    csv = ("p0,p1,p2,p3\n" + "".join(",".join(map(repr, row)) + "\n" for row in images.tolist())).encode()
    assert np.allclose(read_public_images(csv, n_features=4, low=0, high=1), images)
    buffer = io.BytesIO()
    np.save(buffer, images.reshape(5, 2, 2))
    assert np.allclose(read_public_images(buffer.getvalue(), n_features=4, low=0, high=1), images)
    refusals = {
        b"1,2\n3,4\n": "images have 2 values, the models take 4",
        b"0,0,0,0\n0,0,x,0\n": "image 2: every value must be a number",
        b"0,0,0,0\n0,0,0\n": "image 2 has 3 values",
        b"0,0,0,0\n0,0,0,nan\n": "NaN or infinite",
        b"0,0,0,0\n0,0,0,2\n": "pixel range [0, 1]",
        b"0,0,0,0\n": "at least 2 images",
    }
    for data, problem in refusals.items():
        with pytest.raises(ModelFileError, match=problem.replace("[", r"\[").replace("]", r"\]")):
            read_public_images(data, n_features=4, low=0, high=1, name="public.csv")
    pickled = io.BytesIO()
    np.save(pickled, np.array([_Boom()] * 4, dtype=object), allow_pickle=True)
    with pytest.raises(ModelFileError, match=r"public\.npy must hold real numbers"):
        read_public_images(pickled.getvalue(), n_features=4, low=0, high=1, name="public.npy")
