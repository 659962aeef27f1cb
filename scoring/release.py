"""The release model: one submission scored on every metric a competition reports, through its defense chain.

A competition releases its primary metric and, beside it, the metrics of ``ScoringSpec.also_report`` (paper
004, Section 3: AUC beside the log loss). :func:`release_submission` is the one implementation of that
release; the site's scoring task and ``attacks.LocalOracle`` both call it, so a participant and an offline
attack see the same values.

Every reported metric goes through the same chain, with the same hidden set, split, precision and secret, but
with **its own defense state** (``states[metric][split]``) and **its own randomness**. The chain's
per-submission randomness is seeded by a *submission key* (:func:`release_keys`):

* the primary metric: ``"submission:<id>"`` — or ``"content:<digest>"`` when the competition gives the same
  file the same score (``same_file_same_score``; the digest of what the reported metrics read of the
  predictions, :func:`scoring.pipeline.content_digest`) — the key :func:`scoring.evaluate` uses;
* any other reported metric ``m``: the primary key followed by ``":<m>"`` (``"submission:<id>:auc"``), so a
  noise defense draws independently for each released metric, and identical files still share their draws.

``<id>`` is the site's submission id, or ``LocalOracle``'s query number (1 for its first query).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.errors import NonFiniteScoreError
from scoring.parsing import ParsedPredictions
from scoring.pipeline import SPLITS, ScoringSpec, SplitResult, evaluate_keyed, submission_key

States = dict[str, list[dict[str, Any]]]
"""A chain's state per split (``{split: [one dict per defense]}``)."""


@dataclass(frozen=True)
class Release:
    """What one submission released on every reported metric.

    ``results[metric][split]``: the :class:`SplitResult` (raw score, released value and text, notes) of each
    scored split; ``states[metric]``: the chain's new state per split, to persist (a metric that released
    nothing keeps the state it was given). ``reject``: the primary metric's chain rejected the submission
    (the site fails it): nothing is released on any metric and no state changes. ``withheld[metric]``: why an
    extra metric released nothing (it is undefined on the scored rows, e.g. AUC on a single class, or its
    chain rejected the release) — the submission itself is still scored.
    """

    metrics: tuple[str, ...]
    results: dict[str, dict[str, SplitResult]]
    states: dict[str, States]
    reject: str | None = None
    withheld: dict[str, str] = field(default_factory=dict)
    # The competition's shared chain state per metric and split (``scope: "competition"`` defenses), to persist
    # once per competition; empty when the chain has no competition-scoped defense.
    shared: dict[str, States] = field(default_factory=dict)
    # The submitter's team's chain state per metric and split (``scope: "team"`` defenses), to persist once per
    # team; empty unless the caller passed ``team=`` and the chain has a team-scoped defense.
    team: dict[str, States] = field(default_factory=dict)

    @property
    def primary(self) -> dict[str, SplitResult]:
        """The primary metric's results per split."""
        return self.results[self.metrics[0]]

    def released_text(self, metric: str, split: str) -> str | None:
        """The exact released text of ``metric`` on ``split``; ``None`` when nothing was released."""
        if self.reject is not None:
            return None
        result = self.results.get(metric, {}).get(split)
        return None if result is None else result.released_text


def release_keys(spec: ScoringSpec, parsed: ParsedPredictions, submission_id: str | int) -> dict[str, str]:
    """The submission key seeding the chain for each reported metric (see the module docstring).

    >>> from scoring.hidden import HiddenTestSet
    >>> import numpy as np
    >>> spec = ScoringSpec(HiddenTestSet(("a", "b"), np.array([0, 1]), 2, np.ones(2, bool)), also_report=("auc",))
    >>> release_keys(spec, ParsedPredictions(np.array([0.2, 0.7])), 7)
    {'binary_logloss': 'submission:7', 'auc': 'submission:7:auc'}
    """
    base = submission_key(spec, parsed, submission_id)
    return {name: base if name == spec.metric_name else f"{base}:{name}" for name in spec.reported_metrics}


