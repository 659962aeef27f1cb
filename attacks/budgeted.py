"""``budgeted``: the most labels a privacy budget's released count allows (``privacy_budget`` after Laplace noise).

A per-participant privacy budget releases ``k`` noisy scores and then withholds (``defenses.privacy_budget``):
the leak is at most ``k × C`` bits, ``C`` the capacity of one noisy release
(:func:`attacks.information.privacy_budget_bits`). What limits an attacker is the count of releases, not of
submissions, so every release must carry as much as it can about individual labels:

* a **read** is one release over a block of rows (the others at ½, loss ``ln 2`` whatever their label): the block's
  rows at chosen logits ``w_j`` (a row at a logit ``w`` moves the summed loss by ``w`` between its labels), so
  ``r = μ(z) + Laplace(b)`` with ``μ`` known for each labeling ``z`` of the block;
* the **design** of a read is chosen for the rows it is expected to set right (:func:`gain`: the expected count of
  right labels after the read less before, by quadrature over the release, the class balance as the prior): a fresh
  block's first read is either ``m`` rows at ``A, A/2, …, A/2^(m−1)`` (``m`` the most rows whose smallest weight
  still stands ``SPACING`` noise scales clear, ``m = ⌊log2(A / (SPACING·b_N))⌋ + 1``: every labeling apart when the
  noise is small) or up to :data:`DESIGNED_ROWS` rows on a searched grid of logits (with ε = 10 a release the noise
  on the summed loss is ``A/10``: four rows at ``−A, −A/2, −A/4, A`` set 0.70 rows right a release, the
  binary-spaced two 0.57, at 68 % ones);
* **re-reads**: each release goes to the fresh block or to the read block whose next read promises more (its design
  searched again given what its reads left open, settled rows left out), so releases beyond one pass over the rows
  (more accounts than the rows need) settle the unsure ones; each block's reads combine into one likelihood;
* the decoder is exact Bayes: the posterior of the block's labelings given its releases (Laplace likelihood, the
  class balance as prior), each row's label its posterior majority, its confidence the posterior. Nothing is
  claimed exact (Laplace noise is unbounded). The noise scale is checked against the releases (:func:`_check_scale`)
  and fitted to them where they contradict it (a host that discloses less noise than it adds);
* ``accounts: k`` multiplies the releases: each account's budget is its own (the defense keeps one per participant);
  when one withholds, the next goes on where it stopped.

Rows never queried get the majority class (the balance), so the labeling is never worse than the majority.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.boosting import floored_labels
from attacks.catalogue import BoardFacts, Plan, Refusal, Stage
from attacks.ladder.common import edge_logit, row_losses
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult, SubmissionRefused

#: Noise scales between neighbouring weights: the smallest weight still separates its labels with Laplace
#: odds e^SPACING ≈ 50.
SPACING = 4.0
MAX_ROWS = 12


def rows_per_release(n: int, scale: float, eps: float) -> int:
    """``m``: rows one release holds for Laplace noise of ``scale`` on the mean (see the module docstring).

    >>> rows_per_release(2201, 34.54 / 2201, 1e-15), rows_per_release(2201, 1e-3, 1e-15)
    (1, 2)
    """
    b_sum = scale * n
    a = edge_logit(eps)
    if b_sum <= 0:
        return MAX_ROWS
    return max(1, min(MAX_ROWS, math.floor(math.log2(a / (SPACING * b_sum))) + 1))


def posterior(released: float, means: np.ndarray, scale: float, prior: float, z: np.ndarray) -> np.ndarray:
    """``P(z_j = 1 | r)`` per row, for labelings ``z`` (lines) with mean scores ``means`` and Laplace ``scale``."""
    log_like = -np.abs(released - means) / scale
    ones = z.sum(axis=1)
    p = min(max(prior, 1e-9), 1 - 1e-9)
    log_prior = ones * math.log(p) + (z.shape[1] - ones) * math.log(1 - p)
    w = log_like + log_prior
    w = np.exp(w - w.max())
    w /= w.sum()
    return np.asarray(w @ z)


#: Rows a re-read must promise to set right, in expectation, to be worth a release.
MIN_VALUE = 1e-4


def labelings(k: int) -> np.ndarray:
    """Every labeling of ``k`` rows, one a line (row ``j`` is bit ``j``)."""
    return ((np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1).astype(np.int64)


def design_means(logits: np.ndarray, n: int, eps: float) -> np.ndarray:
    """The released mean (before noise) for each labeling of a block whose rows sit at ``logits``, every other row
    at ½ (loss ``ln 2`` whatever its label): the server's own row losses."""
    k = len(logits)
    z = labelings(k)
    p = 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))
    one, zero = row_losses(p, np.ones(k, dtype=np.int64), eps), row_losses(p, np.zeros(k, dtype=np.int64), eps)
    return np.asarray((np.where(z == 1, one, zero).sum(axis=1) + (n - k) * math.log(2.0)) / n)


