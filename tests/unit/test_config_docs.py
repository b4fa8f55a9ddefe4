"""The committed configuration docs must match the option declarations."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from sparkgate.api.config import duration_option, path_option, string_option
from sparkgate.server import docs
from sparkgate.server.docs import (
    DOC_SECTIONS,
    generated_docs,
    render_configuration_docs,
)
from sparkgate.service.options import SERVICE_OPTIONS

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_committed_docs_match_declarations() -> None:
    committed = (REPO_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == generated_docs(), (
        "docs/configuration.md is stale; regenerate with: python -m sparkgate.server.docs"
    )


def test_every_service_option_is_documented() -> None:
    assert DOC_SECTIONS["Service"] == SERVICE_OPTIONS
    page = generated_docs()
    for option in SERVICE_OPTIONS:
        assert f"| `{option.key}` | `{option.default_display}` | {option.type_name} |" in page


def test_render_sections_tables_and_escaping(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    page = render_configuration_docs(
        {
            "First": [duration_option("a.timeout", timedelta(seconds=30), "Waits.\nThen stops.")],
            "Second": [
                string_option("b.mode", "x|y", "One of x | y."),
                path_option("b.dir", "~/d", "A dir."),
            ],
        }
    )
    assert page.startswith("# Configuration\n")
    assert "conf/config.yaml" in page and "-Dkey=value" in page and "spark." in page
    assert page.index("## First") < page.index("## Second")
    assert page.count("| Key | Default | Type | Description |") == 2
    assert "| `a.timeout` | `30 s` | Duration | Waits. Then stops. |" in page
    assert "| `b.mode` | `x\\|y` | String | One of x \\| y. |" in page
    assert "| `b.dir` | `~/d` | Path | A dir. |" in page
    assert str(tmp_path) not in page  # machine-independent defaults
    assert page.endswith("|\n")


def test_main_writes_then_check_passes_and_detects_drift(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "docs" / "configuration.md"

    assert docs.main(["--check"]) == 1  # missing file
    assert not target.exists()

    assert docs.main([]) == 0
    assert target.read_text(encoding="utf-8") == generated_docs()
    assert docs.main(["--check"]) == 0

    target.write_text(generated_docs() + "edited\n", encoding="utf-8")
    assert docs.main(["--check"]) == 1
    assert target.read_text(encoding="utf-8").endswith("edited\n")  # --check never writes
