"""Additive Laplace/Gaussian noise on the released score (floating-point safe, seeded), and the multiplicative
noise model of paper 000, App. B.5.

Chain object: ``{"name": "noise", "kind": "laplace"|"gaussian"|"multiplicative", ...}``.

* ``laplace``: ``scale`` (b, the Laplace scale; std = b·√2) or ``epsilon``, calibrated with OpenDP's
  privacy map to the metric's label sensitivity Δ on the scored rows (see :mod:`defenses.sensitivity`).
* ``gaussian``: ``scale`` (σ) or ``epsilon`` with ``delta`` (default 1e-6), calibrated with OpenDP's
  zCDP map converted to (ε, δ)-DP.
* ``multiplicative``: ``alpha``; releases ``score × (1 + U)``, ``U ~ Uniform[-α, α]`` — the bounded noise model
  under which paper 000 (Aggarwal et al., ICML 2021, App. B.5, Theorem 11) still recovers
  ``⌈log2(1/α) − 2⌉`` labels per query for ``α <= 1/8``. It is a utility/robustness model, not a DP mechanism.

Samplers (``sampler``), for the additive kinds:

* ``"exact"`` (default): the input is rounded to the grid ``2^k`` (``k`` defaults to -1074, OpenDP's default,
  which leaves every float64 unchanged) and exact discrete Laplace/Gaussian noise in grid units is added
  (Canonne, Kamath & Steinke 2020) by :mod:`defenses.sampling`, using integer arithmetic driven by ``ctx.rng``.
  This is OpenDP's construction, reproducible from the competition secret and submission key: a re-score,
  the site and an offline game give the same released score.
* ``"opendp"``: calls ``opendp.measurements.make_laplace``/``make_gaussian`` on ``atom_domain(T=float)`` with
  ``absolute_distance``. OpenDP 0.16 cannot be seeded (it draws from its own CSPRNG), so the released value is
  recorded in the state under the submission key and a re-score of that key returns it; an offline game with
  this sampler is not reproducible across runs, and the state grows by one number per submission.

Either way the ε actually spent (OpenDP's privacy map at d_in = Δ, which accounts for the grid) is appended
to ``ctx.ledger["privacy"]`` for ``privacy_budget``; the same number is reported for both samplers.

Parameter ranges (checked when the chain is built, so a host never saves a chain that fails every
submission): a fixed ``scale`` in ``(0, 1e9]``, ``epsilon`` in ``[1e-6, 1e4]``, ``delta`` in ``(0, 1)``. Beyond
them the noise would overflow float64 or OpenDP's calibration (a scale of 1e308 or ε = 1e-300 released
nothing but errors), and well inside them noise already hides every score the site's metrics take (log
loss is at most 36.7 per row at float64) or protects nothing (ε = 1e4). An ``epsilon`` is also calibrated
once at the metric's worst sensitivity (a single scored row) when the chain meets its metric.

**The release stays in the metric's range.** Noise can push a log loss below 0 or an AUC above 1; the
released value is clamped to the metric's range (:meth:`defenses.base.MetricView.clamp`: log loss >= 0,
AUC and accuracy in [0, 1], Brier in [0, 1] or [0, 2]). Clamping is post-processing of the noisy release —
a fixed function of the DP output that never looks at the data again — so it spends no privacy and leaks
nothing the unclamped value would not; it only stops the board from showing impossible scores
("−0.00007"). It does bias releases near a boundary towards the inside of the range (a true log loss of
0.00001 under noise of scale 0.01 is released as 0 about half the time).
"""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

from defenses import sampling
from defenses.base import (
    Defense,
    DefenseConfigError,
    DefenseContext,
    MetricView,
    Param,
    Score,
    ScoringView,
    Stage,
    register,
    take_params,
)
from defenses.sensitivity import has_sensitivity, sensitivity, worst_case_sensitivity

DEFAULT_DELTA = 1e-6
#: The largest fixed ``scale`` (and Thresholdout ``sigma``/``threshold``) accepted: see the module docstring.
MAX_SCALE = 1e9
#: The ``epsilon`` range of calibrated noise: see the module docstring.
MIN_EPSILON = 1e-6
MAX_EPSILON = 1e4


def _opendp() -> Any:
    # Imported lazily: building a chain without noise should not pay for loading OpenDP's native library.
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _space(dp: Any) -> tuple[Any, Any]:
    return dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