def block_posterior(reads: list[tuple[np.ndarray, float]], scale: float, prior: float,
                    k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the posterior of each labeling of a block, each row's ``P(label 1)``) given its reads (each the labelings'
    mean scores and the release), Laplace ``scale``, share of ones ``prior``; ``k``: the block's rows when it has
    no read yet."""
    size = round(math.log2(len(reads[0][0]))) if reads else int(k or 0)
    z = labelings(size)
    ones = z.sum(axis=1)
    p = min(max(prior, 1e-9), 1 - 1e-9)
    w = ones * math.log(p) + (size - ones) * math.log(1 - p)
    for means, released in reads:
        w = w - np.abs(released - means) / scale
    w = np.exp(w - w.max())
    w /= w.sum()
    return w, np.asarray(w @ z)


def gain(means: np.ndarray, weights: np.ndarray, scale: float) -> float:
    """The rows one read with labelings' mean scores ``means`` is expected to set right, for a block whose labelings
    have the posterior ``weights``: its expected count of right labels after the read, less before. The release is
    integrated at :data:`NODES` quantiles of the Laplace noise around each labeling's score (the
    :data:`SAMPLED` likeliest labelings where a block has more).

    >>> z1 = np.array([0.5, 0.5])
    >>> round(gain(np.array([0.0, 1.0]), np.array([0.4, 0.6]), 0.1), 2), gain(np.array([0.0, 1.0]), z1, 100.0) < 0.01
    (0.4, True)
    """
    z = labelings(round(math.log2(len(means))))
    marginal = weights @ z
    before = float(np.maximum(marginal, 1 - marginal).sum())
    big = len(means) > 1 << DESIGNED_ROWS  # a binary-spaced block of many rows: a coarser integral
    likely = np.argsort(-weights, kind="stable")[: SAMPLED // 4 if big else SAMPLED]
    chance = weights[likely] / weights[likely].sum()
    nodes = NODES // 2 if big else NODES
    u = (np.arange(nodes) + 0.5) / nodes
    offsets = np.where(u < 0.5, np.log(2 * u), -np.log(2 * (1 - u))) * scale
    released = (means[likely][:, None] + offsets[None, :]).reshape(-1)
    log_post = np.log(np.maximum(weights, 1e-300))[None, :] - np.abs(released[:, None] - means[None, :]) / scale
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    ones = post @ z
    right = np.maximum(ones, 1 - ones).sum(axis=1).reshape(len(likely), nodes).mean(axis=1)
    return max(float(chance @ right) - before, 0.0)


@dataclass
class Block:
    """Rows read together: the design of their next read (logits), its :func:`gain`, and their reads so far."""

    rows: np.ndarray
    design: np.ndarray
    value: float = 0.0
    reads: list[tuple[np.ndarray, float]] = field(default_factory=list)


#: Logits (× A) a designed row may take: the edges, finer weights down to A/32, and ½ (the row left out).
LEVELS = (1.0, 0.75, 0.5, 0.35, 0.25, 0.18, 0.125, 0.0625, 0.03125, 0.0)
#: Rows a designed (not binary-spaced) block holds at most: the search costs 2^k a labeling.
DESIGNED_ROWS = 4
#: A row this sure (posterior within it of 0 or 1) is left out of its block's next read.
SETTLED = 1e-3
#: Quantiles of the noise per labeling, and labelings at most, that :func:`gain` integrates over.
NODES = 24
SAMPLED = 64


def _improve(logits: np.ndarray, weights: np.ndarray, n: int, eps: float, scale: float,
             sweeps: int = 2) -> tuple[float, np.ndarray]:
    """Coordinate ascent of :func:`gain` over the rows' logits, on the grid ``±LEVELS × A``; a row already settled
    (posterior within :data:`SETTLED` of 0 or 1) is left out of the read (logit 0, loss ``ln 2`` either way)."""
    a = edge_logit(eps)
    levels = a * np.array([*LEVELS, *(-x for x in LEVELS if x)])
    marginal = weights @ labelings(len(logits))
    open_rows = [j for j in range(len(logits)) if min(marginal[j], 1 - marginal[j]) > SETTLED]
    logits = np.where(np.isin(np.arange(len(logits)), open_rows), logits, 0.0)
    best = gain(design_means(logits, n, eps), weights, scale)
    for _ in range(sweeps):
        improved = False
        for j in open_rows:
            for level in levels:
                if level == logits[j]:
                    continue
                trial = logits.copy()
                trial[j] = level
                value = gain(design_means(trial, n, eps), weights, scale)
                if value > best + 1e-12:
                    best, logits, improved = value, trial, True
        if not improved:
            break
    return best, logits


def fresh_design(n: int, eps: float, scale: float, share: float) -> tuple[float, np.ndarray]:
    """The design of a fresh block's first read with the most rows set right a release: the binary-spaced one
    (:func:`rows_per_release` rows at ``A, A/2, …``) or a searched one of at most :data:`DESIGNED_ROWS` rows."""
    a = edge_logit(eps)
    m = min(rows_per_release(n, scale, eps), n)
    binary = a / 2.0 ** np.arange(m)
    best = (gain(design_means(binary, n, eps), block_posterior([], scale, share, m)[0], scale), binary)
    for k in range(1, min(DESIGNED_ROWS, n) + 1):
        candidate = _improve(a / 2.0 ** np.arange(k), block_posterior([], scale, share, k)[0], n, eps, scale)
        if candidate[0] > best[0] + 1e-9:
            best = candidate
    return best


def best_reread(block: Block, n: int, eps: float, scale: float, share: float) -> tuple[float, np.ndarray]:
    """The next read's design for ``block`` given its reads (searched from the last design when the block is small
    enough, else the last design again) and what it is expected to set right."""
    weights, _ = block_posterior(block.reads, scale, share)
    if len(block.rows) <= DESIGNED_ROWS:
        return _improve(block.design.copy(), weights, n, eps, scale, sweeps=1)
    return gain(design_means(block.design, n, eps), weights, scale), block.design


def budgeted_fits(facts: BoardFacts) -> Plan | Refusal:
    """Noisy releases that stop (a privacy budget) on binary log loss scoring every row: rank 10. As a rescue,
    once every exact plan failed and the board withheld releases under noise (rank 42): what is left of the
    budget, and a fresh account's, spent on rows, the balance measured at the clipping edge."""
    seen = facts.seen
    if facts.exact_failed:
        if not facts.rescue_board or seen is None or not (facts.withheld and seen.noise):
            return Refusal("budgeted", "a rescue only where releases were withheld under noise")
        first = facts.fresh_account if facts.fresh_account is not None else facts.account
        return Plan("budgeted", {"budget": facts.budget_left, "prior": None, "scale": facts.spread, "fit_scale": True,
                                 "first_account": first}, "releases withheld under noise: a privacy budget",
                    rank=42, rescue=True)
    told = facts.told
    if (told.privacy_budget and facts.told_budget_scale is None and facts.binary_logloss and not facts.split
            and seen is not None and seen.noise and seen.noise_scale is not None and not seen.rejected):
        # The budget disclosed, its noise measured by two ½ probes: a rough scale, refitted to the releases.
        return Plan("budgeted", {"scale": seen.noise_scale, "prior": facts.prior, "budget": facts.budget_left,
                                 "first_account": facts.account, "fit_scale": True},
                    f"a disclosed privacy budget (ε {told.budget_epsilon:g}), the noise measured (scale "
                    f"~{seen.noise_scale:.3g} on the mean, refitted to the releases): every release spent on a few "
                    "rows", rank=10)
    told_scale = facts.told_budget_scale
    if told_scale is not None and not facts.split and not (seen is not None and (seen.ladder or seen.rejected)):
        # The host discloses the budget and the noise: no release is spent measuring them, every one reads rows.
        per_account = told.releases_per_account()
        return Plan("budgeted", {"scale": told_scale, "prior": facts.prior, "budget": facts.budget_left,
                                 "first_account": facts.account, "releases_per_account": per_account},
                    f"a disclosed privacy budget (ε {told.budget_epsilon:g}) over disclosed noise (scale "
                    f"{told_scale:.3g} on the mean): every release spent on a few rows"
                    + (f", {per_account} per account over {facts.accounts} account(s)" if per_account else ""), rank=10)
    if seen is None or not (seen.released_nothing and seen.noise and not seen.rejected):
        return Refusal("budgeted", "no noisy releases that stop (a privacy budget) were seen")
    if not facts.binary_logloss or facts.split:
        return Refusal("budgeted", "binary log loss scoring every row only")
    return Plan("budgeted", {"scale": facts.spread, "prior": facts.prior, "budget": facts.budget_left,
                             "first_account": facts.fresh_account, "fit_scale": True},
                f"noisy releases that stop (a privacy budget): each remaining release spent on a few rows, decoded "
                f"by their posterior (noise ~{facts.spread:.3g})", rank=10)


