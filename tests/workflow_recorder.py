"""Workflow test doubles: a scheduler plug-in that records every operation the
gateway asks of it (to show the FLIP-448 plug-in API reaches a scheduler whole),
and :class:`RecordingService`, the gateway methods a scheduler calls at a fire
time, recording each refresh."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.results import ResultSet, ResultType
from sparkgate.api.session import SessionEnvironment
from sparkgate.api.types import STRING, ResultSchema
from sparkgate.api.workflow import (
    CreatePeriodicRefreshWorkflow,
    CreateRefreshWorkflow,
    DeleteRefreshWorkflow,
    ModifyRefreshWorkflow,
    WorkflowError,
    WorkflowSchedulerContext,
)

OPERATIONS: list[tuple[str, Any]] = []
_LOCK = threading.Lock()


@dataclass(frozen=True)
class RecordedHandler:
    workflow_id: str

    def as_summary_string(self) -> str:
        return f"recorded workflow {self.workflow_id}"


class RecordedSerializer:
    def serialize(self, handler: RecordedHandler) -> bytes:
        return json.dumps({"id": handler.workflow_id}).encode()

    def deserialize(self, data: bytes) -> RecordedHandler:
        return RecordedHandler(json.loads(data)["id"])


class RecordingScheduler:
    def __init__(self, options: dict[str, str]) -> None:
        self.options = options
        self.workflows: dict[str, dict[str, Any]] = {}

    def _record(self, name: str, value: Any) -> None:
        with _LOCK:
            OPERATIONS.append((name, value))

    def open(self) -> None:
        self._record("open", dict(self.options))

    def close(self) -> None:
        self._record("close", None)

    def refresh_handler_serializer(self) -> RecordedSerializer:
        return RecordedSerializer()

    def create_refresh_workflow(self, workflow: CreateRefreshWorkflow) -> RecordedHandler:
        assert isinstance(workflow, CreatePeriodicRefreshWorkflow)
        if self.options.get("fail-create") == "true":
            raise WorkflowError("the scheduler service is down")
        handler = RecordedHandler(f"wf-{len(self.workflows)}")
        self.workflows[handler.workflow_id] = {"cron": workflow.cron_expression}
        self._record("create", workflow)
        return handler

    def modify_refresh_workflow(self, workflow: ModifyRefreshWorkflow[RecordedHandler]) -> None:
        self._record(type(workflow).__name__, workflow)

    def delete_refresh_workflow(self, workflow: DeleteRefreshWorkflow[RecordedHandler]) -> None:
        self.workflows.pop(workflow.refresh_handler.workflow_id, None)
        self._record("delete", workflow)


class RecordingFactory:
    def create_workflow_scheduler(self, context: WorkflowSchedulerContext) -> RecordingScheduler:
        return RecordingScheduler(dict(context.options))


class RecordingService:
    """The gateway methods a scheduler calls at a fire time (a ``RefreshService``):
    records each refresh, the last session's configuration and open sessions."""

    def __init__(self, name: str = "gateway") -> None:
        self.name = name
        self.refreshes: list[dict[str, Any]] = []
        self.fired = threading.Event()
        self.open_sessions = 0
        self.config: dict[str, str] = {}
        self._lock = threading.Lock()

    def open_session(self, environment: SessionEnvironment) -> SessionHandle:
        with self._lock:
            self.open_sessions += 1
            self.config = dict(environment.config)
        return SessionHandle.create()

    def close_session(self, session: SessionHandle) -> None:
        with self._lock:
            self.open_sessions -= 1

    def refresh_materialized_table(
        self, session: SessionHandle, identifier: str, **kwargs: Any
    ) -> OperationHandle:
        with self._lock:
            self.refreshes.append({"identifier": identifier, **kwargs})
        self.fired.set()
        return OperationHandle.create()

    def fetch_results(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        token: int,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet:
        batch = pa.RecordBatch.from_arrays([pa.array(["job-1"])], names=["job id"])
        return ResultSet(
            ResultType.EOS,
            next_token=None,
            schema=ResultSchema.of(("job id", STRING)),
            batches=(batch,),
        )

    def times(self) -> list[str]:
        """The schedule times refreshed, in order."""
        with self._lock:
            return [str(r["schedule_time"]) for r in self.refreshes]
