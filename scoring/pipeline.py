"""Score one submission on one metric: raw score per split, then the defense chain, then the competition's
displayed precision. :func:`scoring.release.release_submission` runs it for every metric a competition reports;
the site's Celery task and the attacks' ``LocalOracle`` both call that, so what a participant sees and what an
offline attack sees come from the same code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property
from typing import Any

import numpy as np

from defenses import DefenseChain, MetricView, ScoringView
from defenses.base import Score
from defenses.rounding import round_decimals
from scoring.arithmetic import Arithmetic
from scoring.errors import ConfigurationError, NonFiniteScoreError
from scoring.fast_csv import BytesLike
from scoring.hidden import HiddenTestSet
from scoring.metrics import Metric, check_metric_for, get_metric, mpfr_canonical_form, score_mpfr
from scoring.parsing import (
    DEFAULT_MAX_BYTES,
    ParsedPredictions,
    SubmissionFormat,
    parse_submission_csv,
    parse_submission_json,
)

SPLITS = ("public", "private")


@dataclass(frozen=True)
class ScoringSpec:
    """Everything the core needs to score a competition's submissions (labels included: server-side only)."""

    hidden: HiddenTestSet
    metric_name: str = "binary_logloss"
    eps: float = 1e-15
    decimals: int | None = 5
    arithmetic: Arithmetic = field(default_factory=Arithmetic)
    chain: DefenseChain = field(default_factory=lambda: DefenseChain([]))
    secret: int = 0
    same_file_same_score: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    # Further metrics released beside ``metric_name`` for every submission (paper 004, Section 3: AUC beside
    # the log loss); duplicates and the primary metric itself are dropped.
    also_report: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_metric_for(self.metric, self.hidden.n_classes, self.arithmetic)
        self.chain.check_metric(self.metric_view())
        extra = tuple(name for name in dict.fromkeys(self.also_report) if name != self.metric_name)
        for name in extra:  # one upload feeds every reported metric: they must read the same kind of values
            if get_metric(name).logits != self.metric.logits:
                kinds = {True: "logits", False: "probabilities"}
                raise ConfigurationError(
                    f"metric {name!r} reads {kinds[not self.metric.logits]} but the primary metric "
                    f"{self.metric_name!r} reads {kinds[self.metric.logits]}; one upload cannot be both"
                )
        object.__setattr__(self, "also_report", extra)

    @property
    def reported_metrics(self) -> tuple[str, ...]:
        """Every metric released for a submission, the primary one first."""
        return (self.metric_name, *self.also_report)

    @cached_property
    def metric_specs(self) -> dict[str, ScoringSpec]:
        """One spec per reported metric, the primary first: this spec with another ``metric_name`` (same
        hidden set, split, eps, precision, arithmetic, secret and chain). Built on first use, which validates
        each metric for the task, arithmetic and chain (``ConfigurationError``/``DefenseConfigError``)."""
        return {
            self.metric_name: self,
            **{name: replace(self, metric_name=name, also_report=()) for name in self.also_report},
        }

    @property
    def needs_peers(self) -> bool:
        """Whether a release reads the other participants' chain states (a board rank): one chain serves every
        reported metric, so this is the chain's answer."""
        return self.chain.needs_peers

    @property
    def released_decimals(self) -> int | None:
        """The precision a participant sees: the displayed decimals or a coarser rounding in the chain
        (``None``: the full value)."""
        return self.chain.released_decimals(self.decimals)

    @property
    def released_higher_is_better(self) -> bool:
        """Whether a larger released value is better (the board's order): the metric's direction, unless the
        chain releases a hard label (:mod:`defenses.feedback`: 1 = beats the bar; a rank: lower is better)."""
        return self.chain.released_higher_is_better(self.metric.higher_is_better)

    @property
    def feedback(self) -> dict[str, Any]:
        """What a released value is, as participants are told: ``{"kind": "score"}`` or a hard label
        (:meth:`defenses.DefenseChain.feedback`)."""
        return self.chain.feedback()

    @property
    def metric(self) -> Metric:
        return get_metric(self.metric_name)

    @cached_property
    def submission_format(self) -> SubmissionFormat:
        return SubmissionFormat(
            self.hidden.ids, self.hidden.id_index, self.hidden.n_classes, self.max_bytes, logits=self.metric.logits
        )

    @cached_property
    def split_rows(self) -> dict[str, np.ndarray]:
        return {split: self.hidden.split_rows(split) for split in ("public", "private", "all")}

    def metric_view(self) -> MetricView:
        return metric_view(self.metric_name, self.eps, self.hidden.n_classes)


