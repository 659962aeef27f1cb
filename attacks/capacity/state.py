"""What the capacity constructions know between queries (:class:`CapacityState`), shared by the binary query
loop (:mod:`attacks.capacity.attack`), the K-ary construction (:mod:`attacks.capacity.kary`), the split-aware
variant (:mod:`attacks.capacity.split`) and the camouflaged attack (:mod:`attacks.camouflage.attack`)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from attacks.capacity.decoder import Group
from attacks.result import AttackFailed


@dataclass
class CapacityState:
    """Everything the attack knows: resolved labels (``-1`` unknown), carried groups, untouched rows."""

    labels: np.ndarray
    fresh: deque[int]
    carried: deque[Group] = field(default_factory=deque)
    per_query: list[int] = field(default_factory=list)

    def absorb(self, group: Group, mask: np.ndarray) -> int:
        """Keep the candidates in ``mask``; record the rows they agree on; carry the rest. Returns the
        number of labels newly resolved."""
        patterns = group.patterns[mask]
        if len(patterns) == 0:
            raise AttackFailed("a group lost every candidate labeling: the observations are inconsistent")
        constant = patterns.min(axis=0) == patterns.max(axis=0)
        self.labels[group.rows[constant]] = patterns[0, constant]
        if not constant.all():
            self.carried.append(Group(group.rows[~constant], patterns[:, ~constant]))
        return int(constant.sum())
