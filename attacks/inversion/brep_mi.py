"""BREP-MI in a generator's latent space (paper 002, Algorithm 1 with Eq. 8–9), against a label-only endpoint.

For each private class ``c``: find a latent ``z`` whose image the target labels ``c`` (sampling the prior,
one shared pool for all classes, as the paper samples its GAN), then repeat — sample ``N`` points on the sphere
of radius ``R`` around ``z`` in latent space and query their labels; if all are ``c``, grow ``R ← γR`` and keep
``z* ← z``; else step ``z ← z + α·ĝ`` (Eq. 8: away from the points labelled otherwise; ``α = min(R/3, 3)``),
reverting a step whose image is not labelled ``c``. The reconstruction is the image of ``z*``, the centre of
the largest sphere found inside the class. Only the endpoint's hard labels are used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attacks.brep.estimator import GAMMA, MAX_STEP, N_SAMPLES, R0, repulsion_direction, sphere_directions, step_size
from attacks.inversion.generator import PcaGenerator
from attacks.inversion.oracle import LabelOracle

#: Paper 002, Section 5.1: halt after this many iterations at one radius without a fully accepted sphere.
MAX_ITERS = 1000
#: At most this share of the budget is spent looking for starting points.
START_SHARE = 0.2


@dataclass
class ClassRun:
    """One class's search: whether a start was found, the final radius, and what the iterations did."""

    target_class: int
    started: bool = False
    radius: float = 0.0
    growths: int = 0
    steps: int = 0
    reverted: int = 0
    queries: int = 0
    halted: bool = False


@dataclass
class InversionAttackResult:
    """One reconstruction per private class (row ``c``), the latents they decode from, per-class runs."""

    reconstructions: np.ndarray
    latents: np.ndarray
    runs: list[ClassRun]
    queries: int
    start_queries: int
    #: The starting latent of each class (zeros where none was found): the images before any repulsion step.
    start_latents: np.ndarray
    details: dict[str, float] = field(default_factory=dict)


class _Spend:
    """The oracle behind this attack's own cap (the endpoint's budget may be larger)."""

    def __init__(self, oracle: LabelOracle, generator: PcaGenerator, cap: int) -> None:
        self.oracle, self.generator, self.left, self.used = oracle, generator, cap, 0

    def labels(self, latents: np.ndarray) -> np.ndarray:
        self.left -= len(latents)
        self.used += len(latents)
        return np.asarray(self.oracle.predict(self.generator.decode(latents)), dtype=np.int64)


def _starts(spend: _Spend, classes: list[int], rng: np.random.Generator, batch: int, cap: int) -> dict[int, np.ndarray]:
    """The first prior sample the target puts in each class, from a shared pool of at most ``cap`` queries."""
    found: dict[int, np.ndarray] = {}
    spent = 0
    while len(found) < len(classes) and spent < cap and spend.left > 0:
        count = min(batch, cap - spent, spend.left)
        latents = spend.generator.sample(rng, count)
        for z, label in zip(latents, spend.labels(latents), strict=True):
            if int(label) in classes and int(label) not in found:
                found[int(label)] = z
        spent += count
    return found


def _search(
    spend: _Spend, z: np.ndarray, run: ClassRun, cap: int, rng: np.random.Generator, *,
    n_samples: int, r0: float, gamma: float, max_step: float, max_iters: int,
) -> np.ndarray:
    """Algorithm 1 for one class from an accepted ``z``, within ``cap`` queries; returns ``z*``."""
    c = run.target_class
    radius, iters, z_star = r0, 0, z
    start = spend.used
    while spend.used - start + n_samples <= cap and iters < max_iters:
        directions = sphere_directions(rng, n_samples, len(z))
        accepted = spend.labels(z + radius * directions) == c
        if accepted.all():
            radius *= gamma
            z_star = z
            run.growths += 1
            iters = 0
            continue
        iters += 1
        if spend.used - start + 1 > cap:
            break
        candidate = z + step_size(radius, max_step) * repulsion_direction(directions, accepted)
        run.steps += 1
        if spend.labels(candidate[None, :])[0] == c:
            z = candidate
        else:
            run.reverted += 1
    run.radius, run.halted, run.queries = radius, iters >= max_iters, spend.used - start
    return z_star


def brep_mi(
    oracle: LabelOracle,
    generator: PcaGenerator,
    *,
    budget: int | None = None,
    n_samples: int = N_SAMPLES,
    r0: float = R0,
    gamma: float = GAMMA,
    max_step: float = MAX_STEP,
    max_iters: int = MAX_ITERS,
    start_batch: int = 64,
    seed: int = 0,
) -> InversionAttackResult:
    """Reconstruct one image per private class from hard labels (Kahla et al., CVPR 2022, Algorithm 1).

    ``budget`` (default: what the endpoint has left) is shared: at most :data:`START_SHARE` of it finds starting
    points, the rest is split evenly over the classes that have one (a class that halts early leaves its
    remainder to the next). Defaults from paper 002, Section 5.1 (``R0 = 2, γ = 1.3, α = min(R/3, 3), N = 32,
    maxIters = 1000``). Queries: at most ``budget``. A class without a start gets the generator's mean image.
    """
    left = oracle.queries_left
    cap = budget if left is None else min(left, budget if budget is not None else left)
    if cap is None or cap < 1:
        raise ValueError("a budget of at least one query is needed (the endpoint is unlimited: pass budget=)")
    rng = np.random.default_rng(seed)
    spend = _Spend(oracle, generator, cap)
    classes = list(range(oracle.task.n_classes))
    starts = _starts(spend, classes, rng, start_batch, max(int(START_SHARE * cap), start_batch))
    start_queries = spend.used
    runs = [ClassRun(c) for c in classes]
    latents = np.zeros((len(classes), generator.n_latent))
    starting = np.zeros_like(latents)
    for c, z in starts.items():
        starting[c] = z
    pending = [c for c in classes if c in starts]
    for i, c in enumerate(pending):
        runs[c].started = True
        share = spend.left // (len(pending) - i)
        latents[c] = _search(spend, starts[c], runs[c], share, rng, n_samples=n_samples, r0=r0, gamma=gamma,
                             max_step=max_step, max_iters=max_iters)
    return InversionAttackResult(
        reconstructions=generator.decode(latents), latents=latents, runs=runs, queries=spend.used,
        start_queries=start_queries, start_latents=starting,
    )
