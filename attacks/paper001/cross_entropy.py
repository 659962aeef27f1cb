"""Paper 001's cross-entropy attacks: ``ce_robust`` (Theorem 3, τ-robust multiclass cross-entropy) and the
attacks on logit boards, ``softmax_ce`` (§4, eq. 5) and ``sigmoid_ce`` (App. D, eq. 14), which go through the
inverse activation (:mod:`attacks.paper001.activations`).

All three run :func:`attacks.paper001.attacks.play`: multi-query (§3.2, batches sized from the server's
float64 arithmetic, App. B.1), a known noise bound ``tau`` (or a distribution's tail bound), or the doubling
trick for an unknown one (§7), a certificate per batch and a check query at the end; every refusal is an
:class:`AttackFailed` with its reason.
"""

from __future__ import annotations

from collections.abc import Callable

from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.oracle import Oracle
from attacks.paper001.activations import CROSS_ENTROPY, LOGIT_METRICS, check_metric
from attacks.paper001.attacks import MAX_BATCH, play
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

#: Probability-space metrics that are the cross-entropy (Theorem 3's CEloss; KL of one-hot labels, App. C.1).
CE_METRICS = frozenset({"binary_logloss", "multiclass_logloss", "kl"})


def _construction(construction: str) -> str:
    if construction not in MAX_BATCH:
        raise ValueError(f"unknown construction {construction!r}; use one of {', '.join(sorted(MAX_BATCH))}")
    return construction


@register("ce_robust", exact=False, truncatable=True,
          paper="paper 001 §4, Theorem 3 (τ-robust cross-entropy rows); §7's doubling",
          board="K-class log loss or kl under noise, every row scored (capacity's fallback)",
          queries="⌈N / m⌉ (+1 with verify)",
          precision="any released decimals; float64 (weights capped by the clipping); noise up to τ or doubled")