def _budgeted_board(facts: BoardFacts) -> bool:
    return facts.binary_logloss and facts.public_fraction is None


@register("budgeted", exact=False, truncatable=True, stage=Stage.LIKELIHOOD, fits=budgeted_fits,
          applies=_budgeted_board,
          paper="ours (a privacy budget's releases spent a few rows each)",
          board="binary log loss, every row scored, noisy releases that stop (a privacy budget)",
          queries="the releases the budget allows",
          precision="Laplace-noised releases of a known (or ε-derived) scale; any decimals; float64")
def budgeted(
    oracle: Oracle,
    *,
    scale: float | None = None,
    epsilon: float | None = None,
    prior: float | None = None,
    budget: int | None = None,
    first_account: int | None = None,
    releases_per_account: int | None = None,
    fit_scale: bool = False,
) -> AttackResult:
    """Spend every release of a privacy budget on a few rows at a time (module docstring). ``scale``: the
    Laplace scale on the released mean if known; else ``epsilon`` (the ε each release spends, disclosed by the
    host) gives ``b = Δ/ε`` with ``Δ = A/N`` (the log-loss sensitivity). ``prior``: the share of ones (the
    fingerprint's balance); if unknown, the first release measures it. Submits until every account's budget
    withholds or ``budget`` submissions are spent (every account's together; ``None``: ``10·N``): each account's
    budget is its own (the defense keeps one per participant), so ``k`` accounts read ``k`` times the rows, each
    account going on where the last one stopped. ``releases_per_account``: what the disclosure says one account's
    budget allows, checked against the releases (an account withheld earlier says so in ``details``).

    The noise is checked against the releases: each must lie within :data:`BELIEVED` scales of a labeling's
    score, and on average within :data:`BELIEVED_MEAN`; a release beyond that (a host disclosing less noise than
    it adds, or a chain other than disclosed) makes the attack fit the scale to the releases instead (maximum
    likelihood over the labelings' mixture) and say so in ``details["scale_check"]``; ``fit_scale``: the given scale
    is a rough measurement (two probes), refitted to the releases for the decode whether or not they contradict it.

    Paper: ours (against a privacy budget, Dwork–Rothblum–Vadhan composition). Queries: ``⌈N / m⌉`` releases
    of ``m`` rows while the budget releases. Precision: Laplace noise of scale ``b`` on the released mean.
    Forty rows, noise 1e-4: twelve rows a release, four releases:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(0).random(40) < 0.6).astype(np.int64)
    >>> chain = [{"name": "noise", "kind": "laplace", "scale": 1e-4},
    ...          {"name": "privacy_budget", "epsilon": 1e5, "composition": "basic"}]
    >>> result = run("budgeted", LocalOracle(y, defenses=chain), scale=1e-4, prior=float(y.mean()))
    >>> details = result.details
    >>> details["rows_per_release"], details["releases"] - details["rereads"], result.accuracy(y)
    (12, 4, 1.0)
    """
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed("budgeted needs a binary log-loss board")
    if BoardFacts.of(oracle).public_fraction is not None:
        raise AttackFailed("budgeted assumes every row is scored (no public split)")
    n, eps = oracle.n_rows, oracle.eps
    a = edge_logit(eps)
    if scale is None:
        if epsilon is None:
            raise AttackFailed("budgeted needs the noise: give 'scale' or the per-release 'epsilon'")
        scale = (math.log1p(-eps) - math.log(eps)) / n / epsilon
    share = 0.5 if prior is None else float(prior)
    measure_balance = prior is None
    facts = BoardFacts.of(oracle)
    accounts = facts.accounts
    account = facts.account if first_account is None else first_account
    limit = budget if budget is not None else 10 * n
    reads: list[tuple[np.ndarray, np.ndarray, float]] = []  # (rows, their labelings' mean scores, the release)
    used = releases = withheld = rereads = 0
    per_account: list[int] = []
    on_account = 0
    # Blocks of rows: each read of a block is one release, its design chosen for what the block's earlier reads
    # left open (value of information); a fresh block when that promises more than any re-read.
    blocks: list[Block] = []
    fresh: tuple[float, np.ndarray] | None = None
    next_row = 0
    # Releases equal to the one before: Laplace noise far above the released unit makes them rare; a board that
    # re-releases earlier scores (a Ladder, a cache) makes them the rule.
    previous: float | None = None
    repeats = 0
    unit = 10.0 ** -oracle.decimals if oracle.decimals is not None else 1e-15
    while used < limit and account < accounts:
        oracle.account = account  # type: ignore[attr-defined]
        if measure_balance:
            # The class balance first (the floor needs the majority class): every row at the edge scores
            # share·A on the mean, so one release reads the share to about 1/(N·ε) — a row or so.
            try:
                value = oracle.submit(np.full(n, eps))
            except SubmissionRefused:
                value = None
            used += 1
            if value is None:
                per_account.append(on_account)
                account, on_account = account + 1, 0
                continue
            releases += 1
            on_account += 1
            measure_balance = False
            share = min(max(float(value) / a, 0.0), 1.0)
            continue
        if fresh is None:
            fresh = fresh_design(n, eps, scale, share)
        best = max(range(len(blocks)), key=lambda b: blocks[b].value, default=None)
        if next_row < n and (best is None or fresh[0] >= blocks[best].value):
            rows = np.arange(next_row, min(next_row + len(fresh[1]), n))
            block = Block(rows, fresh[1][: len(rows)])
            is_new = True
        elif best is not None and blocks[best].value >= MIN_VALUE:
            block, is_new = blocks[best], False
        else:
            break  # every row settled: no release would set a label right that is not already
        p = np.full(n, 0.5)
        p[block.rows] = 1.0 / (1.0 + np.exp(-block.design))
        try:
            released = oracle.submit(p)
        except SubmissionRefused:
            released = None
        used += 1
        if released is None:
            withheld += 1
            per_account.append(on_account)
            account, on_account = account + 1, 0  # this account's budget is spent: the next one's is fresh
            continue
        releases += 1
        on_account += 1
        means = design_means(block.design, n, eps)
        if previous is not None and float(released) == previous and float(np.abs(means - previous).min()) > unit:
            # The release repeats the one before and fits none of this read's labelings to the released unit.
            repeats += 1
            if math.comb(releases - 1, repeats) * min(1.0, unit / (2 * scale)) ** repeats < STUCK_CHANCE:
                return _stuck(n, share, releases, repeats, scale, used)
        previous = float(released)
        block.reads.append((means, float(released)))
        reads.append((block.rows, means, float(released)))
        if is_new:
            blocks.append(block)
            next_row += len(block.rows)
        else:
            rereads += 1
        block.value, block.design = best_reread(block, n, eps, scale, share)
    if releases == 0 or (prior is None and measure_balance):
        raise AttackFailed("the privacy budget released nothing more (on every account left)")
    check = _check_scale(reads, scale, unit)
    if check is not None:
        scale = _fit_scale(reads, scale, share)
        check += f"; the scale fitted to the releases instead: {scale:.3g}"
    elif fit_scale and len(reads) >= CHECKED:
        measured, scale = scale, _fit_scale(reads, scale, share)
        check = f"the measured scale {measured:.3g} refitted to the releases: {scale:.3g}"
    marginals = np.full(n, np.nan)
    for block in blocks:
        marginals[block.rows] = block_posterior(block.reads, scale, share)[1]
    queried = ~np.isnan(marginals)
    # Each queried row's evidence as a log-likelihood ratio, weighed against the balance and floored at the
    # majority labeling unless it is confidently better (boosting's floor: never below the majority class).
    clipped = np.clip(np.where(queried, marginals, share), 1e-12, 1 - 1e-12)
    p0 = min(max(share, 1e-12), 1 - 1e-12)
    evidence = np.log(clipped / (1 - clipped)) - math.log(p0 / (1 - p0))
    ties = np.full(n, 1 if share >= 0.5 else 0, dtype=np.int64)
    labels, confidence, floor = floored_labels(share, evidence, ties)
    m = 0 if fresh is None else len(fresh[1])
    details: dict[str, Any] = {"rows_per_release": m, "releases": releases, "withheld": withheld,
                               "queries": used, "rows_queried": int(queried.sum()), "rereads": rereads,
                               "scale": scale,
                               "accounts_used": min(account + 1, accounts), "floored": floor.get("floored"),
                               "scale_check": check or "the releases fit the noise scale",
                               "releases_left": account < accounts}
    if releases_per_account is not None:
        # The first account may have released before this attack began (the fingerprint's probe): not counted.
        short = [count for count in per_account[1:] if count < releases_per_account]
        details["releases_per_account"] = releases_per_account
        if short:
            details["budget_check"] = (f"{len(short)} account(s) withheld after fewer releases than the disclosed "
                                       f"{releases_per_account} (as few as {min(short)})")
    return AttackResult("budgeted", labels, details=details, confidence=confidence)


