"""The statement handlers use the streaming strategy, never the other way round,
and no per-session state lives in module globals of the pipeline."""

from __future__ import annotations

import ast
from pathlib import Path

import sparkgate.service.statements as statements_pkg
import sparkgate.service.streaming as streaming_pkg

__all__: list[str] = []


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_streaming_never_imports_the_statement_handlers() -> None:
    root = Path(streaming_pkg.__file__).parent
    offenders = {
        path.name: sorted(n for n in _imports(path) if n.startswith("sparkgate.service.statements"))
        for path in root.glob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_weak_key_dictionaries_of_sessions_in_the_pipeline() -> None:
    roots = [Path(statements_pkg.__file__).parent, Path(streaming_pkg.__file__).parent]
    for root in roots:
        for path in root.rglob("*.py"):
            assert "WeakKeyDictionary" not in path.read_text(encoding="utf-8"), path
