"""The layer rule of DESIGN.md: the pure packages never import Django, DRF or Celery, and only one module
imports gmpy2. (import-linter checks the same contracts, with indirect imports, in the test command.)"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE = [ROOT / "scoring", ROOT / "defenses", ROOT / "attacks"]
FORBIDDEN = ("django", "rest_framework", "celery", "kombu")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _python_files(*roots: Path) -> list[Path]:
    return [p for root in roots for p in sorted(root.rglob("*.py"))]


@pytest.mark.parametrize("path", _python_files(*PURE), ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_module_imports_no_framework(path: Path) -> None:
    bad = [name for name in _imports(path) if name.split(".")[0] in FORBIDDEN]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_only_the_bignum_module_imports_gmpy2() -> None:
    packages = ("scoring", "defenses", "attacks", "bot", "games", "stack", "sandbox", "launcher", "leaderboard")
    roots = [ROOT / d for d in (*packages, "benchmarks", "tests")]
    importers = {
        str(p.relative_to(ROOT)) for p in _python_files(*roots) if any(n.split(".")[0] == "gmpy2" for n in _imports(p))
    }
    assert importers == {"scoring/bignum.py"}


def test_importing_the_pure_packages_loads_no_framework() -> None:
    code = (
        "import sys, scoring, defenses, attacks, bot, games, stack, sandbox;"
        f"bad=[m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}];"
        "print(','.join(sorted(bad)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == ""


def test_the_sandboxed_model_child_imports_nothing_of_ours() -> None:
    """The child that runs a participant's model must load no settings, secrets or site code: only the standard
    library, numpy and onnxruntime."""
    ours = ("scoring", "defenses", "attacks", "bot", "games", "stack", "sandbox", "launcher", "leaderboard")
    names = {name.split(".")[0] for name in _imports(ROOT / "sandbox" / "child.py")}
    assert not names & set(ours)
    assert names <= {"__future__", "ctypes", "io", "json", "os", "resource", "sys", "typing", "numpy", "onnxruntime"}
