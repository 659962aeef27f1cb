"""``budgeted``: the most labels a privacy budget's released count allows (``privacy_budget`` after Laplace noise).

A per-participant privacy budget releases ``k`` noisy scores and then withholds (``defenses.privacy_budget``):
the leak is at most ``k × C`` bits, ``C`` the capacity of one noisy release
(:func:`attacks.information.privacy_budget_bits`). What limits an attacker is the count of releases, not of
submissions, so every release must carry as much as it can about individual labels:

* one release scores ``m`` chosen rows at weights ``A, A/2, …, A/2^(m−1)`` on the summed loss (a row at a
  logit ``±w`` moves the sum by ``w`` between its labels; the others sit at ½, loss ``ln 2`` whatever their
  label), so ``r = μ(z) + Laplace(b)`` with ``μ`` known for each labeling ``z`` of the ``m`` rows;
* ``m`` is the most rows whose smallest weight still stands ``SPACING`` noise scales clear
  (``m = ⌊log2(A / (SPACING·b_N))⌋ + 1``, at least 1: with ε = 1 per release the noise on the summed loss is
  ``A`` itself, one row's whole swing, and a release says little about even one row);
* the decoder is exact Bayes: the posterior of the ``2^m`` labelings given the release (Laplace likelihood,
  the class balance as prior), each row's label its posterior majority, its confidence the posterior. Nothing
  is claimed exact (Laplace noise is unbounded).
* ``accounts: k`` multiplies the releases: when one account's budget withholds, the next account goes on.

Rows never queried get the majority class (the balance), so the labeling is never worse than the majority.
"""

from __future__ import annotations

import math
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


