"""Generates ``docs/configuration.md`` from the declared options.

The page is generated so that it cannot drift from the declarations; a unit
test compares the committed file with :func:`render_configuration_docs`.
Run ``python -m sparkgate.server.docs`` from the repository root to
regenerate it, or with ``--check`` to verify it (exit status 1 on drift).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sparkgate.api.config import ConfigOption
from sparkgate.client.options import CLIENT_OPTIONS
from sparkgate.endpoints.hiveserver2.options import HIVESERVER2_OPTIONS
from sparkgate.endpoints.hiveserver2.options import OPTION_PREFIX as HIVESERVER2_PREFIX
from sparkgate.endpoints.rest.options import OPTION_PREFIX as REST_PREFIX
from sparkgate.endpoints.rest.options import REST_OPTIONS
from sparkgate.security.ldap import LDAP_OPTIONS
from sparkgate.security.password import FILE as PASSWORD_FILE
from sparkgate.security.token import TOKEN_OPTIONS
from sparkgate.server.endpoints import ENDPOINT_TYPE
from sparkgate.service.options import SERVICE_OPTIONS
from sparkgate.workflow.embedded.scheduler import EMBEDDED_OPTIONS

__all__ = [
    "DOCS_PATH",
    "DOC_SECTIONS",
    "generated_docs",
    "main",
    "prefixed",
    "render_configuration_docs",
]

logger = logging.getLogger(__name__)

DOCS_PATH = Path("docs") / "configuration.md"


def prefixed(prefix: str, options: Sequence[ConfigOption[Any]]) -> tuple[ConfigOption[Any], ...]:
    """Endpoint options as users write them: endpoints declare keys without their prefix."""
    return tuple(dataclasses.replace(option, key=prefix + option.key) for option in options)


# Section title -> options, in page order. A static registry (not filled in
# at import time by plug-ins) so the generated page does not depend on which
# modules happen to be imported; endpoints add their section here.
DOC_SECTIONS: dict[str, Sequence[ConfigOption[Any]]] = {
    "Service": SERVICE_OPTIONS,
    "Endpoints": (ENDPOINT_TYPE,),
    "REST endpoint": prefixed(REST_PREFIX, REST_OPTIONS),
    "HiveServer2 endpoint": prefixed(HIVESERVER2_PREFIX, HIVESERVER2_OPTIONS),
    "Embedded workflow scheduler": prefixed("workflow-scheduler.embedded.", EMBEDDED_OPTIONS),
    "Authentication: password": (PASSWORD_FILE,),
    "Authentication: LDAP": LDAP_OPTIONS,
    "Authentication: token (JWT)": TOKEN_OPTIONS,
    "SQL client": CLIENT_OPTIONS,
}

_INTRO = (
    "Options are set in `conf/config.yaml` (flat dotted keys, as in Flink's "
    "configuration file; the directory can be changed with `SPARKGATE_CONF_DIR`) "
    "or on the command line with `-Dkey=value`, which wins over the file. "
    "Unknown `sql-gateway.*` keys are rejected at start-up. Keys starting with "
    "`spark.` are not gateway options: they are passed to Spark unchanged as "
    "session defaults. Durations are written as `5 min`, `30 s`, `100 ms`, "
    "`2 h` or `1 d` (a bare number means milliseconds)."
)


# (Spark setting, default, why): what the engine chooses (service.spark.engine).
_SPARK_DEFAULTS: tuple[tuple[str, str, str], ...] = (
    ("`spark.master`", "`local[*]`", "Spark runs in the gateway's process, on every core."),
    (
        "`spark.sql.shuffle.partitions`",
        "the cores of a local master (`local[N]`: N; `local[*]`: the cores the gateway "
        "may use); Spark's `200` otherwise",
        "Streaming aggregations are not coalesced by adaptive execution: 200 tasks per "
        "micro-batch on a few cores make each batch take seconds.",
    ),
    (
        "`spark.sql.catalogImplementation`",
        "`hive`, on an embedded Derby metastore under `<data-dir>/metastore`",
        "Tables survive restarts; the warehouse is `<data-dir>/warehouse`.",
    ),
    ("`spark.driver.memory`", "`2g`", ""),
    (
        "`spark.sql.filesourceTableRelationCacheSize`",
        "`0`",
        "Every session (and every job of the gateway) sees the files a table has now: with "
        "Spark's per-session cache, a table written by another session, a job or a "
        "materialized table's refresh stayed stale until REFRESH TABLE.",
    ),
    (
        "`SPARK_LOCAL_IP` (environment)",
        "`127.0.0.1` with a local master, unless set",
        "The Spark UI (no authentication; port 4040 or the next free one) and the "
        "driver's ports listen on the loopback only, as the endpoints do by default. "
        "The start-up banner prints the UI's URL; `spark.ui.enabled=false` turns the UI "
        "off; `SPARK_LOCAL_IP=<address>` serves it (and the driver) on that address.",
    ),
)


def _spark_defaults() -> list[str]:
    return [
        "",
        "## Spark defaults",
        "",
        "Without `spark.*` options the gateway starts Spark as below; any `spark.*` key "
        "given in `conf/config.yaml` or with `-D` wins.",
        "",
        "| Spark setting | Default | Why |",
        "| --- | --- | --- |",
        *(f"| {key} | {default} | {why} |" for key, default, why in _SPARK_DEFAULTS),
    ]


def _cell(text: str) -> str:
    # Table cells are single-line and must not end the cell early.
    return " ".join(text.split()).replace("|", "\\|")


def render_configuration_docs(
    options_by_section: Mapping[str, Sequence[ConfigOption[Any]]],
) -> str:
    """The Markdown page: title, intro, then one table per section."""
    lines = [
        "# Configuration",
        "",
        "<!-- Generated by `python -m sparkgate.server.docs`; do not edit by hand. -->",
        "",
        _INTRO,
    ]
    lines += _spark_defaults()
    for section, options in options_by_section.items():
        lines += [
            "",
            f"## {section}",
            "",
            "| Key | Default | Type | Description |",
            "| --- | --- | --- | --- |",
        ]
        for option in options:
            lines.append(
                f"| `{_cell(option.key)}` | `{_cell(option.default_display)}` "
                f"| {_cell(option.type_name)} | {_cell(option.description)} |"
            )
    return "\n".join(lines) + "\n"


def generated_docs() -> str:
    """The page for the registered sections."""
    return render_configuration_docs(DOC_SECTIONS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sparkgate.server.docs",
        description=f"Write {DOCS_PATH} (relative to the current directory).",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit with status 1 if the file is missing or differs",
    )
    args = parser.parse_args(argv)

    expected = generated_docs()
    path = Path.cwd() / DOCS_PATH
    if args.check:
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != expected:
            logger.error(
                "%s is out of date; regenerate it with: python -m sparkgate.server.docs",
                DOCS_PATH,
            )
            return 1
        logger.info("%s is up to date", DOCS_PATH)
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(expected, encoding="utf-8")
    logger.info("Wrote %s", DOCS_PATH)
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    raise SystemExit(main())
