"""Finding a Java runtime that Spark supports.

``python -m sparkgate.service.spark.java`` runs the check on its own (the
Makefile does before starting the gateway).

Spark's launcher (``bin/spark-class``) runs ``$JAVA_HOME/bin/java`` when
``JAVA_HOME`` is set and ``java`` from ``PATH`` otherwise, and fails late with
an obscure JVM error when that Java is too old or too new. Checking first lets
the gateway fail at start-up with a message that says how to fix it.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from sparkgate.api.errors import JavaNotFoundError

__all__ = [
    "SUPPORTED_JAVA_MAJORS",
    "JavaInstall",
    "find_java",
    "parse_java_major",
    "spark_home",
]

_log = logging.getLogger(__name__)


def spark_home() -> Path:
    """The Spark distribution inside the pyspark package (``bin/``, ``jars/``): what
    ``SPARK_HOME`` must be for Spark's own scripts."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


#: Java feature releases Spark 4.3 is built and tested against.
SUPPORTED_JAVA_MAJORS: tuple[int, ...] = (17, 21)

_VERSION_TIMEOUT_S = 30.0
_QUOTED_VERSION = re.compile(r'version\s+"([^"]+)"')
_PROPERTY_VERSION = re.compile(r"^\s*java\.version\s*=\s*(\S+)\s*$", re.MULTILINE)
_PROPERTY_HOME = re.compile(r"^\s*java\.home\s*=\s*(.+?)\s*$", re.MULTILINE)

_INSTALL_HINT = (
    "Spark 4.3 needs Java 17 or 21. Install one, for example:\n"
    "  Debian/Ubuntu: sudo apt install openjdk-17-jre-headless\n"
    "  macOS:         brew install openjdk@17\n"
    "  SDKMAN:        sdk install java 17.0.x-tem  (pick a current 17.0.x from 'sdk list java')\n"
    "then set JAVA_HOME to its installation directory (the one containing bin/java)."
)


@dataclass(frozen=True)
class JavaInstall:
    """A Java runtime that passed the version check."""

    path: Path
    """The ``java`` executable that was run."""
    version: str
    """The version string as Java printed it, e.g. ``17.0.15``."""
    major: int
    """The feature release, e.g. ``17``."""
    home: Path
    """The runtime's ``java.home``; what ``JAVA_HOME`` must be for Spark to use it."""


@dataclass(frozen=True)
class _Probe:
    source: str
    path: Path
    install: JavaInstall | None
    problem: str | None


def parse_java_major(version: str) -> int | None:
    """The feature release in a Java version string, or ``None`` if unparsable.

    Before Java 9 the scheme was ``1.<major>.0_<update>``; since then it is
    ``<major>[.<minor>.<patch>][-<pre>]``.
    """
    legacy = re.match(r"^1\.(\d+)", version)
    if legacy is not None:
        return int(legacy.group(1))
    modern = re.match(r"^(\d+)", version)
    return int(modern.group(1)) if modern is not None else None


def _candidates() -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    java_home = os.environ.get("JAVA_HOME", "").strip()
    if java_home:
        found.append((f"JAVA_HOME={java_home}", Path(java_home) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path is not None and all(Path(on_path) != p for _, p in found):
        found.append(("java on PATH", Path(on_path)))
    return found


def _probe(source: str, path: Path) -> _Probe:
    if not path.is_file():
        return _Probe(source, path, None, f"{path} does not exist")
    try:
        # -XshowSettings:properties adds java.home, which is the only reliable way
        # to learn the home of a java reached through symlinks or macOS's stub.
        done = subprocess.run(
            [str(path), "-XshowSettings:properties", "-version"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _Probe(source, path, None, f"running {path} -version failed: {exc}")
    # Java prints its version to stderr; some wrappers print to stdout.
    output = done.stderr + "\n" + done.stdout
    match = _QUOTED_VERSION.search(output) or _PROPERTY_VERSION.search(output)
    if match is None:
        first = output.strip().splitlines()[:1]
        shown = first[0][:120] if first else "(no output)"
        status = f" (exit status {done.returncode})" if done.returncode else ""
        return _Probe(source, path, None, f"{path} printed no Java version{status}: {shown}")
    version = match.group(1)
    major = parse_java_major(version)
    if major is None:
        return _Probe(source, path, None, f"{path} reports an unparsable version {version!r}")
    home_match = _PROPERTY_HOME.search(output)
    home = Path(home_match.group(1)) if home_match else path.resolve().parent.parent
    install = JavaInstall(path=path, version=version, major=major, home=home)
    if major not in SUPPORTED_JAVA_MAJORS:
        return _Probe(source, path, install, f"{path} is Java {version} (major {major})")
    return _Probe(source, path, install, None)


def find_java() -> JavaInstall:
    """The first supported Java from ``JAVA_HOME``, then ``PATH``.

    Raises:
        JavaNotFoundError: neither yields Java 17 or 21; the message lists what
            was found and how to install a supported Java.
    """
    problems: list[str] = []
    for source, path in _candidates():
        probe = _probe(source, path)
        if probe.install is not None and probe.problem is None:
            if problems:
                # Spark's launcher would prefer the rejected JAVA_HOME; the caller
                # must point JAVA_HOME here (see engine), so say so in the log.
                _log.warning("Ignoring unusable Java (%s); using %s", "; ".join(problems), path)
            _log.debug("Using Java %s at %s (%s)", probe.install.version, path, source)
            return probe.install
        problems.append(f"{source}: {probe.problem}")
    if not problems:
        problems.append("JAVA_HOME is not set and there is no 'java' on PATH")
    raise JavaNotFoundError(
        "No usable Java found.\n" + "\n".join(f"  - {p}" for p in problems) + "\n" + _INSTALL_HINT
    )


def _main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        java = find_java()
    except JavaNotFoundError as exc:
        _log.error("%s", exc)
        return 1
    _log.info("Java %s at %s (home %s)", java.version, java.path, java.home)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
