"""Top-level outline of a source file for list_code_definition_names.

Python is read with `ast` (exact ranges). Other languages use one line-anchored pattern per
kind of definition: good enough to orient the model, and honest about being a heuristic.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePath

_PATTERNS: dict[str, re.Pattern[str]] = {
    "js": re.compile(
        r"^\s*(?:export\s+(?:default\s+)?)?(?:async\s+)?(?:function\*?\s+\w+|class\s+\w+|"
        r"(?:const|let|var)\s+\w+\s*=\s*(?:async\s+)?(?:function|\([^)]*\)\s*=>|\w+\s*=>)|"
        r"interface\s+\w+|type\s+\w+\s*=|enum\s+\w+)"
    ),
    "go": re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?\w+|type\s+\w+\s+(?:struct|interface))"),
    "rs": re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:fn|struct|enum|trait|impl|mod|type)\b"),
    "java": re.compile(
        r"^\s*(?:(?:public|protected|private|static|final|abstract|sealed|override|internal|open|data)\s+)*"
        r"(?:class|interface|enum|record|object|fun)\s+\w+"
    ),
    "c": re.compile(r"^(?!\s)(?:[\w:*&<>,\s]+?)\b\w+\s*\([^;]*\)\s*(?:const\s*)?\{?\s*$|^(?:struct|class|enum|union|namespace)\s+\w+"),
    "rb": re.compile(r"^\s*(?:def|class|module)\s+[\w.:]+"),
    "php": re.compile(r"^\s*(?:(?:abstract|final|public|protected|private|static)\s+)*(?:function|class|interface|trait)\s+\w+"),
}
_EXTENSIONS = {
    ".js": "js", ".jsx": "js", ".mjs": "js", ".cjs": "js", ".ts": "js", ".tsx": "js",
    ".go": "go", ".rs": "rs",
    ".java": "java", ".kt": "java", ".kts": "java", ".cs": "java", ".scala": "java", ".swift": "java",
    ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".hpp": "c", ".cxx": "c",
    ".rb": "rb", ".php": "php",
}


def outline(filename: str, text: str) -> list[str]:
    """`start--end | signature` lines (Python) or `line | signature` lines (others)."""
    suffix = PurePath(filename).suffix.lower()
    if suffix in (".py", ".pyi"):
        return _python(text)
    kind = _EXTENSIONS.get(suffix)
    if kind is None:
        return []
    pattern = _PATTERNS[kind]
    return [f"{n} | {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if pattern.match(line)]


def _python(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    lines = text.splitlines()
    found: list[str] = []

    def visit(nodes, depth: int) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                signature = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else node.name
                found.append(f"{start}--{node.end_lineno} | {'    ' * depth}{signature}")
                if isinstance(node, ast.ClassDef):
                    visit(node.body, depth + 1)

    visit(tree.body, 0)
    return found
