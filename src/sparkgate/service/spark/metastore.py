"""A Hive metastore in a database of the user's: its tables made before Spark starts.

Spark's built-in Hive client (2.3) keeps the metastore in any database
DataNucleus speaks to, given by ``spark.hadoop.javax.jdo.option.*``. Left to
itself it either refuses an empty database ("Required table missing") or, with
``datanucleus.schema.autoCreateAll``, creates each table the first time it is
needed, inside the transaction that needs it: on PostgreSQL that schema change
waits for a lock its own transaction holds, and the first ``CREATE TABLE``
hangs for good.

So before the engine starts, :func:`prepare_metastore` runs DataNucleus's own
``SchemaTool`` (from the jars pyspark ships) once, in a JVM of its own and one
connection, over the mapping Hive's metastore jar carries (``package.jdo``). It
creates what is missing and leaves what exists, so it is cheap on a database
that is ready, and it makes exactly the tables the Hive client maps. A
database whose schema is managed with Hive's ``schematool`` instead opts out
with ``spark.hadoop.datanucleus.schema.autoCreateAll=false``.

Nothing is done for the embedded Derby database (which creates itself) or a
metastore service (``hive.metastore.uris``): that service owns its database.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse

from sparkgate.api.errors import ConfigurationError

__all__ = [
    "METASTORE_URL_KEY",
    "metastore_database",
    "metastore_defaults",
    "prepare_metastore",
]

_log = logging.getLogger(__name__)

#: The Spark key naming the metastore database (``javax.jdo.option.ConnectionURL``).
METASTORE_URL_KEY = "spark.hadoop.javax.jdo.option.ConnectionURL"
_HIVE_PREFIXES = ("spark.hadoop.", "spark.hive.")
_SCHEMA_TOOL = "org.datanucleus.store.schema.SchemaTool"
# Hive's defaults for the mapping (HiveConf): the names of tables and columns follow them.
_MAPPING_DEFAULTS = {
    "datanucleus.identifierFactory": "datanucleus1",
    "datanucleus.rdbms.useLegacyNativeValueStrategy": "true",
    "datanucleus.storeManagerType": "rdbms",
}
_TIMEOUT_S = 300.0
_ATTEMPTS = 2  # a second gateway creating the same tables at the same moment loses once


def _hive_setting(conf: Mapping[str, str], key: str) -> str | None:
    for prefix in _HIVE_PREFIXES:
        value = conf.get(prefix + key)
        if value is not None:
            return value.strip()
    return None


def metastore_database(conf: Mapping[str, str]) -> str | None:
    """The JDBC URL of a metastore database of the user's, or None.

    None for the embedded Derby database, an in-memory catalog, and a metastore
    service (``hive.metastore.uris``).
    """
    if conf.get("spark.sql.catalogImplementation", "hive").strip().lower() != "hive":
        return None
    if _hive_setting(conf, "hive.metastore.uris"):
        return None
    url = _hive_setting(conf, "javax.jdo.option.ConnectionURL") or ""
    if not url.startswith("jdbc:") or url.startswith("jdbc:derby:"):
        return None
    return url


def _creates_schema(conf: Mapping[str, str]) -> bool:
    return (_hive_setting(conf, "datanucleus.schema.autoCreateAll") or "true").lower() != "false"


def metastore_defaults(conf: Mapping[str, str]) -> dict[str, str]:
    """Settings to add to ``conf`` when the gateway makes the metastore's tables.

    Tables made by DataNucleus carry no Hive version record, which Hive's
    schema verification (on by default for a database of the user's) would
    refuse; a schema made by ``schematool`` keeps verification as set.
    """
    if metastore_database(conf) is None or not _creates_schema(conf):
        return {}
    if _hive_setting(conf, "hive.metastore.schema.verification") is not None:
        return {}
    return {"spark.hadoop.hive.metastore.schema.verification": "false"}


def _class_path(conf: Mapping[str, str], jars_dir: Path) -> str:
    """pyspark's jars, then the jars the driver is given (where the JDBC driver is)."""
    entries = [str(jars_dir / "*")]
    entries += [e for e in conf.get("spark.driver.extraClassPath", "").split(os.pathsep) if e]
    for jar in conf.get("spark.jars", "").split(","):
        jar = jar.strip()
        if jar.startswith("file:"):
            jar = urlparse(jar).path
        if jar and "://" not in jar:
            entries.append(jar)
    return os.pathsep.join(entries)


def _jdo_properties(conf: Mapping[str, str]) -> dict[str, str]:
    """DataNucleus's view of the Hive settings: Hive's mapping defaults, then the user's."""
    properties = dict(_MAPPING_DEFAULTS)
    for prefix in reversed(_HIVE_PREFIXES):  # spark.hadoop.* wins, as in Spark
        for key, value in conf.items():
            name = key[len(prefix) :]
            if key.startswith(prefix) and name.startswith(("javax.jdo.", "datanucleus.")):
                properties[name] = value
    properties["datanucleus.schema.autoCreateAll"] = "true"
    return properties


def _properties_text(properties: Mapping[str, str]) -> str:
    def escape(text: str) -> str:
        return (
            text.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=").replace(":", "\\:")
        )

    return "".join(f"{escape(k)}={escape(v)}\n" for k, v in sorted(properties.items()))


def _mapping(jars_dir: Path, work_dir: Path) -> Path:
    """Hive's ``package.jdo`` out of the metastore jar pyspark ships."""
    jars = sorted(jars_dir.glob("hive-metastore-*.jar"))
    if not jars:
        raise ConfigurationError(f"No hive-metastore jar in {jars_dir}: is pyspark complete?")
    with zipfile.ZipFile(jars[-1]) as archive:
        target = work_dir / "package.jdo"
        target.write_bytes(archive.read("package.jdo"))
    return target


def _root_cause(output: str) -> str:
    """The innermost cause a Java tool printed, else its last exception or lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    causes = [
        line.removeprefix("Caused by: ")
        for line in lines
        if line.startswith("Caused by: ") and "InvocationTargetException" not in line
    ]
    if causes:
        return causes[-1]
    thrown = [line for line in lines if "Exception" in line and not line.startswith("at ")]
    if thrown:
        return thrown[-1]
    return " | ".join(lines[-3:]) or "no output"


def prepare_metastore(conf: Mapping[str, str], java: Path, jars_dir: Path, work_dir: Path) -> None:
    """Create the Hive metastore's missing tables in the database ``conf`` names.

    Does nothing unless :func:`metastore_database` names one and the user has
    not turned ``datanucleus.schema.autoCreateAll`` off. ``java`` is the Java
    executable to run the tool with, ``jars_dir`` pyspark's jars, ``work_dir``
    a private directory for the tool's files (the password is written there,
    mode 0600, and removed).

    Raises:
        ConfigurationError: the tool failed (the database is unreachable, the
            credentials are wrong, the JDBC driver is not on the driver's class
            path...), with its root cause.
    """
    database = metastore_database(conf)
    if database is None or not _creates_schema(conf):
        return
    url = database.split("?", 1)[0].split(";", 1)[0]  # never its options: they may hold a password
    work_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="metastore-") as scratch:
        scratch_dir = Path(scratch)
        mapping = _mapping(jars_dir, scratch_dir)
        properties = scratch_dir / "datanucleus.properties"
        descriptor = os.open(properties, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(_properties_text(_jdo_properties(conf)))
        command = [
            str(java),
            "-cp",
            _class_path(conf, jars_dir),
            _SCHEMA_TOOL,
            "-create",
            "-api",
            "JDO",
            "-props",
            str(properties),
            str(mapping),
        ]
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                result = subprocess.run(
                    command,
                    capture_output=True,
                    text=True,
                    timeout=_TIMEOUT_S,
                    check=False,
                    cwd=scratch_dir,
                )
            except subprocess.TimeoutExpired:
                raise ConfigurationError(
                    f"Creating the Hive metastore's tables in {url} took over "
                    f"{_TIMEOUT_S:.0f} s: is the database reachable?"
                ) from None
            output = result.stdout + result.stderr
            if result.returncode == 0 and "completed successfully" in output:
                break
            if attempt == _ATTEMPTS:
                raise ConfigurationError(
                    f"Could not create the Hive metastore's tables in {url}: "
                    f"{_root_cause(output)}. Check the database, its credentials "
                    "(spark.hadoop.javax.jdo.option.ConnectionUserName/Password) and that "
                    "the JDBC driver's jar is in spark.driver.extraClassPath; or create the "
                    "schema with Hive's schematool and set "
                    "spark.hadoop.datanucleus.schema.autoCreateAll=false."
                )
            _log.info("Retrying the metastore schema check after: %s", _root_cause(output))
    _log.info("Hive metastore tables ready in %s (%.1f s)", url, time.monotonic() - started)
