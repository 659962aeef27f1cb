"""Participants' models as hostile input: check an ONNX graph (:mod:`sandbox.validate`, pure) and run it on
hidden features in a separate, limited process (:mod:`sandbox.runner`, which starts processes and so sits
beside ``bot`` and ``stack``, above the pure layers)."""

from sandbox.runner import Limits, ModelOutput, ModelRunFailed, run_model
from sandbox.validate import ALLOWED_OPERATORS, ModelContract, ModelRefused, ValidatedModel, validate_model

__all__ = [
    "ALLOWED_OPERATORS", "Limits", "ModelContract", "ModelOutput", "ModelRefused", "ModelRunFailed",
    "ValidatedModel", "run_model", "validate_model",
]
