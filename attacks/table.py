"""The documentation's table of every attack, generated from the catalogue: ``python -m attacks.table`` prints it,
``python -m attacks.table --write`` rewrites ``docs/attacks.md`` (a test checks the file is current)."""

from __future__ import annotations

import argparse
from pathlib import Path

import attacks  # noqa: F401  (registers every built-in attack)
from attacks.catalogue import Stage
from attacks.registry import catalogue

DOC = Path(__file__).resolve().parent.parent / "docs" / "attacks.md"

HEADER = """# Attack catalogue

Generated from the attack catalogue by `python -m attacks.table --write`; do not edit by hand ([how the attacks
work](attack_library.md), [the papers](papers.md)). Every attack
registers a spec beside its function (`attacks/catalogue.py`): what it fits, with which rank, its fallbacks.
`auto` plays the best-ranked plan that fits the board (`attacks.plan.choose`), then the failed plan's fallbacks,
the likelihood decoders, the best guess and the majority-class floor. "exact": the attack vouches for every
label it claims and `attacks.run` confirms them with one query; "cut short": a budget stops it and it keeps what
it decoded; "chosen by auto": the spec declares when it fits (else callers name it, or it is a fallback).

"""

STAGES = {Stage.EXACT: "exact design", Stage.LIKELIHOOD: "likelihood decoder", Stage.GUESS: "best guess"}

#: The specs cite papers by their number in the project's reading list; the documentation names them by title, linked
#: to docs/papers.md (which gives authors, venue and a link to the paper itself).
PAPERS = {
    "paper 000": "[*Label Inference Attacks from Log-loss Scores*](papers.md#label-inference)",
    "paper 001": "[*Reconstructing Test Labels from Noisy Loss Functions*](papers.md#noisy-loss-functions)",
    "paper 002": "[*Label-Only Model Inversion Attacks via Boundary Repulsion*](papers.md#brep-mi)",
    "paper 004": "[*On Primes, Log-Loss Scores and (No) Privacy*](papers.md#primes-no-privacy)",
    "FIELD_NOTES' counting bound": "the counting bound",
}


def _cell(text: str) -> str:
    for cited, title in PAPERS.items():
        text = text.replace(cited, title)
    return text.replace("|", "\\|").replace("\n", " ").strip() or "—"


def markdown() -> str:
    """The table, one row per registered attack, by name."""
    rows = ["| attack | kind | paper | fits | queries | precision assumed | exact | cut short | chosen by auto "
            "|",
            "|---|---|---|---|---|---|---|---|---|"]
    for entry in catalogue():
        rows.append("| " + " | ".join([
            f"`{entry.name}`", STAGES[entry.stage], _cell(entry.paper), _cell(entry.board or entry.summary),
            _cell(entry.queries), _cell(entry.precision), "yes" if entry.exact else "no",
            "yes" if entry.truncatable else "no", "yes" if entry.fits is not None else "no"]) + " |")
    return HEADER + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"rewrite {DOC}")
    args = parser.parse_args(argv)
    text = markdown()
    if args.write:
        DOC.write_text(text, encoding="utf-8")
        print(f"wrote {DOC}")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