def metric_view(metric_name: str, eps: float, n_classes: int = 2) -> MetricView:
    """What the defenses may know about a metric: its direction, how to evaluate it at clipping ``eps``, and
    its range on a competition with ``n_classes`` classes."""
    metric = get_metric(metric_name)
    rows = metric.row_values
    lower, upper = metric.value_range(n_classes)
    return MetricView(
        name=metric.name,
        higher_is_better=metric.higher_is_better,
        score=lambda p, y: metric.score(p, y, eps),
        row_values=(lambda p, y: rows(p, y, eps)) if rows is not None else None,
        eps=eps,
        lower=lower,
        upper=upper,
        row_spread=metric.label_spread(eps, n_classes) if metric.label_spread is not None else None,
        to_probabilities=metric.as_probabilities if metric.logits else None,
    )


@dataclass(frozen=True)
class SplitResult:
    """A split's raw score (host-only), its released score and the exact released text (``None`` = nothing
    released), host-only notes from the defenses, and a participant-safe message saying why nothing was
    released (e.g. "your privacy budget is spent")."""

    raw: Score
    released: float | None
    released_text: str | None
    notes: tuple[str, ...] = ()
    message: str | None = None


@dataclass(frozen=True)
class Evaluation:
    results: dict[str, SplitResult]
    states: dict[str, list[dict[str, Any]]]
    reject: str | None = None


def parse(spec: ScoringSpec, data: BytesLike | dict[str, Any], *, as_json: bool = False) -> ParsedPredictions:
    """Parse an upload (CSV bytes, or JSON bytes/dict) for ``spec``; raises ``SubmissionError``."""
    keep_text = not spec.arithmetic.is_float64
    if as_json or isinstance(data, dict):
        if not isinstance(data, (dict, bytes, str)):
            data = bytes(data)
        return parse_submission_json(data, spec.submission_format, keep_text=keep_text)
    return parse_submission_csv(data, spec.submission_format, keep_text=keep_text)