def ce_robust(
    oracle: Oracle,
    *,
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    delta: float = 0.05,
    doubling: bool = False,
    tau_start: float | None = None,
    batch_size: int | None = None,
    headroom: float | None = None,
    decoder: str = "integer",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 001, Theorem 3: τ-robust K-class cross-entropy. Row n of a batch predicts
    ``θ_{n,k} = ϑ_{n,k}/Σ_j ϑ_{n,j}`` with ``ln ϑ_{n,k} = c·2^((n−1)K+k)``, so the summed loss is
    ``Σ_n ln Σ_j ϑ_{n,j} − c·Σ_n 2^(e_n(σ_n))`` — a labeling-independent part minus c times an integer whose
    binary digits are the labels (one set bit per row's block of K); two labelings differ by ≥ 2c (the proof's
    ``2τ ln 3``). The theorem's ``c = N·τ·ln 3`` covers the noise only; here c covers the whole window
    (N·τ, the released decimals, the server's rounding), and a batch is as many rows as float64 carries
    (App. B.1): the weights span ``2^(mK)·c``, which the clipping ``eps`` caps at ``ln((1 − eps)/eps) ≈ 34.5``
    — the doubly exponential blow-up §4 warns of after Theorem 3, so Theorem 3 carries about half of Construction 1's
    base-K digits (``bregman_powers``; N = 2,201 at 5 decimals: 6 binary labels a query against 11).

    On ``softmax_ce`` / ``sigmoid_ce`` boards the rows go out as logits (§4's step (2), App. D). Noise,
    doubling, queries, decoders (``"integer"``: the binary digits top-down; ``"labelinf"``: Eq. 1) as
    ``bregman_powers``.

    Paper 001 (AISTATS 2022), Section 4, Theorem 3. Queries: ``⌈N/m⌉`` (+ 1 with ``verify``). Precision: any
    released decimals on a float64 server, noise up to τ (given, from a tail bound, or found by doubling).

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([2, 0, 1, 2, 1], metric="multiclass_logloss", n_classes=3, decimals=5)
    >>> result = run("ce_robust", oracle, tau=1e-4)
    >>> result.labels.tolist(), result.details["construction"], result.details["verified"]
    ([2, 0, 1, 2, 1], 'theorem3', 'passed')
    """
    base = oracle.metric.split(":")[0]
    if base in LOGIT_METRICS:
        check_metric(oracle.metric, oracle.n_classes)
        logits: str | None = base
    elif base in CE_METRICS:
        logits = None
    else:
        raise AttackFailed(f"Theorem 3 is about the cross-entropy ({', '.join(sorted(CE_METRICS | set(LOGIT_METRICS)))}"
                           f"), not {oracle.metric!r}")
    return play(oracle, "ce_robust", "theorem3", alpha=None, tau=tau, noise=noise, scale=scale, delta=delta,
                doubling=doubling, tau_start=tau_start, batch_size=batch_size, headroom=headroom, decoder=decoder,
                verify=verify, budget=budget, logits=logits, family=CROSS_ENTROPY)


def _logit_attack(
    name: str, oracle: Oracle, construction: str, tau: float | None, noise: str | None, scale: float | None,
    delta: float, doubling: bool, tau_start: float | None, batch_size: int | None, headroom: float | None,
    decoder: str, verify: bool, budget: int | None,
) -> AttackResult:
    check_metric(oracle.metric, oracle.n_classes)
    if oracle.metric.split(":")[0] != name:
        raise AttackFailed(f"the {name} attack plays {name} boards; this one scores {oracle.metric}")
    return play(oracle, name, _construction(construction), alpha=None, tau=tau, noise=noise, scale=scale,
                delta=delta, doubling=doubling, tau_start=tau_start, batch_size=batch_size, headroom=headroom,
                decoder=decoder, verify=verify, budget=budget, logits=name, family=CROSS_ENTROPY)


def _logit_fits(name: str) -> Callable[[BoardFacts], Plan | Refusal]:
    def fits(facts: BoardFacts) -> Plan | Refusal:
        """The loss of the same name on logits, every row scored, float64: rank 100."""
        if not facts.open_release or facts.family != name or facts.split or not facts.float64:
            return Refusal(name, f"{name} on logits, float64, every row scored and released, only")
        activation = "sigmoid" if facts.n_classes == 2 else "softmax"
        if facts.noise:
            return Plan(name, {"doubling": True}, f"noise seen (spread {facts.seen_spread:.3g}) on {facts.metric} "
                        f"(logits): paper 001's powers construction through the inverse {activation} (§4, App. D), "
                        "its noise bound found by doubling (§7)", rank=100)
        return Plan(name, {}, f"{facts.metric} on logits, every row scored: paper 001's powers construction through "
                    f"the inverse {activation} (§4, App. D)", rank=100)

    return fits


def _logit_board(name: str) -> Callable[[BoardFacts], bool]:
    def applies(facts: BoardFacts) -> bool:
        return facts.family == name and facts.float64 and facts.public_fraction is None

    return applies


@register("softmax_ce", exact=False, truncatable=True, fits=_logit_fits("softmax_ce"),
          applies=_logit_board("softmax_ce"),
          paper="paper 001 §4 (eq. 5, through the inverse softmax), App. G's extra bits",
          board="softmax cross-entropy on logits, float64, every row scored",
          queries="bregman_powers' on the log loss: ⌈N / m⌉ (+1 with verify)",
          precision="any released decimals; the float64 log-sum-exp rounding modelled; noise up to τ")
def softmax_ce(
    oracle: Oracle,
    *,
    construction: str = "powers",
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    delta: float = 0.05,
    doubling: bool = False,
    tau_start: float | None = None,
    batch_size: int | None = None,
    headroom: float | None = None,
    decoder: str = "integer",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 001 §4 (eq. 5): every label of a softmax cross-entropy board, whose submissions are logits. A
    probability-space construction (``construction``: ``"powers"`` Construction 1 with base-K digits, the
    default and the largest batch; ``"primes"`` Construction 2; ``"theorem3"`` Theorem 3 as the paper does)
    goes out as ``z = ln q`` (softmax inverted up to its free constant); the plan is re-certified on the
    losses the server computes from those logits, with its own rounding (App. G's extra bits). Binary boards
    take one logit a row (the log-odds). Noise, doubling, queries as ``bregman_powers``.

    Paper 001, Section 4 (softmax cross-entropy, eq. 5) and App. G (the extra bits softmax needs). Queries:
    ``⌈N/m⌉`` (+ 1 with ``verify``). Precision: any released decimals; float64 logits; noise up to τ.

    >>> from attacks import LocalOracle, run
    >>> oracle = LocalOracle([3, 0, 5, 1, 2, 4, 0], metric="softmax_ce", n_classes=6, decimals=5)
    >>> result = run("softmax_ce", oracle)
    >>> result.labels.tolist(), result.details["activation"], result.details["verified"]
    ([3, 0, 5, 1, 2, 4, 0], 'softmax', 'passed')
    """
    return _logit_attack("softmax_ce", oracle, construction, tau, noise, scale, delta, doubling, tau_start,
                         batch_size, headroom, decoder, verify, budget)


@register("sigmoid_ce", exact=False, truncatable=True, fits=_logit_fits("sigmoid_ce"),
          applies=_logit_board("sigmoid_ce"),
          paper="paper 001 §4 and App. D.1 (eq. 14, through the inverse sigmoid)",
          board="sigmoid cross-entropy on logits, float64, every row scored",
          queries="bregman_powers' on the log loss: ⌈N / m⌉ (+1 with verify)",
          precision="any released decimals; the float64 logaddexp rounding modelled; noise up to τ")
def sigmoid_ce(
    oracle: Oracle,
    *,
    construction: str = "powers",
    tau: float | None = None,
    noise: str | None = None,
    scale: float | None = None,
    delta: float = 0.05,
    doubling: bool = False,
    tau_start: float | None = None,
    batch_size: int | None = None,
    headroom: float | None = None,
    decoder: str = "integer",
    verify: bool = True,
    budget: int | None = None,
) -> AttackResult:
    """Paper 001 App. D (eq. 14): every label of a binary sigmoid cross-entropy board (one logit a row). Row θ
    of the probability-space construction goes out as its log-odds ``ln(θ/(1 − θ))`` (Sigmoid is a bijection),
    re-certified on the server's ``logaddexp`` losses; otherwise as :func:`softmax_ce`.

    Paper 001, App. D.1 (sigmoid cross-entropy, eq. 14; Section 4 names it). Queries: ``⌈N/m⌉`` (+ 1 with
    ``verify``). Precision: any released decimals; float64 logits; noise up to τ.

    >>> from attacks import LocalOracle, run
    >>> result = run("sigmoid_ce", LocalOracle([1, 0, 0, 1, 1, 0, 1], metric="sigmoid_ce", decimals=5), tau=1e-3)
    >>> result.labels.tolist(), result.details["activation"], result.details["verified"]
    ([1, 0, 0, 1, 1, 0, 1], 'sigmoid', 'passed')
    """
    return _logit_attack("sigmoid_ce", oracle, construction, tau, noise, scale, delta, doubling, tau_start,
                         batch_size, headroom, decoder, verify, budget)
