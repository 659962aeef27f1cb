"""Paper 000's registered attacks: ``prime_single``, ``prime_batched``, ``robust_single``,
``robust_batched`` and ``prime_powers`` (Aggarwal, Kasiviswanathan, Xu, Feyisetan, Teissier, *Label
Inference Attacks from Log-loss Scores*, ICML 2021; ``prime_powers`` also follows Aggarwal et al.,
PrivateNLP 2020, §2.2).

Every attack talks to the leaderboard only through ``oracle.submit`` and the public facts ``n_rows``,
``n_classes``, ``metric``, ``eps``, ``decimals`` and ``arithmetic``; checks before querying that the server's
precision carries the planned batches (raising :class:`AttackFailed` otherwise); and decodes with a
certificate (:mod:`attacks.paper000.decoders`), so a label it returns is one it can vouch for. Rows it did not
query (a ``budget`` of submissions cut the run) are ``-1``; the one-query attacks refuse a budget of 0 before
submitting.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from attacks.catalogue import NOISE_SCALE_FACTOR, BoardFacts, Plan, Refusal
from attacks.confirm import check_claims
from attacks.exact import first_primes, gmpy2, local_precision, mpfr
from attacks.oracle import Oracle, require_budget, round_sizes, submit_many
from attacks.paper000.decoders import (
    decode_factor,
    decode_nearest,
    enumeration_certified,
    factor_certified,
)
from attacks.paper000.noise import NOISE_KINDS, tau_for_noise
from attacks.paper000.probes import Probe, ServerModel, binary_probe, multiclass_probe
from attacks.planning import largest_feasible
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

MAX_EXHAUSTIVE_ROWS = 20
#: The most independent batches sent together (:func:`_run_batches`).
BATCH_ROUND = 64
LN3 = math.log(3)


# --- constructions -------------------------------------------------------------------------------------------


@lru_cache(maxsize=128)
def prime_probe(model: ServerModel, primes: tuple[int, ...]) -> Probe:
    """Theorem 1's vector ``v = [p_1, …, p_m]``, submitted as ``u = f(v) = v/(1+v)`` (cached: a probe and
    its enumerated sums depend only on the server's public facts and the primes)."""
    with local_precision(model.work_bits):
        return binary_probe(model, [mpfr(p) / (p + 1) for p in primes])


def prime_power_probe(model: ServerModel, primes: tuple[int, ...]) -> Probe:
    """Theorem 3/8's matrix: row r predicts class c with probability ``p_r^c / Σ_j p_r^j`` (c = 0..K−1).
    With K = 2 on a binary leaderboard this is Theorem 1's ``p/(1+p)``."""
    if model.n_classes == 2:
        return prime_probe(model, primes)
    with local_precision(model.work_bits):
        return multiclass_probe(model, [[mpfr(p) ** c for c in range(model.n_classes)] for p in primes])


def robust_probe(model: ServerModel, size: int, tau: float) -> Probe:
    """Algorithms 2–3's τ-robust vector ``v_r = 3^(2^r·N·τ)``, r = 1..m (Theorem 4, Lemma 2).

    Submitted as ``u = 1/(1+v)`` — the mirror image of the paper's ``v/(1+v)`` with the labels' roles
    swapped — because a float near 0 keeps full relative precision where one near 1 does not; the offsets the
    decoder uses, ``ln v_r``, and hence the gaps ``≥ 2·ln 3·N·τ`` between labelings are the paper's.
    """
    n = model.n_rows
    with local_precision(model.work_bits):
        values = [1 / (1 + gmpy2.exp(mpfr(LN3) * 2**r * n * tau)) for r in range(1, size + 1)]
        return binary_probe(model, values)


# --- planning ------------------------------------------------------------------------------------------------


def prime_decoder(
    model: ServerModel, probe: Probe, primes: tuple[int, ...]
) -> Callable[[Probe, Any], np.ndarray] | None:
    """The decoder that is certified for every labeling of this batch, or ``None``: the paper's factoring
    when the integer gap holds (any batch size), else the nearest of the enumerated products when the
    actual products are far enough apart (small batches against a coarse window, e.g. 5 decimals)."""
    if factor_certified(model, probe, primes):
        return lambda placed, released: decode_factor(model, placed, primes, released)
    if enumeration_certified(model, probe):
        return lambda placed, released: decode_nearest(model, placed, released)
    return None


def paper_prime_batch(phi: int) -> int:
    """Algorithm 1, step 4: the largest m with ``p_m ≤ 2^((φ−5)/4)``.

    >>> paper_prime_batch(53)
    564
    """
    bound = 2 ** ((phi - 5) / 4)
    count, p = 0, 1
    while True:
        p = int(gmpy2.next_prime(p))
        if p > bound:
            return count
        count += 1


