"""The floor's check on a hidden public split when the reader read only some rows: ``blocks_split`` with 100
fresh accounts on 1,797 rows reads about a fifth of them and names the public rows among those. The check's pair
is scored on every public row of the board, so the band's accuracy comes from the board's count of public rows
(the reader's estimate), not from the few the reader happened to find: counted from the few, a measured band
looked unscored and its correctly read labels went back to the majority class (0.512, the majority rate)."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits

import attacks
from attacks.oracle import LocalOracle
from scoring import public_split_mask

COMBINED: list[dict[str, object]] = [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
            {"name": "noise", "kind": "laplace", "scale": 1e-4},
            {"name": "ladder", "mode": "parameter_free"}]


def test_labels_read_by_too_few_accounts_on_a_hidden_split_survive_the_floor() -> None:
    labels = (load_digits().target < 5).astype(np.int64)
    board = LocalOracle(labels, decimals=5, defenses=COMBINED, public_fraction=0.3, seed=7, accounts=100)
    result = attacks.run("auto", board, budget=5000)
    public = public_split_mask(len(labels), 0.3, 7)
    majority = max(labels[public].mean(), 1 - labels[public].mean())
    right = float((result.labels[public] == labels[public]).mean())
    moved = result.labels[public] != int(labels[public].mean() >= 0.5)  # off the public majority class
    assert result.course is not None and result.course.attack == "fresh_accounts"
    assert right >= majority + 0.03, (right, majority, result.course.reasoning[-6:])
    # What moved off the majority class is right (the reads, not guesses) and nothing is called exact.
    assert moved.sum() >= 15 and (result.labels[public][moved] == labels[public][moved]).mean() >= 0.9
    assert not (result.fill_confidence() >= 1.0).any()
