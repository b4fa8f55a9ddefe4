"""SET, SET key, SET (all) and RESET: the session's configuration."""

from __future__ import annotations

from collections.abc import Mapping

from sparkgate.service.operation.operation import Execution
from sparkgate.service.session.session import (
    FLINK_TIME_ZONE_KEY,
    SPARK_TIME_ZONE_KEY,
    Session,
    is_spark_key,
)
from sparkgate.service.statements.context import StatementContext
from sparkgate.service.statements.kinds import Reset, Set, ShowConfig
from sparkgate.service.statements.results import ok_result, table_result
from sparkgate.service.streaming.strategy import check_option
from sparkgate.sql.secrets import HIDDEN, is_sensitive, masked_options

__all__ = ["reset", "set_option", "show_config"]

_UNDEFINED = "<undefined>"  # Spark's SET answer for a key without a value


def set_option(context: StatementContext, statement: Set) -> Execution:
    # The typed option's own refusal (a 400 naming the key) first, as at submit.
    context.session.check_setting(statement.key, statement.value)
    check_option(statement.key, statement.value)
    context.session.set(statement.key, statement.value)
    return ok_result()


def show_config(context: StatementContext, statement: ShowConfig) -> Execution:
    session = context.session
    config = session.config()
    if statement.key is not None:
        value = _effective_value(session, statement.key, config)
        rows = [[statement.key, HIDDEN if is_sensitive(statement.key) else value]]
    else:
        shown = masked_options(config)
        rows = [[key, shown[key]] for key in sorted(shown)]
    return table_result(["key", "value"], rows)


def reset(context: StatementContext, statement: Reset) -> Execution:
    context.session.reset(statement.key)
    return ok_result()


def _effective_value(session: Session, key: str, config: Mapping[str, str]) -> str:
    """What ``SET key`` answers: for Spark's keys Spark's effective value (its
    default when unset, as Spark's own ``SET key``), else the session's value."""
    if key in (FLINK_TIME_ZONE_KEY, SPARK_TIME_ZONE_KEY):
        return session.time_zone()
    if is_spark_key(key):
        try:
            return str(session.spark.conf.get(key))
        except Exception:
            # A key Spark does not know and nobody set: Spark's SET says so.
            return config.get(key, _UNDEFINED)
    return config.get(key, _UNDEFINED)
