"""``noisy``: label inference through additive (Laplace, Gaussian) or multiplicative noise on binary log loss.

Instead of assuming a bounded error (paper 001's τ), the attack models the noise:

1. **Probes whose true score is known.** Constant 0.5 scores ``ln 2`` whatever the labels; each probe moves one
   row by ``j·1e-12`` so no two files are equal (``same_file_same_score`` keys files by content, see
   :func:`scoring.pipeline.content_digest`) while the score moves by ~1e-12/N, far below any released digit.
   A second set at the clipping edge (every row but the jittered one at ``eps``) releases ``≈ π·A``: its mean
   gives the class balance ``π``, its spread the noise at a high score level. The residuals pick the noise
   model by likelihood (Laplace, Gaussian; multiplicative when the spread grows with the score) and its scale;
   rounding alone is modelled as noise of std ``δ/√12``.
2. **A design for the noisy channel**, chosen by one row's weight ``c = A/N`` against the noise std ``σ``:

   * ``c`` far above ``σ`` (small boards, a 1e-3 scale, rounding only, multiplicative noise on a small score):
     **binary-weighted groups** (:mod:`attacks.noisy.groups`): a query weighs ``g = 1 + ⌊log2(c/(6σ))⌋`` rows
     with ``c, c/2, …``, the others at 0.5 or, once settled, on their label's side; each group is decoded by its
     exact posterior and queried again until sure. A group holds 3 to 12 rows, where the random-sign design
     below names ~2.2 labels a query;
   * otherwise **random signs**: every query puts every row at the clipping edge with a fresh random sign: the
     released mean is ``offset + c·Σ_i s_qi y_i + noise``, the largest per-row signal the metric allows, and
     every file differs, so averaging is built into the design rather than bought with resubmissions. The
     signs are kept as float32 blocks (:class:`attacks.noisy.design.SignDesign`) so 25,000 rows fit.
3. **Decoding under the noise model** (random signs). Approximate message passing with the binary prior
   (:func:`attacks.noisy.decoder.amp_signs`), then maximum likelihood under the fitted noise density by label
   flips whose gains all come from one ``Sᵀ`` product (:func:`~attacks.noisy.decoder.refine_signs`), which also
   gives each label's posterior given the rest. Queries are added in batches until the residuals fit the noise
   model (a labeling with even one wrong label leaves residuals of variance ``σ² + c²`` in every query) and every
   posterior clears ``1 − target/N``; while AMP has stalled (its threshold is ~0.44·N queries) no refinement is
   tried.

Where the submissions go against the information bound: the random-sign design is limited by AMP's threshold
(~0.44 queries a row whatever the noise, where :mod:`attacks.information` allows ``h(π)/C``, C ≈ 10–14 bits),
the group design by the resolution ``c/σ`` (``log2`` of it labels a query).

It only calls ``oracle.submit`` and reads ``n_rows``, ``n_classes``, ``metric``, ``eps`` and ``decimals``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attacks import information
from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.noisy.calibration import calibrated_marginals
from attacks.noisy.decoder import NoiseModel, amp_signs, refine_signs
from attacks.noisy.design import SignDesign
from attacks.noisy.groups import ROUNDING_SPACING, SPACING, GroupDecoder, group_size
from attacks.oracle import Oracle, require_budget
from attacks.registry import register
from attacks.result import GUESS_CEILING, AttackFailed, AttackResult

JITTER = 1e-12


@dataclass
class FittedNoise:
    """The noise the probes show: ``kind`` (laplace, gaussian, multiplicative, rounding), its scale (Laplace
    b, Gaussian σ, or α), the class balance seen, and the probe residuals' standard deviation."""

    kind: str
    scale: float
    balance: float
    std: float
    probes: int = 24
    #: The probes' residuals the kind and scale were read from (label-free: what the noise alone released).
    residuals: tuple[float, ...] = ()

    def model_for(self, releases: np.ndarray, floor: float) -> NoiseModel:
        """The per-query noise model for design queries with these releases (std at least ``floor``)."""
        if self.kind == "multiplicative":
            half = np.maximum(self.scale * np.abs(releases), floor * math.sqrt(3))
            return NoiseModel("uniform", half)
        if self.kind == "laplace":
            return NoiseModel("laplace", max(self.scale, floor / math.sqrt(2)))
        return NoiseModel("gaussian", max(self.scale, floor))


