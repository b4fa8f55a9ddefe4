"""The layer rules of DESIGN.md, checked by import-linter (contracts in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__: list[str] = []

_REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    # The console script sits next to the interpreter of the venv running the tests.
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.is_file(), f"import-linter is not installed next to {sys.executable}"
    done = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=_REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
