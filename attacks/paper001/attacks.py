"""Paper 001's registered attacks on linearly-decomposable losses: ``bregman_powers`` (Construction 1,
Theorem 1, Corollary 1) and ``bregman_primes`` (Construction 2, Theorem 2, Corollary 2, CloSqFree), both
multi-query (§3.2), with a known noise bound or the doubling trick for an unknown one (§7), and sized by the
server's arithmetic (App. B.1).

Aggarwal, Kasiviswanathan, Xu, Feyisetan, Teissier, *Reconstructing Test Labels from Noisy Loss Functions*,
AISTATS 2022. Every attack talks to the leaderboard only through ``oracle.submit`` and its public facts,
plans every batch before querying (raising :class:`AttackFailed` with the reason when the server cannot carry
one label), decodes only with a certificate, and checks its claims with one more query
(:mod:`attacks.paper001.verify`), so a server that misbehaves makes it fail loudly.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from attacks.catalogue import BoardFacts, Refusal
from attacks.catalogue import Plan as AttackPlan
from attacks.oracle import Oracle
from attacks.paper000.noise import NOISE_KINDS, tau_for_noise
from attacks.paper000.probes import ServerModel
from attacks.paper001.activations import plan_logits
from attacks.paper001.decode import DECODERS, decode_labelinf
from attacks.paper001.design import Plan, plan_batch
from attacks.paper001.losses import LossFamily, family_for
from attacks.paper001.verify import check_claims_bregman
from attacks.planning import largest_feasible
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

#: The largest batch each construction plans (float64 carries ≈ 43 powers and ≈ 11 primes at best).
MAX_BATCH = {"powers": 62, "primes": 40, "theorem3": 62}
#: LabelInf (Eq. 1) enumerates K^m labelings; paper 000's enumeration holds 2^20.
MAX_LABELINF = 1 << 20
#: The doubling trick gives up past this noise bound on the mean (a loss's score is rarely above it).
MAX_DOUBLED_TAU = 1e12


def _setup(oracle: Oracle, alpha: float | None, family: LossFamily | None = None) -> LossFamily:
    """The oracle's loss family (or ``family``, given by an attack that models the metric itself); refusals for
    what the constructions do not model."""
    if family is None:
        family = family_for(oracle.metric, alpha=alpha if alpha is not None else getattr(oracle, "alpha", None))
    fraction = BoardFacts.of(oracle).public_fraction
    if fraction is not None and fraction < 1.0:
        raise AttackFailed(
            "paper 001's constructions assume the loss is computed on every row (§1); this board releases a "
            "public-split score over unknown rows — use capacity_split"
        )
    arithmetic = BoardFacts.of(oracle).arithmetic
    if arithmetic != "float64":
        raise AttackFailed(f"the Bregman attacks submit float64 predictions; this server computes in {arithmetic}")
    return family


def _noise_tau(tau: float | None, noise: str | None, scale: float | None, delta: float, queries: int) -> float:
    """The additive bound on the released mean's noise: ``tau``, or App. B.4's tail bound of a distribution."""
    if noise is None:
        if tau is not None and not (tau >= 0 and math.isfinite(tau)):
            raise ValueError(f"tau must be a finite number ≥ 0, got {tau!r}")
        return 0.0 if tau is None else float(tau)
    if noise not in NOISE_KINDS:
        raise ValueError(f"unknown noise {noise!r}; use one of {', '.join(NOISE_KINDS)}")
    if scale is None or tau is not None:
        raise ValueError(f"noise={noise!r} needs its scale, and no tau")
    return tau_for_noise(noise, scale, delta=delta, queries=queries)


class _Planner:
    """Certified plans per (noise bound, batch size), cached: sizing gallops over sizes and the doubling
    trick re-plans at each bound."""

    def __init__(
        self, oracle: Oracle, family: LossFamily, construction: str, headroom: float, logits: str | None = None
    ) -> None:
        self.oracle, self.family, self.construction, self.headroom = oracle, family, construction, headroom
        self.logits = logits
        self.cache: dict[tuple[float, int], Plan | None] = {}

    def plan(self, tau: float, size: int) -> Plan | None:
        key = (tau, size)
        if key not in self.cache:
            model = ServerModel.of(self.oracle, tau=tau)
            if self.logits is not None:
                self.cache[key] = plan_logits(model, self.logits, size, self.construction, headroom=self.headroom)
            else:
                self.cache[key] = plan_batch(model, self.family, size, self.construction, headroom=self.headroom)
        return self.cache[key]

    def largest(self, tau: float, limit: int) -> int:
        return largest_feasible(limit, lambda size: self.plan(tau, size) is not None)

    def refusal(self, tau: float, size: int) -> AttackFailed:
        oracle = self.oracle
        return AttackFailed(
            f"{self.construction}: a batch of {size} row(s) is not separable on this server ({oracle.metric}, "
            f"K = {oracle.n_classes}, N = {oracle.n_rows}, {oracle.decimals} decimals, float64, noise bound "
            f"τ = {tau:g}): the loss cannot move the summed score by twice the window (released decimals + "
            f"N·τ + rounding){' for even one label' if size <= 1 else ''}; the largest batch it carries is "
            f"{self.largest(tau, size)}"
        )


def _decoder(plan: Plan, which: str) -> Callable[[Any, Any], np.ndarray]:
    if which == "integer":
        decode = DECODERS[plan.construction]
    elif which == "labelinf":
        if plan.model.n_classes ** plan.size > MAX_LABELINF:
            raise AttackFailed(f"LabelInf would enumerate {plan.model.n_classes}^{plan.size} labelings per batch "
                               f"(limit {MAX_LABELINF}); use decoder='integer' or a smaller batch_size")
        decode = decode_labelinf
    else:
        raise ValueError(f"unknown decoder {which!r}; use 'integer' or 'labelinf'")
    return lambda probe, released: decode(plan, probe, released)


def play(
    oracle: Oracle,
    name: str,
    construction: str,
    *,
    alpha: float | None,
    tau: float | None,
    noise: str | None,
    scale: float | None,
    delta: float,
    doubling: bool,
    tau_start: float | None,
    batch_size: int | None,
    headroom: float | None,
    decoder: str,
    verify: bool,
    budget: int | None,
    logits: str | None = None,
    family: LossFamily | None = None,
) -> AttackResult:
    """The multi-query attack (§3.2) of ``construction``; ``logits`` names the board's metric on logits when
    the rows go out through the inverse activation (:mod:`attacks.paper001.activations`)."""
    family = _setup(oracle, alpha, family)
    n = oracle.n_rows
    if doubling and (tau is not None or noise is not None):
        raise ValueError("doubling=True searches for the noise bound itself: give no tau or noise")
    room = float(headroom) if headroom is not None else (2.0 if doubling else 1.0)
    if not room >= 1.0:
        raise ValueError(f"headroom must be ≥ 1, got {headroom!r}")
    planner = _Planner(oracle, family, construction, room, logits)
    limit = min(n, MAX_BATCH[construction])
    if batch_size is not None:
        if not 1 <= int(batch_size) <= MAX_BATCH[construction]:
            raise ValueError(f"batch_size must be in 1..{MAX_BATCH[construction]}, got {batch_size!r}")
        limit = min(n, int(batch_size))
    labels = np.full(n, -1, dtype=np.int64)
    decoding = 0.0
    queries = 0
    sizes: list[int] = []
    history: list[float] = []

    def sized(bound: float) -> int:
        return limit if batch_size is not None else planner.largest(bound, limit)

    def budget_left(cost: int) -> bool:
        return budget is None or queries + cost <= budget

    if not doubling:
        # the union bound of App. B.4 over the most queries any batch size needs (one row each, + the check)
        bound = _noise_tau(tau, noise, scale, delta, queries=n + 1)
        size = sized(bound)
        for shape in {min(size, n), n % size if size else 0} - {0}:
            if planner.plan(bound, shape) is None:
                raise planner.refusal(bound, shape)
        if size < 1:
            raise planner.refusal(bound, 1)
        start = 0
        while start < n and budget_left(1):
            rows = np.arange(start, min(start + size, n))
            plan = planner.plan(bound, len(rows))
            assert plan is not None
            probe = plan.probe.at(rows)
            released = oracle.submit(probe.predictions())
            queries += 1
            began = time.perf_counter()
            labels[rows] = _decoder(plan, decoder)(probe, released)
            decoding += time.perf_counter() - began
            sizes.append(len(rows))
            start += len(rows)
    else:
        # §7's doubling trick: each batch goes out under two encodings (its rows in opposite order of weight);
        # both must decode consistently and agree, else the bound doubles and the batch is sent again.
        half_unit = 0.0 if oracle.decimals is None else 0.5 * 10.0 ** (-oracle.decimals)
        bound = float(tau_start) if tau_start is not None else max(half_unit, 1e-12)
        if not bound > 0:
            raise ValueError(f"tau_start must be positive, got {tau_start!r}")
        history.append(bound)
        start = 0
        while start < n and budget_left(2):
            size = sized(bound)
            if size < 1:
                # a larger bound only widens the window: the noise is more than one label can outweigh
                refusal = planner.refusal(bound, 1)
                raise AttackFailed(f"the doubling trick reached τ = {bound:g} without a consistent decoding "
                                   f"(bounds tried: {', '.join(f'{t:.3g}' for t in history)}); {refusal}")
            rows = np.arange(start, min(start + size, n))
            plan = planner.plan(bound, len(rows))
            if plan is None:
                raise planner.refusal(bound, len(rows))
            decode = _decoder(plan, decoder)
            decoded: list[np.ndarray | None] = []
            for order in (rows, rows[::-1]):
                probe = plan.probe.at(order)
                released = oracle.submit(probe.predictions())
                queries += 1
                began = time.perf_counter()
                try:
                    found = np.empty(len(rows), dtype=np.int64)
                    found[np.argsort(order)] = decode(probe, released)
                    decoded.append(found)
                except AttackFailed:
                    decoded.append(None)
                decoding += time.perf_counter() - began
            first, second = decoded
            if first is not None and second is not None and np.array_equal(first, second):
                labels[rows] = first
                sizes.append(len(rows))
                start += len(rows)
                continue
            if bound > MAX_DOUBLED_TAU:
                raise AttackFailed(f"the doubling trick passed a noise bound of {MAX_DOUBLED_TAU:g} without a "
                                   "consistent decoding: the score does not follow the assumed loss")
            bound *= 2.0
            history.append(bound)
    verified = "not requested"
    if verify and (labels >= 0).any():
        if budget_left(1):
            verified = check_claims_bregman(oracle, family, labels, noise_bound=bound, logits=logits)
        else:
            # the budget spent on the batches: the decoded batches stand on their certificates and the
            # caller gets them, rather than a check query past the budget that loses every label.
            verified = "not checked (budget spent)"
    details: dict[str, Any] = {
        "construction": construction, "family": family.name, "batch_size": max(sizes, default=0),
        "batches": len(sizes), "tau": bound, "decoder": decoder, "verified": verified,
        "decode_seconds": decoding, "headroom": room,
    }
    if logits is not None:
        details["activation"] = "sigmoid" if oracle.n_classes == 2 else "softmax"
    if sizes:
        first_plan = planner.plan(bound, max(sizes))
        details["spacing"] = None if first_plan is None else first_plan.spacing
    if doubling:
        details.update(tau_found=bound, tau_history=history, doublings=len(history) - 1)
    return AttackResult(attack=name, labels=labels, details=details)


#: Losses paper 001's constructions decode (``norm_like:α`` by its base name); binary log loss keeps ``capacity``.
BREGMAN_METRICS = frozenset({"kl", "itakura_saito", "brier", "norm_like", "multiclass_logloss"})


def bregman_powers_fits(facts: BoardFacts) -> AttackPlan | Refusal:
    """Paper 001's losses scoring every row, float64, where capacity's lattice has no room or noise is seen (its
    bound found by doubling): rank 130."""
    if not facts.open_release or facts.family not in BREGMAN_METRICS or facts.split or not facts.float64:
        return Refusal("bregman_powers", "paper 001's losses, float64, every row scored and released, only")
    if facts.noise:
        return AttackPlan("bregman_powers", {"doubling": True}, f"noise seen (spread {facts.seen_spread:.3g}) on "
                    f"{facts.metric}: paper 001's powers construction, its noise bound found by doubling (§7)",
                    rank=130)
    return AttackPlan("bregman_powers", {}, f"{facts.metric}, every row scored: paper 001's powers construction "
                "(Theorem 1; base-K digits for K classes)", rank=130)


def _bregman_board(facts: BoardFacts) -> bool:
    return facts.family in BREGMAN_METRICS and facts.float64 and facts.public_fraction is None


@register("bregman_powers", exact=False, truncatable=True, fits=bregman_powers_fits, applies=_bregman_board,
          paper="paper 001 §3.1, Construction 1 (Theorem 1, Corollary 1); §7's doubling under noise",
          board="kl, Itakura–Saito, Brier, norm-like, multiclass log loss; float64; every row scored",
          queries="⌈N / m⌉ base-K digits (+1 with verify; twice that with doubling)",
          precision="any released decimals; float64 server rounding modelled (App. B.1); noise up to τ or doubled")
def bregman_powers(
    oracle: Oracle,
    *,
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    delta: float = 0.05,
    doubling: bool = False,
    tau_start: float | None = None,
    alpha: float | None = None,
    batch_size: int | None = None,
    headroom: float | None = None,
    decoder: str = "integer",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 001, Construction 1 / Theorem 1 (Corollary 1 for Itakura–Saito; the squared Euclidean and
    norm-like losses of App. C.3): every label of a linearly-decomposable loss (``kl``/log loss,
    ``itakura_saito``, ``brier``, ``norm_like``) through a noise bound τ.

    Row i of a batch gets the prediction whose labels' losses differ by ``2^i·s`` (Theorem 1 asks
    ``g(θ_i) − g(1 − θ_i) > 2^i·N·τ``; step (1), "solve ``g(x) − g(1 − x) = y``", is done numerically on the
    whole loss, which for Itakura–Saito gives ``θ ≈ 1/(2^i·s)`` where Corollary 1's closed form
    ``θ_i = (1 + 3^(2^i·N·τ))^-1`` uses only the log term and needs exponentially smaller θ); K classes get
    base-K digits. The rows outside the batch predict 1/2 (1/K), which every label scores alike (§3.2).

    Paper 001 (Aggarwal et al., AISTATS 2022), Section 3.1: Construction 1, Theorem 1, Corollary 1 (proofs in
    App. C); finite precision App. B.1; the doubling trick of the concluding remarks (Section 7).

    * Noise: ``tau`` (a bound on the released mean's noise), or ``noise="laplace"|"gaussian"|"bounded"``
      with ``scale`` and ``delta`` (a tail bound over all queries, as paper 000's App. B.4 — paper 001 only
      says a tail bound turns random noise into a bound, Section 1), or ``doubling=True`` (§7: start
      at ``tau_start``, default half a released unit, and double until each batch decodes consistently and
      the same under two encodings; ``details["tau_found"]``).
    * Precision (App. B.1): the batch is the largest whose labelings the float64 server keeps more than
      twice the window apart — the window being N·(half a released unit + τ) plus a bound on the server's
      roundings, which grow with the spacing (:mod:`attacks.server_model`). N = 2,201 at 5 decimals: 11
      labels a query for log loss, 43 for Itakura–Saito (whose 1/θ is unbounded up to 1/eps), 6 for Brier.
    * Queries: ``⌈N/m⌉`` (twice that with ``doubling``, plus its failed rounds), + 1 with ``verify``.
      Time: O(N·K) to decode (digit by digit; ``decoder="labelinf"`` is Eq. 1's exhaustive search).

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([1, 0, 0, 1, 1, 0, 1], decimals=5)
    >>> result = run("bregman_powers", oracle, tau=0.001)
    >>> result.labels.tolist(), result.queries, result.details["verified"]
    ([1, 0, 0, 1, 1, 0, 1], 2, 'passed')
    """
    return play(oracle, "bregman_powers", "powers", alpha=alpha, tau=tau, noise=noise, scale=scale, delta=delta,
                 doubling=doubling, tau_start=tau_start, batch_size=batch_size, headroom=headroom, decoder=decoder,
                 verify=verify, budget=budget)


