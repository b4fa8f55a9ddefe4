"""Java detection against fake ``java`` executables (shell scripts)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from sparkgate.api.errors import JavaNotFoundError
from sparkgate.service.spark.java import find_java, parse_java_major

__all__: list[str] = []


def _fake_java(root: Path, stderr_text: str, *, exit_status: int = 0) -> Path:
    """A ``<root>/bin/java`` that prints ``stderr_text`` to stderr, like ``java -version``."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    java = bin_dir / "java"
    # Shell builtins only: the tests run with a PATH that holds no other tools.
    java.write_text(
        "#!/bin/sh\n"
        "while IFS= read -r line; do printf '%s\\n' \"$line\" >&2; done <<'EOF'\n"
        f"{stderr_text}\nEOF\nexit {exit_status}\n"
    )
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return java


def _openjdk(version: str, home: Path | None = None) -> str:
    props = f"Property settings:\n    java.home = {home}\n\n" if home else ""
    return (
        f'{props}openjdk version "{version}" 2025-04-15\n'
        "OpenJDK Runtime Environment (build x)\n"
        "OpenJDK 64-Bit Server VM (build x, mixed mode, sharing)"
    )


@pytest.fixture
def no_java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An environment with no JAVA_HOME and a PATH holding only an empty dir."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(empty))
    return empty


@pytest.mark.parametrize(
    ("version", "major"),
    [
        ("1.8.0_392", 8),
        ("17.0.15", 17),
        ("21", 21),
        ("21.0.2", 21),
        ("25-ea", 25),
        ("11.0.22+7", 11),
        ("garbage", None),
        ("", None),
    ],
)
def test_parse_java_major(version: str, major: int | None) -> None:
    assert parse_java_major(version) == major


def test_missing_java_names_both_places_and_install_hint(no_java: Path) -> None:
    with pytest.raises(JavaNotFoundError) as info:
        find_java()
    message = str(info.value)
    assert "JAVA_HOME is not set" in message
    assert "apt install openjdk-17-jre-headless" in message
    assert "brew install openjdk@17" in message
    assert "sdk install java 17" in message


@pytest.mark.parametrize("version", ["17.0.15", "21"])
def test_supported_java_from_java_home(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    home = tmp_path / "jdk"
    java = _fake_java(home, _openjdk(version))
    monkeypatch.setenv("JAVA_HOME", str(home))
    found = find_java()
    assert found.path == java
    assert found.version == version
    assert found.major == parse_java_major(version)
    assert found.home == home.resolve()


def test_java_home_reported_by_java_wins_over_path_guess(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_home = tmp_path / "real-jdk-home"
    _fake_java(tmp_path / "stub", _openjdk("17.0.1", home=real_home))
    monkeypatch.setenv("PATH", str(tmp_path / "stub" / "bin"))
    found = find_java()
    assert found.home == real_home
    assert found.major == 17


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_openjdk("11.0.22"), "Java 11.0.22 (major 11)"),
        ('java version "1.8.0_392"\nJava(TM) SE Runtime Environment', "Java 1.8.0_392 (major 8)"),
        (_openjdk("25-ea"), "Java 25-ea (major 25)"),
        ("Segmentation fault", "printed no Java version"),
    ],
)
def test_unsupported_or_garbage_java_is_rejected(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    _fake_java(tmp_path / "jdk", text)
    monkeypatch.setenv("PATH", str(tmp_path / "jdk" / "bin"))
    with pytest.raises(JavaNotFoundError) as info:
        find_java()
    message = str(info.value)
    assert "java on PATH" in message
    assert expected in message
    assert "Java 17 or 21" in message


def test_failing_java_reports_exit_status(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_java(tmp_path / "jdk", "Error: could not find libjava.so", exit_status=1)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    with pytest.raises(JavaNotFoundError, match=r"exit status 1.*libjava"):
        find_java()


def test_java_home_without_java_is_reported(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(JavaNotFoundError, match=r"JAVA_HOME=.*nowhere.*does not exist"):
        find_java()


def test_bad_java_home_falls_back_to_path_with_warning(
    no_java: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _fake_java(tmp_path / "old", _openjdk("11.0.2"))
    good = _fake_java(tmp_path / "good", _openjdk("21.0.3"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "old"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'good' / 'bin'}{os.pathsep}{no_java}")
    with caplog.at_level(logging.WARNING, logger="sparkgate.service.spark.java"):
        found = find_java()
    assert found.path == good
    assert found.major == 21
    assert "Java 11.0.2" in caplog.text


def test_java_home_is_preferred_over_path(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preferred = _fake_java(tmp_path / "home", _openjdk("17.0.9"))
    _fake_java(tmp_path / "other", _openjdk("21.0.3"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "other" / "bin"))
    assert find_java().path == preferred


def test_command_line_check_exit_status(
    no_java: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkgate.service.spark.java import _main

    assert _main() == 1
    _fake_java(tmp_path / "jdk", _openjdk("21.0.3"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert _main() == 0
