"""The SQL client's options (Flink's ``sql-client.*`` keys), each declared once.

They live in the session configuration like any other key: ``SET
'sql-client.execution.result-mode' = 'table';`` changes them, ``-D`` sets
them at start-up, and the client reads them back from the session after
every statement that may have changed them.
"""

from __future__ import annotations

import enum
from typing import Any

from sparkgate.api.config import ConfigOption, bool_option, int_option

__all__ = [
    "CLIENT_OPTIONS",
    "DISPLAY_MAX_COLUMN_WIDTH",
    "DISPLAY_PRINT_TIME_COST",
    "EXECUTION_MAX_TABLE_RESULT_ROWS",
    "EXECUTION_RESULT_MODE",
    "FETCH_PAGE_ROWS",
    "VERBOSE",
    "ResultMode",
]


class ResultMode(enum.Enum):
    TABLEAU = "tableau"
    TABLE = "table"
    CHANGELOG = "changelog"


def _parse_mode(text: str) -> ResultMode:
    try:
        return ResultMode(text.strip().lower())
    except ValueError:
        names = ", ".join(f"'{m.value}'" for m in ResultMode)
        raise ValueError(f"unknown result mode {text!r}; expected one of {names}") from None


EXECUTION_RESULT_MODE: ConfigOption[ResultMode] = ConfigOption(
    "sql-client.execution.result-mode",
    ResultMode.TABLEAU,
    "How query results are shown: 'tableau' prints a bordered table as rows arrive, "
    "'table' opens a full-screen pageable view (interactive terminals only; tableau "
    "otherwise), 'changelog' prints one row per change with an 'op' column.",
    "Enum",
    _parse_mode,
    lambda mode: mode.value,
)

DISPLAY_MAX_COLUMN_WIDTH = int_option(
    "sql-client.display.max-column-width",
    30,
    "In streaming results and changelog mode, values wider than this many terminal "
    "cells are cut and end in '...' (batch results show values whole, as in Flink).",
    min_value=4,
)

DISPLAY_PRINT_TIME_COST = bool_option(
    "sql-client.display.print-time-cost",
    True,
    "Whether the time a query took follows its row count.",
)

VERBOSE = bool_option(
    "sql-client.verbose",
    False,
    "Print the whole cause chain of a failed statement, not only its root cause.",
)

EXECUTION_MAX_TABLE_RESULT_ROWS = int_option(
    "sql-client.execution.max-table-result.rows",
    1_000_000,
    "Rows the full-screen table view keeps; beyond that the oldest rows are dropped.",
    min_value=1,
)

FETCH_PAGE_ROWS = int_option(
    "sql-client.fetch.page-rows",
    1_000,
    "Rows fetched from the gateway per page.",
    min_value=1,
)

CLIENT_OPTIONS: tuple[ConfigOption[Any], ...] = (
    EXECUTION_RESULT_MODE,
    DISPLAY_MAX_COLUMN_WIDTH,
    DISPLAY_PRINT_TIME_COST,
    VERBOSE,
    EXECUTION_MAX_TABLE_RESULT_ROWS,
    FETCH_PAGE_ROWS,
)
