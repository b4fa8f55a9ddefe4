"""Session options the gateway, its endpoints and the SQL client all read (Flink's keys).

Declared once, here in the contracts layer, because every side needs them: the
service runs statements by them, the HiveServer2 endpoint sets its session
defaults with them, and the SQL client decides whether to wait for a job.
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkgate.api.config import bool_option, choice_option

__all__ = [
    "DML_SYNC",
    "FLINK_TIME_ZONE_KEY",
    "RUNTIME_MODE",
    "SPARK_TIME_ZONE_KEY",
    "TIME_ZONE_KEYS",
    "configured_time_zones",
]

RUNTIME_MODE = choice_option(
    "execution.runtime-mode",
    "batch",
    "'batch' or 'streaming'. In streaming mode, queries over connector tables run as "
    "Structured Streaming queries whose results are changelogs, and INSERTs become "
    "long-running jobs.",
    ("batch", "streaming"),
)

DML_SYNC = bool_option(
    "table.dml-sync",
    True,
    "Whether an INSERT waits for its job to finish. False makes it return its job id at "
    "once (Flink's default). In streaming mode it is false unless set: set true, an INSERT "
    "whose sources end (bounded datagen, files, VALUES) waits for its job, as in Flink; one "
    "over an unbounded source returns its running job.",
)

SPARK_TIME_ZONE_KEY = "spark.sql.session.timeZone"
FLINK_TIME_ZONE_KEY = "table.local-time-zone"
TIME_ZONE_KEYS = (SPARK_TIME_ZONE_KEY, FLINK_TIME_ZONE_KEY)
"""The session settings that name its time zone (one setting: the gateway keeps both
in step), in the order they are read."""


def configured_time_zones(config: Mapping[str, str]) -> list[str]:
    """The zones a session's configuration names, in :data:`TIME_ZONE_KEYS` order;
    Flink's ``default`` (the system zone) names none."""
    zones = []
    for key in TIME_ZONE_KEYS:
        value = config.get(key)
        if value and value.strip().lower() != "default":
            zones.append(value)
    return zones
