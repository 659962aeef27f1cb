"""The sandboxed side of a model run: a standalone script, started by :mod:`sandbox.runner` with resource
limits already set, that runs one ONNX model on one feature matrix and writes the output to stdout.

It imports nothing of ours (so nothing of the site's settings or secrets is loaded) and, before it looks at
the model, shuts itself in: a network namespace without interfaces, a ``chroot`` into an empty directory,
the ``nobody`` user when started as root, and no further file descriptors. Each step it managed is reported
back, so the host sees what was enforced on this machine rather than what was hoped for.

Protocol. stdin: one JSON header line (``input``, ``dtype``, ``output``, ``model_bytes``, ``jail``, ``parent``,
``max_output_values``) followed by the model's bytes and the features as ``.npy``. stdout: ``OK`` + a JSON line
(the isolation steps) + the output as ``.npy``; or ``ERR`` + a JSON line (``stage``, ``kind``, ``detail``).
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import resource
import sys
from typing import Any

PR_SET_PDEATHSIG = 1
SIGKILL = 9
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
NOBODY = 65534


def _unshare_network() -> str | None:
    """Enter a new network namespace (only a down loopback: no route anywhere). Done first, while this
    process has one thread (a new user namespace demands it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    if libc.unshare(flags) != 0:
        return None
    return "network namespace without interfaces"


def _shut_in(jail: str) -> list[str]:
    """Lose the file system and privileges once the libraries are loaded: chroot into the empty ``jail``, the
    ``nobody`` user if we are root, and no new file descriptors or processes."""
    steps: list[str] = []
    try:
        os.chroot(jail)
        os.chdir("/")
        steps.append("chroot into an empty directory")
    except OSError:
        pass
    if os.getuid() == 0:  # started as root: run the model as nobody
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            steps.append("user nobody")
        except OSError:
            pass
    try:
        highest = max(int(name) for name in os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 16
    except (OSError, ValueError):
        highest = 16
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, highest + 1))
        steps.append(f"no new file descriptors (limit {highest + 1})")
    except (OSError, ValueError):
        pass
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        steps.append("no new processes")
    except (OSError, ValueError):
        pass
    return steps


def _die_with_parent(parent: int) -> str | None:
    """Be killed when the worker that started us dies (its wall-time limit dies with it otherwise). Set after
    the change of user, which clears it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0:
            return None
    except OSError:
        return None
    if os.getppid() != parent:  # the parent is already gone
        os._exit(1)
    return "killed with its parent"


def _reply(out: Any, head: bytes, payload: dict[str, Any], body: bytes = b"") -> None:
    out.write(head + b"\n" + json.dumps(payload).encode() + b"\n" + body)
    out.flush()


def main() -> int:
    out = sys.stdout.buffer
    steps: list[str] = []
    network = _unshare_network()
    if network:
        steps.append(network)
    stage = "start"
    try:
        import numpy as np
        import onnxruntime as ort

        stage = "input"
        source = sys.stdin.buffer
        header = json.loads(source.readline())
        model = source.read(int(header["model_bytes"]))
        features = np.load(io.BytesIO(source.read()), allow_pickle=False)
        steps += _shut_in(str(header["jail"]))
        orphan_guard = _die_with_parent(int(header["parent"]))
        if orphan_guard:
            steps.append(orphan_guard)

        stage = "load"
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        options.enable_mem_pattern = False
        # The model was checked to hold no external data; this makes the runtime refuse it all the same.
        options.add_session_config_entry("session.disable_external_initializers", "1")
        session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])

        stage = "run"
        (output,) = session.run([header["output"]], {header["input"]: features.astype(header["dtype"])})
        stage = "output"
        if not isinstance(output, np.ndarray) or output.dtype.kind != "f":
            _reply(out, b"ERR", {"stage": stage, "kind": "type", "detail": f"output of type {type(output)}"})
            return 0
        expected = int(header["max_output_values"])
        if output.size > expected:
            _reply(out, b"ERR", {"stage": stage, "kind": "shape", "detail": f"shape {output.shape}"})
            return 0
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(output, dtype=np.float64), allow_pickle=False)
        _reply(out, b"OK", {"isolation": steps}, buffer.getvalue())
        return 0
    except MemoryError:
        _reply(out, b"ERR", {"stage": stage, "kind": "memory", "detail": "MemoryError", "isolation": steps})
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}"[:2000]
        kind = "memory" if "bad_alloc" in detail or "allocate" in detail.lower() else "error"
        _reply(out, b"ERR", {"stage": stage, "kind": kind, "detail": detail, "isolation": steps})
    return 0


if __name__ == "__main__":
    sys.exit(main())
