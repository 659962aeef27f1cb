"""An ordered, validated chain of defenses and the one function that runs it over a split.

The site's worker and the offline oracle both call :meth:`DefenseChain.release`, so a participant and an
attack see the same released values.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from defenses.base import (
    REGISTRY,
    Defense,
    DefenseConfigError,
    DefenseContext,
    MetricView,
    Score,
    ScoringView,
    Stage,
)


def derive_rng(secret: int, *parts: str | int) -> np.random.Generator:
    """A generator seeded from the competition secret and the given parts (submission key, split, stage)."""
    words: list[int] = [secret & (2**128 - 1)]
    for part in parts:
        digest = hashlib.sha256(str(part).encode()).digest()
        words.append(int.from_bytes(digest[:16], "big"))
    return np.random.default_rng(np.random.SeedSequence(words))


@dataclass
class ChainOutcome:
    """What one split's release produced: the released score (``None`` = nothing released), the score the
    metric gave after the DATA stage (host-only), updated states, host-only notes, a rejection message, a
    participant-safe ``message`` saying why nothing was released, and the release's shared ``ledger`` (e.g.
    ``ledger["privacy"]``: the ε/δ each noisy defense spent; host-only)."""

    released: Score | None
    metric_score: Score
    states: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    reject: str | None = None
    message: str | None = None
    ledger: dict[str, Any] = field(default_factory=dict)


class DefenseChain:
    """Defenses in the order the host gave them; stages must not decrease (DATA, SCORE, RELEASE)."""

    def __init__(self, defenses: Sequence[Defense]) -> None:
        self.defenses = list(defenses)
        for earlier, later in zip(self.defenses, self.defenses[1:], strict=False):
            if later.stage < earlier.stage:
                raise DefenseConfigError(
                    f"defense {later.name!r} ({later.stage.name.lower()} stage) cannot come after "
                    f"{earlier.name!r} ({earlier.stage.name.lower()} stage): defenses that change labels or rows "
                    "act before the metric, score perturbations after it, rounding and release rules last"
                )
        for position, defense in enumerate(self.defenses):
            try:
                defense.check_chain(self.defenses[:position])
            except DefenseConfigError as exc:
                raise DefenseConfigError(f"defense #{position + 1}: {exc}") from None

    @classmethod
    def from_json(cls, spec: object) -> DefenseChain:
        """Build and validate a chain from its JSON form (a list of ``{"name": ..., **params}``) or text."""
        if isinstance(spec, (str, bytes)):
            try:
                spec = json.loads(spec)
            except json.JSONDecodeError as exc:
                raise DefenseConfigError(f"the defense chain is not valid JSON: {exc}") from None
        if spec is None:
            return cls([])
        if not isinstance(spec, list):
            raise DefenseConfigError("a defense chain must be a JSON list of objects like {\"name\": \"rounding\"}")
        defenses: list[Defense] = []
        for position, item in enumerate(spec):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise DefenseConfigError(f"defense #{position + 1} must be an object with a string 'name'")
            params = {k: v for k, v in item.items() if k != "name"}
            try:
                defense_cls = REGISTRY[item["name"]]
            except KeyError:
                raise DefenseConfigError(
                    f"defense #{position + 1}: unknown defense {item['name']!r}; "
                    f"available: {', '.join(sorted(REGISTRY))}"
                ) from None
            try:
                defenses.append(defense_cls(**params))
            except DefenseConfigError as exc:
                raise DefenseConfigError(f"defense #{position + 1}: {exc}") from None
            except TypeError as exc:
                raise DefenseConfigError(f"defense #{position + 1} ({item['name']}): {exc}") from None
        return cls(defenses)

    def to_json(self) -> list[dict[str, Any]]:
        return [d.to_json() for d in self.defenses]

    def check_metric(self, metric: MetricView) -> None:
        """Raise :class:`DefenseConfigError` if a defense of the chain cannot work with ``metric`` (e.g. the
        parameter-free Ladder needs per-row values, which AUC has not). Call it when a chain is set."""
        for position, defense in enumerate(self.defenses):
            try:
                defense.check_metric(metric)
            except DefenseConfigError as exc:
                raise DefenseConfigError(f"defense #{position + 1}: {exc}") from None

    def disclosure(self) -> list[dict[str, Any]]:
        """What the competition metadata may tell participants: the defenses that choose to disclose."""
        return [d for d in (defense.disclosure() for defense in self.defenses) if d is not None]

    def released_decimals(self, displayed: int | None) -> int | None:
        """The decimal places of a released score (``None``: every digit): what each defense leaves, in chain
        order (:meth:`Defense.released_decimals`), then the competition's ``displayed`` precision, applied
        last. This is the precision a participant observes.

        >>> chain = DefenseChain.from_json([{"name": "noise", "scale": 1e-4}, {"name": "rounding", "decimals": 3}])
        >>> chain.released_decimals(None), chain.released_decimals(5), chain.released_decimals(2)
        (3, 3, 2)
        >>> DefenseChain([]).released_decimals(None) is None
        True
        """
        places: int | None = None
        for defense in self.defenses:
            places = defense.released_decimals(places)
        if displayed is None:
            return places
        return displayed if places is None else min(places, displayed)

    def released_higher_is_better(self, metric_higher_is_better: bool) -> bool:
        """Whether a larger *released* value is better: the metric's direction, unless a hard-label defense
        (:mod:`defenses.feedback`) replaced the score (1 = beats the bar: higher; rank: lower). Boards rank in
        this direction.

        >>> chain = DefenseChain.from_json([{"name": "threshold", "t": 0.6}])
        >>> chain.released_higher_is_better(False), DefenseChain([]).released_higher_is_better(False)
        (True, False)
        """
        direction = metric_higher_is_better
        for defense in self.defenses:
            direction = defense.released_higher_is_better(direction)
        return direction

    def feedback(self) -> dict[str, Any]:
        """What a participant is told a released value is: ``{"kind": "score"}``, or the hard label of the chain's
        feedback defense (``{"kind": "threshold", "t": [...]}``, ``{"kind": "rank"}``, ``{"kind":
        "accept_reject"}``, see :mod:`defenses.feedback`). Public: the values themselves show it.

        >>> DefenseChain.from_json([{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}]).feedback()
        {'kind': 'accept_reject', 'released': '1 if the Ladder accepted the submission, else 0'}
        """
        described: dict[str, Any] = {"kind": "score"}
        for defense in self.defenses:
            described = defense.feedback() or described
        return described

    def initial_states(self) -> list[dict[str, Any]]:
        return [d.initial_state() for d in self.defenses]

    @property
    def has_shared_state(self) -> bool:
        """Whether some defense keeps one state for the whole competition (``scope: "competition"``)."""
        return any(defense.shared for defense in self.defenses)

    @property
    def has_team_state(self) -> bool:
        """Whether some defense keeps one state per team (``scope: "team"``)."""
        return any(defense.team_scoped for defense in self.defenses)

    def combine_states(
        self, own: list[dict[str, Any]] | None, shared: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]] | None:
        """The chain state a release runs with: the participant's ``own`` states at account-scoped positions and
        the competition's ``shared`` ones at competition-scoped positions (a missing or stale list of another
        chain's length counts as fresh). Without a competition-scoped defense, ``own`` itself. Team-scoped
        positions come from ``own`` here (a team of one); :meth:`combine_parts` keeps them apart.

        >>> chain = DefenseChain.from_json([{"name": "ladder", "scope": "competition"}, {"name": "rounding"}])
        >>> chain.combine_states([{}, {"own": 1}], [{"best": 0.5}, {}])
        [{'best': 0.5}, {'own': 1}]
        >>> chain.combine_states(None, None)
        [{'best': None}, {}]
        """
        if not self.has_shared_state:
            return own
        return self.combine_parts(own, {"competition": shared})

    def combine_parts(
        self, own: list[dict[str, Any]] | None, parts: Mapping[str, list[dict[str, Any]] | None]
    ) -> list[dict[str, Any]]:
        """The chain state a release runs with: at each position of a defense whose scope is a key of ``parts``
        (``"team"``, ``"competition"``) that part's state, elsewhere ``own`` (a missing or stale list of another
        chain's length counts as fresh).

        >>> chain = DefenseChain.from_json([{"name": "thresholdout", "budget": 3, "scope": "competition"},
        ...                                 {"name": "ladder", "scope": "team"}])
        >>> chain.combine_parts(None, {"team": [{}, {"best": 0.5}], "competition": None})
        [{'budget_left': 3, 'threshold_noisy': None}, {'best': 0.5}]
        """
        fresh = self.initial_states()

        def usable(states: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
            return states if states is not None and len(states) == len(self.defenses) else fresh

        mine = usable(own)
        given = {scope: usable(states) for scope, states in parts.items()}
        return [given[d.scope][i] if d.scope in given else mine[i] for i, d in enumerate(self.defenses)]

    def divide_states(
        self, states: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        """Split a released chain state into (the participant's own part, the competition's shared part): each
        list keeps the chain's length, with ``{}`` at the other scope's positions. Without a competition-scoped
        defense: (``states``, ``None``), nothing shared.

        >>> chain = DefenseChain.from_json([{"name": "ladder", "scope": "competition"}, {"name": "rounding"}])
        >>> chain.divide_states([{"best": 0.5}, {"own": 1}])
        ([{}, {'own': 1}], [{'best': 0.5}, {}])
        """
        if not self.has_shared_state:
            return states, None
        own, parts = self.divide_parts(states, ("competition",))
        return own, parts["competition"]

    def divide_parts(
        self, states: list[dict[str, Any]], scopes: Sequence[str]
    ) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
        """Split a released chain state into the participant's own part and one part per scope of ``scopes``;
        every list keeps the chain's length, with ``{}`` at the positions it does not hold.

        >>> chain = DefenseChain.from_json([{"name": "ladder", "scope": "team"}, {"name": "rounding"}])
        >>> chain.divide_parts([{"best": 0.5}, {"own": 1}], ("team",))
        ([{}, {'own': 1}], {'team': [{'best': 0.5}, {}]})
        """
        own = [{} if d.scope in scopes else states[i] for i, d in enumerate(self.defenses)]
        parts = {scope: [states[i] if d.scope == scope else {} for i, d in enumerate(self.defenses)]
                 for scope in scopes}
        return own, parts

    def merge_states(
        self, kept: list[dict[str, Any]] | None, other: list[dict[str, Any]] | None, *, higher_is_better: bool,
        scope: str = "team",
    ) -> list[dict[str, Any]]:
        """Two teams' states of this chain merged (``kept`` is the surviving team's): each ``scope``-scoped
        defense's :meth:`~defenses.Defense.merge_state`, ``{}`` elsewhere. A missing or stale list counts as fresh.

        >>> chain = DefenseChain.from_json([{"name": "ladder", "eta": 0.01, "scope": "team"}])
        >>> chain.merge_states([{"best": 0.4}], [{"best": 0.3}], higher_is_better=False)
        [{'best': 0.3}]
        """
        fresh = self.initial_states()
        a = kept if kept is not None and len(kept) == len(self.defenses) else fresh
        b = other if other is not None and len(other) == len(self.defenses) else fresh
        return [
            d.merge_state(a[i] or fresh[i], b[i] or fresh[i], higher_is_better=higher_is_better)
            if d.scope == scope else {}
            for i, d in enumerate(self.defenses)
        ]

    @property
    def needs_peers(self) -> bool:
        """Whether a release reads the other participants' states (``release(peers=...)``)."""
        return any(defense.needs_peers for defense in self.defenses)

    def __len__(self) -> int:
        return len(self.defenses)

    def release(
        self,
        view: ScoringView,
        *,
        states: list[dict[str, Any]] | None,
        secret: int,
        submission_key: str,
        exact_score: Score | None = None,
        peers: Sequence[list[dict[str, Any]]] = (),
    ) -> ChainOutcome:
        """Run the chain over one split. ``states`` (one dict per defense) is copied, never mutated.

        ``exact_score`` is the metric's value computed by the caller in its own arithmetic (e.g. MPFR); it
        is used when no DATA-stage defense changed the rows or labels. ``peers`` are the other participants'
        chain states on this split (read only; see :attr:`needs_peers`); a state of another chain's shape is
        skipped, as a fresh participant's would be.
        """
        states = [json.loads(json.dumps(s)) for s in (states or self.initial_states())]
        if len(states) != len(self.defenses):
            states = self.initial_states()
        notes: list[str] = []
        ledger: dict[str, Any] = {}
        current = view
        for position, defense in enumerate(self.defenses):
            if defense.stage is not Stage.DATA:
                continue
            ctx = self._context(position, states, secret, submission_key, view.split, ledger)
            current = defense.before_metric(current, ctx)
            notes.extend(ctx.notes)
            if ctx.reject:
                return ChainOutcome(None, float("nan"), states, notes, ctx.reject, ledger=ledger)
        unchanged = current is view
        score: Score = exact_score if (unchanged and exact_score is not None) else current.score()
        metric_score = score
        released: Score | None = score
        message: str | None = None
        for position, defense in enumerate(self.defenses):
            if defense.stage is Stage.DATA:
                continue
            ctx = self._context(position, states, secret, submission_key, view.split, ledger)
            if defense.needs_peers:
                ctx.peers = tuple(peer[position] for peer in peers if len(peer) == len(self.defenses))
            released = defense.after_metric(released, current, ctx)
            notes.extend(ctx.notes)
            message = message or ctx.message
            if ctx.reject:
                return ChainOutcome(None, metric_score, states, notes, ctx.reject, ledger=ledger)
        return ChainOutcome(released, metric_score, states, notes, message=message, ledger=ledger)

    def _context(
        self,
        position: int,
        states: list[dict[str, Any]],
        secret: int,
        submission_key: str,
        split: str,
        ledger: dict[str, Any],
    ) -> DefenseContext:
        return DefenseContext(
            rng=derive_rng(secret, submission_key, split, position),
            state=states[position],
            submission_key=submission_key,
            # "competition" cannot collide with a submission key: the site's keys are "submission:…"/"content:…"
            competition_rng=derive_rng(secret, "competition", split, position, self.defenses[position].name),
            board_rng=derive_rng(secret, "competition", "every-split", position, self.defenses[position].name),
            ledger=ledger,
        )
