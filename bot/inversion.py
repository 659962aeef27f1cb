"""BREP-MI against a live model-inversion challenge: the label-only endpoint over HTTP, then the submission.

:class:`HttpLabelOracle` answers :class:`attacks.inversion.LabelOracle` through :class:`bot.client.
LeaderboardClient` (the same attack code as in process). The command fits the attacker's generator on the public
digits 5–9 (its prior knowledge, paper 002 Appendix B.1), runs BREP-MI within ``--budget`` queries, submits the
reconstructions and waits for the evaluator's verdict::

    python -m bot.inversion --url http://127.0.0.1:8000 --competition invert-digits --token TOKEN [--budget Q]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np

from attacks.inversion import BudgetExhausted, PcaGenerator, brep_mi
from attacks.inversion.digits import PUBLIC_DIGITS
from bot.client import LeaderboardClient, QueryBudgetExhausted
from scoring.inversion import InversionTask


def task_of(terms: dict[str, Any]) -> InversionTask:
    """The challenge's public terms as the attack's task."""
    low, high = terms["pixel_range"]
    return InversionTask(n_features=int(terms["n_features"]), n_classes=int(terms["n_classes"]),
                         image_shape=(int(terms["image_shape"][0]), int(terms["image_shape"][1])),
                         low=float(low), high=float(high), max_batch=int(terms["max_batch"]))


class HttpLabelOracle:
    """A live challenge's prediction endpoint; batches larger than the site's ``max_batch`` are split."""

    def __init__(self, client: LeaderboardClient, slug: str) -> None:
        self.client, self.slug = client, slug
        terms = client.inversion_terms(slug)
        self.task = task_of(terms)
        self._left: int | None = None
        self.queries = 0

    @property
    def queries_left(self) -> int | None:
        if self._left is None:
            answer = self.client._get_object(f"/api/v1/competitions/{self.slug}/predict/")
            self._left = int(answer["queries_left"])
        return self._left

    def predict(self, inputs: np.ndarray) -> list[int]:
        rows = np.atleast_2d(np.asarray(inputs, dtype=np.float64))
        labels: list[int] = []
        for start in range(0, len(rows), self.task.max_batch):
            try:
                answer = self.client.predict(self.slug, rows[start:start + self.task.max_batch])
            except QueryBudgetExhausted as exc:
                self._left = exc.queries_left
                raise BudgetExhausted(str(exc), left=exc.queries_left) from None
            labels += answer.labels
            self._left = answer.queries_left
            self.queries += len(answer.labels)
        return labels


def public_digits_generator(task: InversionTask, n_latent: int = 16) -> PcaGenerator:
    """The attacker's prior: a PCA-Gaussian generator of scikit-learn's public digits 5–9."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    public = np.isin(digits.target, PUBLIC_DIGITS)
    return PcaGenerator.fit(digits.data[public], n_latent=n_latent, low=task.low, high=task.high)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="BREP-MI against a live model-inversion challenge")
    parser.add_argument("--url", required=True)
    parser.add_argument("--competition", required=True)
    parser.add_argument("--token", default=os.environ.get("LEADERBOARD_TOKEN"))
    parser.add_argument("--budget", type=int, default=None, help="queries to spend (default: all that are left)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latent", type=int, default=16)
    parser.add_argument("--no-submit", action="store_true", help="only reconstruct; do not submit")
    parser.add_argument("--json", default=None, help="write a summary here")
    args = parser.parse_args(argv)
    with LeaderboardClient(args.url, args.token) as client:
        oracle = HttpLabelOracle(client, args.competition)
        generator = public_digits_generator(oracle.task, args.latent)
        result = brep_mi(oracle, generator, budget=args.budget, seed=args.seed)
        summary: dict[str, Any] = {
            "queries": result.queries, "start_queries": result.start_queries,
            "radius": [run.radius for run in result.runs], "started": [run.started for run in result.runs],
        }
        if not args.no_submit:
            body = json.dumps({"reconstructions": result.reconstructions.tolist()}).encode()
            upload = client.submit_json(args.competition, body)
            scored = client.wait(upload.id)
            summary.update(submission=upload.id, status=scored.status, score=scored.public_score_text,
                           per_class=scored.data.get("per_class"), error=scored.error)
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
