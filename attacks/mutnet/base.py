"""The honest model a MutNet attacker puts its head on (Remark 4: any network serves): a scikit-learn classifier
trained on public data of the competition's shape and exported to ONNX with ``skl2onnx``.

The public data is scikit-learn's own copy of the data set a board of that shape is likely to be: breast cancer
(30 features, 2 classes) or digits (64 features, 10 classes), its first rows only (300 and 897: the part the
project's demos and tests never hide). Any other shape gets :func:`~attacks.mutnet.head.linear_base`. The base
only has to look honest and, in the follow-up model, predict the rows the releases said nothing about; the
labels the attack claims come from the releases alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import onnx

from attacks.mutnet.head import linear_base

#: (n_features, n_classes) → (scikit-learn loader name, rows used for training).
PUBLIC_DATA = {(30, 2): ("load_breast_cancer", 300), (64, 10): ("load_digits", 897)}


@dataclass(frozen=True)
class HonestBase:
    model: onnx.ModelProto
    description: str


def honest_base(n_features: int, n_classes: int = 2) -> HonestBase:
    """An honest ONNX classifier with input ``X`` ``[N, n_features]`` and output ``probabilities``
    ``[N, n_classes]``; deterministic (the same bytes every call, so a resumed bot run sends the same models)."""
    data, description = _trained(n_features, n_classes)
    return HonestBase(onnx.load_model_from_string(data), description)


@lru_cache(maxsize=8)
def _trained(n_features: int, n_classes: int) -> tuple[bytes, str]:
    known = PUBLIC_DATA.get((n_features, n_classes))
    if known is None:
        return (linear_base(n_features, n_classes).SerializeToString(),
                f"a small linear softmax model ({n_features} features, {n_classes} classes; no public data)")
    import sklearn.datasets
    from skl2onnx import to_onnx
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    loader, rows = known
    features, labels = getattr(sklearn.datasets, loader)(return_X_y=True)
    features = np.asarray(features, dtype=np.float64)[:rows]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)).fit(features, labels[:rows])
    exported = to_onnx(model, features[:1].astype(np.float32), options={id(model): {"zipmap": False}})
    name = loader.removeprefix("load_").replace("_", " ")
    return (exported.SerializeToString(),
            f"scikit-learn logistic regression on the first {rows} rows of {name} (exported with skl2onnx)")