def content_digest(parsed: ParsedPredictions, spec: ScoringSpec | None = None) -> str:
    """A digest of what ``spec``'s metrics read of the predictions: the identity of a submission under
    ``same_file_same_score``, which seeds its noise (without ``spec``: of the parsed values as they are).

    Two uploads share a digest exactly when no metric the competition reports can tell them apart in its
    arithmetic — the same :meth:`Metric.canonical_form` for every reported metric (log loss: the clipped,
    renormalised probabilities; AUC: the order of the scores; accuracy: the predicted classes; Brier: the
    values) and, under ``mpfr:φ``, the same φ-bit clipped values. They then score the same on every split,
    row subset and (randomized) label vector, so sharing a noise draw releases the same value and shows
    nothing a single upload would not. What this stops: resubmitting a file re-encoded (``0.5``/``0.50``/
    ``5e-1``, row order, CSV or JSON), or changed where the metric cannot see it — probabilities inside the
    clipped region (``1e-20`` vs ``1e-17`` at eps ``1e-15``), a monotone transform under AUC, values on the
    same side of 0.5 under accuracy — to buy fresh noise for free: each of these used to give an independent
    draw of the *same* true score, so averaging them recovered it exactly.

    What it does not stop: any change the metric can see gets a fresh draw, however small — moving one row of
    a log-loss file by 1e-9 changes the true score by about 1e-9/n, far below any noise, and averaging such
    near-copies recovers the score. Quantizing the values into the key does not help: the attacker moves by
    one grid step instead (still a change of O(step/n), negligible against the noise), while two *different*
    files in one grid cell would share a draw, so their released difference would be their exact true
    difference — a differencing channel the exact digest does not have. ``same_file_same_score`` is therefore
    no defense against averaging near-copies; a per-participant ``privacy_budget`` (which charges every
    release) or the Ladder is.
    """
    if spec is None:
        h = hashlib.sha256(np.ascontiguousarray(parsed.values).tobytes())
        if parsed.texts is not None:
            h.update(repr(parsed.texts).encode())
        return h.hexdigest()
    h = hashlib.sha256(b"canonical-1")
    for name in spec.reported_metrics:
        form = get_metric(name).canonical_form(parsed.values, spec.eps)
        h.update(f"|{name}|{form.dtype.str}|{form.shape}|".encode())
        h.update(form.tobytes())
    if not spec.arithmetic.is_float64 and parsed.texts is not None:
        assert spec.arithmetic.bits is not None
        # Probabilities clipped where every reported metric clips them; otherwise (logits, Brier, norm-like) the
        # φ-bit values themselves, so two files a metric can tell apart never share a digest.
        clip = all(get_metric(name).clips and not get_metric(name).logits for name in spec.reported_metrics)
        h.update(b"|mpfr|" if clip else b"|mpfr-unclipped|")
        h.update(mpfr_canonical_form(parsed.texts, spec.eps, spec.arithmetic.bits, clip=clip))
    return h.hexdigest()


def release_text(value: Score, decimals: int | None) -> tuple[float, str]:
    """Round a released value to the released precision (:attr:`ScoringSpec.released_decimals`: the displayed
    decimals or a coarser rounding stage of the chain); return it as float and exact text with exactly that
    many places."""
    if decimals is None:
        if isinstance(value, Decimal):
            return float(value), str(value)
        return float(value), repr(float(value))
    exact = value if isinstance(value, Decimal) else Decimal(float(value))
    rounded = round_decimals(exact, decimals)
    return float(rounded), format(rounded, "f")


def check_scoring_work(spec: ScoringSpec, parsed: ParsedPredictions) -> None:
    """Refuse, before any label is read, a submission whose φ-bit scoring would cost a worker more than
    :data:`scoring.arithmetic.MAX_SCORING_SECONDS` (:class:`~scoring.arithmetic.ScoringWorkExceeded`): counted from
    the submission's shape (rows × columns) and the metrics ``spec`` reports, nothing else. The site refuses such a
    competition at creation; this catches one created before the limit."""
    if spec.arithmetic.is_float64 or parsed.texts is None:
        return
    rows = len(parsed.texts)
    columns = max((len(row) for row in parsed.texts), default=0)
    metrics = len(spec.reported_metrics)
    spec.arithmetic.check_work(
        rows * columns * metrics, what=f"{rows:,} rows × {columns} column{'s' if columns != 1 else ''}"
        + (f" × {metrics} metrics" if metrics > 1 else ""),
    )


def raw_score(spec: ScoringSpec, parsed: ParsedPredictions, rows: np.ndarray) -> Score:
    """The metric's true value on ``rows`` in the competition's arithmetic."""
    labels = spec.hidden.labels[rows]
    if not spec.arithmetic.is_float64 and parsed.texts is not None:
        assert spec.arithmetic.bits is not None
        texts = tuple(parsed.texts[i] for i in rows)
        return score_mpfr(spec.metric, texts, labels, spec.eps, spec.arithmetic.bits, binary=spec.hidden.n_classes == 2)
    return spec.metric.score(parsed.values[rows], labels, spec.eps)