# --- privacy maps and calibration (OpenDP) ---------------------------------------------------------------


@lru_cache(maxsize=256)
def laplace_epsilon(scale: float, d_in: float, k: int | None) -> float:
    """ε of OpenDP's Laplace mechanism with this scale and grid at sensitivity ``d_in`` (∞ if unbounded)."""
    dp = _opendp()
    try:
        return float(dp.m.make_laplace(*_space(dp), scale=scale, k=k).map(d_in=d_in))
    except dp.OpenDPException:
        return math.inf  # OpenDP refuses to state a loss that overflows: the noise hides nothing


@lru_cache(maxsize=256)
def gaussian_epsilon(scale: float, d_in: float, delta: float, k: int | None) -> float:
    """ε at ``delta`` of OpenDP's Gaussian mechanism (zCDP converted to approximate DP; ∞ if unbounded).

    A scale far below the sensitivity (e.g. σ = 1e-4 on a log loss over 150 rows) has ρ in the millions,
    and OpenDP's conversion to (ε, δ) overflows: such noise protects nothing, so ε is reported as ∞.
    """
    dp = _opendp()
    try:
        meas = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*_space(dp), scale=scale, k=k))
        return float(meas.map(d_in=d_in).epsilon(delta))
    except dp.OpenDPException:
        return math.inf


@lru_cache(maxsize=256)
def laplace_scale_for(epsilon: float, d_in: float, k: int | None) -> float:
    """The smallest scale whose OpenDP privacy map gives at most ``epsilon`` at ``d_in`` (binary search)."""
    dp = _opendp()
    return float(
        dp.binary_search_param(lambda s: dp.m.make_laplace(*_space(dp), scale=s, k=k), d_in=d_in, d_out=epsilon)
    )


@lru_cache(maxsize=256)
def gaussian_scale_for(epsilon: float, delta: float, d_in: float, k: int | None) -> float:
    """The smallest σ whose OpenDP (ε, δ) map gives at most ``(epsilon, delta)`` at ``d_in``."""
    dp = _opendp()

    def build(s: float) -> Any:
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*_space(dp), scale=s, k=k)), delta)

    return float(dp.binary_search_param(build, d_in=d_in, d_out=(epsilon, delta)))


# --- noise models, one per kind ------------------------------------------------------------------------


