"""No import circles between the project's modules, including the ones an import inside a function hides.

``lint-imports`` checks the layer rule between packages; this test checks the finer rule inside them: no module
imports another that imports it back, directly or through others. Every ``.py`` file of the project's packages
is parsed with :mod:`ast` (nothing is imported, so a circle that only bites on some code path is found too) and
every import statement counts, wherever it stands:

* at module level, inside functions and methods, under ``if TYPE_CHECKING:`` and in ``try``/``except`` — a
  deferred or type-only import still makes the two modules depend on each other, which is the knot this test
  exists to keep out (an import moved into a function is the usual way a circle gets hidden);
* ``import a.b.c`` is an edge to ``a.b.c``; ``from a.b import c`` is an edge to the submodule ``a.b.c`` when
  there is one, else to ``a.b``; relative imports are resolved against the importing file's package;
* ``importlib.import_module("a.b")`` with a literal string (or an f-string whose fixed prefix names a package,
  as in a lazy ``__getattr__``) is an edge too, to the named module or to every module under that prefix;
* imports of anything outside the project (the standard library, third-party packages) are not edges.

What is *not* counted as a circle, and why:

* The implicit import of parent packages. ``import a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, but
  counting that would put every module of a package whose ``__init__`` re-exports its submodules in one circle
  with all the others; the edge that states the dependency is the one to ``a.b.c``.
* A package's ``__init__`` importing its own submodules (``pkg`` → ``pkg.sub``, at any depth) is how a package
  shows its public names, and stays an edge. A name taken from a package's ``__init__`` (``from attacks import
  LocalOracle``) is followed to the module the ``__init__`` re-exports it from (``attacks.oracle``), so the edge
  points at the module that defines it and a circle through a re-export is still found, between the modules
  that make it. What is left out is a module's edge to *its own* enclosing package (``pkg.sub`` → ``pkg``: a
  plain ``import pkg``, or a name the ``__init__`` defines itself): with the ``__init__`` importing its
  submodules that would be a circle every time, and it is one only through the package's own face. An import
  of ``pkg`` from outside the package is an ordinary edge, so a circle that leaves the package and comes back
  through its ``__init__`` still counts.

Nor do these: doctest lines (``>>> import ...``, strings); a lookup by name that is no import (a Celery task
published through the app's registry by its registered name, as the site's services do, so that only the task
module imports the services); Django migrations (generated, they import only Django); ``tests/`` and
``benchmarks/``, which are not packages of the product.

A circle found on main that belongs to another piece of work in progress can be listed in :data:`KNOWN` as the
one import to leave out, with the reason; the entry must keep closing a circle or the test asks for its removal.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("attacks", "bot", "defenses", "games", "launcher", "leaderboard", "sandbox", "scoring", "stack")
SKIP_DIRS = {"migrations", "__pycache__"}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool  # an ``__init__.py``

    @property
    def package(self) -> str:
        """The package relative imports in this file resolve against."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if SKIP_DIRS.intersection(relative.parts):
                continue
            parts = list(relative.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


MODULES = _modules()
TREES = {name: ast.parse(module.path.read_text(), filename=str(module.path)) for name, module in MODULES.items()}


def _owner(name: str) -> str | None:
    """The project module ``name`` lives in (the longest prefix that is a module), or None when it is not ours."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _absolute(module: Module, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _reexports(package: str) -> dict[str, str]:
    """What a package's ``__init__`` binds by importing it (name → the module it comes from), at module level."""
    module = MODULES[package]
    names: dict[str, str] = {}
    for node in _top_level(TREES[package].body):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, node.level, node.module)
            for alias in node.names:
                bound = alias.asname or alias.name
                if f"{source}.{alias.name}" in MODULES:
                    names[bound] = f"{source}.{alias.name}"
                elif _owner(source) is not None:
                    names[bound] = f"{source}:{alias.name}"  # followed further by _definer
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and _owner(alias.name) is not None:
                    names[alias.asname] = alias.name
    return names


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, looking into ``if``/``try`` blocks (not into functions or classes)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level(block)


def _definer(source: str, name: str, seen: frozenset[str] = frozenset()) -> str | None:
    """The project module that defines ``name`` when it is taken ``from source import name``, following a package
    ``__init__``'s re-exports; None when ``source`` is not ours."""
    if f"{source}.{name}" in MODULES:
        return f"{source}.{name}"
    owner = _owner(source)
    if owner is None:
        return None
    if owner != source or not MODULES[owner].is_package or owner in seen:
        return owner
    target = _reexports(owner).get(name)
    if target is None:
        return owner  # defined by the __init__ itself (or not found: the edge stays on the package)
    if ":" in target:
        inner, _, inner_name = target.partition(":")
        return _definer(inner, inner_name, seen | {owner}) or owner
    return _owner(target) or owner


