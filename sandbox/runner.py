"""Run an accepted ONNX model on a feature matrix in a separate, limited process (:mod:`sandbox.child`).

What is enforced, on every machine: the child is a fresh interpreter (``python -I``) with an empty
environment (no database URL, no secret key), its own session (killed as a group), and ``setrlimit`` limits on
CPU time (``RLIMIT_CPU``), address space (``RLIMIT_AS``), files written (``RLIMIT_FSIZE = 0``) and core dumps;
the parent kills it at the wall-time limit. The model itself was checked by :mod:`sandbox.validate`: standard
operators only, none of which opens a file or a socket, and no external-data tensor. Where the kernel allows
it (root, or unprivileged user namespaces) the child also drops its network (a namespace without interfaces),
its file system (``chroot`` into an empty directory) and, as root, its user; it reports each step it managed
(:attr:`ModelOutput.isolation`). Seccomp is not used.

Every failure is a :class:`ModelRunFailed` with a fixed, participant-safe message (which limit, or which stage
failed — never the runtime's own text, which can quote values computed from the hidden features) and the full
detail for the host.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sandbox import child
from sandbox.validate import ModelContract, ValidatedModel

CHILD_SCRIPT = Path(child.__file__).resolve()


@dataclass(frozen=True)
class Limits:
    """Resource limits of one model run."""

    cpu_seconds: int = 30
    wall_seconds: float = 60.0
    memory_bytes: int = 2 * 1024**3

    def describe(self) -> str:
        return f"{self.cpu_seconds} s CPU, {self.wall_seconds:g} s wall, {self.memory_bytes // 2**20} MiB memory"


class ModelRunFailed(Exception):
    """The model did not produce a scorable output. ``str(exc)`` is safe for the participant; ``host_detail``
    is for the host only."""

    def __init__(self, message: str, *, host_detail: str = "") -> None:
        super().__init__(message)
        self.host_detail = host_detail or message


@dataclass(frozen=True)
class ModelOutput:
    """One prediction row per feature row (``(n,)`` for a binary competition, ``(n, K)`` otherwise) and the
    isolation steps the child reported."""

    predictions: np.ndarray
    isolation: tuple[str, ...]


def _limit(limits: Limits) -> Callable[[], None]:
    def apply() -> None:  # runs in the forked child before exec: plain system calls only
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


_ENVIRONMENT = {
    "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def run_model(
    data: bytes, features: np.ndarray, model: ValidatedModel, contract: ModelContract, limits: Limits | None = None
) -> ModelOutput:
    """Run the model (already accepted by :func:`sandbox.validate.validate_model`) on ``features`` and return its
    predictions in row order; raises :class:`ModelRunFailed`. Never waits longer than the wall-time limit
    (plus the time to kill the process group)."""
    limits = limits or Limits()
    features = np.ascontiguousarray(features, dtype=np.float64)
    n_rows = len(features)
    width = 1 if contract.n_classes == 2 else contract.n_classes
    with tempfile.TemporaryDirectory(prefix="model-jail-") as jail:
        os.chmod(jail, 0o555)  # empty and read-only: the chrooted child can neither read nor write anything
        header = {
            "input": model.input_name, "dtype": model.input_dtype, "output": model.output_name,
            "model_bytes": len(data), "jail": jail, "max_output_values": n_rows * max(width, 2),
            "parent": os.getpid(),
        }
        buffer = io.BytesIO()
        np.save(buffer, features, allow_pickle=False)
        payload = json.dumps(header).encode() + b"\n" + data + buffer.getvalue()
        stdout, stderr, returncode = _communicate(payload, jail, limits)
    return _read_reply(stdout, stderr, returncode, contract, n_rows, limits)


def _communicate(payload: bytes, jail: str, limits: Limits) -> tuple[bytes, bytes, int]:
    process = subprocess.Popen(
        [sys.executable, "-I", str(CHILD_SCRIPT)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=jail, env=_ENVIRONMENT, close_fds=True, start_new_session=True, preexec_fn=_limit(limits),
    )
    try:
        stdout, stderr = process.communicate(payload, timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise ModelRunFailed(
            f"the model ran longer than the wall-time limit of {limits.wall_seconds:g} s and was stopped",
        ) from None
    finally:
        if process.poll() is None:
            _kill_group(process)
    return stdout, stderr, process.returncode


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        process.communicate(timeout=10)


_STAGE_MESSAGES = {
    "start": "the model runner could not start; the host has been told",
    "input": "the model runner could not read its input; the host has been told",
    "load": "the ONNX runtime could not load the model",
    "run": "the model raised an error while running on the hidden features",
    "output": "the model's output is not a float tensor of the declared shape",
}


def _read_reply(
    stdout: bytes, stderr: bytes, returncode: int, contract: ModelContract, n_rows: int, limits: Limits
) -> ModelOutput:
    tail = stderr[-2000:].decode("utf-8", "replace")
    if returncode < 0:
        sig = -returncode
        if sig == signal.SIGXCPU:
            raise ModelRunFailed(f"the model used more than the CPU-time limit of {limits.cpu_seconds} s and was "
                                 "stopped", host_detail=f"killed by SIGXCPU; stderr: {tail}")
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        raise ModelRunFailed(
            f"the model crashed the runtime (signal {name}); a model that needs more than "
            f"{limits.memory_bytes // 2**20} MiB of memory ends this way",
            host_detail=f"killed by signal {name}; stderr: {tail}",
        )
    head, _, rest = stdout.partition(b"\n")
    line, _, body = rest.partition(b"\n")
    try:
        info = json.loads(line) if line else {}
    except ValueError:
        info = {}
    if head == b"ERR":
        kind, stage = info.get("kind", "error"), info.get("stage", "run")
        detail = f"stage {stage}: {info.get('detail', '')}; isolation: {info.get('isolation', [])}"
        if kind == "memory":
            raise ModelRunFailed(f"the model needed more than the memory limit of {limits.memory_bytes // 2**20} "
                                 "MiB", host_detail=detail)
        raise ModelRunFailed(_STAGE_MESSAGES.get(stage, _STAGE_MESSAGES["run"]), host_detail=detail)
    if head != b"OK":
        raise ModelRunFailed(
            "the model runner stopped without an answer; the host has been told",
            host_detail=f"exit status {returncode}; stdout starts {stdout[:200]!r}; stderr: {tail}",
        )
    try:
        output = np.load(io.BytesIO(body), allow_pickle=False)
    except Exception as exc:
        raise ModelRunFailed("the model runner's answer was unreadable; the host has been told",
                             host_detail=f"{type(exc).__name__}: {exc}") from None
    predictions = _as_predictions(output, contract, n_rows)
    return ModelOutput(predictions=predictions, isolation=tuple(info.get("isolation", ())))


def _as_predictions(output: np.ndarray, contract: ModelContract, n_rows: int) -> np.ndarray:
    """One row per feature row, in the competition's layout; the message never quotes the actual shape or any
    value (both can be functions of the hidden features)."""
    k = contract.n_classes
    expected = "[N], [N, 1] or [N, 2]" if k == 2 else f"[N, {k}]"
    wrong = ModelRunFailed(
        f"the model's output does not have the shape {expected} with N = {n_rows} rows",
        host_detail=f"output shape {output.shape}",
    )
    if k == 2 and output.ndim == 2 and output.shape[1] in (1, 2):
        output = output[:, -1]  # [N, 2]: the probability of label 1; [N, 1]: the only column
    shape = (n_rows,) if k == 2 else (n_rows, k)
    if output.shape != shape:
        raise wrong
    if not np.isfinite(output).all():
        raise ModelRunFailed("the model's output contains NaN or infinite values", host_detail=(
            f"{int((~np.isfinite(output)).sum())} non-finite values"))
    return output
