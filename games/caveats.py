"""What each defense does *not* protect, stated beside the figures this game measured for the chain.

A statement here says what the mechanism leaves open whatever the attack (the reason an attack in the library
gets through, or the limit of the defense's own guarantee); the measured sentence says what the game's strongest
attack actually got through the chain, so a re-run with stronger attacks updates the evidence, not the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from games.frontier import ChainPoint


def _rounding(step: dict[str, Any]) -> str:
    digits = step.get("significant")
    precision = f"{digits} significant digits" if digits else f"{step.get('decimals', 5)} decimals"
    return (f"Rounding to {precision} hides digits, not labels: an exact attack reads each released score to that "
            "step, so rounding only costs it queries (fewer labels per query).")


def _noise(step: dict[str, Any]) -> str:
    kind = step.get("kind", "laplace")
    if kind == "multiplicative":
        return (f"Multiplicative noise (±{step.get('alpha')}) is bounded, so an exact design still decodes "
                "several labels per query (Label Inference Attacks from Log-loss Scores, App. B.5), and it is "
                "drawn afresh per submission, so repeating a query and averaging removes it.")
    size = f"ε = {step['epsilon']} per release" if "epsilon" in step else f"scale {step.get('scale')}"
    return (f"{kind.capitalize()} noise ({size}) is drawn afresh per submission: the same question asked again "
            "(made a new file by changes far below the released precision) gets a new draw, and averaging n "
            "answers shrinks the noise by √n, so it costs an attacker queries, not labels; its ε adds up over "
            "submissions unless a privacy_budget stops them.")


def _subsetting(step: dict[str, Any]) -> str:
    share = f"{step['count']} rows" if "count" in step else f"a share {step.get('fraction', 0.5)} of the rows"
    return (f"Scoring a fresh random subset ({share}) per submission adds sampling noise that is new each time, "
            "so repeated queries average it away, and each row is still scored in most submissions; it costs "
            "queries, and moves every honest score by the sampling error.")


def _randomized_response(step: dict[str, Any]) -> str:
    flip = f"p = {step['p']}" if "p" in step else f"ε = {step.get('epsilon')}"
    if step.get("mode", "fixed") == "fixed":
        return (f"Fixed randomized response ({flip}) flips those labels once, and every submission is scored "
                "against the flipped labels: an exact attack learns each of them exactly, so the attacker's "
                "accuracy is capped at 1 − p and no lower — the flipped rows are all it protects — while honest "
                "scores are measured against the flipped labels too.")
    return (f"Fresh randomized response ({flip}) flips labels anew per submission: the released score is an "
            "attenuated but unbiased signal of the true labels, which repeated queries average out.")


def _ladder(step: dict[str, Any]) -> str:
    rule = (f"beats the participant's best by η = {step.get('eta')}" if step.get("mode") == "fixed"
            else "beats the participant's best by a paired test")
    return (f"The Ladder releases a new score only when a submission {rule}: it bounds what one account learns "
            "per submission, but each further account climbs a ladder of its own, and honest progress smaller "
            "than the step is not shown.")


def _thresholdout(step: dict[str, Any]) -> str:
    return (f"Thresholdout answers from its reference rows until the holdout disagrees by more than a noisy "
            f"threshold, and spends its budget ({step.get('budget', 100)} holdout answers per participant) only "
            "then: its guarantee covers that many adaptive answers per account, and a new account gets a new "
            "budget.")


def _privacy_budget(step: dict[str, Any]) -> str:
    return (f"The privacy budget (ε = {step.get('epsilon')} per participant) stops releasing once it is spent: "
            "what the answers before that carried is leaked, and a new account starts with a full budget.")


def _probe_detector(step: dict[str, Any]) -> str:
    action = "refuses" if step.get("reject") else "flags"
    return (f"The probe detector {action} submissions with the structure of the papers' probes (spikes, prime "
            "odds, geometric log-odds, random 0/1 vectors); a code carried in small perturbations of an honest "
            "model's predictions has none of it, and the detector cannot tell it from a model (Reconstructing "
            "Test Labels from Noisy Loss Functions, §5: \"benign looking\" vectors).")


def _threshold(step: dict[str, Any]) -> str:
    cutoffs = step.get("t")
    shown = ", ".join(str(c) for c in cutoffs) if isinstance(cutoffs, list) else str(cutoffs)
    return (f"A hard label (beats {shown} or not) hides the score, not the labels: a random vector that earns the "
            "badge is still a vote for each of its rows, so with a cut-off near chance the boosting attack "
            "overfits the public rows exactly as it does on a Kaggle board, and boundary repulsion (Label-Only "
            "Model Inversion Attacks via Boundary Repulsion) climbs away from the cut-off one label per query.")


def _rank(step: dict[str, Any]) -> str:
    return ("Rank only still compares each submission with every earlier one of the participant: a first place "
            "is an improvement, which the boosting and boundary-repulsion attacks read as an accepted vector, "
            "and each further account ranks its own submissions afresh.")


def _accept_reject(step: dict[str, Any]) -> str:
    return ("The Ladder's decision without its value leaks what the Ladder's value does about improvements (one "
            "bit per submission): the Ladder's bound holds per account, and an attack that follows its accepted "
            "submissions (boundary repulsion, from Label-Only Model Inversion Attacks via Boundary Repulsion) "
            "still drifts above chance on the public rows.")


CAVEATS: dict[str, Callable[[dict[str, Any]], str]] = {
    "threshold": _threshold,
    "rank": _rank,
    "accept_reject": _accept_reject,
    "rounding": _rounding,
    "noise": _noise,
    "subsetting": _subsetting,
    "randomized_response": _randomized_response,
    "ladder": _ladder,
    "thresholdout": _thresholdout,
    "privacy_budget": _privacy_budget,
    "probe_detector": _probe_detector,
}


NO_DEFENSE = "No defense: every released score is the true score at full precision."


def statements(chain: list[dict[str, Any]]) -> list[str]:
    """What each defense of ``chain`` does not protect, one statement per defense."""
    if not chain:
        return [NO_DEFENSE]
    return [CAVEATS[step["name"]](step) if step.get("name") in CAVEATS
            else f"{step.get('name')}: no statement on file for this defense." for step in chain]


@dataclass
class DefenseNote:
    """One statement of what a defense does not protect, and what the game measured through every chain that
    holds that defense (one line per data set and chain)."""

    statement: str
    measured: list[str] = field(default_factory=list)


def defense_notes(chains: Sequence[tuple[list[dict[str, Any]], ChainPoint]]) -> list[DefenseNote]:
    """Each distinct statement once, in order of first appearance, with the figures of every chain holding it.

    >>> from games.frontier import ChainPoint
    >>> p = ChainPoint("d", "r5", 1000, 0.0, 1.0, 1.0, 1.0, 0.0, 0.6, 1.0, 1.0, "capacity", 1000, 12.0)
    >>> q = ChainPoint("d", "n+r5", 1000, 0.0, 0.5, 1.0, 1.0, 0.0, 0.6, 0.8, 0.0, "auto", 1000, 900.0)
    >>> notes = defense_notes([([{"name": "rounding"}], p), ([{"name": "noise", "scale": 1e-3}, {"name": "rounding"}], q)])
    >>> [len(note.measured) for note in notes], notes[1].measured[0]
    ([1, 1], 'd · n+r5: 80.0 % of the labels right within 1,000 submissions (auto; majority class 60.0 %), leakage 0.50')
    """  # noqa: E501
    notes: dict[str, DefenseNote] = {}
    for chain, point in chains:
        # A chain's figures go under the defenses that make it what it is: rounding only when it rounds alone
        # (nearly every chain ends with it, and it is not what stops an attack there).
        key = [step for step in chain if step.get("name") != "rounding"] or chain
        for step in chain:
            for statement in statements([step]):
                note = notes.setdefault(statement, DefenseNote(statement))
                if step in key:
                    note.measured.append(short_measure(point))
        if not chain:
            notes.setdefault(NO_DEFENSE, DefenseNote(NO_DEFENSE)).measured.append(short_measure(point))
    return list(notes.values())


def _attack(point: ChainPoint) -> str:
    return "" if point.attack is None else (
        point.attack if point.accounts == 1 else f"{point.attack} with {point.accounts:,} accounts")


def short_measure(point: ChainPoint) -> str:
    """One chain's figures at its budget, in one line."""
    budget = "without a cap" if point.budget is None else f"within {point.budget:,} submissions"
    majority = "–" if point.majority_rate is None else f"{100 * point.majority_rate:.1f} %"
    if point.attack is None or point.label_accuracy is None:
        why = f": {point.failure}" if point.failure else ""
        return f"{point.dataset} · {point.defense}: every attack failed {budget}{why} (majority class {majority})"
    return (f"{point.dataset} · {point.defense}: {100 * point.label_accuracy:.1f} % of the labels right {budget} "
            f"({_attack(point)}; majority class {majority}), leakage {point.leakage:.2f}")


