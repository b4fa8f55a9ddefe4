"""What a fetch returns: pages of Arrow rows plus the facts a client needs.

Rows stay Arrow record batches here; endpoints encode them (JSON, PLAIN_TEXT,
Thrift columns, Arrow IPC) only when they answer, so the service never builds
per-row Python objects for a result it merely passes through.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparkgate.api.status import OperationStatus, OperationType
from sparkgate.api.types import ResultSchema

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "FetchOrientation",
    "GatewayInfo",
    "OperationInfo",
    "ResultKind",
    "ResultSet",
    "ResultType",
    "RowKind",
]


class ResultType(enum.Enum):
    NOT_READY = "NOT_READY"
    PAYLOAD = "PAYLOAD"
    EOS = "EOS"


class ResultKind(enum.Enum):
    SUCCESS = "SUCCESS"
    SUCCESS_WITH_CONTENT = "SUCCESS_WITH_CONTENT"


class RowKind(enum.Enum):
    """A row's change kind; the wire name is ``.name``, the short form ``.value``."""

    INSERT = "+I"
    UPDATE_BEFORE = "-U"
    UPDATE_AFTER = "+U"
    DELETE = "-D"


class FetchOrientation(enum.Enum):
    FORWARD = "FORWARD"
    BACKWARD = "BACKWARD"
    #: From the first row again: only for a result the gateway keeps (result spooling).
    FIRST = "FIRST"


@dataclass(frozen=True)
class ResultSet:
    """One page of an operation's result.

    ``next_token`` is None at end of stream. ``batches`` hold the page's rows
    in order; ``kinds`` gives one :class:`RowKind` per row, or None when every
    row is an INSERT (every batch result).
    """

    result_type: ResultType
    next_token: int | None
    schema: ResultSchema
    batches: tuple[pa.RecordBatch, ...] = ()
    kinds: tuple[RowKind, ...] | None = None
    is_query_result: bool = False
    result_kind: ResultKind = ResultKind.SUCCESS
    job_id: str | None = None

    @property
    def num_rows(self) -> int:
        return sum(batch.num_rows for batch in self.batches)

    def rows(self) -> list[tuple[Any, ...]]:
        """The page's rows as Python tuples: convenient for tests and small results."""
        out: list[tuple[Any, ...]] = []
        for batch in self.batches:
            if batch.num_columns:
                out.extend(zip(*(column.to_pylist() for column in batch.columns), strict=True))
            else:
                out.extend(() for _ in range(batch.num_rows))
        return out

    def row_kinds(self) -> Sequence[RowKind]:
        return self.kinds if self.kinds is not None else (RowKind.INSERT,) * self.num_rows


@dataclass(frozen=True)
class OperationInfo:
    status: OperationStatus
    type: OperationType
    has_result: bool = True
    error: BaseException | None = field(default=None, compare=False)


@dataclass(frozen=True)
class GatewayInfo:
    product_name: str
    version: str
    engine_version: str
    extra: tuple[tuple[str, str], ...] = ()
