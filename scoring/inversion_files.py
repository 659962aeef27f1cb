"""A host's own model-inversion challenge, from files: strict readers of the models (``.npz``) and public images.

The files come from outside the site, so nothing here trusts them: no pickle is ever loaded (``.npz`` members are
read one by one with ``allow_pickle=False`` after the zip directory has been checked), sizes are bounded before
anything is decompressed, only the keys of the arrays-only format are allowed (``w0, b0, w1, b1, …,
input_scale``), the shapes must chain, and every value must be a finite real number. Each refusal is a
:class:`ModelFileError` whose message names the file and the problem.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
from typing import IO

import numpy as np

from scoring.inversion import MlpClassifier

__all__ = [
    "MAX_LAYERS", "MAX_MODEL_BYTES", "MAX_PARAMETERS", "MAX_PUBLIC_BYTES", "MAX_PUBLIC_ROWS", "ModelFileError",
    "read_mlp_npz", "read_public_images",
]

#: A model file (compressed or not) and the sum of its members once decompressed: 64 MiB.
MAX_MODEL_BYTES = 64 * 2**20
#: Weights and biases of one model, all layers together (8M float64 = 64 MiB).
MAX_PARAMETERS = 8_000_000
MAX_LAYERS = 16
MAX_FEATURES = 65_536
MAX_CLASSES = 1_000
#: Public images: the file, and the rows kept (the reference attack fits a PCA on them).
MAX_PUBLIC_BYTES = 64 * 2**20
MAX_PUBLIC_ROWS = 100_000

_KEY = re.compile(r"^(?:(?P<kind>[wb])(?P<index>0|[1-9][0-9]?)|input_scale)\.npy$")


class ModelFileError(ValueError):
    """A host's file is refused; the message names the file and says why."""


