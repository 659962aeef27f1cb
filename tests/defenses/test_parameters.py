"""Every defense's listed parameters (``Defense.parameters``, what the host's chain builder shows) agree with what
its ``__init__`` accepts and refuses: the names, the defaults, the ranges at and beyond their bounds, the
types and the choices. A parameter added to a defense without a listing (or a range changed on one side only)
fails here."""

from __future__ import annotations

import re
from typing import Any

import pytest

from defenses import REGISTRY, DefenseConfigError, Param, catalogue

# A valid chain object per defense (without "name"); each parameter is tried on top of it.
BASE: dict[str, dict[str, Any]] = {
    "accept_reject": {},
    "ladder": {"mode": "fixed"},
    "noise": {"kind": "laplace", "scale": 1e-3},
    "privacy_budget": {"epsilon": 1.0},
    "probe_detector": {},
    "randomized_response": {},
    "rank": {},
    "rounding": {},
    "subsetting": {},
    "threshold": {"t": 0.5},
    "thresholdout": {},
}


def _cases() -> list[tuple[str, Param]]:
    return [(name, param) for name, cls in sorted(REGISTRY.items()) for param in cls.parameters]


def _context(name: str, param: Param) -> dict[str, Any]:
    """The base object with ``param``'s conditions met and its alternatives removed."""
    params = {k: v for k, v in BASE[name].items() if k not in param.excludes and k != param.name}
    for key, values in param.when:
        params[key] = values[0]
    if name == "noise" and params.get("kind") == "multiplicative":
        params.pop("scale", None)
        params.setdefault("alpha", 0.1)
    if name == "noise" and params.get("kind") in ("laplace", "gaussian") and param.name not in ("scale", "epsilon"):
        params.setdefault("scale", 1e-3)
    return params


def _build(name: str, params: dict[str, Any]) -> None:
    REGISTRY[name](**params)


def test_every_registered_defense_has_a_base_case() -> None:
    assert set(BASE) == set(REGISTRY)


@pytest.mark.parametrize("name", sorted(BASE))
def test_the_listed_names_are_exactly_the_accepted_ones(name: str) -> None:
    cls = REGISTRY[name]
    # One case per value of a parameter others depend on (the noise's kind, the Ladder's mode), else one case.
    cases = [{key: value} for key, value in sorted({(k, v) for p in cls.parameters for k, vs in p.when for v in vs})]
    for case in cases or [{}]:
        params = {**BASE[name], **case}
        if case.get("kind") == "multiplicative":
            params.pop("scale")
        with pytest.raises(DefenseConfigError, match="unknown parameter") as refused:
            _build(name, {**params, "zz_not_a_parameter": 1})
        allowed = re.search(r"allowed: (.*)$", str(refused.value))
        assert allowed is not None
        accepted = {n for n in allowed.group(1).split(", ") if n != "(none)"}
        listed = {
            p.name for p in cls.parameters
            if p.name != "scope" and all(case.get(key) in values for key, values in p.when)
        }
        assert listed == accepted, (name, case)


@pytest.mark.parametrize("name", sorted(BASE))
def test_scope_is_listed_exactly_where_it_is_accepted(name: str) -> None:
    listed = any(param.name == "scope" for param in REGISTRY[name].parameters)
    if listed:
        _build(name, {**BASE[name], "scope": "competition"})
    else:
        with pytest.raises(DefenseConfigError):
            _build(name, {**BASE[name], "scope": "competition"})


@pytest.mark.parametrize(("name", "param"), _cases(), ids=lambda v: getattr(v, "name", v))
def test_a_listed_default_is_what_the_defense_reports(name: str, param: Param) -> None:
    if param.default is None:
        return
    defense = REGISTRY[name](**_context(name, param))
    reported = {**defense.params(), "scope": defense.scope}
    if param.name in reported:
        assert reported[param.name] == param.default


def _outside(bound: float, below: bool, integer: bool) -> float:
    if integer:
        return bound - 1 if below else bound + 1
    if below:
        return bound / 10 if bound > 0 else bound - 1
    return bound * 2 if bound > 0 else bound + 1


@pytest.mark.parametrize(("name", "param"), _cases(), ids=lambda v: getattr(v, "name", v))
def test_the_listed_range_is_the_accepted_one(name: str, param: Param) -> None:
    integer = param.type == "integer"
    for bound, exclusive, below in (
        (param.minimum, param.exclusive_minimum, True), (param.maximum, param.exclusive_maximum, False)
    ):
        if bound is None:
            continue
        at = int(bound) if integer else bound
        if exclusive:
            with pytest.raises(DefenseConfigError, match=param.name):
                _build(name, {**_context(name, param), param.name: at})
        else:
            _build(name, {**_context(name, param), param.name: at})
        with pytest.raises(DefenseConfigError, match=param.name):
            _build(name, {**_context(name, param), param.name: _outside(at, below, integer)})


@pytest.mark.parametrize(("name", "param"), _cases(), ids=lambda v: getattr(v, "name", v))
def test_a_value_of_the_wrong_type_or_choice_is_refused(name: str, param: Param) -> None:
    wrong: Any = {"number": "big", "numbers": "big", "integer": 1.5, "boolean": "yes", "choice": "zz_no_such"}
    with pytest.raises(DefenseConfigError):
        _build(name, {**_context(name, param), param.name: wrong[param.type]})
    for choice in param.choices:
        params = {**_context(name, param), param.name: choice}
        if choice == "multiplicative":
            params = {"kind": choice, "alpha": 0.1}
        _build(name, params)


def test_a_required_parameter_left_out_is_refused_with_its_name() -> None:
    for name, param in _cases():
        if param.required:
            params = {k: v for k, v in _context(name, param).items() if k != param.name}
            with pytest.raises(DefenseConfigError, match=f"'{param.name}'"):
                _build(name, params)


def test_the_catalogue_lists_every_defense_with_plain_json_parameters() -> None:
    listed = catalogue()
    assert [entry["name"] for entry in listed] == sorted(REGISTRY)
    noise = next(entry for entry in listed if entry["name"] == "noise")
    scale = next(p for p in noise["parameters"] if p["name"] == "scale")  # type: ignore[attr-defined]
    assert scale["range"] == "(0, 1e+09]" and scale["when"] == {"kind": ["laplace", "gaussian"]}
    assert scale["excludes"] == ["epsilon"] and noise["stage"] == "score"