def _literal_prefix(node: ast.expr) -> tuple[str, bool] | None:
    """The module name an ``import_module`` argument gives: (name, exact) for a literal, (prefix, False) for an
    f-string starting with a fixed part."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value, False
    return None


def _targets(module: Module) -> Iterator[tuple[str, int]]:
    """(imported project module, line) for every import in ``module``'s file."""
    for node in ast.walk(TREES[module.name]):
        if isinstance(node, ast.Import):
            for alias in node.names:
                owner = _owner(alias.name)
                if owner is not None:
                    yield owner, node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node.level, node.module)
            for alias in node.names:
                target = _definer(source, alias.name) if alias.name != "*" else _owner(source)
                if target is not None:
                    yield target, node.lineno
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called != "import_module":
                continue
            given = _literal_prefix(node.args[0])
            if given is None:
                continue
            name, exact = given
            if exact:
                owner = _owner(name)
                if owner is not None:
                    yield owner, node.lineno
            else:
                prefix = name if name.endswith(".") else name.rpartition(".")[0] + "."
                for other in MODULES:
                    if other.startswith(prefix):
                        yield other, node.lineno


def _is_own_package(importer: str, imported: str) -> bool:
    return MODULES[imported].is_package and importer.startswith(imported + ".")


def _graph() -> dict[str, dict[str, int]]:
    """importer → {imported: first line}, without self-edges and without ``pkg.sub`` → ``pkg`` edges."""
    graph: dict[str, dict[str, int]] = {name: {} for name in MODULES}
    for name, module in MODULES.items():
        for target, line in _targets(module):
            if target == name or _is_own_package(name, target):
                continue
            graph[name].setdefault(target, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[tuple[list[str], list[str]]]:
    """Each strongly connected component with more than one module, with one shortest circle through it (Tarjan,
    then a breadth-first search back to the component's first module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    circles = []
    for component in components:
        members = set(component)
        start = component[0]
        previous: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and found is None:
            following = []
            for node in frontier:
                for child in sorted(graph[node]):
                    if child not in members:
                        continue
                    if child == start:
                        found = node
                        break
                    if child not in previous:
                        previous[child] = node
                        following.append(child)
                if found is not None:
                    break
            frontier = following
        assert found is not None
        path = [found]
        while path[-1] != start:
            path.append(previous[path[-1]])
        circles.append((component, [*reversed(path), start]))
    return circles


def _describe(component: list[str], circle: list[str], graph: dict[str, dict[str, int]]) -> str:
    """The circle, then every import between the modules of its component (all of them must go for it to open)."""
    members = set(component)
    hops = [
        f"    {MODULES[a].path.relative_to(ROOT)}:{graph[a][b]} imports {b}"
        for a in component
        for b in sorted(graph[a])
        if b in members
    ]
    return "  " + " -> ".join(circle) + "\n" + "\n".join(hops)


def test_the_scan_sees_the_project() -> None:
    assert {"attacks", "attacks.oracle", "games.report", "leaderboard.submissions.tasks"} <= set(MODULES)
    graph = _graph()
    assert "attacks.registry" in graph["attacks.auto"]  # a module-level import
    assert "attacks.registry" in graph["games.gamefile"]  # one inside a method (GameSpec's attack check)
    assert "defenses.chain" in graph["games.runner"]  # ``from defenses import DefenseChain``: its defining module
    assert "attacks.mutnet.head" in graph["attacks.mutnet"]  # a lazy ``import_module(f"attacks.mutnet.{...}")``


#: Circles known on main that belong to work in progress elsewhere, each as the one import left out of the graph
#: (importer, imported) and why. A ratchet, not a pass: an entry that no longer closes a circle fails
#: :func:`test_the_known_circles_are_still_there` until it is deleted, and nothing else may join it.
KNOWN: dict[tuple[str, str], str] = {}


def _reaches(graph: dict[str, dict[str, int]], start: str, goal: str) -> bool:
    seen, stack = {start}, [start]
    while stack:
        for child in graph[stack.pop()]:
            if child == goal:
                return True
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return False


def test_the_known_circles_are_still_there() -> None:
    graph = _graph()
    stale = [
        f"{importer} -> {imported}" for importer, imported in KNOWN
        if imported not in graph.get(importer, {}) or not _reaches(graph, imported, importer)
    ]
    assert not stale, f"these known circles are gone: delete them from KNOWN in {Path(__file__).name}: {stale}"


def test_no_import_cycles() -> None:
    graph = _graph()
    for importer, imported in KNOWN:
        graph.get(importer, {}).pop(imported, None)
    circles = _cycles(graph)
    assert not circles, f"{len(circles)} import circle(s) between modules:\n" + "\n".join(
        _describe(component, circle, graph) for component, circle in circles
    )
