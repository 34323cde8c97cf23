"""The shape of the code holds: layers only point down (import-linter's contracts in .importlinter,
TYPE_CHECKING and function-level imports included), and no module uses another's underscore
members."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("server", "protocol")

#: namedtuple's own API (its names start with `_` so as not to clash with fields).
NAMEDTUPLE_API = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})


def test_the_import_contracts_are_kept():
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint), "--no-cache", "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Contracts: 3 kept, 0 broken." in done.stdout


def private_uses(path: Path, source: str) -> list[str]:
    """`x._name` where `_name` is not defined in this module (x not self or cls), and
    `from m import _name`: the uses of another module's underscore members."""
    tree = ast.parse(source)
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            own.add(node.attr)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr not in own and node.attr not in NAMEDTUPLE_API:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.ImportFrom):
            found += [f"{path.relative_to(ROOT)}:{node.lineno} import {a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_uses_another_modules_underscore_members():
    found = [use for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py")) for use in private_uses(path, path.read_text())]
    assert found == []


def test_the_check_sees_a_private_use():
    source = "import m\nfrom m import _hidden\n\nclass A:\n    def f(self, other):\n        self._mine = 1\n        return other._mine, other._theirs, m._x, self._y\n"
    assert sorted(private_uses(ROOT / "x.py", source)) == ["x.py:2 import _hidden", "x.py:7 ._theirs", "x.py:7 ._x"]