def measured(point: ChainPoint) -> str:
    """What the game measured through the chain at its budget, as one sentence."""
    budget = "without a cap" if point.budget is None else f"within {point.budget:,} submissions"
    majority = "–" if point.majority_rate is None else f"{100 * point.majority_rate:.1f} %"
    if point.attack is None or point.label_accuracy is None:
        why = f" ({point.failure})" if point.failure else ""
        return (f"Measured here: every attack failed {budget}{why}; an attacker keeps what one constant submission "
                f"reveals, the majority class ({majority} of the labels).")
    exact = "" if not point.exact_fraction else f", {100 * point.exact_fraction:.1f} % exactly"
    queries = "" if point.queries is None else f" in {point.queries:,.0f} submissions"
    return (f"Measured here: {budget} the strongest attack ({_attack(point)}) got "
            f"{100 * point.label_accuracy:.1f} % of the labels right{exact}{queries}, against {majority} for the "
            f"majority class (leakage {point.leakage:.2f}).")


def chain_caveats(chain: list[dict[str, Any]], point: ChainPoint) -> list[str]:
    """One statement per defense of ``chain`` (what it does not protect), then what the game measured.

    >>> from games.frontier import ChainPoint
    >>> point = ChainPoint("d", "r5", 1000, 0.0, 1.0, 1.0, 1.0, 0.0, 0.6, 1.0, 1.0, "capacity", 1000, 12.0)
    >>> for line in chain_caveats([{"name": "rounding", "decimals": 5}], point): print(line)
    Rounding to 5 decimals hides digits, not labels: an exact attack reads each released score to that step, so rounding only costs it queries (fewer labels per query).
    Measured here: within 1,000 submissions the strongest attack (capacity) got 100.0 % of the labels right, 100.0 % exactly in 12 submissions, against 60.0 % for the majority class (leakage 1.00).
    """  # noqa: E501
    return [*statements(chain), measured(point)]