def prime_single_bits(n: int, *, eps: float = 1e-15) -> int:
    """The fewest MPFR bits φ with which ``prime_single`` decodes every labeling of N rows (decimals=None).

    About ``log2(p_1·…·p_N) + 2·log2 N + 6`` — the product of the first N primes must be told apart from its
    neighbouring integers through N rounded logarithms — i.e. ``≈ N·log2(N ln N)`` bits (11,296 at N = 1,000):

    >>> [prime_single_bits(n) for n in (5, 10, 100)]
    [21, 44, 748]
    """
    primes = first_primes(n)

    def certified(bits: int) -> bool:
        model = ServerModel(n, 2, eps, None, bits)
        return factor_certified(model, prime_probe(model, primes), primes)

    low = max(2, sum(p.bit_length() - 1 for p in primes))
    high = low + 16
    while not certified(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if certified(middle):
            high = middle
        else:
            low = middle
    return high


def prime_single_bits_estimate(primes: tuple[int, ...]) -> int:
    """``⌈log2 Π p_i + 2·log2 N + 6⌉``: :func:`prime_single_bits` without its search (0–2 bits above it at
    N = 5..300), for a refusal message that costs microseconds."""
    n = max(len(primes), 1)
    return math.ceil(sum(math.log2(p) for p in primes) + 2 * math.log2(n) + 6)


def single_query_possible(model: ServerModel, primes: tuple[int, ...]) -> bool:
    """A necessary condition for ``prime_single`` (cheap): N within the enumeration decoder's reach
    (``2^N <= 2^20``), or the server's φ bits and released decimals both above ``log2 Π p_i`` (factoring
    tells integers up to the product apart through ``N·ℓ``)."""
    if len(primes) <= MAX_EXHAUSTIVE_ROWS:
        return True
    needed = sum(math.log2(p) for p in primes)
    if model.phi < needed:
        return False
    return model.decimals is None or model.decimals * math.log2(10) >= needed


def _require(oracle: Oracle, *, binary: bool) -> None:
    if binary and (oracle.n_classes != 2 or oracle.metric != "binary_logloss"):
        raise AttackFailed(
            f"this attack needs a binary log-loss leaderboard, not {oracle.metric!r} with {oracle.n_classes} "
            "classes (use prime_powers for K classes)"
        )
    if not binary and oracle.metric not in ("binary_logloss", "multiclass_logloss"):
        raise AttackFailed(f"this attack needs a log-loss leaderboard, not {oracle.metric!r}")


def _tau(
    model: ServerModel, *, tau: float | None, noise: str | None, scale: float | None, delta: float, tail: str,
    queries: int,
) -> float:
    """The additive noise bound: given directly, or from a noise distribution via App. B.4's tail bound."""
    if noise is None:
        return 0.0 if tau is None else float(tau)
    if noise not in NOISE_KINDS:
        raise ValueError(f"unknown noise {noise!r}; use one of {', '.join(NOISE_KINDS)} (or 'multiplicative')")
    if scale is None:
        raise ValueError(f"noise={noise!r} needs its scale")
    if tau is not None:
        raise ValueError("give either tau or a noise distribution, not both")
    return tau_for_noise(noise, scale, delta=delta, queries=queries, tail=tail)


def _spacing(model: ServerModel, tau: float) -> float:
    """The τ a robust construction is built for: the noise bound plus what rounding can move the score by."""
    floor = 2.0 ** (20 - model.phi) if model.bits is None or model.bits < 1000 else 0.0
    return tau + model.release_half_unit() + max(floor, 1e-300)


def _shapes(n: int, size: int) -> list[int]:
    """The batch sizes a run uses: full batches, then the remainder (if any)."""
    return [size] + ([n % size] if n % size else [])


def _batches(n: int, size: int) -> list[np.ndarray]:
    return [np.arange(start, min(start + size, n)) for start in range(0, n, size)]


def _run_batches(
    oracle: Oracle,
    n: int,
    size: int,
    probe_for: Callable[[int], Probe],
    decode: Callable[[Probe, Any], np.ndarray],
    budget: int | None,
) -> tuple[np.ndarray, float, int]:
    """Query batch after batch, decode each; ``(labels, decode seconds, batches queried)``.

    The batches are independent (Algorithm 1 is not adaptive), so they go to the oracle in rounds through
    :func:`~attacks.oracle.submit_many` (a live oracle has a round in flight at once) and are decoded in
    order; the rounds grow 1, 2, 4, … up to :data:`BATCH_ROUND`, so a board that refuses the probes costs one
    query before the attack notices."""
    labels = np.full(n, -1, dtype=np.int64)
    templates: dict[int, Probe] = {}
    decoding = 0.0
    batches = _batches(n, size)
    if budget is not None:
        batches = batches[: max(budget, 0)]
    sizes = round_sizes(BATCH_ROUND)
    start = 0
    while start < len(batches):
        round_rows = batches[start : start + next(sizes)]
        start += len(round_rows)
        probes = []
        for rows in round_rows:
            if len(rows) not in templates:
                templates[len(rows)] = probe_for(len(rows))
            probes.append(templates[len(rows)].at(rows))
        released_scores = submit_many(oracle, [probe.predictions() for probe in probes])
        started = time.perf_counter()
        for rows, probe, released in zip(round_rows, probes, released_scores, strict=True):
            labels[rows] = decode(probe, released)
        decoding += time.perf_counter() - started
    return labels, decoding, len(batches)


def _result(name: str, labels: np.ndarray, **details: Any) -> AttackResult:
    """The attack's labels and details (``attacks.run`` counts its queries and times it)."""
    return AttackResult(attack=name, labels=labels, details=details)


# --- attacks -------------------------------------------------------------------------------------------------


@register("prime_single",
          paper="paper 000 §3.1, Theorem 1",
          board="binary log loss at arbitrary precision (an MPFR server wide enough)",
          queries="1",
          precision="φ-bit MPFR scores at full precision (φ ≈ N·log2(N ln N)); full float64 carries N ≤ 20")
def prime_single(oracle: Oracle, *, budget: int | None = None) -> AttackResult:
    """Paper 000, Theorem 1: every binary label from one log-loss score, by unique factorisation.

    Paper 000 (Aggarwal et al., ICML 2021), Section 3.1, Theorem 1 (arbitrary precision, one query).

    Row i predicts ``u_i = p_i/(1+p_i)`` for the i-th prime; then ``T·exp(−N·ℓ) = Π_{σ_i=1} p_i`` with
    ``T = Π (1+p_i)``, and the primes dividing it are the rows labelled 1.

    * Queries: 1 (a ``budget`` of 0 refuses before it). Time: O(N) big-number operations (trial division by the
      N known primes); O(2^N) when the enumeration decoder is the certified one (small N on float64).
    * Precision: arbitrary in the paper; here the server's φ must reach :func:`prime_single_bits` — about
      ``log2 Π_{i≤N} p_i + 2·log2 N + 6 ≈ N·log2(N ln N)`` bits (21 for N = 5, 44 for N = 10, 748 for N = 100)
      — so run it against ``LocalOracle(arithmetic="mpfr:φ", decimals=None)``. A float64 server releasing
      the full float (φ = 53) carries N ≤ 20 (decoded by the nearest of the 2^N enumerated products, which
      are further apart than the rounding; the paper's rounding of ``T·exp(−Nℓ)`` is certified to N = 11
      only), and far fewer rows when decimals are released. Where the precision cannot carry N rows it raises
      :class:`AttackFailed` before querying; use ``prime_batched``.

    The paper's worked example (N = 5, primes 2, 3, 5, 7, 11, labels [0, 1, 1, 0, 1]): ``T = 6912``, the
    score is ``ln(2304/55)/5`` and ``T·exp(−5ℓ) = 165 = 3·5·11``:

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([0, 1, 1, 0, 1], arithmetic="mpfr:64", decimals=None)
    >>> result = run("prime_single", oracle, confirm=False)
    >>> result.labels.tolist(), result.details["product"], result.queries
    ([0, 1, 1, 0, 1], 165, 1)
    """
    _require(oracle, binary=True)
    require_budget("prime_single", 1, budget)
    model = ServerModel.of(oracle)
    primes = first_primes(model.n_rows)

    def refuse() -> AttackFailed:
        return AttackFailed(
            f"prime_single cannot decode {model.n_rows} rows from one score at this server's precision "
            f"({oracle.decimals if oracle.decimals is not None else 'all'} decimals, φ = {model.phi} bits); "
            f"it needs mpfr:≈{prime_single_bits_estimate(primes)} with decimals=None — or use prime_batched"
        )

    # Beyond the enumeration decoder's 20 rows only factoring decodes, and it must pin an integer up to the
    # primes' product P through the score: no φ-bit sum (nor N·10^-decimals resolution) below log2 P bits
    # can. Refuse on that count before building a probe at the server's precision (minutes at N = 2,201).
    if not single_query_possible(model, primes):
        raise refuse()
    probe = prime_probe(model, primes)
    decoder = prime_decoder(model, probe, primes)
    if decoder is None:
        raise refuse()
    released = oracle.submit(probe.predictions())
    decode_started = time.perf_counter()
    labels = decoder(probe, released)
    decode_seconds = time.perf_counter() - decode_started
    product = math.prod(p for p, y in zip(primes, labels.tolist(), strict=True) if y == 1)
    return _result(
        "prime_single", labels, product=product, bits=model.phi,
        decode_seconds=decode_seconds,
    )


def prime_batched_fits(facts: BoardFacts) -> Plan | Refusal:
    """Binary log loss on an MPFR server, no noise: rank 70."""
    if not facts.open_release or not facts.binary_logloss:
        return Refusal("prime_batched", "binary log loss with every score released afresh only")
    if facts.noise or facts.float64:
        return Refusal("prime_batched", "an MPFR server without noise only (float64: capacity)")
    return Plan("prime_batched", {}, f"{facts.arithmetic} arithmetic: prime batches sized from φ", rank=70)


def _mpfr_binary(facts: BoardFacts) -> bool:
    return facts.binary_logloss and not facts.float64


@register("prime_batched", truncatable=True, fits=prime_batched_fits, applies=_mpfr_binary,
          paper="paper 000 §3.2, Algorithm 1 (Theorem 2; batches from φ)",
          board="binary log loss on an MPFR server (φ bits), no noise",
          queries="⌈N / m⌉, m the largest batch φ and the released decimals carry",
          precision="φ-bit scores (MPFR, or float64's φ = 53) at the released decimals; no noise")
def prime_batched(
    oracle: Oracle,
    *,
    batch_size: int | None = None,
    sizing: str = "verified",
    budget: int | None = None,
    memo: bool = True,
) -> AttackResult:
    """Paper 000, Algorithm 1 (Theorem 2): Theorem 1's primes ``p_1..p_m`` on m rows at a time, the other
    rows at 1/2 (a label-independent ``(N−m)·ln 2``, Lemma 4), decoded batch by batch.

    Paper 000, Section 3.2 (Algorithm 1, Theorem 2; Lemma 4 in App. A.1): bounded precision, FPA(φ).

    * Queries: ``⌈N/m⌉`` (Theorem 2: ``Θ(1 + N·φ·2^(−φ/4))`` with the paper's m). Time: O(N) operations.
    * Precision: the batch must satisfy ``ln(1 + 1/Π p_r) > 2·(window)``, the window being what the server's
      φ-bit rounding (φ = 53 for float64), the released decimals and N can move ``N·ℓ`` by.
      ``sizing="verified"`` (default) picks the largest such m — on a float64 server releasing the full
      float, 20 (the enumeration cap) at every N of Table 2; with 5 decimals, 6 at N = 306 or 569, 5 at
      N = 1,372 and 2 at N = 25,000. Small batches whose products are far apart but not an integer apart
      decode by the nearest enumerated product, large ones by the paper's factoring.
      ``sizing="paper"`` uses Algorithm 1's ``p_m ≤ 2^((φ−5)/4)``, which only keeps the predictions apart and
      not the products (m = 564 at φ = 53), so it fails loudly unless φ is large. ``batch_size`` fixes m (the
      paper's experiments used m = 5, N/5 queries); a batch the precision cannot carry raises
      :class:`AttackFailed` before any query.
    * ``budget`` (submissions) stops early; unqueried rows are ``-1``.
    * ``memo`` (default on): a released score already decoded for the same batch size is looked up, not
      decoded again (the decode is a function of the score alone); off, every batch is decoded afresh.

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([0, 1, 1, 0, 1, 1, 0], decimals=None)
    >>> result = run("prime_batched", oracle, batch_size=5, confirm=False)
    >>> result.labels.tolist(), result.queries
    ([0, 1, 1, 0, 1, 1, 0], 2)
    """
    _require(oracle, binary=True)
    model = ServerModel.of(oracle)
    n = model.n_rows
    probes: dict[int, Probe] = {}
    decoders: dict[int, Callable[[Probe, Any], np.ndarray] | None] = {}

    def probe_for(size: int) -> Probe:
        if size not in probes:
            probes[size] = prime_probe(model, first_primes(size))
        return probes[size]

    def certified(size: int) -> bool:
        if size not in decoders:
            decoders[size] = prime_decoder(model, probe_for(size), first_primes(size))
        return decoders[size] is not None

    decoded: dict[tuple[int, Any], np.ndarray] = {}

    def decode(probe: Probe, released: Any) -> np.ndarray:
        # A batch's decode depends only on its template (the batch size) and the released score, never on
        # where the batch sits: a score already decoded (with its certificate) is looked up, so N/m batches
        # cost one certified decode per distinct score (a few hundred at N = 25,000, m = 5). A score that
        # fails is never stored, so it fails again.
        key = (probe.size, released)
        if memo and key in decoded:
            return decoded[key]
        decoder = decoders[probe.size]
        assert decoder is not None
        labels = decoder(probe, released)
        if memo and released is not None:
            decoded[key] = labels
        return labels

    if batch_size is not None:
        size = int(batch_size)
    elif sizing == "paper":
        size = min(paper_prime_batch(model.phi), n)
    elif sizing == "verified":
        size = largest_feasible(n, certified)
    else:
        raise ValueError(f"unknown sizing {sizing!r}; use 'verified' or 'paper'")
    if size < 1:
        raise AttackFailed(
            f"not even one label per query is decodable: one prime's effect on the summed loss (ln 2 ≈ 0.69) is "
            f"within the window of this server ({oracle.decimals} decimals, φ = {model.phi}, N = {n})"
        )
    size = min(size, n)
    for shape in _shapes(n, size):
        if not certified(shape):
            best = largest_feasible(n, certified)
            raise AttackFailed(
                f"a batch of {shape} primes is too many for this server ({oracle.decimals} decimals, φ = "
                f"{model.phi} bits, N = {n}): products up to 2^{math.log2(math.prod(first_primes(shape))):.1f} "
                f"cannot be told apart; the largest batch it carries is {best}"
            )
    labels, decode_seconds, batches = _run_batches(oracle, n, size, probe_for, decode, budget)
    return _result(
        "prime_batched", labels, batch_size=size, batches=batches, bits=model.phi,
        decode_seconds=decode_seconds,
    )


@register("robust_single", exact=False,
          paper="paper 000 §4.1, Algorithm 2 (Theorem 4); App. B.4 for random noise",
          board="binary log loss, noise at most τ",
          queries="1, plus 1 with verify",
          precision="noise up to τ; 2^N·N·τ·ln 3 under the clipping (float64: N ≈ 8 at τ = 0.01); any decimals")
def robust_single(
    oracle: Oracle,
    *,
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    delta: float = 0.05,
    tail: str = "quantile",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 000, Algorithm 2 (Theorem 4): every label from one score perturbed by at most τ.

    Paper 000, Section 4.1 (Algorithm 2, Theorem 4, Lemma 1); random noise through App. B.4 (Theorem 10).

    Row i predicts ``f(v_i)`` with ``v_i = 3^(2^i·N·τ)``; distinct labelings then score more than ``2τ``
    apart (``2τ·ln 3``, Lemma 1), and the decoder is the exhaustive ``argmin_σ |L(σ) − ℓ|``, accepted only
    when it is the single labeling within τ plus the rounding window.

    * Noise: ``tau`` (a bound), or ``noise="bounded"|"laplace"|"gaussian"`` with ``scale`` and a failure
      probability ``delta`` (App. B.4: τ from the tail bound, ``tail="quantile"`` or ``"subexponential"``
      for Theorem 10's bound). With random noise the labels are right with probability ≥ 1 − δ.
    * Queries: 1, plus 1 when ``verify`` (a check of the decoded labels that also catches noise beyond τ); a
      ``budget`` below that refuses before the first submission.
    * Time: O(2^N) (exhaustive; N ≤ 20 here).
    * Precision: ``ln v_N = 2^N·N·τ·ln 3`` must fit under the clipping, ``ln((1−eps)/eps)`` (34.5 at
      eps = 1e-15), and the server's rounding must stay below ``(ln 3 − 1)·N·τ`` — so float64 with Kaggle's
      eps carries N ≈ 8 at τ = 0.01; a small ``eps`` or an MPFR server carries more. Raises
      :class:`AttackFailed` before querying when the vector is not separable on this server.

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([1, 0, 0, 1, 1], decimals=5)
    >>> run("robust_single", oracle, tau=0.01).labels.tolist()
    [1, 0, 0, 1, 1]
    """
    _require(oracle, binary=True)
    model = ServerModel.of(oracle)
    n = model.n_rows
    if n > MAX_EXHAUSTIVE_ROWS:
        raise AttackFailed(f"robust_single decodes by exhaustive search over 2^N labelings; N = {n} > "
                           f"{MAX_EXHAUSTIVE_ROWS} — use robust_batched")
    if noise == "multiplicative":
        raise AttackFailed("multiplicative noise needs several queries (App. B.5); use robust_batched")
    require_budget("robust_single", 2 if verify else 1, budget)
    noise_tau = _tau(model, tau=tau, noise=noise, scale=scale, delta=delta, tail=tail, queries=2 if verify else 1)
    model = model.with_tau(noise_tau)
    spacing = _spacing(model, noise_tau)
    probe = robust_probe(model, n, spacing).at(np.arange(n))
    if not enumeration_certified(model, probe):
        raise AttackFailed(
            f"the τ-robust vector for N = {n}, τ = {noise_tau:g} needs ln v_N = {LN3 * 2**n * n * spacing:.3g}, "
            f"more than this server separates (clipping eps = {model.eps:g} caps ln v at "
            f"{math.log((1 - model.eps) / model.eps):.3g}; φ = {model.phi} bits, {oracle.decimals} decimals)"
        )
    released = oracle.submit(probe.predictions())
    decode_started = time.perf_counter()
    labels = decode_nearest(model, probe, released)
    decode_seconds = time.perf_counter() - decode_started
    verified = check_claims(oracle, labels, slack=noise_tau) if verify else "not requested"
    return _result(
        "robust_single", labels, tau=noise_tau, spacing=spacing, verified=verified,
        decode_seconds=decode_seconds,
    )


def robust_batched_fits(facts: BoardFacts) -> Plan | Refusal:
    """Binary log loss under noise where capacity's lattice does not run (an MPFR server): rank 71."""
    if not facts.open_release or not facts.binary_logloss:
        return Refusal("robust_batched", "binary log loss with every score released afresh only")
    if not facts.noise:
        return Refusal("robust_batched", "no noise seen: the exact designs read the board")
    scale = facts.spread * NOISE_SCALE_FACTOR
    return Plan("robust_batched", {"noise": "laplace", "scale": scale},
                f"noise seen (spread {facts.seen_spread:.3g}): τ-robust batches", rank=71)


@register("robust_batched", exact=False, truncatable=True, fits=robust_batched_fits,
          paper="paper 000 §4.2, Algorithm 3 (Theorem 7, Lemma 2); App. B.4–B.5 (random, multiplicative noise)",
          board="binary log loss under noise of a known kind and scale",
          queries="⌈N / m⌉ (+1 with verify), m ≤ ⌈log2 N⌉ sized from τ",
          precision="noise up to τ (bounded, Laplace/Gaussian tails, multiplicative α); φ, decimals, clipping size m")
def robust_batched(
    oracle: Oracle,
    *,
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    alpha: float | None = None,
    delta: float = 0.05,
    tail: str = "quantile",
    batch_size: int | None = None,
    sizing: str = "verified",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 000, Algorithm 3 (Theorem 7): τ-robust batches of m rows (Lemma 2's ``v_r = 3^(2^r·N·τ)``, the
    other rows at 1/2), each decoded by ``argmin`` over its ``2^m`` labelings in polynomial time.

    Paper 000, Section 4.2 (Algorithm 3, Theorem 7, Lemma 2); random noise App. B.4, multiplicative App. B.5.

    * Noise: ``tau``; or ``noise="bounded"|"laplace"|"gaussian"`` with ``scale`` and ``delta`` (App. B.4,
      union bound over all queries, ``tail="quantile"|"subexponential"``); or ``noise="multiplicative"`` with
      ``alpha`` (Theorem 11: ``(1−α)L ≤ ℓ ≤ (1+α)L``; m starts at ``⌈log2(1/α) − 2⌉`` and τ is the fixed
      point ``τ = α·L_max(τ)`` — the paper's ``2·ln 2·α`` is too small once the ``ln 3`` of Lemma 2 is counted).
    * Queries: ``⌈N/m⌉`` (+1 with ``verify``), ``O(N/log N + N/log(φ/(N·τ)))``. Time: ``O(N·2^m/m)``. A
      ``budget`` of submissions stops early (unqueried rows are ``-1``); the check is sent only within it.
    * Precision: ``sizing="paper"`` takes ``m = min(⌈log2 N⌉, ⌊log2((φ−8)/(N·τ·ln 2))⌋)``; ``"verified"``
      (default) the largest ``m ≤ ⌈log2 N⌉`` whose labelings the server (clipping, φ, decimals) keeps more
      than twice the window apart. If none, or a fixed ``batch_size`` is too large, :class:`AttackFailed`
      before querying — e.g. when ``2·N·τ·ln 3`` exceeds ``ln((1−eps)/eps)``, one label cannot move the score
      by more than the noise.

    >>> from attacks import LocalOracle, run
    >>> labels = [0, 1, 1, 1, 0, 0, 1, 0, 1, 1]
    >>> result = run("robust_batched", LocalOracle(labels, decimals=5), tau=0.001)
    >>> result.labels.tolist() == labels, result.details["batch_size"], result.queries
    (True, 4, 4)
    """
    _require(oracle, binary=True)
    model = ServerModel.of(oracle)
    n = model.n_rows
    cap = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    multiplicative = noise == "multiplicative"
    if multiplicative:
        if alpha is None or not 0 <= alpha < 1:
            raise ValueError("noise='multiplicative' needs alpha in [0, 1)")
        noise_tau = 0.0
    else:
        noise_tau = _tau(model, tau=tau, noise=noise, scale=scale, delta=delta, tail=tail, queries=n + 1)

    def plan(size: int) -> tuple[Probe, ServerModel, float] | None:
        """The batch probe for ``size`` rows, its model and spacing, if the server separates it."""
        local_tau = noise_tau
        if multiplicative:
            assert alpha is not None
            local_tau = 0.0
            for _ in range(200):  # fixed point τ = α·L_max(τ): the noise scales with the score itself
                probe = robust_probe(model, size, _spacing(model, local_tau))
                updated = float(alpha * probe.max_total / n)
                if not math.isfinite(updated) or updated > 1e6:
                    return None
                if abs(updated - local_tau) <= 1e-12 * max(updated, 1e-300):
                    break
                local_tau = updated
            else:
                return None
        local_model = model.with_tau(local_tau)
        probe = robust_probe(local_model, size, _spacing(local_model, local_tau))
        return (probe, local_model, _spacing(local_model, local_tau)) if enumeration_certified(local_model, probe) \
            else None

    if batch_size is not None:
        size = int(batch_size)
        if size > MAX_EXHAUSTIVE_ROWS:
            raise AttackFailed(f"batch_size {size} > {MAX_EXHAUSTIVE_ROWS}: too many labelings to enumerate")
    elif multiplicative:
        assert alpha is not None
        paper_m = max(1, math.ceil(math.log2(1 / alpha) - 2)) if alpha > 0 else cap
        size = largest_feasible(min(paper_m, cap), lambda m: plan(m) is not None)
    elif sizing == "paper":
        spacing = _spacing(model, noise_tau)
        ratio = (model.phi - 8) / (n * spacing * math.log(2))
        size = min(cap, math.floor(math.log2(ratio))) if ratio > 0 else 0
    elif sizing == "verified":
        size = largest_feasible(cap, lambda m: plan(m) is not None)
    else:
        raise ValueError(f"unknown sizing {sizing!r}; use 'verified' or 'paper'")
    size = min(size, n)
    plans = {shape: plan(shape) for shape in _shapes(n, size)} if size >= 1 else {}
    if size < 1 or any(p is None for p in plans.values()):
        reach = math.log((1 - model.eps) / model.eps)
        raise AttackFailed(
            f"no τ-robust batch of {max(size, 1)} row(s) is separable on this server (N = {n}, noise bound "
            f"τ = {noise_tau if not multiplicative else f'{alpha}·L'}, {oracle.decimals} decimals, φ = "
            f"{model.phi}): one label moves the summed loss by at most ln((1−eps)/eps) = {reach:.3g}, which must "
            "exceed 2·N·τ·ln 3"
        )
    chosen = {shape: p for shape, p in plans.items() if p is not None}

    def decode(probe: Probe, released: Any) -> np.ndarray:
        _, local_model, _ = chosen[probe.size]
        return decode_nearest(local_model, probe, released)

    labels, decode_seconds, batches = _run_batches(
        oracle, n, size, lambda shape: chosen[shape][0], decode, budget
    )
    full = chosen[size]
    verified = "not requested"
    if verify and (labels >= 0).all():
        if budget is None or batches < budget:
            verified = check_claims(oracle, labels, slack=noise_tau,
                                    relative=(alpha or 0.0) if multiplicative else 0.0)
        else:  # the budget spent on the batches: they stand on their certificates
            verified = "not checked (the budget is spent)"
    return _result(
        "robust_batched", labels, batch_size=size, batches=batches,
        tau=full[1].tau, spacing=full[2], verified=verified, decode_seconds=decode_seconds,
    )


def prime_powers_fits(facts: BoardFacts) -> Plan | Refusal:
    """K-class log loss without noise where the K-ary lattice does not run (an MPFR server): rank 140."""
    if not facts.open_release or facts.metric != "multiclass_logloss" or facts.noise or facts.split:
        return Refusal("prime_powers", "multiclass log loss scoring every row, without noise, only")
    return Plan("prime_powers", {}, "multiclass log loss: prime powers", rank=140)


def _multiclass_logloss(facts: BoardFacts) -> bool:
    return facts.metric == "multiclass_logloss"


@register("prime_powers", truncatable=True, fits=prime_powers_fits, applies=_multiclass_logloss,
          paper="paper 000 §3.3 and App. A.2, Theorems 3 and 8 (prime powers); paper 004 §2.2",
          board="multiclass log loss, every row scored, no noise",
          queries="1 (single, arbitrary precision), else ⌈N / m⌉",
          precision="MPFR scores at full precision for one query (≈ (K−1)·log2 Π p_i bits), else batched; no noise")
def prime_powers(
    oracle: Oracle, *, mode: str = "auto", batch_size: int | None = None, budget: int | None = None
) -> AttackResult:
    """Paper 000, Theorem 3 / Theorem 8 (and paper 004, §2.2): K-class labels from prime powers.

    Paper 000, Section 3.3 (Theorem 3) and App. A.2 (Theorem 8, the single query in arbitrary precision).

    Row r predicts class c with probability ``p_r^c / Σ_{j<K} p_r^j`` (labels 0..K−1), the other rows 1/K;
    then ``Π_r Σ_j p_r^j · exp(−N·ℓ + (N−m)·ln K) = Π_r p_r^{σ_r}``, and the multiplicity of ``p_r`` in that
    integer is row r's label.

    * ``mode="single"``: all N rows in one query (Theorem 8, arbitrary precision: the server needs about
      ``(K−1)·log2 Π p_i`` bits — use ``mpfr:φ``, decimals=None, and an ``eps`` below ``1/Σ_j p_N^j``).
      ``mode="batched"``: m rows per query, the largest m the server's precision carries (or
      ``batch_size``): ``⌈N/m⌉`` queries. ``"auto"`` (default) is single when it fits, else batched. A
      ``budget`` of submissions stops early; unqueried rows are ``-1``.
      (The paper's FPA variant spreads m classes over m rows and cannot tell a label ≥ m from label 0; giving
      each batch row all K powers avoids that.)
    * Time: O(N·K) big-number operations. Raises :class:`AttackFailed` before querying when the precision or
      the clipping cannot carry the batch.
    * Queries: 1 (single), else ``⌈N/m⌉``. Precision: no noise; the released score must separate the batch's
      ``K^m`` labelings (full MPFR precision for the single query, any decimals for small batches).

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([2, 0, 1, 2], metric="multiclass_logloss", n_classes=3, arithmetic="mpfr:80",
    ...                      decimals=None)
    >>> result = run("prime_powers", oracle, mode="single", confirm=False)
    >>> result.labels.tolist(), result.queries
    ([2, 0, 1, 2], 1)
    """
    _require(oracle, binary=False)
    model = ServerModel.of(oracle)
    n = model.n_rows
    probes: dict[int, Probe | None] = {}
    decoders: dict[int, Callable[[Probe, Any], np.ndarray] | None] = {}

    def probe_for(size: int) -> Probe | None:
        if size not in probes:
            try:
                probes[size] = prime_power_probe(model, first_primes(size))
            except AttackFailed:  # a probability below eps would be clipped
                probes[size] = None
        return probes[size]

    def certified(size: int) -> bool:
        if size not in decoders:
            probe = probe_for(size)
            decoders[size] = None if probe is None else prime_decoder(model, probe, first_primes(size))
        return decoders[size] is not None

    if mode == "single":
        size = n
    elif batch_size is not None:
        size = int(batch_size)
    elif mode in ("auto", "batched"):
        size = largest_feasible(n, certified)
    else:
        raise ValueError(f"unknown mode {mode!r}; use 'auto', 'single' or 'batched'")
    if size < 1:
        raise AttackFailed("not even one row per query is decodable at this server's precision")
    size = min(size, n)
    for shape in _shapes(n, size):
        if not certified(shape):
            raise AttackFailed(
                f"{shape} rows × {model.n_classes} classes per query is too many for this server "
                f"({oracle.decimals} decimals, φ = {model.phi} bits, eps = {model.eps:g}); the largest batch it "
                f"carries is {largest_feasible(n, certified)}"
            )

    def decode(probe: Probe, released: Any) -> np.ndarray:
        decoder = decoders[probe.size]
        assert decoder is not None
        return decoder(probe, released)

    def template(shape: int) -> Probe:
        probe = probe_for(shape)
        assert probe is not None
        return probe

    labels, decode_seconds, batches = _run_batches(oracle, n, size, template, decode, budget)
    return _result(
        "prime_powers", labels, batch_size=size, batches=batches, bits=model.phi,
        decode_seconds=decode_seconds,
    )
