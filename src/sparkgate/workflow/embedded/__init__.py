"""The built-in ``embedded`` workflow scheduler: durable, in the gateway's process."""

from sparkgate.workflow.embedded.scheduler import (
    EmbeddedRefreshHandler,
    EmbeddedWorkflowScheduler,
    EmbeddedWorkflowSchedulerFactory,
)

__all__ = [
    "EmbeddedRefreshHandler",
    "EmbeddedWorkflowScheduler",
    "EmbeddedWorkflowSchedulerFactory",
]
