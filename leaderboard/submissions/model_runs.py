"""Model competitions on the site: check an uploaded ONNX model against its competition (at upload), and run
it on the hidden features in the sandbox (in the worker), giving predictions the scoring core takes like a file.

The model never sees labels: it gets the features only, and its output is checked (shape, finite values, the
competition's prediction rules) before any score is computed. Every message a participant can read is one of
a few fixed texts that quote neither the hidden features nor values computed from them; the runtime's own
text goes to the host's notes.
"""

from __future__ import annotations

import numpy as np
from django.conf import settings

from leaderboard.competitions.models import Competition, HiddenTestData
from leaderboard.errors import InvalidUpload
from sandbox import Limits, ModelContract, ModelOutput, ModelRefused, ModelRunFailed, ValidatedModel, run_model
from sandbox import validate_model as sandbox_validate_model
from scoring import ScoringSpec, SubmissionError
from scoring.parsing import ParsedPredictions, validate_array

__all__ = ["ModelRunFailed", "model_contract", "model_limits", "model_predictions", "model_validate"]


def model_contract(competition: Competition) -> ModelContract:
    return ModelContract(
        n_features=competition.n_features,
        n_classes=competition.n_classes,
        n_rows=competition.n_rows,
        max_bytes=int(settings.LEADERBOARD_MODEL_MAX_BYTES),
        max_nodes=int(settings.LEADERBOARD_MODEL_MAX_NODES),
    )


def model_limits() -> Limits:
    return Limits(
        cpu_seconds=int(settings.LEADERBOARD_MODEL_CPU_SECONDS),
        wall_seconds=float(settings.LEADERBOARD_MODEL_WALL_SECONDS),
        memory_bytes=int(settings.LEADERBOARD_MODEL_MEMORY_MB) * 1024 * 1024,
    )


def model_validate(*, competition: Competition, data: bytes) -> ValidatedModel:
    """Check an upload is an acceptable ONNX model for ``competition`` (nothing runs); raises
    :class:`InvalidUpload` with the reason."""
    try:
        return sandbox_validate_model(data, model_contract(competition))
    except ModelRefused as exc:
        raise InvalidUpload(f"the model is refused: {exc}") from None


def model_predictions(*, competition: Competition, spec: ScoringSpec, data: bytes) -> tuple[ParsedPredictions, str]:
    """Run a stored model on the hidden features and return its predictions, validated as an upload would be,
    and a host note naming the isolation the run had; raises :class:`ModelRunFailed` (participant-safe text)."""
    try:
        model = sandbox_validate_model(data, model_contract(competition))
    except ModelRefused as exc:  # the limits may have been tightened since the upload
        raise ModelRunFailed(f"the model is refused: {exc}") from None
    features = HiddenTestData.objects.only("features_npy").get(competition_id=competition.pk).features
    if features is None:
        raise ModelRunFailed("the competition has no hidden features; the host has been told",
                             host_detail="configuration error: a model submission on a competition without features")
    output = run_model(data, features, model, model_contract(competition), model_limits())
    parsed = _checked(output, spec)
    note = "model run isolation: " + (", ".join(output.isolation) or "resource limits only")
    return parsed, note + _screen(data, features, parsed, competition.n_rows)


#: What a participant reads when the screen rejects a model: fixed, it quotes nothing computed from hidden data.
SCREEN_REJECT_MESSAGE = (
    "This model was rejected: its graph or its outputs have the structure of a label-inference head (a Mutator "
    "Network, paper 001 §5) rather than of a trained classifier."
)


def _screen(data: bytes, features: np.ndarray, parsed: ParsedPredictions, n_rows: int) -> str:
    """``LEADERBOARD_MODEL_SCREEN``: nothing (``off``), a host note (``flag``), or a refusal (``reject``)."""
    mode = str(settings.LEADERBOARD_MODEL_SCREEN)
    if mode not in ("flag", "reject"):
        return ""
    from games.model_screen import screen_outputs  # onnx inspection and numpy statistics, no further model run

    screening = screen_outputs(data, features, parsed.values, n_rows=n_rows)
    if not screening.flagged:
        return "; model screen: nothing found"
    if mode == "reject":
        raise ModelRunFailed(SCREEN_REJECT_MESSAGE, host_detail="model screen: " + screening.summary())
    return "; model screen flagged: " + screening.summary()


# Models compute in float32: an average of probabilities (a random forest's) can land a few ulps past 1.
FLOAT32_SLACK = 1e-6


def _checked(output: ModelOutput, spec: ScoringSpec) -> ParsedPredictions:
    """The core's checks of a prediction array (the same as for an upload), with a message that names no row:
    which row breaks a rule is a function of the hidden features. Values within :data:`FLOAT32_SLACK` outside
    [0, 1] are float32 rounding and are clipped first."""
    predictions = output.predictions
    near = (predictions >= -FLOAT32_SLACK) & (predictions <= 1 + FLOAT32_SLACK)
    predictions = np.where(near, np.clip(predictions, 0.0, 1.0), predictions)
    try:
        values = validate_array(predictions, spec.submission_format)
    except SubmissionError as exc:
        rule = (
            "probabilities must lie in [0, 1]" if spec.hidden.n_classes == 2
            else "probabilities must lie in [0, 1] and each row must sum to 1"
        )
        raise ModelRunFailed(f"the model's output is not a valid prediction: {rule}", host_detail=str(exc)) from None
    texts = None
    if not spec.arithmetic.is_float64:  # φ-bit arithmetic reads decimal text: the output's exact float64 values
        texts = tuple(tuple(repr(float(v)) for v in np.atleast_1d(row)) for row in values)
    return ParsedPredictions(values=values, texts=texts)
