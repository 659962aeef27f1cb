"""Attacks that model randomized *label-side* releases (issue 10, item 1): ``subsetting`` (a fresh random subset
of rows scored per submission, exact) and ``randomized_response`` (labels flipped afresh per submission, decoded
exactly per query and voted with a sequential likelihood-ratio test). Importing the package registers them.

Measured (``benchmarks/subset_rr_attacks.py``, 5 decimals; ratio = submissions / the information bound's fewest):
every label recovered on breast cancer (171 rows), 2,201 and 25,000 seeded rows; subsetting 0.9 at 3.1–3.2×
(171), 4.1× (2,201), 6.2× (25,000); subsetting 0.5 at 3.1–3.5×, 4.7–4.8×, 6.5×; fresh flips p = 0.05 at 5.9×,
7.6×, 14× and p = 0.2 at 7.1×, 10.6×. Why not 3×: a probe group's release separates at most ~``K·A/W``
outcomes and every row has a state within ``ln 2`` of "not scored", so only ``log3(ln 2/W)`` rows decode fully
(none at 25,000 rows) — the bound ``f × log2(A·10^d)`` assumes every release value is usable, which no
single-group design reaches even without a defense (``capacity`` on the same boards: 1.5–2.3×). Under fresh
flips each row must be seen ``≈ ln(N/target)/((1−2p)·ln((1−p)/p))`` times to be vouched for (Wald), a
reliability cost the entropy bound ``(1−2p)²·C`` does not count (see :mod:`attacks.subset.response`)."""

from __future__ import annotations

from typing import Any

from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackResult
from attacks.subset.attack import subsetting_attack
from attacks.subset.response import randomized_response_attack

__all__ = ["randomized_response_attack", "subsetting_attack"]


# Both check themselves against the defense they assume (every label comes out of an exhaustive decode of its own
# release), so ``attacks.run`` adds no confirmation. ``auto`` confirms subsetting's labels all the same
# (``attacks.auto.CONFIRMED_BY_AUTO``): staked in full they score ≈ 0 on any subset, and a board misread as
# subsetting (a fixed Ladder, fresh flips) fails the query. Randomized response's labels are posteriors.

def subsetting_fits(facts: BoardFacts) -> Plan | Refusal:
    """A fresh random subset of rows scored per submission, without noise: rank 50."""
    if not facts.quiet_binary:
        return Refusal("subsetting", "float64 binary log loss without noise, a Ladder or refusals only")
    if not facts.subsetting:
        return Refusal("subsetting", "no fresh subset seen")
    told = facts.told
    size = ({"subset_size": told.subset_size} if told.subset_size is not None else
            {"fraction": told.subset_fraction} if told.subset_fraction is not None else {})
    return Plan("subsetting", size, "a fresh random subset of rows is scored per submission: exact decoding with the "
                "not-scored state modelled (ternary and heavy rows, every outcome enumerated)", rank=50)


def subsetting_fallbacks(facts: BoardFacts, failed: Plan) -> list[Plan]:
    """A disclosed subset size the releases contradicted (the decoder fails loudly): measured instead."""
    if not ({"subset_size", "fraction"} & set(failed.params)):
        return []
    return [Plan("subsetting", {}, "the disclosed subset size fits no release: measured instead", rank=50)]


@register("subsetting", exact=False, truncatable=True, fits=subsetting_fits, fallbacks=subsetting_fallbacks,
          paper="ours (the not-scored state in the exact design; against paper 000 §6's random subsets)",
          board="float64 binary log loss, a fresh random subset scored per submission, no noise",
          queries="ternary and heavy rows, every outcome enumerated",
          precision="exact scores of each subset at any released decimals (float64); no noise")
def subsetting(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """Exact labels through fresh random subsets. ``budget``: the submissions to spend (the labels decoded so
    far are returned). Params: ``subset_size`` or ``fraction`` (disclosed), ``margin``.

    Paper: ours, against the random-subset defense paper 000 names in its conclusion (Section 6). Queries: the
    subset size's probes (unless disclosed), then groups of rows, every (not scored / 0 / 1) outcome that fits a
    release enumerated. Precision: each release exact at the board's decimals, float64, no noise.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(40).random(40) < 0.4).astype(np.int64)
    >>> oracle = LocalOracle(y, decimals=5, defenses=[{"name": "subsetting", "fraction": 0.5}], seed=3)
    >>> result = run("subsetting", oracle)
    >>> bool((result.labels == y).all()), result.details["subset_size"], result.queries
    (True, [20, 20], 13)
    """
    return subsetting_attack(oracle, budget=budget, **params)


def randomized_response_fits(facts: BoardFacts) -> Plan | Refusal:
    """The same row's label flipping between submissions (fresh randomized response), no noise: rank 51."""
    if not facts.quiet_binary:
        return Refusal("randomized_response", "float64 binary log loss without noise, a Ladder or refusals only")
    if facts.seen is None or not facts.seen.fresh_flips:
        return Refusal("randomized_response", "no fresh flips seen")
    flip = {} if facts.told.rr_p is None else {"p": facts.told.rr_p}
    return Plan("randomized_response", flip, "the same row's label flipped between submissions (fresh randomized "
                "response): exact per-query observations voted by a sequential likelihood-ratio test", rank=51)


@register("randomized_response", exact=False, truncatable=True, fits=randomized_response_fits,
          paper="ours (exact reads voted by a sequential likelihood-ratio test; against paper 000 §6's defense)",
          board="float64 binary log loss, labels flipped afresh per submission, no noise",
          queries="a few exact reads a row, more where they disagree",
          precision="exact scores of the flipped labels at any released decimals (float64); no noise")
def randomized_response(oracle: Oracle, *, budget: int | None = None, **params: Any) -> AttackResult:
    """Labels through fresh randomized response, each with its posterior. ``budget``: the submissions to spend
    (the rows observed so far are voted). Params: ``p`` (disclosed flip rate), ``target``, ``margin``.

    Paper: ours, against the randomized response (Warner 1965) paper 000 names in its conclusion (Section 6).
    Queries: a few exact reads of each row's flipped label, more where they disagree, until the expected wrong
    labels fall below ``target``. Precision: each release exact at the board's decimals, float64, no noise.

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(40).random(40) < 0.4).astype(np.int64)
    >>> flips = [{"name": "randomized_response", "p": 0.1, "mode": "fresh"}]
    >>> result = run("randomized_response", LocalOracle(y, decimals=5, defenses=flips, seed=3), p=0.1)
    >>> bool((result.labels == y).all()), float((1 - result.fill_confidence()).sum()) < 0.01
    (True, True)
    """
    return randomized_response_attack(oracle, budget=budget, **params)