def _stuck(n: int, share: float, releases: int, repeats: int, scale: float, used: int) -> AttackResult:
    """What ``budgeted`` answers once its releases repeat earlier ones beyond chance: the board re-releases earlier
    scores (a Ladder, a cache), not the noise assumed (a disclosure the releases contradict), so no read is decoded;
    every row the majority class of the measured balance, as a guess."""
    labels, confidence, _ = floored_labels(share, np.zeros(n), np.full(n, 1 if share >= 0.5 else 0, dtype=np.int64))
    reason = (f"{repeats} of {releases} releases repeated the one before exactly, off every labeling's score, which "
              f"Laplace noise of scale {scale:.3g} does with probability below {STUCK_CHANCE:g}: the board re-releases "
              "earlier scores (a Ladder or a cache), not the noise assumed; no read decoded, every row the majority "
              "class")
    return AttackResult("budgeted", labels, confidence=confidence,
                        details={"releases": releases, "queries": used, "rows_queried": 0, "rereads": 0,
                                 "scale": scale, "scale_check": reason, "stuck": True, "releases_left": True})


#: The chance below which releases repeating the one before cannot be the assumed noise's (see ``budgeted``).
STUCK_CHANCE = 1e-6
#: A release more than this many noise scales from every labeling's score contradicts the scale (Laplace:
#: probability e^-25 a release) …
BELIEVED = 25.0
#: … and so do releases at least :data:`CHECKED` of them, on average more than this many scales from their
#: nearest labeling's score (the nearest is at most the draw away: a mean of 4 scales over 5 releases has
#: probability below 2e-5).
BELIEVED_MEAN = 4.0
CHECKED = 5