def _positive_number(
    key: str, value: Any, *, upper: float | None = None, at_most: float | None = None, at_least: float | None = None,
    why: str = "",
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise DefenseConfigError(f"defense 'noise': {key!r} must be a positive number, got {value!r}")
    if upper is not None and value >= upper:
        raise DefenseConfigError(f"defense 'noise': {key!r} must be below {upper}, got {value!r}")
    if at_most is not None and value > at_most:
        raise DefenseConfigError(f"defense 'noise': {key!r} must be at most {at_most:g}{why}, got {value!r}")
    if at_least is not None and value < at_least:
        raise DefenseConfigError(f"defense 'noise': {key!r} must be at least {at_least:g}{why}, got {value!r}")
    return float(value)


class NoiseModel(ABC):
    """One ``kind`` of the noise defense: its parameters (validated in ``__init__``) and how it perturbs."""

    kind: ClassVar[str]
    defaults: ClassVar[dict[str, Any]]

    @abstractmethod
    def __init__(self, p: dict[str, Any]) -> None:
        """Validate this kind's parameters ``p`` (``defaults`` merged with the chain object's)."""

    @abstractmethod
    def params(self) -> dict[str, Any]: ...

    @abstractmethod
    def apply(self, score: Score, view: ScoringView, ctx: DefenseContext) -> float: ...

    def check_metric(self, metric: MetricView) -> None:
        """Reject a metric this kind cannot handle (default: accept)."""
        return None


class Multiplicative(NoiseModel):
    """``score × (1 + U)``, ``U ~ Uniform[-α, α]`` (paper 000, App. B.5)."""

    kind = "multiplicative"
    defaults: ClassVar[dict[str, Any]] = {"alpha": None}

    def __init__(self, p: dict[str, Any]) -> None:
        alpha = p["alpha"]
        if alpha is None:
            raise DefenseConfigError("defense 'noise' (multiplicative): give 'alpha', the bound on |U|")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha < 1:
            raise DefenseConfigError(f"defense 'noise': 'alpha' must be a number in [0, 1), got {alpha!r}")
        self.alpha = float(alpha)

    def params(self) -> dict[str, Any]:
        return {"alpha": self.alpha}

    def apply(self, score: Score, view: ScoringView, ctx: DefenseContext) -> float:
        # U = α·j/2^52 with j uniform in [-2^52, 2^52]: a 2^-52-fine uniform on [-α, α], applied in exact
        # rational arithmetic and rounded to float64 once.
        j = int(ctx.rng.integers(-(2**52), 2**52, endpoint=True))
        factor = 1 + Fraction(self.alpha) * Fraction(j, 2**52)
        return float(sampling.to_fraction(score) * factor)


class Additive(NoiseModel):
    """Laplace or Gaussian noise with a fixed ``scale`` or calibrated to ``epsilon`` (and ``delta``)."""

    defaults: ClassVar[dict[str, Any]] = {"scale": None, "epsilon": None, "sampler": "exact", "k": None}

    def __init__(self, p: dict[str, Any]) -> None:
        if (p["scale"] is None) == (p["epsilon"] is None):
            raise DefenseConfigError(
                f"defense 'noise' ({self.kind}): give exactly one of 'scale' (fixed noise) or 'epsilon' "
                "(calibrated to the metric's sensitivity)"
            )
        self.scale = None if p["scale"] is None else _positive_number(
            "scale", p["scale"], at_most=MAX_SCALE,
            why=" (larger noise hides every score and overflows float64 arithmetic)",
        )
        self.epsilon = None if p["epsilon"] is None else _positive_number(
            "epsilon", p["epsilon"], at_least=MIN_EPSILON, at_most=MAX_EPSILON,
            why=" (outside [1e-06, 10000] calibrated noise either hides every score or protects nothing, and "
            "OpenDP's calibration overflows)",
        )
        self.delta: float | None = None
        if p["sampler"] not in SAMPLERS:
            raise DefenseConfigError(
                f"defense 'noise': unknown sampler {p['sampler']!r}; choose one of {', '.join(SAMPLERS)}"
            )
        self.sampler: str = p["sampler"]
        k = p["k"]
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not sampling.FINEST_K <= k <= 0):
            raise DefenseConfigError(
                f"defense 'noise': 'k' (grid 2^k) must be an integer from {sampling.FINEST_K} to 0, got {k!r}"
            )
        self.k: int | None = k

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scale": self.scale} if self.scale is not None else {"epsilon": self.epsilon}
        out["sampler"] = self.sampler
        if self.k is not None:
            out["k"] = self.k
        return out

    def check_metric(self, metric: MetricView) -> None:
        if self.epsilon is None:
            return
        if not has_sensitivity(metric):
            raise DefenseConfigError(
                f"defense 'noise': cannot calibrate 'epsilon' for metric {metric.name!r} (no derived "
                "sensitivity); give a fixed 'scale'"
            )
        # Calibrate once at the largest sensitivity the metric can have (one scored row) and at a small one
        # (ten million rows), so a chain that cannot be calibrated is refused now, not at every submission.
        worst = worst_case_sensitivity(metric)
        for d_in in (worst, worst / 1e7):
            self.calibrated_scale(self.epsilon, d_in)

    def calibrated_scale(self, epsilon: float, d_in: float) -> float:
        """The smallest scale spending at most ``epsilon`` at sensitivity ``d_in`` (OpenDP's binary search).

        OpenDP's search probes extreme scales and overflows for some (ε, Δ) pairs it could serve (a Gaussian
        at Δ >= 200, after minutes of probing). Above Δ = 100 (one scored row with an MPFR eps below e^-100),
        or when the search fails, the scale found for Δ = 1 is multiplied by Δ (the privacy loss depends on
        Δ/scale) and nudged up until OpenDP's own privacy map confirms it. Raises :class:`DefenseConfigError`
        if neither works."""
        if d_in <= 100:
            with contextlib.suppress(Exception):  # OpenDP raises its own exception type for overflow
                return self.calibrate(epsilon, d_in)
        with contextlib.suppress(Exception):
            scale, step = self.calibrate(epsilon, 1.0) * d_in, 1e-12
            for _ in range(48):
                if self.epsilon_at(scale, d_in) <= epsilon:
                    return scale
                scale, step = scale * (1 + step), step * 2
        raise DefenseConfigError(
            f"defense 'noise' ({self.kind}): cannot calibrate epsilon={epsilon:g} at sensitivity {d_in:g}; "
            "give a fixed 'scale' or another epsilon"
        )

    @property
    def release_delta(self) -> float:
        return 0.0

    @abstractmethod
    def calibrate(self, epsilon: float, d_in: float) -> float: ...

    @abstractmethod
    def epsilon_at(self, scale: float, d_in: float) -> float: ...

    @abstractmethod
    def exact_units(self, ctx: DefenseContext, scale: float, k: int) -> int: ...

    @abstractmethod
    def opendp_measurement(self, scale: float) -> Any: ...

    def scale_for(self, view: ScoringView) -> tuple[float, float | None, float | None]:
        """(scale, ε spent, Δ) for a release on ``view``; ε and Δ are ``None`` where no sensitivity exists."""
        if self.epsilon is not None:
            d_in = sensitivity(view)
            scale = self.calibrated_scale(self.epsilon, d_in)
            return scale, self.epsilon_at(scale, d_in), d_in
        assert self.scale is not None
        if not has_sensitivity(view.metric):
            return self.scale, None, None
        d_in = sensitivity(view)
        return self.scale, self.epsilon_at(self.scale, d_in), d_in

    def apply(self, score: Score, view: ScoringView, ctx: DefenseContext) -> float:
        scale, spent, d_in = self.scale_for(view)
        released = SAMPLERS[self.sampler](self, score, scale, ctx)
        if spent is None:
            ctx.notes.append(f"noise: no sensitivity is derived for {view.metric.name}; ε spent is unknown")
        elif not math.isfinite(spent):
            ctx.notes.append(f"noise: scale {scale:g} is far below the sensitivity {d_in:g}; ε is unbounded")
            spent = None  # JSON has no infinity; privacy_budget counts an unknown ε as infinite
        ctx.ledger.setdefault("privacy", []).append(
            {"defense": "noise", "kind": self.kind, "epsilon": spent, "delta": self.release_delta,
             "sensitivity": d_in, "scale": scale}
        )
        return released


