"""A workflow scheduler plug-in for tests: it records every operation the gateway
asks of it, to show the FLIP-448 plug-in API reaches a scheduler whole."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

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
