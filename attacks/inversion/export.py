"""Export a scikit-learn ``MLPClassifier`` to the site's arrays-only ``.npz`` (a host-side tool).

The site never unpickles a model: a host converts theirs on their own machine, where loading their own pickle is
safe, and uploads the arrays. ::

    python -m attacks.inversion.export target.pkl target.npz [--input-scale 16]

``--input-scale`` is what the model's inputs were divided by when it was fitted (participants send raw pixels;
the site divides them by this before the first layer). Class ``i`` of the exported model is ``model.classes_[i]``
(printed, for ``--class-names``). Only ReLU MLPs with one softmax or logistic output are supported.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from typing import Any

from scoring.inversion import MlpClassifier


def export_mlp(model: Any, *, input_scale: float = 1.0) -> bytes:
    """The ``.npz`` bytes of a fitted ``sklearn.neural_network.MLPClassifier`` (ReLU, single-label).

    >>> import numpy as np, warnings
    >>> from sklearn.neural_network import MLPClassifier
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     model = MLPClassifier((4,), max_iter=20, random_state=0).fit(np.eye(3), ["a", "b", "c"])
    >>> from scoring.inversion_files import read_mlp_npz
    >>> read_mlp_npz(export_mlp(model)).predict(np.eye(3)).tolist() == [
    ...     list(model.classes_).index(c) for c in model.predict(np.eye(3))]
    True
    """
    if not hasattr(model, "coefs_") or not hasattr(model, "intercepts_") or not hasattr(model, "classes_"):
        raise ValueError("expected a fitted sklearn.neural_network.MLPClassifier")
    if getattr(model, "out_activation_", "softmax") not in ("softmax", "logistic") or (
        getattr(model, "out_activation_", "") == "logistic" and len(model.classes_) != 2
    ):
        raise ValueError("only single-label classifiers are supported (not multi-label)")
    if not input_scale > 0:
        raise ValueError("input_scale must be positive")
    return MlpClassifier.from_sklearn(model, input_scale=input_scale, any_classes=True).to_bytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attacks.inversion.export",
        description="Export a pickled scikit-learn MLPClassifier (yours: only unpickle files you trust) to the "
                    "arrays-only .npz a model-inversion challenge takes.")
    parser.add_argument("model", type=Path, help="a pickle (or joblib file) of a fitted MLPClassifier")
    parser.add_argument("out", type=Path, help="where to write the .npz")
    parser.add_argument("--input-scale", type=float, default=1.0,
                        help="what the inputs were divided by when the model was fitted (default 1)")
    args = parser.parse_args(argv)
    raw = args.model.read_bytes()
    try:
        model = pickle.loads(raw)  # the host's own file, on the host's own machine
    except Exception:  # joblib's format is not a plain pickle
        import joblib

        model = joblib.load(args.model)
    try:
        data = export_mlp(model, input_scale=args.input_scale)
    except ValueError as exc:
        print(f"{args.model}: {exc}", file=sys.stderr)
        return 1
    args.out.write_bytes(data)
    names = ",".join(str(c) for c in model.classes_)
    print(f"wrote {args.out} ({len(data)} bytes): {model.coefs_[0].shape[0]} inputs, {len(model.classes_)} "
          f"classes; --class-names {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