class Laplace(Additive):
    kind = "laplace"

    def calibrate(self, epsilon: float, d_in: float) -> float:
        return laplace_scale_for(epsilon, d_in, self.k)

    def epsilon_at(self, scale: float, d_in: float) -> float:
        return laplace_epsilon(scale, d_in, self.k)

    def exact_units(self, ctx: DefenseContext, scale: float, k: int) -> int:
        return sampling.laplace_units(ctx.rng, scale, k)

    def opendp_measurement(self, scale: float) -> Any:
        dp = _opendp()
        return dp.m.make_laplace(*_space(dp), scale=scale, k=self.k)


class Gaussian(Additive):
    kind = "gaussian"
    defaults: ClassVar[dict[str, Any]] = {**Additive.defaults, "delta": None}

    def __init__(self, p: dict[str, Any]) -> None:
        super().__init__(p)
        self.delta = None if p["delta"] is None else _positive_number("delta", p["delta"], upper=1.0)

    def params(self) -> dict[str, Any]:
        out = super().params()
        if self.delta is not None:
            out["delta"] = self.delta
        return out

    @property
    def release_delta(self) -> float:
        return self.delta if self.delta is not None else DEFAULT_DELTA

    def calibrate(self, epsilon: float, d_in: float) -> float:
        return gaussian_scale_for(epsilon, self.release_delta, d_in, self.k)

    def epsilon_at(self, scale: float, d_in: float) -> float:
        return gaussian_epsilon(scale, d_in, self.release_delta, self.k)

    def exact_units(self, ctx: DefenseContext, scale: float, k: int) -> int:
        return sampling.gaussian_units(ctx.rng, scale, k)

    def opendp_measurement(self, scale: float) -> Any:
        dp = _opendp()
        return dp.m.make_gaussian(*_space(dp), scale=scale, k=self.k)


KINDS: dict[str, type[NoiseModel]] = {model.kind: model for model in (Laplace, Gaussian, Multiplicative)}


# --- samplers --------------------------------------------------------------------------------------------


