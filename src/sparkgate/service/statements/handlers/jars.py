"""ADD JAR, REMOVE JAR, SHOW JARS: the session's jars."""

from __future__ import annotations

import logging

from sparkgate.api.errors import ExecutionError
from sparkgate.service.catalogs.spark import add_to_driver_classpath
from sparkgate.service.operation.operation import Execution
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import AddJar, RemoveJar, ShowJars
from sparkgate.service.statements.results import ok_result, table_result
from sparkgate.service.streaming.strategy import spark_statement
from sparkgate.sql.quoting import quote_string

__all__ = ["add_jar", "remove_jar", "show_jars"]

log = logging.getLogger(__name__)


def add_jar(context: StatementContext, statement: AddJar) -> Execution:
    spark_statement(context.session, f"ADD JAR {quote_string(statement.path)}")
    _share_with_every_thread(context, statement.path)
    jars = context.state.jars
    if statement.path not in jars:
        jars.append(statement.path)
    return ok_result()


def _share_with_every_thread(context: StatementContext, path: str) -> None:
    """Spark's ADD JAR makes the jar's classes (a JDBC driver, a catalog plug-in)
    loadable on the JVM thread that ran it only; the gateway's statements run on
    many threads, and a catalog (CREATE CATALOG) serves every session."""
    spark = context.session.spark
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    try:
        loader = spark._jsparkSession.sessionState().resourceLoader()
        resolved = [str(jar) for jar in _scala_list(loader.resolveJars(jvm.java.net.URI(path)))]
    except Exception:
        log.warning("Could not resolve %s for the driver's class path", path, exc_info=True)
        return
    if not add_to_driver_classpath(spark, resolved):
        log.warning("%s is loadable by this session's thread only: put it in spark.jars", path)


def _scala_list(seq: object) -> list[object]:
    iterator = seq.iterator()  # type: ignore[attr-defined]
    items: list[object] = []
    while iterator.hasNext():
        items.append(iterator.next())
    return items


def remove_jar(context: StatementContext, statement: RemoveJar) -> Execution:
    jars = context.state.jars
    if statement.path not in jars:
        raise ExecutionError(
            f"Jar {statement.path} was not added to this session.",
            causes=(f"JarNotFound: Jar {statement.path} was not added to this session.",),
        )
    jars.remove(statement.path)
    # Spark cannot unload classes: the jar leaves the session's list only.
    log.warning("Removed %s from the session; classes already loaded stay loaded", statement.path)
    return ok_result()


def show_jars(context: StatementContext, statement: ShowJars) -> Execution:
    return table_result(["jars"], [[jar] for jar in context.state.jars])
