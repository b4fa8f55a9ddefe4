"""Spark packages a connector needs, from Maven, loaded into the running engine.

Spark's Kafka integration is not part of the pyspark distribution. A
:class:`Package` names its Maven coordinates; :func:`ensure` makes it loadable
in the engine the first time a statement needs it:

1. jars the operator listed (an air-gapped install) are taken as they are;
2. else the jars resolved before, listed in ``<cache>/<name>/jars.txt``;
3. else Ivy (the resolver Spark's own ``spark.jars.packages`` uses, shipped
   in pyspark's ``jars/``) resolves the coordinates and their dependencies
   from the repository into that cache, once, its progress in the log. Jars
   Spark already ships (Scala, Hadoop's client, compression codecs) are left
   out, so only one copy of a class is ever on the class path.

The jars join the class loader spark-submit gave the driver, which every py4j
thread of the gateway inherits, and ``SparkContext.addJar`` ships them to the
executors. A package that cannot be had fails the statement with a
``ValidationException`` naming what is missing and how to provide it; the
engine and its other sessions go on.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from sparkgate.service.spark.java import find_java, spark_home
from sparkgate.service.spark.jobs import invalid
from sparkgate.service.spark.jvm_cache import scala_context

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "AVRO",
    "KAFKA",
    "MAVEN_CENTRAL",
    "Package",
    "PackageSettings",
    "configure",
    "ensure",
    "load_jars",
    "require",
    "retrieve",
]

log = logging.getLogger(__name__)

MAVEN_CENTRAL = "https://repo1.maven.org/maven2/"

_RESOLVE_TIMEOUT_S = 600
_CONNECT_TIMEOUT_MS = 10_000
# One resolution or load at a time per process: two statements needing the
# same package wait for the first.
_lock = threading.Lock()


@dataclass(frozen=True)
class Package:
    """A connector's Maven artifacts and a class that is there once they are loaded."""

    name: str
    coordinates: tuple[str, ...]
    probe_class: str
    #: The gateway option that lists the jars by path instead.
    jars_option: str


#: Spark's Kafka source and sink. Maven Central serves Spark's JVM modules up to
#: 4.2.0 while pyspark 4.3.0 is current; the 4.2.0 connector (Scala 2.13.18, as
#: pyspark 4.3.0's) reads and writes through Spark 4.3.0's unchanged DataSource V2
#: API, which the tests prove against a real broker.
KAFKA = Package(
    "kafka",
    ("org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0",),
    "org.apache.spark.sql.kafka010.KafkaSourceProvider",
    "sql-gateway.connector.kafka.jars",
)


#: Spark's ``from_avro``/``to_avro`` (the Kafka connector's ``avro`` format). Spark
#: 4.3's own jars hold Avro files' data source but not these functions; the
#: 4.2.0 module is the newest Maven Central serves, as for Kafka.
AVRO = Package(
    "avro",
    ("org.apache.spark:spark-avro_2.13:4.2.0",),
    "org.apache.spark.sql.avro.AvroDataToCatalyst",
    "sql-gateway.connector.avro.jars",
)


@dataclass(frozen=True)
class PackageSettings:
    """Where an engine's packages come from: the cache, the repository, and the
    jars an operator listed per package name (then nothing is resolved)."""

    cache_dir: Path
    repository: str = MAVEN_CENTRAL
    jars: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


# Per engine JVM (a py4j JVM view), as jvm_cache keeps its objects: an engine
# restarted after its death gets its settings again from the gateway.
_settings: weakref.WeakKeyDictionary[Any, PackageSettings] = weakref.WeakKeyDictionary()


def configure(spark: SparkSession, settings: PackageSettings) -> None:
    """Say where ``spark``'s engine gets its packages (the gateway does, at start)."""
    _settings[spark.sparkContext._jvm] = settings


def require(spark: SparkSession, package: Package) -> None:
    """:func:`ensure` ``package`` with the engine's settings (see :func:`configure`);
    an engine nobody configured caches under ``~/.sparkgate/packages``."""
    settings = _settings.get(spark.sparkContext._jvm) or PackageSettings(
        Path.home() / ".sparkgate" / "packages"
    )
    ensure(
        spark,
        package,
        settings.cache_dir,
        settings.repository,
        settings.jars.get(package.name, ()),
    )


_VERSIONED = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def ensure(
    spark: SparkSession,
    package: Package,
    cache_dir: Path,
    repository: str = MAVEN_CENTRAL,
    jars: Sequence[str] = (),
) -> None:
    """Make ``package`` loadable in ``spark``'s engine (see the module's text).

    Raises:
        ExecutionError: it could not be resolved or loaded.
    """
    if _loaded(spark, package):
        return
    with _lock:
        if _loaded(spark, package):
            return
        paths = [Path(j) for j in jars] if jars else _cached(package, cache_dir)
        if paths is None:
            paths = _resolve(package, cache_dir, repository)
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise invalid(
                f"The {package.name} connector's jars are missing: {', '.join(missing)}"
                + (f" (listed by {package.jars_option})" if jars else "")
            )
        load_jars(spark, paths)
        if not _loaded(spark, package):
            raise invalid(
                f"The {package.name} connector's jars ({', '.join(p.name for p in paths)}) "
                f"do not hold {package.probe_class}; list the right jars with "
                f"{package.jars_option}"
            )
        log.info("The %s connector is loaded (%d jars)", package.name, len(paths))


def _loaded(spark: SparkSession, package: Package) -> bool:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(package.probe_class, False, loader)
    except Exception:
        return False
    return True