def _submit(oracle: Oracle, predictions: np.ndarray) -> float | None:
    out = oracle.submit(predictions)
    return None if out is None else float(out)


def probe_queries(probes: int) -> int:
    """The queries :func:`fit_noise` spends for ``probes``: two halves of at least 2.

    >>> probe_queries(24), probe_queries(1), probe_queries(5)
    (24, 4, 4)
    """
    return 2 * max(2, probes // 2)


def fit_noise(oracle: Oracle, probes: int) -> FittedNoise:
    """Spend ``probes`` queries (half at 0.5, half at the clipping edge; :func:`probe_queries`) and fit the
    noise."""
    n, eps = oracle.n_rows, oracle.eps
    half = probe_queries(probes) // 2
    known = []
    for j in range(half):
        p = np.full(n, 0.5)
        p[0] += (j + 1) * JITTER
        value = _submit(oracle, p)
        if value is not None:
            known.append(value - math.log(2))
    edge = []
    for j in range(half):
        p = np.full(n, eps)
        p[0] = 0.5 + (j + 1) * JITTER
        value = _submit(oracle, p)
        if value is not None:
            edge.append(value)
    if len(known) < 2 or len(edge) < 2:
        raise AttackFailed("noisy: the leaderboard released too few probe scores to fit its noise")
    r_known = np.array(known)
    r_edge = np.array(edge)
    level = float(r_edge.mean())
    # The edge file's true score: (ln 2 + Σ_{i>0} [y_i·(−ln eps) + (1−y_i)·(−log1p(−eps))]) / N.
    lo, hi = -math.log1p(-eps), -math.log(eps)
    balance = float(np.clip((level * n - math.log(2) - (n - 1) * lo) / ((n - 1) * (hi - lo)), 0.01, 0.99))
    s_known = float(np.sqrt(np.mean(r_known**2)))
    dev_edge = r_edge - level
    s_edge = float(np.sqrt(np.sum(dev_edge**2) / (len(dev_edge) - 1)))
    if s_edge > 3 * s_known and level > 4 * math.log(2) and s_edge > 0:
        alpha = math.sqrt(3) * s_edge / level
        return FittedNoise("multiplicative", alpha, balance, s_edge, len(r_edge))
    pooled = np.concatenate([r_known, dev_edge])
    std = float(np.sqrt(np.mean(pooled**2)))
    if std == 0:
        return FittedNoise("rounding", 0.0, balance, 0.0, len(pooled))
    b = float(np.mean(np.abs(pooled)))
    ll_laplace = -len(pooled) * math.log(2 * b) - float(np.sum(np.abs(pooled))) / b
    ll_gauss = -0.5 * len(pooled) * math.log(2 * math.pi * std**2) - 0.5 * len(pooled)
    if ll_laplace > ll_gauss:
        return FittedNoise("laplace", b, balance, std, len(pooled), tuple(pooled.tolist()))
    return FittedNoise("gaussian", std, balance, std, len(pooled), tuple(pooled.tolist()))




#: Design queries ``noisy`` needs, as a share of the rows (its first batch), plus its noise probes.
NOISY_SHARE, NOISY_PROBES = 0.45, 24
#: The likelihood decoders' rank: after every exact design (the choice only reaches them when those failed or
#: cannot carry the noise), before the best guesses.
RANK_LIKELIHOOD = 500


def noisy_fits(facts: BoardFacts) -> Plan | Refusal:
    """Binary log loss under noise, every row scored and released afresh, when the budget holds the first batch:
    noise beyond what an exact design tolerates (``auto`` plays it when the exact design failed or cannot carry the
    noise)."""
    if not facts.binary_logloss or facts.split:
        return Refusal("noisy", "binary log loss scoring every row only (a public split: noisy_split)")
    if not facts.noise or not facts.fresh_release:
        return Refusal("noisy", "needs noise seen on scores released afresh over the same rows, in float64")
    if facts.budget_left is not None and facts.budget_left < NOISY_SHARE * facts.n_rows + NOISY_PROBES:
        return Refusal("noisy", f"the budget ({facts.budget_left}) cannot hold its first batch")
    return Plan("noisy", {"budget": facts.budget_left, "seed": facts.seed}, "noise beyond what an exact design "
                "tolerates: likelihood decoding of repeated random-sign queries", rank=RANK_LIKELIHOOD)


def _noisy_board(facts: BoardFacts) -> bool:
    return facts.binary_logloss and facts.float64 and facts.public_fraction is None


@register("noisy", exact=False, truncatable=True, spends_budget=True, stage=Stage.LIKELIHOOD, fits=noisy_fits,
          applies=_noisy_board,
          paper="ours (likelihood decoding of random-sign queries; group testing under noise)",
          board="float64 binary log loss under noise, every row scored",
          queries="about 0.45·N plus its noise probes, then more batches to the error target",
          precision="additive Laplace/Gaussian or multiplicative noise of unknown scale (fitted); any decimals")
def noisy(
    oracle: Oracle,
    *,
    budget: int | None = None,
    probes: int | None = None,
    target: float = 1e-3,
    start_ratio: float | None = None,
    step_ratio: float = 0.03,
    max_ratio: int = 6,
    groups: str = "auto",
    seed: int = 0,
) -> AttackResult:
    """Recover binary labels through noise (see the module docstring).

    ``budget`` caps the submissions (probes included; one that cannot hold the probes and a design query is
    refused before the first); ``probes`` defaults to :func:`default_probes`;
    ``target`` is the tolerated expected number of wrong labels (each posterior must reach ``1 − target/N``);
    ``start_ratio``/``step_ratio`` size the first and each further batch of design queries as a fraction of
    ``N``; without a ``budget`` it stops at ``max_ratio·N`` design queries. ``groups`` (``"auto"``, ``"always"``,
    ``"never"``) picks the binary-weighted group design of :mod:`attacks.noisy.groups` where one row's weight is
    far above the noise (``auto``: when a group would hold at least ``GROUP_MIN`` rows). Returns every row's best
    label, its posterior (``details["confidence"]``) and ``details["complete"]`` (the stopping rule was met within
    the budget).

    Paper: ours (likelihood decoding of random-sign designs; FIELD_NOTES' channel bound). Queries: its noise
    probes, then about ``0.45·N`` design queries and more batches until every posterior reaches the target.
    Precision: noise of an unknown kind and scale, fitted by the probes (Laplace, Gaussian, multiplicative),
    any released decimals, float64. Twenty rows under multiplicative noise:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(7).random(20) < 0.4).astype(np.int64)
    >>> noise = [{"name": "noise", "kind": "multiplicative", "alpha": 1e-3}]
    >>> result = run("noisy", LocalOracle(y, decimals=5, defenses=noise, same_file_same_score=True, seed=11))
    >>> result.accuracy(y), result.details["complete"], result.details["noise"]["kind"], result.queries
    (1.0, True, 'multiplicative', 16)
    """
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed(f"noisy: needs binary log loss, not {oracle.metric} with {oracle.n_classes} classes")
    n, eps = oracle.n_rows, oracle.eps
    start_queries = oracle.queries
    n_probes = default_probes(n) if probes is None else probes
    limit = budget if budget is not None else max_ratio * n + n_probes
    n_probes = min(n_probes, max(4, limit // 4))
    # The noise probes and one design query, or nothing: a budget below that is refused before the first probe.
    require_budget("noisy", probe_queries(n_probes) + 1, budget, at_least=True)
    fitted = fit_noise(oracle, n_probes)
    delta = 10.0 ** -oracle.decimals if oracle.decimals is not None else 1e-15
    floor = delta / math.sqrt(12)
    rng = np.random.default_rng(seed)
    design = SignDesign(n, eps)
    threshold = 1 - target / n
    if _use_groups(design, fitted, floor, groups):
        played = _play_groups(oracle, design, fitted, floor, threshold, limit - (oracle.queries - start_queries),
                              rng, start_queries)
        if played is not None:
            return played
    labels = np.zeros(n, dtype=np.int64)
    confidence = np.full(n, 0.5)
    complete = False
    fits = False
    fit_stat = math.inf
    # AMP on this design needs ~0.44·N queries at best; on large boards each decoding costs a minute, so they
    # start nearer that threshold.
    want = math.ceil((start_ratio if start_ratio is not None else (0.3 if n < 5000 else 0.4)) * n)
    while True:
        while len(design) < want and oracle.queries - start_queries < limit:
            signs = rng.integers(0, 2, n) * 2 - 1
            released = _submit(oracle, design.predictions(signs))
            if released is not None:
                design.add(signs, released)
        if not len(design):
            break
        r = design.observed()
        noise = fitted.model_for(np.asarray(design.releases), floor)
        std = np.broadcast_to(noise.std(), r.shape)
        x = amp_signs(design, r, std, prior=fitted.balance)
        out_of_budget = oracle.queries - start_queries >= limit
        if float(np.mean(np.minimum(x, 1 - x) > 0.01)) > AMP_UNDECIDED and not out_of_budget:
            # AMP stalled below its threshold: flips cannot rescue that (and cost minutes at 25,000 rows).
            labels, confidence = (x > 0.5).astype(np.int64), np.maximum(x, 1 - x)
            want = len(design) + max(1, math.ceil(step_ratio * n))
            continue
        labels, confidence = refine_signs(design, r, noise, (x > 0.5).astype(np.int64), prior=fitted.balance)
        residual = (r - design.unit * design.matvec(labels.astype(np.float64))) / std
        fit_stat = float(np.mean(residual**2))
        # A wrong label adds c² to every query's residual variance, so the test never needs to be finer than
        # half of that.
        unit2 = design.unit**2 / float(np.mean(std**2))
        slack = residual_slack(noise.kind, len(r), fitted.probes)
        fits = fit_stat <= max(1 + slack, 1 + 0.5 * unit2) + 0.5 * (fitted.kind == "rounding")
        # Posteriors with the scale the design residuals themselves show (many more than the probes; inflated,
        # hence conservative, if a label is still wrong).
        rescale = math.sqrt(max(fit_stat, 1.0))
        noise = NoiseModel(noise.kind, np.asarray(noise.scale) * rescale)
        labels, confidence = refine_signs(design, r, noise, labels, prior=fitted.balance)
        if fits and confidence.min() >= threshold:
            complete = True
            break
        if oracle.queries - start_queries >= limit:
            break
        want = len(design) + max(1, math.ceil(step_ratio * n))
    if len(design) and not complete:
        # Cut short: refine's posteriors are each label's given all the others, and with the others still
        # uncertain they claimed 1.0 on rows right 69–80 % of the time (residuals that fit prove little on a few
        # queries: one query fits every labeling with the right sum). AMP's are the marginal ones, mapped
        # through simulated decodes at the noise the residuals show (:mod:`attacks.noisy.calibration`): a
        # misjudged scale, or a board that only looks noisy, widens them.
        unit = 10.0 ** -oracle.decimals if oracle.decimals is not None else None
        x = calibrated_marginals(design, r, std, fitted.model_for(np.asarray(design.releases), 1e-300),
                                 prior=fitted.balance, delta=unit, rng=rng)
        labels, confidence = (x > 0.5).astype(np.int64), np.maximum(x, 1 - x)
    return _result(oracle, fitted, labels, confidence, complete, start_queries, fit_stat,
                   design="signs", design_queries=len(design))


def _result(
    oracle: Oracle, fitted: FittedNoise, labels: np.ndarray, confidence: np.ndarray, complete: bool,
    start_queries: int, fit_stat: float, *, design: str, design_queries: int,
) -> AttackResult:
    n = oracle.n_rows
    used = oracle.queries - start_queries
    bits = _bound(oracle, fitted)
    return AttackResult(
        "noisy",
        labels,
        # Posteriors, never 1.0: 1.0 marks a label an exact attack vouches for (and a query confirmed).
        confidence=np.minimum(confidence, GUESS_CEILING),
        details={
            "confidence": confidence,
            "complete": complete,
            "noise": {"kind": fitted.kind, "scale": fitted.scale, "std": fitted.std, "balance": fitted.balance},
            "design": design,
            "design_queries": design_queries,
            "probes": fitted.probes,
            "fit": fit_stat,
            "bound_bits_per_query": bits,
            "bound_queries": information.queries_lower_bound(n, bits, fitted.balance),
            "bits_per_query": information.label_entropy_bits(n, fitted.balance) / max(used, 1),
        },
    )


#: Share of rows AMP leaves between 1 % and 99 % above which another batch is sent before any refinement.
AMP_UNDECIDED = 0.02
#: Residual noise over the probes' beyond which the group design is abandoned for the random-sign one.
GROUP_FACTOR_LIMIT = 3.0
#: Rows per group from which the group design beats the random-sign one (AMP needs ~0.45 queries a row).
GROUP_MIN = 3


def _noise_std_at(fitted: FittedNoise, level: float, floor: float) -> float:
    return float(np.asarray(fitted.model_for(np.array([level]), floor).std()).ravel()[0])


def _group_std(design: SignDesign, fitted: FittedNoise, floor: float, waiting: int) -> float:
    """The noise std a group query meets: its score is ``ln 2`` per waiting row plus about ``c`` for the group."""
    level = math.log(2) * waiting / design.n + design.unit
    return _noise_std_at(fitted, level, floor)


def _use_groups(design: SignDesign, fitted: FittedNoise, floor: float, groups: str) -> bool:
    if groups != "auto":
        return groups == "always"
    # A multiplicative noise shrinks with the score as rows settle: judge it at half the rows waiting.
    return group_size(design.unit, _group_std(design, fitted, floor, design.n // 2), _spacing(fitted)) >= GROUP_MIN


def _spacing(fitted: FittedNoise) -> float:
    return ROUNDING_SPACING if fitted.kind == "rounding" else SPACING


def _play_groups(
    oracle: Oracle, design: SignDesign, fitted: FittedNoise, floor: float, threshold: float, left: int,
    rng: np.random.Generator, start_queries: int,
) -> AttackResult | None:
    """The group design (:mod:`attacks.noisy.groups`); None when the residuals show it cannot be trusted."""
    n = design.n
    decoder = GroupDecoder(oracle, design.p_lo, fitted.balance,
                           lambda level: fitted.model_for(np.array([level]), floor), threshold, fitted.probes,
                           settled_at_edge=fitted.kind in ("multiplicative", "rounding"))
    order = rng.permutation(n)
    done = 0
    while done < n and decoder.queries < left:
        std = _group_std(design, fitted, floor, n - done) * decoder.factor
        g = min(group_size(design.unit, std, _spacing(fitted)), n - done)
        decoder.run_group(order[done:done + g], rng, left - decoder.queries)
        done += g
        if decoder.factor > GROUP_FACTOR_LIMIT and len(decoder.groups) >= 3:
            # The noise is far from what the probes showed (a wrongly picked kind, say): a settled label may be
            # wrong and bias every later query. The random-sign design does not depend on settled labels.
            return None
    decoder.recheck(rng, left - decoder.queries)
    _open_rows_from_the_rest(decoder, fitted.balance)
    fit_stat = decoder.fit
    count = decoder._count
    kurt = 6.0 if fitted.kind == "laplace" else 3.0
    # The fit is judged at the scale the residuals themselves show (decoder.factor): what remains is whether
    # the probes and the residuals agree, within both samples' error.
    slack = 4 * math.sqrt((kurt - 1) / max(count, 1)) + 4 * math.sqrt((kurt - 1) / fitted.probes)
    fits = fit_stat / decoder.factor**2 <= 1 + slack + 0.5 * (fitted.kind == "rounding")
    confidence = calibrate(decoder.confidence, fit_stat / decoder.factor**2, fits)
    complete = bool(done >= n and fits and confidence.min() >= threshold)
    return _result(oracle, fitted, decoder.labels, confidence, complete, start_queries, fit_stat,
                   design="groups", design_queries=decoder.queries)


def _open_rows_from_the_rest(decoder: GroupDecoder, balance: float) -> None:
    """Rows no group query reached (the budget ran out first) take the majority class of the rows left, not of all
    rows: the edge probes measure the balance of every row, and the settled labels account for part of it (after
    half the rows, 0.5 overall may leave 0.44 to the rest), so the open rows' label and posterior are those of the
    rows left."""
    open_rows = ~decoder.settled
    if not open_rows.any() or open_rows.all():
        return
    ones = balance * decoder.n - float(decoder.labels[~open_rows].sum())
    share = min(max(ones / float(open_rows.sum()), 0.01), 0.99)
    decoder.labels[open_rows] = int(share >= 0.5)
    decoder.confidence[open_rows] = max(share, 1.0 - share)


def residual_slack(kind: str, queries: int, probes: int) -> float:
    """How far above 1 the mean squared whitened residual of ``queries`` design queries may sit and still fit the
    noise model: its own sampling error (4 sd, with the kind's kurtosis) plus the error of a scale fitted from
    ``probes`` residuals (Laplace's kurtosis whatever kind won: 24 Laplace draws are often read as a Gaussian
    30 % narrower (seen at 25,000 rows), and the test must not then refuse a right labeling)."""
    kurt = 6.0 if kind == "laplace" else 3.0
    return 4 * math.sqrt((kurt - 1) / queries) + 3 * math.sqrt(5 / probes)


def default_probes(n: int) -> int:
    """Noise probes: 24, fewer on small boards where they would be a large share of the submissions."""
    return int(min(24, max(12, n // 10)))


def calibrate(confidence: np.ndarray, fit_stat: float, fits: bool) -> np.ndarray:
    """Posteriors the fit vouches for: unchanged when the residuals fit the noise model; else their log-odds
    divided by the fit statistic once more (the decoder already widened the noise by its square root). A
    misfit means the noise model is wrong (a Thresholdout or subsetting board taken for noise), and a wrong
    model's posteriors claimed 0.99 on rows right 65 % of the time; ``auto``'s floor checks them with queries.

    >>> calibrate(np.array([0.99]), 1.0, True).tolist(), calibrate(np.array([0.99]), 4.0, False).round(3).tolist()
    ([0.99], [0.759])
    """
    if fits or not math.isfinite(fit_stat) or fit_stat <= 1.0:
        return confidence
    c = np.clip(confidence, 1e-12, 1 - 1e-12)
    return np.asarray(1.0 / (1.0 + np.exp(-np.log(c / (1 - c)) / fit_stat)))


def _bound(oracle: Oracle, fitted: FittedNoise) -> float:
    """The information bound (bits per query) for the noise the probes showed."""
    n, decimals, eps = oracle.n_rows, oracle.decimals, oracle.eps
    if fitted.kind in ("laplace", "gaussian"):
        return information.additive_noise_bits(fitted.kind, fitted.scale, n, decimals, eps)
    if fitted.kind == "multiplicative":
        return information.multiplicative_noise_bits(min(fitted.scale, 0.5), n, decimals, eps)
    return information.rounding_bits(n, decimals, eps)


def describe(result: AttackResult) -> dict[str, Any]:
    """A short summary for benchmarks and logs."""
    d = result.details
    return {"noise": d["noise"]["kind"], "queries": result.queries, "complete": d["complete"],
            "bound_queries": round(d["bound_queries"], 1)}