def _read_npy(stream: IO[bytes], size: int, label: str) -> np.ndarray:
    """One ``.npy`` array from ``stream`` whose data may take at most ``size`` bytes: the header is checked
    (real numbers only, a shape that fits ``size``) before any data is read, so no header can make it allocate."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(stream)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"format version {version} is not supported")
        reader = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran_order, dtype = reader(stream)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise ModelFileError(f"{label} is not an .npy array ({exc})") from None
    if dtype.kind not in "fiu" or dtype.fields is not None or dtype.hasobject:
        raise ModelFileError(f"{label} must hold real numbers, not {dtype} (object arrays and pickles are refused)")
    count = math.prod(shape)  # Python ints: no overflow on a hostile shape
    if any(d < 0 for d in shape) or count * dtype.itemsize > size:
        raise ModelFileError(f"{label} declares shape {shape}, more data than the file holds")
    raw = stream.read(count * dtype.itemsize)
    if len(raw) != count * dtype.itemsize:
        raise ModelFileError(f"{label} is cut short: shape {shape} needs {count * dtype.itemsize} bytes")
    array = np.frombuffer(raw, dtype=dtype).reshape(shape, order="F" if fortran_order else "C")
    values = array.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise ModelFileError(f"{label} has a NaN or infinite value")
    return values


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> np.ndarray:
    label = f"{name}: array {info.filename[:-4]!r}"
    try:
        with archive.open(info) as stream:
            return _read_npy(stream, info.file_size, label)
    except (OSError, EOFError, zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
        raise ModelFileError(f"{label} is damaged ({exc})") from None


def read_mlp_npz(data: bytes, *, name: str = "model") -> MlpClassifier:
    """The :class:`MlpClassifier` stored in ``data`` (the ``.npz`` of :meth:`MlpClassifier.to_bytes`, which
    ``python -m attacks.inversion.export`` writes from a scikit-learn model), or :class:`ModelFileError`."""
    if len(data) > MAX_MODEL_BYTES:
        raise ModelFileError(f"{name}: {len(data)} bytes, more than the {MAX_MODEL_BYTES} a model file may have")
    if not data.startswith(b"PK"):
        raise ModelFileError(f"{name}: not an .npz archive (export the model with python -m attacks.inversion.export)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ModelFileError(f"{name}: not a readable .npz archive ({exc})") from None
    with archive:
        by_key: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if not _KEY.match(info.filename):
                raise ModelFileError(f"{name}: unexpected array {info.filename!r}; allowed are w0, b0, w1, b1, … "
                                     f"(at most {MAX_LAYERS} layers) and input_scale")
            by_key[info.filename[:-4]] = info
        if sum(info.file_size for info in infos) > MAX_MODEL_BYTES:
            raise ModelFileError(f"{name}: its arrays take more than {MAX_MODEL_BYTES} bytes once decompressed")
        n_layers = sum(1 for key in by_key if key.startswith("w"))
        expected = {f"{kind}{i}" for i in range(n_layers) for kind in "wb"} | {"input_scale"}
        if not 1 <= n_layers <= MAX_LAYERS or set(by_key) != expected:
            missing, extra = sorted(expected - set(by_key)), sorted(set(by_key) - expected)
            raise ModelFileError(f"{name}: expected arrays w0, b0, w1, b1, … (1 to {MAX_LAYERS} layers) and "
                                 f"input_scale; missing: {', '.join(missing) or 'none'}; "
                                 f"unexpected: {', '.join(extra) or 'none'}")
        arrays = {key: _member(archive, info, name) for key, info in by_key.items()}
    scale = arrays["input_scale"]
    if scale.shape != () or not scale > 0:
        raise ModelFileError(f"{name}: input_scale must be one positive number")
    weights = tuple(arrays[f"w{i}"] for i in range(n_layers))
    biases = tuple(arrays[f"b{i}"] for i in range(n_layers))
    if sum(w.size + b.size for w, b in zip(weights, biases, strict=True)) > MAX_PARAMETERS:
        raise ModelFileError(f"{name}: more than {MAX_PARAMETERS} weights and biases")
    try:
        model = MlpClassifier(weights, biases, float(scale))
    except ValueError as exc:
        raise ModelFileError(f"{name}: {exc}") from None
    if not 1 <= model.n_features <= MAX_FEATURES:
        raise ModelFileError(f"{name}: takes {model.n_features} inputs; 1 to {MAX_FEATURES} are allowed")
    if not 2 <= model.n_classes <= MAX_CLASSES:
        raise ModelFileError(f"{name}: has {model.n_classes} classes; 2 to {MAX_CLASSES} are allowed")
    return model


def _public_npy(data: bytes, name: str) -> np.ndarray:
    return _read_npy(io.BytesIO(data), len(data), name)


def _public_csv(data: bytes, name: str) -> np.ndarray:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ModelFileError(f"{name}: not UTF-8 text, nor an .npy array") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and not re.match(r"^\s*[-+.0-9]", lines[0]):
        lines = lines[1:]  # a header line
    if len(lines) > MAX_PUBLIC_ROWS:
        raise ModelFileError(f"{name}: more than {MAX_PUBLIC_ROWS} images")
    rows = []
    for number, line in enumerate(lines, start=1):
        try:
            rows.append([float(value) for value in line.split(",")])
        except ValueError:
            raise ModelFileError(f"{name}: image {number}: every value must be a number") from None
        if len(rows[-1]) != len(rows[0]):
            raise ModelFileError(f"{name}: image {number} has {len(rows[-1])} values, image 1 has {len(rows[0])}")
    return np.array(rows, dtype=np.float64).reshape(len(rows), -1)


def read_public_images(
    data: bytes, *, n_features: int, low: float, high: float, name: str = "public data"
) -> np.ndarray:
    """The public images, ``(m, n_features)`` within ``[low, high]``: an ``.npy`` array (``(m, n_features)`` or
    ``(m, height, width)``) or a CSV of one image a row (an optional header line), or :class:`ModelFileError`."""
    if len(data) > MAX_PUBLIC_BYTES:
        raise ModelFileError(f"{name}: {len(data)} bytes, more than the {MAX_PUBLIC_BYTES} allowed")
    images = _public_npy(data, name) if data.startswith(b"\x93NUMPY") else _public_csv(data, name)
    if images.ndim < 2 or images.shape[0] > MAX_PUBLIC_ROWS:
        raise ModelFileError(f"{name}: expected 1 to {MAX_PUBLIC_ROWS} images, one a row")
    images = images.reshape(images.shape[0], -1)
    if images.shape[1] != n_features:
        raise ModelFileError(f"{name}: images have {images.shape[1]} values, the models take {n_features}")
    if len(images) < 2:
        raise ModelFileError(f"{name}: at least 2 images are needed to fit the reference attacker's generator")
    if not np.all(np.isfinite(images)):
        raise ModelFileError(f"{name}: has a NaN or infinite value")
    if images.min() < low or images.max() > high:
        raise ModelFileError(f"{name}: values must lie in the pixel range [{low:g}, {high:g}]")
    return images
