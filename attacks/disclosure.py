"""What the host tells participants of its defense chain, read into the parameters the attacks take.

A competition may disclose parameters of its chain (the site's ``disclosed_defenses``, ``LocalOracle(disclosed=...)``;
:attr:`attacks.catalogue.BoardFacts.disclosed` carries the mapping as given). Two shapes are read:

* **flat keys**: ``epsilon`` (the ε each noisy release spends), ``scale`` (a fixed noise scale on the released
  score), ``noise`` (``"laplace"`` or ``"gaussian"``), ``privacy_budget`` (the total ε per participant; also
  ``budget_epsilon``), ``composition``, ``ladder`` (``"fixed"`` or ``"parameter_free"``), ``eta`` (the Ladder's step),
  ``ladder_scope`` and ``budget_scope`` (``"account"`` or ``"competition"``: whose submissions share the state),
  ``p`` (randomized response's flip rate; also ``flip_rate``), ``subset_size`` or ``subset_fraction``;
* **the chain** itself, as the chain JSON of the disclosed defenses: ``{"defenses": [{"name": "noise", "kind":
  "laplace", "epsilon": 10}, {"name": "privacy_budget", "epsilon": 200}]}`` (also under ``chain``), or a ``text``
  that is such JSON (the site's disclosure is text; prose is not parsed — a parameter is read only where it is
  stated as data).

Nothing here is trusted blindly: the fingerprint and the attacks check each disclosed value against the releases
they see and measure instead where one contradicts them (:mod:`attacks.fingerprint`, :mod:`attacks.budgeted`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Flat keys read as the same parameter.
_BUDGET_KEYS = ("privacy_budget", "budget_epsilon")
_P_KEYS = ("p", "flip_rate")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


@dataclass(frozen=True)
class Disclosure:
    """The chain parameters a disclosure states (``None``: not stated). ``read``: what was taken, for the reasoning.

    >>> told = Disclosure.parse({"defenses": [{"name": "noise", "kind": "laplace", "epsilon": 10},
    ...                                       {"name": "privacy_budget", "epsilon": 200, "composition": "basic"}]})
    >>> told.noise_epsilon, told.budget_epsilon, told.releases_per_account()
    (10.0, 200.0, 20)
    >>> Disclosure.parse({"epsilon": 10.0}).noise_epsilon, Disclosure.parse({"text": "a little noise"}).stated
    (10.0, False)
    """

    noise_kind: str | None = None
    noise_epsilon: float | None = None
    noise_delta: float | None = None
    noise_scale: float | None = None
    budget_epsilon: float | None = None
    composition: str | None = None
    ladder_mode: str | None = None
    ladder_step: float | None = None
    rr_p: float | None = None
    rr_mode: str | None = None
    # Whose submissions share the Ladder's and the privacy budget's state (``"account"``, ``"competition"``).
    ladder_scope: str | None = None
    budget_scope: str | None = None
    subset_size: int | None = None
    subset_fraction: float | None = None
    read: tuple[str, ...] = field(default=())

    @property
    def stated(self) -> bool:
        """Whether the disclosure states any chain parameter the attacks read."""
        return bool(self.read)

    @property
    def noise_known(self) -> bool:
        """The noise on each release is stated (its ε or its scale)."""
        return self.noise_epsilon is not None or self.noise_scale is not None

    @property
    def privacy_budget(self) -> bool:
        return self.budget_epsilon is not None

    @classmethod
    def parse(cls, disclosed: Mapping[str, Any] | None) -> Disclosure:
        """Read a disclosure of either shape (module docstring); unknown keys and prose are ignored."""
        if not disclosed:
            return cls()
        values: dict[str, Any] = {}
        read: list[str] = []
        chain = disclosed.get("defenses", disclosed.get("chain"))
        text = disclosed.get("text")
        if chain is None and isinstance(text, str):
            try:
                loaded = json.loads(text)
            except ValueError:
                loaded = None
            if isinstance(loaded, list):
                chain = loaded
            elif isinstance(loaded, dict):
                return cls.parse({k: v for k, v in loaded.items() if k != "text"})
        if isinstance(chain, list):
            for step in chain:
                if isinstance(step, Mapping):
                    _read_defense(step, values, read)
        _read_flat(disclosed, values, read)
        return cls(**values, read=tuple(read))

    def noise_scale_on(self, metric_range: float, n_scored: int) -> float | None:
        """The Laplace scale on the released mean: the stated scale, or ``Δ/ε`` with ``Δ = metric_range / n_scored``
        (a row's most movement of the mean: the defense's sensitivity for a log loss clipped at ``eps``)."""
        if self.noise_kind not in (None, "laplace"):
            return None
        if self.noise_scale is not None:
            return self.noise_scale
        if self.noise_epsilon is None or n_scored <= 0:
            return None
        return metric_range / n_scored / self.noise_epsilon

    def releases_per_account(self) -> int | None:
        """How many releases of the stated ε one account's privacy budget allows (basic composition, which the
        budget enforces when the per-release ε is large; ``None`` when either is unstated)."""
        if self.budget_epsilon is None or self.noise_epsilon is None:
            return None
        return max(0, math.floor(self.budget_epsilon / self.noise_epsilon * (1 + 1e-12)))


def _read_defense(step: Mapping[str, Any], values: dict[str, Any], read: list[str]) -> None:
    name = step.get("name")
    if name == "noise":
        kind = step.get("kind")
        if isinstance(kind, str):
            values["noise_kind"] = kind
        for key, target in (("epsilon", "noise_epsilon"), ("scale", "noise_scale"), ("delta", "noise_delta")):
            number = _number(step.get(key))
            if number is not None:
                values[target] = number
                read.append(f"noise {key} {number:g}")
    elif name == "privacy_budget":
        number = _number(step.get("epsilon"))
        if number is not None:
            values["budget_epsilon"] = number
            read.append(f"privacy budget ε {number:g}")
        if isinstance(step.get("composition"), str):
            values["composition"] = step["composition"]
        if isinstance(step.get("scope"), str):
            values["budget_scope"] = step["scope"]
            read.append(f"privacy budget scope {step['scope']}")
    elif name == "ladder":
        mode = step.get("mode", "fixed")
        if isinstance(mode, str):
            values["ladder_mode"] = mode
            read.append(f"Ladder ({mode})")
        number = _number(step.get("eta"))
        if number is not None:
            values["ladder_step"] = number
            read.append(f"Ladder step {number:g}")
        if isinstance(step.get("scope"), str):
            values["ladder_scope"] = step["scope"]
            read.append(f"Ladder scope {step['scope']}")
    elif name == "randomized_response":
        p = _number(step.get("p"))
        eps = _number(step.get("epsilon"))
        if p is None and eps is not None:
            p = 1.0 / (1.0 + math.exp(eps))  # binary: ε = ln((1 − p)/p)
        if p is not None and p < 0.5:
            values["rr_p"] = p
            read.append(f"randomized response p {p:g}")
        if isinstance(step.get("mode"), str):
            values["rr_mode"] = step["mode"]
    elif name == "subsetting":
        count, fraction = step.get("count"), _number(step.get("fraction"))
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            values["subset_size"] = count
            read.append(f"subset size {count}")
        if fraction is not None and fraction <= 1:
            values["subset_fraction"] = fraction
            read.append(f"subset fraction {fraction:g}")


def _read_flat(disclosed: Mapping[str, Any], values: dict[str, Any], read: list[str]) -> None:
    def number(key: str, target: str, label: str) -> None:
        value = _number(disclosed.get(key))
        if value is not None and target not in values:
            values[target] = value
            read.append(f"{label} {value:g}")

    number("epsilon", "noise_epsilon", "noise ε per release")
    number("scale", "noise_scale", "noise scale")
    for key in _BUDGET_KEYS:
        number(key, "budget_epsilon", "privacy budget ε")
    number("eta", "ladder_step", "Ladder step")
    for key in _P_KEYS:
        value = _number(disclosed.get(key))
        if value is not None and value < 0.5 and "rr_p" not in values:
            values["rr_p"] = value
            read.append(f"randomized response p {value:g}")
    fraction = _number(disclosed.get("subset_fraction"))
    if fraction is not None and fraction <= 1 and "subset_fraction" not in values:
        values["subset_fraction"] = fraction
        read.append(f"subset fraction {fraction:g}")
    size = disclosed.get("subset_size")
    if isinstance(size, int) and not isinstance(size, bool) and size > 0 and "subset_size" not in values:
        values["subset_size"] = size
        read.append(f"subset size {size}")
    for key, target in (("noise", "noise_kind"), ("ladder", "ladder_mode"), ("composition", "composition"),
                        ("ladder_scope", "ladder_scope"), ("budget_scope", "budget_scope")):
        text = disclosed.get(key)
        if isinstance(text, str) and target not in values:
            values[target] = text
            if target == "ladder_mode":
                read.append(f"Ladder ({text})")
    if "ladder_step" in values and "ladder_mode" not in values:
        values["ladder_mode"] = "fixed"