def submission_key(spec: ScoringSpec, parsed: ParsedPredictions, submission_id: str | int) -> str:
    """The key that seeds the chain's per-submission randomness for ``spec``'s primary metric:
    ``"submission:<id>"``, or ``"content:<digest>"`` when ``spec.same_file_same_score`` (so a re-upload of the
    same predictions — as every reported metric reads them, :func:`content_digest` — gets the same released
    score). See :mod:`scoring.release` for the other metrics."""
    if spec.same_file_same_score:
        return f"content:{content_digest(parsed, spec)}"
    return f"submission:{submission_id}"


def evaluate(
    spec: ScoringSpec,
    parsed: ParsedPredictions,
    *,
    submission_id: str | int,
    states: dict[str, list[dict[str, Any]]] | None = None,
    splits: Iterable[str] = SPLITS,
) -> Evaluation:
    """Score ``parsed`` on each split with ``spec``'s metric, run the defense chain and round to the released
    precision (:attr:`ScoringSpec.released_decimals`); the chain is seeded by :func:`submission_key`.

    ``states`` holds the chain's per-split state for this participant; the returned ``Evaluation.states``
    is the new state to persist. Raises :class:`NonFiniteScoreError` if a metric is not finite.
    """
    return evaluate_keyed(
        spec, parsed, key=submission_key(spec, parsed, submission_id), states=states, splits=splits
    )


def evaluate_keyed(
    spec: ScoringSpec,
    parsed: ParsedPredictions,
    *,
    key: str,
    states: dict[str, list[dict[str, Any]]] | None = None,
    splits: Iterable[str] = SPLITS,
    peers: Mapping[str, Sequence[list[dict[str, Any]]]] | None = None,
) -> Evaluation:
    """:func:`evaluate` with the chain's randomness seeded by the given submission ``key``; ``peers[split]``
    are the other participants' chain states (for a chain that :attr:`~defenses.DefenseChain.needs_peers`)."""
    check_scoring_work(spec, parsed)
    metric_view = spec.metric_view()
    results: dict[str, SplitResult] = {}
    new_states: dict[str, list[dict[str, Any]]] = {}
    for split in splits:
        rows = spec.split_rows[split]
        exact = raw_score(spec, parsed, rows)
        if not len(spec.chain):  # no defense: the raw score is the release (what the chain would return), and
            # the rows' view the chain would read (a copy of every prediction and label) is never built
            new_states[split] = []
            if not np.isfinite(float(exact)):
                raise NonFiniteScoreError(f"the released {split} score is not finite")
            released, text = release_text(exact, spec.released_decimals)
            results[split] = SplitResult(exact, released, text)
            continue
        view = ScoringView(
            predictions=parsed.values[rows],
            labels=spec.hidden.labels[rows],
            n_classes=spec.hidden.n_classes,
            metric=metric_view,
            split=split,
            submission=parsed.values,
        )
        outcome = spec.chain.release(
            view, states=(states or {}).get(split), secret=spec.secret, submission_key=key, exact_score=exact,
            peers=(peers or {}).get(split, ()),
        )
        if outcome.reject is not None:
            return Evaluation(results, states or {}, reject=outcome.reject)
        new_states[split] = outcome.states
        if outcome.released is None:
            results[split] = SplitResult(exact, None, None, tuple(outcome.notes), outcome.message)
            continue
        if not np.isfinite(float(outcome.released)):
            raise NonFiniteScoreError(f"the released {split} score is not finite")
        # One knob for the released precision: the text carries exactly the places a participant can observe
        # (a rounding stage coarser than ``decimals`` shows "1.3675", never "1.36750" with a dead last digit).
        released, text = release_text(outcome.released, spec.released_decimals)
        results[split] = SplitResult(exact, released, text, tuple(outcome.notes), outcome.message)
    return Evaluation(results, new_states)
