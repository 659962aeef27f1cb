"""The registered attack ``mutnet`` (paper 001, Section 5) and how ``auto`` plays a model competition.

A model competition (``oracle.takes_models``: the metadata says it takes models, and a query is an ONNX model's
bytes) never shows its features, so no prediction file can be aimed at a row. ``mutnet`` builds an honest base
model from public data (:func:`~attacks.mutnet.base.honest_base`), wraps the board in a
:class:`~attacks.mutnet.oracle.ModelOracle` — every query of the underlying attack becomes that base under the
Mutator Network head, emitting the attack's probe vector row by row on the hidden rows — and plays the
underlying attack through it (``attack``: ``auto`` by default, i.e. fingerprint, plan, play, confirm, as on a
file board). The labels come back keyed by what the head computes from the features (a rank, or with
``key="hash"`` a fingerprint); ``details["carrier"]`` is the ModelOracle, whose ``follow_up`` is the model that
puts them back on their rows.

Which key: the rank head by default (a bijection, the queries of prediction files); if the host refuses the
very first rank-head model (it runs the rows in batches smaller than the test set, one at a time included), the
feature-hash head, which any batching and order run alike. Through the hash the attack sees ``buckets`` virtual
rows of which ``n_public`` count — a sparse public split, which ``capacity_split`` decodes at about
``buckets / 16`` queries with 5 decimals; two public rows sharing a fingerprint break the exact decoding loudly,
and up to :data:`HASH_ATTEMPTS` hash seeds are tried (the given-up queries are counted in the result).

Imports of ``onnx`` happen only when the attack runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attacks.catalogue import BoardFacts
from attacks.oracle import Oracle, left_of, limited, submit_many
from attacks.registry import register, run
from attacks.result import AttackFailed, AttackResult


def takes_models(oracle: Oracle) -> bool:
    """Whether ``oracle`` is a model competition that has not been wrapped yet (a ModelOracle takes vectors)."""
    return bool(getattr(oracle, "takes_models", False)) and not hasattr(oracle, "keyer")


def carrier_for(oracle: Oracle, *, key: str = "rank", buckets: int | None = None, seed: int = 0) -> Any:
    """The :class:`ModelOracle` over a model competition ``oracle``: queries as MutNet models on an honest base."""
    from attacks.mutnet.base import honest_base
    from attacks.mutnet.oracle import ModelOracle

    n_features = int(getattr(oracle, "n_features", 0) or 0)
    if not takes_models(oracle) or n_features <= 0:
        raise AttackFailed("mutnet needs a model competition (its metadata says it takes models, with its "
                           "number of features)")
    base = honest_base(n_features, oracle.n_classes)
    carrier = ModelOracle(
        base.model, oracle.submit, n_rows=oracle.n_rows, n_features=n_features, n_classes=oracle.n_classes,
        metric=oracle.metric, eps=oracle.eps, decimals=oracle.decimals,
        public_fraction=BoardFacts.of(oracle).public_fraction, seed=seed, key=key, buckets=buckets,
        submit_many_models=lambda models: submit_many(oracle, models),
    )
    carrier.base_description = base.description  # type: ignore[attr-defined]
    return carrier


def describe(carrier: Any) -> dict[str, Any]:
    keyer = carrier.keyer
    return {"key": carrier.key, "keys": keyer.size, "seed": keyer.seed, "base": carrier.base_description,
            "hidden_rows": carrier.hidden_rows, "n_public": carrier.n_public}


def reasoning_line(carrier: Any) -> str:
    keyed = ("by the rank of a feature projection among the rows run together" if carrier.key == "rank" else
             f"by a hash of each row's features into {carrier.keyer.size} fingerprints (any batching or order)")
    return (f"model competition: every query is a MutNet model (paper 001, Section 5) — {carrier.base_description} "
            f"under the Mutator Network head, rows keyed {keyed}")


def play(
    oracle: Oracle, play_inner: Callable[[Any], AttackResult], *, key: str | None = None,
    buckets: int | None = None, seed: int = 0,
) -> AttackResult:
    """``play_inner(carrier)`` through a ModelOracle over ``oracle``. ``key=None``: the rank head, and when the
    host refuses the very first rank-head model (it does not run the whole test set at once), the feature-hash
    head instead — that refused query counted in the result."""
    from attacks.mutnet.oracle import HeadRefused

    lines: list[str] = []
    spent = 0  # queries of the attempts given up: a refused rank head, hash seeds whose fingerprints collided
    if key == "hash":
        result, carrier, spent = _hash_attempts(oracle, play_inner, buckets, seed, lines, spent)
    else:
        carrier = carrier_for(oracle, key="rank", buckets=buckets, seed=seed)
        try:
            result = play_inner(carrier)
        except HeadRefused as exc:
            if key is not None:
                raise
            spent = carrier.queries
            lines.append(f"{exc}: switched to the feature-hash head")
            result, carrier, spent = _hash_attempts(oracle, play_inner, buckets, seed, lines, spent)
    result.queries += spent
    reasoning = result.details.setdefault("reasoning", [])
    reasoning[:0] = [reasoning_line(carrier), *lines]
    played = result.course.attack if result.course is not None else result.attack
    result.details["mutnet"] = describe(carrier) | {"attack": played,
                                                    "given_up_queries": spent}
    result.details["carrier"] = carrier
    return result


#: Hash seeds tried before giving up: with about ``n_public²`` fingerprints a seed has no public collision with
#: probability about e^-1/2 ≈ 0.6, so three leave about 6 % of runs to the best guess (or the error).
HASH_ATTEMPTS = 3


def _collided(result: AttackResult, carrier: Any) -> bool:
    """Whether the exact decoding broke, as two public rows sharing a fingerprint breaks it: fewer exact labels
    than public rows (``auto`` fell back to a guess)."""
    cut = result.course.cut_by_budget if result.course is not None else bool(result.details.get("cut_by_budget"))
    return result.exact < (carrier.n_public or 0) and not cut


def _collision_line(carrier: Any) -> str:
    return (f"the exact decoding through {carrier.keyer.size} fingerprints (hash seed {carrier.keyer.seed}) broke — "
            "two public rows share a fingerprint: another hash seed")


def _hash_attempts(
    oracle: Oracle, play_inner: Callable[[Any], AttackResult], buckets: int | None, seed: int, lines: list[str],
    spent: int, attempts: int = HASH_ATTEMPTS,
) -> tuple[AttackResult, Any, int]:
    """Play through the feature-hash head, a new hash seed after each attempt whose decoding broke."""
    for attempt in range(attempts):
        carrier = carrier_for(oracle, key="hash", buckets=buckets, seed=seed + attempt)
        last = attempt == attempts - 1
        carrier.exact_only = not last  # auto: a broken decoding is another seed's turn, not a best guess's
        try:
            result = play_inner(carrier)
        except AttackFailed:
            if last:
                raise
            spent += carrier.queries
            lines.append(_collision_line(carrier))
            continue
        if last or not _collided(result, carrier):
            return result, carrier, spent
        spent += carrier.queries
        lines.append(_collision_line(carrier))
    raise AssertionError("unreachable")


@register("mutnet", exact=False,
          paper="paper 001 §5 (MutNet; Theorem 6, proved in App. E)",
          board="model competitions (ONNX models scored on hidden features)",
          queries="the underlying attack's, one model each",
          precision="the underlying attack's, on the scores of the models' outputs")
def mutnet(oracle: Oracle, *, attack: str = "auto", key: str | None = None, buckets: int | None = None,
           seed: int = 0, budget: int | None = None, **params: Any) -> AttackResult:
    """Play ``attack`` (``auto`` by default) through MutNet models on a model competition; labels keyed by the
    head's key (``key``: ``rank``, ``hash``, or by default the rank unless the host refuses it; ``buckets``: the
    number of fingerprints, by default about ``n_public²``). The underlying attack confirms its own claims
    (through the models), so ``mutnet`` itself registers as not needing it. ``budget``: the models to submit,
    every attempt's together — the underlying attack gets what the attempts before it left, and no model past
    the budget is sent (:class:`AttackFailed`).

    Paper 001 (AISTATS 2022), Section 5 (the Mutator Network; Theorem 6, App. E). Queries: the underlying
    attack's, one model each (plus any given-up attempts). Precision: the underlying attack's, on the board's
    release of the models' outputs. ``capacity`` through models on a 20-row model competition; the follow-up
    model puts the learned labels back on their rows:

    >>> import numpy as np
    >>> from attacks import run
    >>> from attacks.mutnet import LocalModelBoard
    >>> features = np.random.default_rng(0).normal(size=(20, 4))
    >>> labels = np.random.default_rng(1).integers(0, 2, 20)
    >>> board = LocalModelBoard(features, labels, decimals=5)
    >>> result = run("mutnet", board, attack="capacity")
    >>> result.details["mutnet"]["key"], result.exact, result.queries
    ('rank', 20, 2)
    >>> follow_up = board.run(result.details["carrier"].follow_up(result.labels))
    >>> bool((follow_up[:, 0] == labels).all())
    True
    """
    board = limited(oracle, budget)
    start = board.queries

    def play_inner(carrier: Any) -> AttackResult:
        left = left_of(budget, board.queries - start)
        return run(attack, carrier, **params) if left is None else run(attack, carrier, budget=left, **params)

    return play(board, play_inner, key=key, buckets=buckets, seed=seed)