def _sample_exact(model: Additive, score: Score, scale: float, ctx: DefenseContext) -> float:
    grid = sampling.FINEST_K if model.k is None else model.k
    return sampling.add_grid_noise(score, model.exact_units(ctx, scale, grid), grid)


def _sample_opendp(model: Additive, score: Score, scale: float, ctx: DefenseContext) -> float:
    # OpenDP cannot be seeded: remember what it released for this submission so a re-score returns it.
    releases: dict[str, Any] = ctx.state.setdefault("opendp_releases", {})
    recorded = releases.get(ctx.submission_key)
    if recorded is not None and recorded["score"] == repr(float(score)) and recorded["scale"] == scale:
        return float(recorded["released"])
    released = float(model.opendp_measurement(scale)(float(score)))
    releases[ctx.submission_key] = {"score": repr(float(score)), "scale": scale, "released": released}
    return released


SAMPLERS: dict[str, Callable[[Additive, Score, float, DefenseContext], float]] = {
    "exact": _sample_exact,
    "opendp": _sample_opendp,
}


@register
class Noise(Defense):
    """Perturb the score with Laplace, Gaussian or multiplicative noise (see the module docstring).

    Sources: Dwork, McSherry, Nissim & Smith 2006 (Laplace mechanism); Canonne, Kamath & Steinke 2020 (exact
    discrete Laplace/Gaussian); Mironov 2012 (why float noise must be avoided); OpenDP 0.16 (privacy maps);
    Aggarwal et al., ICML 2021, App. B.4–B.5 (random and multiplicative noise against label inference).

    >>> Noise(kind="laplace", epsilon=1.0).to_json()
    {'name': 'noise', 'kind': 'laplace', 'epsilon': 1.0, 'sampler': 'exact'}
    """

    name = "noise"
    stage = Stage.SCORE
    citation = "Dwork et al. 2006; Canonne, Kamath & Steinke 2020; OpenDP; Aggarwal et al. ICML 2021 App. B.5"
    parameters = (
        Param("kind", "choice", "laplace", choices=tuple(KINDS), help="the noise distribution"),
        Param("scale", "number", minimum=0, maximum=MAX_SCALE, exclusive_minimum=True, excludes=("epsilon",),
              when=(("kind", ("laplace", "gaussian")),),
              help="fixed noise: the Laplace scale b, or the Gaussian σ (give this or epsilon)"),
        Param("epsilon", "number", minimum=MIN_EPSILON, maximum=MAX_EPSILON, excludes=("scale",),
              when=(("kind", ("laplace", "gaussian")),),
              help="noise calibrated to this ε at the metric's sensitivity on the scored rows (give this or scale)"),
        Param("delta", "number", minimum=0, maximum=1, exclusive_minimum=True, exclusive_maximum=True,
              when=(("kind", ("gaussian",)),), default_text=f"{DEFAULT_DELTA:g}", help="the Gaussian's δ"),
        Param("sampler", "choice", "exact", choices=tuple(SAMPLERS), when=(("kind", ("laplace", "gaussian")),),
              help="exact: seeded discrete noise (a re-score repeats it); opendp: OpenDP's own sampler"),
        Param("k", "integer", minimum=sampling.FINEST_K, maximum=0, when=(("kind", ("laplace", "gaussian")),),
              default_text=f"{sampling.FINEST_K}", help="the noise grid is 2^k"),
        Param("alpha", "number", minimum=0, maximum=1, exclusive_maximum=True, required=True,
              when=(("kind", ("multiplicative",)),), help="releases score × (1 + U), U uniform in [-α, α]"),
    )

    def __init__(self, **params: Any) -> None:
        kind = params.get("kind", "laplace")
        if kind not in KINDS:
            raise DefenseConfigError(f"defense 'noise': unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
        model_cls = KINDS[kind]
        p = take_params(f"noise (kind {kind})", params, {"kind": kind, **model_cls.defaults})
        self.model: NoiseModel = model_cls(p)

    @property
    def kind(self) -> str:
        return self.model.kind

    def records_privacy(self) -> bool:
        return isinstance(self.model, Additive)  # multiplicative noise is a robustness model, not DP

    def params(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.model.params()}

    def check_metric(self, metric: MetricView) -> None:
        self.model.check_metric(metric)

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:
            return None
        # Post-processing: the release stays in the metric's range (see the module docstring).
        return view.metric.clamp(self.model.apply(score, view, ctx))