def block_posterior(means: np.ndarray, releases: list[float], scale: float, prior: float,
                    z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the posterior of each labeling ``z`` of a block, each row's ``P(label 1)``) given every release of the
    block's read (one design, labelings' mean scores ``means``, Laplace ``scale``, share of ones ``prior``)."""
    ones = z.sum(axis=1)
    p = min(max(prior, 1e-9), 1 - 1e-9)
    w = ones * math.log(p) + (z.shape[1] - ones) * math.log(1 - p)
    for released in releases:
        w = w - np.abs(released - means) / scale
    w = np.exp(w - w.max())
    w /= w.sum()
    return w, np.asarray(w @ z)


def read_value(means: np.ndarray, releases: list[float], scale: float, prior: float, z: np.ndarray) -> float:
    """The rows one more read of a block is expected to set right (its expected count of right labels after the
    read, less before), by quadrature over the release: ``∫ Σ_j max(P(r, z_j = 1), P(r, z_j = 0)) dr``.

    >>> z = np.array([[0], [1]])
    >>> fresh = read_value(np.array([0.0, 1.0]), [], 0.1, 0.6, z)
    >>> round(fresh, 2), read_value(np.array([0.0, 1.0]), [0.0, 0.0, 0.0], 0.1, 0.6, z) < 1e-4
    (0.4, True)
    """
    weights, marginal = block_posterior(means, releases, scale, prior, z)
    before = float(np.maximum(marginal, 1 - marginal).sum())
    grid = np.linspace(float(means.min()) - 15 * scale, float(means.max()) + 15 * scale, 600)
    step = float(grid[1] - grid[0])
    density = weights[:, None] * np.exp(-np.abs(grid[None, :] - means[:, None]) / scale) / (2 * scale)
    ones = z.T @ density
    total = density.sum(axis=0)
    after = float(np.maximum(ones, total[None, :] - ones).sum() * step)
    return max(after - before, 0.0)


def budgeted_fits(facts: BoardFacts) -> Plan | Refusal:
    """Noisy releases that stop (a privacy budget) on binary log loss scoring every row: rank 10. As a rescue,
    once every exact plan failed and the board withheld releases under noise (rank 42): what is left of the
    budget, and a fresh account's, spent on rows, the balance measured at the clipping edge."""
    seen = facts.seen
    if facts.exact_failed:
        if not facts.rescue_board or seen is None or not (facts.withheld and seen.noise):
            return Refusal("budgeted", "a rescue only where releases were withheld under noise")
        first = facts.fresh_account if facts.fresh_account is not None else facts.account
        return Plan("budgeted", {"budget": facts.budget_left, "prior": None, "scale": facts.spread,
                                 "first_account": first}, "releases withheld under noise: a privacy budget",
                    rank=42, rescue=True)
    told_scale = facts.told_budget_scale
    if told_scale is not None and not facts.split and not (seen is not None and (seen.ladder or seen.rejected)):
        # The host discloses the budget and the noise: no release is spent measuring them, every one reads rows.
        told = facts.told
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
                             "first_account": facts.fresh_account},
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
    likelihood over the labelings' mixture) and say so in ``details["scale_check"]``.

    Paper: ours (against a privacy budget, Dwork–Rothblum–Vadhan composition). Queries: ``⌈N / m⌉`` releases
    of ``m`` rows while the budget releases. Precision: Laplace noise of scale ``b`` on the released mean.
    Forty rows, noise 1e-4: twelve rows a release, four releases:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(0).random(40) < 0.6).astype(np.int64)
    >>> chain = [{"name": "noise", "kind": "laplace", "scale": 1e-4},
    ...          {"name": "privacy_budget", "epsilon": 1e5, "composition": "basic"}]
    >>> result = run("budgeted", LocalOracle(y, defenses=chain), scale=1e-4, prior=float(y.mean()))
    >>> result.details["rows_per_release"], result.details["releases"], result.accuracy(y)
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
    m = min(rows_per_release(n, scale, eps), n)
    z = ((np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1).astype(np.int64)
    weights = a / 2.0 ** np.arange(m)
    p_design = 1.0 / (1.0 + np.exp(-weights))  # logit w: loss −ln p (label 1) vs −ln(1 − p) (label 0)
    accounts = BoardFacts.of(oracle).accounts
    account = BoardFacts.of(oracle).account if first_account is None else first_account
    limit = budget if budget is not None else 10 * n
    reads: list[tuple[np.ndarray, np.ndarray, float]] = []  # (rows, their labelings' mean scores, the release)
    used = releases = withheld = 0
    per_account: list[int] = []
    on_account = 0
    # Blocks of m rows, read in order; once every row was read, releases left (more accounts than rows need)
    # re-read the block whose next read promises the most rows right (value of information), each block's
    # reads combined into one likelihood.
    blocks = [np.arange(start, min(start + m, n)) for start in range(0, n, m)]
    block_means: list[np.ndarray] = []
    block_reads: list[list[float]] = [[] for _ in blocks]
    values: np.ndarray | None = None
    rereads = 0
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
        fresh = len(block_means) < len(blocks)
        if fresh:
            index = len(block_means)
        else:
            if values is None:
                values = np.array([read_value(block_means[i], block_reads[i], scale, share,
                                              z[: 1 << len(blocks[i]), : len(blocks[i])]) for i in range(len(blocks))])
            index = int(np.argmax(values))
            if values[index] < MIN_VALUE:
                break  # every row settled: another release would change no label's odds that matter
        rows = blocks[index]
        k = len(rows)
        p = np.full(n, 0.5)
        p[rows] = p_design[:k]
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
        zk = z[: 1 << k, :k]
        if fresh:
            losses = np.where(zk == 1, row_losses(p[rows], np.ones(k, dtype=np.int64), eps),
                              row_losses(p[rows], np.zeros(k, dtype=np.int64), eps))
            block_means.append((losses.sum(axis=1) + (n - k) * math.log(2.0)) / n)
        else:
            rereads += 1
        block_reads[index].append(float(released))
        reads.append((rows, block_means[index], float(released)))
        if values is not None:
            values[index] = read_value(block_means[index], block_reads[index], scale, share, zk)
    if releases == 0 or (prior is None and measure_balance):
        raise AttackFailed("the privacy budget released nothing more (on every account left)")
    check = _check_scale(reads, scale)
    if check is not None:
        scale = _fit_scale(reads, scale, share, z)
        check += f"; the scale fitted to the releases instead: {scale:.3g}"
    marginals = np.full(n, np.nan)
    for rows, means, seen in zip(blocks, block_means, block_reads, strict=False):
        if seen:
            marginals[rows] = block_posterior(means, seen, scale, share, z[: 1 << len(rows), : len(rows)])[1]
    queried = ~np.isnan(marginals)
    # Each queried row's evidence as a log-likelihood ratio, weighed against the balance and floored at the
    # majority labeling unless it is confidently better (boosting's floor: never below the majority class).
    clipped = np.clip(np.where(queried, marginals, share), 1e-12, 1 - 1e-12)
    p0 = min(max(share, 1e-12), 1 - 1e-12)
    evidence = np.log(clipped / (1 - clipped)) - math.log(p0 / (1 - p0))
    ties = np.full(n, 1 if share >= 0.5 else 0, dtype=np.int64)
    labels, confidence, floor = floored_labels(share, evidence, ties)
    details: dict[str, Any] = {"rows_per_release": m, "releases": releases, "withheld": withheld,
                               "queries": used, "rows_queried": int(queried.sum()), "rereads": rereads,
                               "scale": scale,
                               "accounts_used": min(account + 1, accounts), "floored": floor.get("floored"),
                               "scale_check": check or "the releases fit the noise scale"}
    if releases_per_account is not None:
        # The first account may have released before this attack began (the fingerprint's probe): not counted.
        short = [count for count in per_account[1:] if count < releases_per_account]
        details["releases_per_account"] = releases_per_account
        if short:
            details["budget_check"] = (f"{len(short)} account(s) withheld after fewer releases than the disclosed "
                                       f"{releases_per_account} (as few as {min(short)})")
    return AttackResult("budgeted", labels, details=details, confidence=confidence)


#: A release more than this many noise scales from every labeling's score contradicts the scale (Laplace:
#: probability e^-25 a release) …
BELIEVED = 25.0
#: … and so do releases at least :data:`CHECKED` of them, on average more than this many scales from their
#: nearest labeling's score (the nearest is at most the draw away: a mean of 4 scales over 5 releases has
#: probability below 2e-5).
BELIEVED_MEAN = 4.0
CHECKED = 5


def _check_scale(reads: list[tuple[np.ndarray, np.ndarray, float]], scale: float) -> str | None:
    """Why the releases contradict the noise ``scale`` (``None``: they fit it); see :data:`BELIEVED`."""
    if not reads or scale <= 0:
        return None
    gaps = np.array([float(np.abs(means - released).min()) for _, means, released in reads]) / scale
    if gaps.max() > BELIEVED:
        return f"a release lay {gaps.max():.0f} noise scales from every labeling's score"
    if len(gaps) >= CHECKED and gaps.mean() > BELIEVED_MEAN:
        return f"the releases lay on average {gaps.mean():.1f} noise scales from the nearest labeling's score"
    return None


def _fit_scale(reads: list[tuple[np.ndarray, np.ndarray, float]], scale: float, share: float,
               z: np.ndarray) -> float:
    """The Laplace scale that best explains the releases: EM over each release's labelings (their prior from the
    balance), started at ``scale``."""
    p = min(max(share, 1e-9), 1 - 1e-9)
    for _ in range(50):
        total = 0.0
        for rows, means, released in reads:
            zk = z[: 1 << len(rows), : len(rows)]
            ones = zk.sum(axis=1)
            w = -np.abs(released - means) / scale + ones * math.log(p) + (len(rows) - ones) * math.log(1 - p)
            w = np.exp(w - w.max())
            total += float((w / w.sum()) @ np.abs(released - means))
        fitted = max(total / len(reads), 1e-12)
        if abs(fitted - scale) <= 1e-6 * scale:
            return fitted
        scale = fitted
    return scale
