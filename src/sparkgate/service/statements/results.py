"""The small all-strings results the gateway answers itself: ``OK``, a ``job id``,
SHOW JOBS, SET; one place, for the statement handlers."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from sparkgate.api.results import ResultKind
from sparkgate.api.types import STRING, ResultSchema
from sparkgate.service.operation.operation import Execution
from sparkgate.service.result.fetcher import ResultTraits

__all__ = ["job_result", "ok_result", "table_result"]


def table_result(
    names: Sequence[str],
    rows: Sequence[Sequence[str | None]],
    traits: ResultTraits | None = None,
) -> Execution:
    """A result of string columns ``names`` holding ``rows``."""
    schema = ResultSchema.of(*((name, STRING) for name in names))
    columns = [pa.array([row[i] for row in rows], type=pa.string()) for i in range(len(names))]
    batch = pa.RecordBatch.from_arrays(columns, names=list(names))
    return Execution(
        schema,
        traits or ResultTraits(result_kind=ResultKind.SUCCESS_WITH_CONTENT),
        [(batch, None)],
    )


def ok_result() -> Execution:
    return table_result(["result"], [["OK"]], ResultTraits(result_kind=ResultKind.SUCCESS))


def job_result(job_id: str) -> Execution:
    """What DML answers: its job's id, also carried as the result's job id."""
    return table_result(
        ["job id"],
        [[job_id]],
        ResultTraits(result_kind=ResultKind.SUCCESS_WITH_CONTENT, job_id=job_id),
    )