def _cached(package: Package, cache_dir: Path) -> list[Path] | None:
    listing = cache_dir / package.name / "jars.txt"
    if not listing.is_file():
        return None
    paths = [cache_dir / package.name / line for line in listing.read_text().split()]
    return paths if all(p.is_file() for p in paths) else None


def _shipped() -> set[str]:
    """Artifact names of the jars Spark ships (``scala-library``, ``hadoop-client-api``)."""
    names = set()
    for jar in (spark_home() / "jars").glob("*.jar"):
        match = _VERSIONED.match(jar.name)
        names.add(match.group("artifact") if match else jar.stem)
    return names


def _resolve(package: Package, cache_dir: Path, repository: str) -> list[Path]:
    target = cache_dir / package.name
    log.info(
        "Resolving the %s connector (%s) from %s into %s; this happens once",
        package.name,
        ", ".join(package.coordinates),
        repository,
        target,
    )
    cache_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{package.name}-", dir=cache_dir))
    hint = (
        f"List the {package.name} connector's jars (it and its dependencies) with "
        f"{package.jars_option}, or set sql-gateway.connector.repository to a reachable "
        "Maven repository"
    )
    try:
        retrieved = work / "jars"
        for coordinate in package.coordinates:
            retrieve(coordinate, repository, cache_dir / "ivy", retrieved, hint)
        shipped = _shipped()
        kept = sorted(
            jar
            for jar in retrieved.glob("*.jar")
            if (m := _VERSIONED.match(jar.name)) is None or m.group("artifact") not in shipped
        )
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for jar in kept:
            shutil.copy2(jar, target / jar.name)
        # Written last: a resolution cut short leaves no listing, so it runs again.
        (target / "jars.txt").write_text("".join(f"{jar.name}\n" for jar in kept))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [target / jar.name for jar in kept]


def retrieve(coordinate: str, repository: str, ivy_cache: Path, out: Path, hint: str = "") -> None:
    """Copy the jars of ``coordinate`` (``group:artifact:version``) and of its
    runtime dependencies into ``out``, resolved by pyspark's Ivy from ``repository``
    through the cache ``ivy_cache``; the downloads go to the log.

    Raises:
        ExecutionError: Ivy is missing, or the coordinate did not resolve (the
            message ends with ``hint``).
    """
    ivy_jar = next(iter(sorted((spark_home() / "jars").glob("ivy-*.jar"))), None)
    if ivy_jar is None:
        raise invalid(f"Spark's Ivy jar is not in {spark_home() / 'jars'}. {hint}".strip())
    group, artifact, version = coordinate.split(":")
    with tempfile.TemporaryDirectory(prefix="ivy-") as work:
        settings = Path(work) / "ivysettings.xml"
        settings.write_text(
            "<ivysettings>\n"
            '  <settings defaultResolver="central"/>\n'
            "  <timeout-constraints>\n"
            f'    <timeout-constraint name="bounded" connectionTimeout="{_CONNECT_TIMEOUT_MS}"'
            ' readTimeout="60000"/>\n'
            "  </timeout-constraints>\n"
            "  <resolvers>\n"
            f'    <ibiblio name="central" m2compatible="true" root={quoteattr(repository)}'
            ' timeoutConstraint="bounded"/>\n'
            "  </resolvers>\n"
            "</ivysettings>\n"
        )
        command = [
            str(find_java().path),
            "-cp",
            str(ivy_jar),
            "org.apache.ivy.Main",
            "-settings",
            str(settings),
            "-cache",
            str(ivy_cache),
            "-dependency",
            group,
            artifact,
            version,
            "-confs",
            "default",
            "-retrieve",
            str(out / "[artifact]-[revision](-[classifier]).[ext]"),
        ]
        lines: list[str] = []
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work
        ) as ivy:
            assert ivy.stdout is not None
            timer = threading.Timer(_RESOLVE_TIMEOUT_S, ivy.kill)
            timer.start()
            try:
                for line in ivy.stdout:
                    line = line.rstrip()
                    lines.append(line)
                    if "[SUCCESSFUL ]" in line:
                        log.info("%s", line.strip())  # progress: one line per download
                    elif "found " in line:
                        log.debug("%s", line.strip())
            finally:
                timer.cancel()
    failed = [line.strip() for line in lines if "FAILED" in line or "UNRESOLVED" in line]
    if ivy.returncode != 0 or failed or not any(out.glob("*.jar")):
        reason = "; ".join(failed[:3]) or (lines[-1].strip() if lines else "no output")
        raise invalid(f"Could not resolve {coordinate} from {repository}: {reason}. {hint}".strip())


def load_jars(spark: SparkSession, jars: Sequence[Path]) -> None:
    """Make ``jars`` loadable in ``spark``'s running engine, from every thread.

    They join the class loader spark-submit gave the driver's main thread, which
    every py4j thread inherits (and which is the parent of the loader ``ADD JAR``
    fills: ``ADD JAR`` alone reaches only the thread that ran it), and
    ``SparkContext.addJar`` ships them to executors. Adding a jar twice is harmless.

    Raises:
        ExecutionError: the JVM was not started by spark-submit.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    if loader.getClass().getName() != "org.apache.spark.util.MutableURLClassLoader":
        raise invalid(
            "The engine's JVM was not started by spark-submit, so jars cannot be added "
            f"to it while it runs: put {', '.join(str(j) for j in jars)} into spark.jars"
        )
    for jar in jars:
        loader.addURL(jvm.java.io.File(str(jar)).toURI().toURL())
        scala_context(spark.sparkContext).addJar(str(jar))
