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
    # Among them: REST and HiveServer2 are independent, the SQL client imports no endpoint.
    kept = [line for line in done.stdout.splitlines() if line.endswith(" KEPT")]
    assert any(line.startswith("endpoints are independent:") for line in kept), done.stdout
    assert any(line.startswith("the SQL client never imports an endpoint") for line in kept)


def test_endpoints_and_the_service_double_load_without_spark() -> None:
    """The protocol tests' whole stack (both endpoints, the GatewayService double)
    imports neither pyspark nor py4j: the unit tier needs no JVM and no Spark install."""
    code = (
        "import sys; import tests.doubles, sparkgate.endpoints.rest.server, "
        "sparkgate.endpoints.hiveserver2.endpoint, sparkgate.client.rest; "
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')); "
        "assert not loaded, loaded"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=_REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