def _check_scale(reads: list[tuple[np.ndarray, np.ndarray, float]], scale: float, unit: float = 0.0) -> str | None:
    """Why the releases contradict the noise ``scale`` (``None``: they fit it); see :data:`BELIEVED`. Releases that
    all sit within the released ``unit`` of a labeling's score, which noise of that scale does with probability
    below :data:`STUCK_CHANCE` (at most ``2·unit`` of density ``1/(2·scale)`` around each score), show less noise."""
    if not reads or scale <= 0:
        return None
    gaps = np.array([float(np.abs(means - released).min()) for _, means, released in reads]) / scale
    if gaps.max() > BELIEVED:
        return f"a release lay {gaps.max():.0f} noise scales from every labeling's score"
    if len(gaps) >= CHECKED and gaps.mean() > BELIEVED_MEAN:
        return f"the releases lay on average {gaps.mean():.1f} noise scales from the nearest labeling's score"
    if unit > 0 and (gaps * scale <= unit).all():
        chance = math.prod(min(1.0, len(means) * unit / scale) for _, means, _ in reads)
        if chance < STUCK_CHANCE:
            return f"all {len(reads)} releases sat on a labeling's score to the released unit: less noise than assumed"
    return None


def _fit_scale(reads: list[tuple[np.ndarray, np.ndarray, float]], scale: float, share: float) -> float:
    """The Laplace scale that best explains the releases: EM over each release's labelings (their prior from the
    balance), started at ``scale``."""
    p = min(max(share, 1e-9), 1 - 1e-9)
    for _ in range(50):
        total = 0.0
        for rows, means, released in reads:
            zk = labelings(len(rows))
            ones = zk.sum(axis=1)
            w = -np.abs(released - means) / scale + ones * math.log(p) + (len(rows) - ones) * math.log(1 - p)
            w = np.exp(w - w.max())
            total += float((w / w.sum()) @ np.abs(released - means))
        fitted = max(total / len(reads), 1e-12)
        if abs(fitted - scale) <= 1e-6 * scale:
            return fitted
        scale = fitted
    return scale