@register("bregman_primes", exact=False,
          paper="paper 001 §3.1–3.2, Construction 2 (Theorem 2, Corollary 2), CloSqFree (Algorithm 1)",
          board="kl, Itakura–Saito, squared Euclidean, norm-like; every row scored",
          queries="⌈N / m⌉, m primes a batch (+1 with verify)",
          precision="any released decimals; float64 server rounding modelled; noise up to τ (batches smaller)")
def bregman_primes(
    oracle: Oracle,
    *,
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    delta: float = 0.05,
    doubling: bool = False,
    tau_start: float | None = None,
    alpha: float | None = None,
    batch_size: int | None = None,
    headroom: float | None = None,
    decoder: str = "integer",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 001, Construction 2 / Theorem 2 (Corollary 2 for the squared Euclidean and norm-like losses):
    row i's labels differ by ``s·ln p_i``, so a batch's summed loss is ``h + s·ln Π_{σ_i=1} p_i`` and
    CloSqFree (Algorithm 1) — the nearest square-free product of the batch's primes to
    ``exp((N·ℓ − h)/s)`` — names the rows labelled 1 (K classes: prime powers, exponents below K).

    Theorem 2's ``s = 3P·τ`` (P the primorial) becomes ``s ≥ 2W/ln(1 + 1/P)`` with W the whole window
    (released decimals, N·τ and the server's rounding), so a batch is far smaller than Construction 1's on a
    float64 server (N = 2,201 at 5 decimals: 4 labels a query for log loss, 11 for Itakura–Saito, 2 for
    Brier); what it buys is the decoder: O(m) trial divisions where LabelInf enumerates 2^m. Noise, doubling,
    queries and refusals as ``bregman_powers``.

    Paper 001, Section 3.1 (Construction 2, Theorem 2, Corollary 2) and Section 3.2 (CloSqFree, Algorithm 1).
    Queries: ``⌈N/m⌉`` (+ 1 with ``verify``). Precision: the released decimals, N·τ and the server's rounding
    must stay within half of ``s·ln(1 + 1/P)`` (P the batch's primorial).

    >>> from attacks import LocalOracle, run
    >>> result = run("bregman_primes", LocalOracle([0, 1, 1, 0, 1], decimals=None))
    >>> result.labels.tolist(), result.details["batch_size"]
    ([0, 1, 1, 0, 1], 5)
    """
    return play(oracle, "bregman_primes", "primes", alpha=alpha, tau=tau, noise=noise, scale=scale, delta=delta,
                 doubling=doubling, tau_start=tau_start, batch_size=batch_size, headroom=headroom, decoder=decoder,
                 verify=verify, budget=budget)