def release_submission(
    spec: ScoringSpec,
    parsed: ParsedPredictions,
    *,
    submission_id: str | int,
    states: dict[str, States] | None = None,
    splits: Iterable[str] = SPLITS,
    peers: Mapping[str, Mapping[str, Sequence[list[dict[str, Any]]]]] | None = None,
    shared: dict[str, States] | None = None,
    team: dict[str, States] | None = None,
) -> Release:
    """Score ``parsed`` on every reported metric of ``spec`` (:attr:`ScoringSpec.reported_metrics`, the primary
    first) and every split of ``splits`` through the defense chain, rounded to the displayed precision.

    ``states[metric][split]`` is this participant's chain state (missing = a fresh one); the result's ``states``
    is what to persist. ``peers[metric][split]`` are the other participants' states, read by a chain that
    :attr:`~defenses.DefenseChain.needs_peers` (a board rank) and by no other. The primary metric decides the
    submission's fate: a non-finite primary score raises :class:`NonFiniteScoreError`, and a rejection by its
    chain rejects the whole submission (``Release.reject``) before any other metric is scored. Another metric
    that is not finite on the rows, or whose chain rejects the release, releases nothing (``Release.withheld``)
    and keeps its state; splits it scored before a rejection keep their results, as a single-metric evaluation
    reports them.

    ``shared[metric][split]`` is the competition's state of the chain's competition-scoped defenses (missing =
    fresh): the release runs with it in their positions (:meth:`~defenses.DefenseChain.combine_states`) and
    returns the new one in ``Release.shared`` (``Release.states`` then holds the participant's own part). A
    caller serialises the releases of one competition while such a state is in use, as it serialises one
    participant's. Without a competition-scoped defense both are ignored and nothing changes.

    ``team[metric][split]`` is the submitter's team's state of the chain's team-scoped defenses (missing = fresh),
    kept apart from ``states`` in the same way and returned in ``Release.team``. With ``team=None`` (a caller
    without teams, e.g. ``LocalOracle``) every account is a team of one: the team-scoped positions are part of
    ``states``.
    """
    chain = spec.chain
    separate_team = team is not None and chain.has_team_state
    if chain.has_shared_state or separate_team:
        parts = {"competition": shared or {}} if chain.has_shared_state else {}
        if separate_team:
            parts["team"] = team or {}
        return _release_parts(spec, parsed, submission_id, states or {}, tuple(splits), peers, parts)
    return _release(spec, parsed, submission_id, states, tuple(splits), peers)


def _release(
    spec: ScoringSpec,
    parsed: ParsedPredictions,
    submission_id: str | int,
    states: dict[str, States] | None,
    splits: tuple[str, ...],
    peers: Mapping[str, Mapping[str, Sequence[list[dict[str, Any]]]]] | None,
) -> Release:
    given = states or {}
    split_list = tuple(splits)
    keys = release_keys(spec, parsed, submission_id)
    results: dict[str, dict[str, SplitResult]] = {}
    new_states: dict[str, States] = {}
    withheld: dict[str, str] = {}
    for name, metric_spec in spec.metric_specs.items():
        primary = name == spec.metric_name
        try:
            evaluation = evaluate_keyed(
                metric_spec, parsed, key=keys[name], states=given.get(name), splits=split_list,
                peers=(peers or {}).get(name),
            )
        except NonFiniteScoreError as exc:
            if primary:
                raise
            results[name], new_states[name], withheld[name] = {}, dict(given.get(name) or {}), str(exc)
            continue
        results[name] = evaluation.results
        if evaluation.reject is not None:
            if primary:
                return Release(
                    spec.reported_metrics, results, {n: dict(s) for n, s in given.items()}, evaluation.reject
                )
            new_states[name], withheld[name] = dict(given.get(name) or {}), evaluation.reject
            continue
        new_states[name] = evaluation.states
    return Release(spec.reported_metrics, results, new_states, withheld=withheld)


def _release_parts(
    spec: ScoringSpec,
    parsed: ParsedPredictions,
    submission_id: str | int,
    states: dict[str, States],
    splits: tuple[str, ...],
    peers: Mapping[str, Mapping[str, Sequence[list[dict[str, Any]]]]] | None,
    parts: dict[str, dict[str, States]],
) -> Release:
    """:func:`release_submission` for a chain whose state is kept in several parts (the participant's own, and
    per scope of ``parts``: ``"competition"``, ``"team"``): run it on the combined state, then divide what it
    returns into the parts again."""
    chain = spec.chain
    combined: dict[str, States] = {}
    for name in spec.reported_metrics:
        own = states.get(name) or {}
        combined[name] = {
            split: chain.combine_parts(own.get(split), {scope: (part.get(name) or {}).get(split)
                                                        for scope, part in parts.items()})
            for split in splits
        }
    release = _release(spec, parsed, submission_id, combined, splits, peers)
    if release.reject is not None:  # nothing changes: the states as they were given
        return Release(release.metrics, release.results, {n: dict(s) for n, s in states.items()}, release.reject,
                       shared={n: dict(s) for n, s in parts.get("competition", {}).items()},
                       team={n: dict(s) for n, s in parts.get("team", {}).items()})
    own_states: dict[str, States] = {}
    divided: dict[str, dict[str, States]] = {scope: {} for scope in parts}
    for name, by_split in release.states.items():
        own_states[name] = {}
        for scope in parts:
            divided[scope][name] = {}
        for split, chain_state in by_split.items():
            mine, scoped = chain.divide_parts(chain_state, tuple(parts))
            own_states[name][split] = mine
            for scope, part in scoped.items():
                divided[scope][name][split] = part
    return Release(release.metrics, release.results, own_states, withheld=release.withheld,
                   shared=divided.get("competition", {}), team=divided.get("team", {}))
