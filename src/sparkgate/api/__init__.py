"""sparkgate's contracts: what endpoints, the client and the service agree on.

Standard library only at runtime, so any endpoint or client can import it
without pulling in Spark.
"""

from __future__ import annotations

from sparkgate.api.catalog import (
    CatalogTable,
    FunctionDefinition,
    FunctionInfo,
    FunctionKind,
    ObjectIdentifier,
    TableInfo,
    TableKind,
)
from sparkgate.api.config import ConfigOption, Configuration
from sparkgate.api.errors import (
    CatalogError,
    ConfigurationError,
    EndpointError,
    ExecutionError,
    FetchError,
    GatewayError,
    IllegalStateError,
    IllegalTransitionError,
    InvalidTokenError,
    JavaNotFoundError,
    OperationError,
    OperationNotFoundError,
    SessionError,
    SessionLimitError,
    SessionNotFoundError,
    SqlParseError,
    StatementError,
    UnsupportedStatementError,
)
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.jobs import JobInfo, JobStatus, JobStatusHook, NoopJobStatusHook
from sparkgate.api.results import (
    FetchOrientation,
    GatewayInfo,
    OperationInfo,
    ResultKind,
    ResultSet,
    ResultType,
    RowKind,
)
from sparkgate.api.service import GatewayService, OperationProgress, StaticResult
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.api.status import OperationStatus, OperationType
from sparkgate.api.types import Column, LogicalType, ResultSchema

__all__ = [
    "CatalogError",
    "CatalogTable",
    "Column",
    "ConfigOption",
    "Configuration",
    "ConfigurationError",
    "EndpointError",
    "EndpointVersion",
    "ExecutionError",
    "FetchError",
    "FetchOrientation",
    "FunctionDefinition",
    "FunctionInfo",
    "FunctionKind",
    "GatewayError",
    "GatewayInfo",
    "GatewayService",
    "IllegalStateError",
    "IllegalTransitionError",
    "InvalidTokenError",
    "JavaNotFoundError",
    "JobInfo",
    "JobStatus",
    "JobStatusHook",
    "LogicalType",
    "NoopJobStatusHook",
    "ObjectIdentifier",
    "OperationError",
    "OperationHandle",
    "OperationInfo",
    "OperationNotFoundError",
    "OperationProgress",
    "OperationStatus",
    "OperationType",
    "ResultKind",
    "ResultSchema",
    "ResultSet",
    "ResultType",
    "RowKind",
    "SessionEnvironment",
    "SessionError",
    "SessionHandle",
    "SessionLimitError",
    "SessionNotFoundError",
    "SqlParseError",
    "StatementError",
    "StaticResult",
    "TableInfo",
    "TableKind",
    "UnsupportedStatementError",
]
