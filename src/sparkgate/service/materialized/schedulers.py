"""Finding the workflow scheduler ``workflow-scheduler.type`` names (FLIP-448).

Schedulers are plug-ins of the entry-point group
:data:`~sparkgate.api.workflow.WORKFLOW_SCHEDULER_GROUP`; the built-in
``embedded`` one is registered the same way in sparkgate's own
``pyproject.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from sparkgate.api.errors import ConfigurationError
from sparkgate.api.workflow import (
    WORKFLOW_SCHEDULER_GROUP,
    RefreshService,
    WorkflowScheduler,
    WorkflowSchedulerContext,
    WorkflowSchedulerFactory,
)

__all__ = ["OPTION_PREFIX", "load_workflow_scheduler"]

OPTION_PREFIX = "workflow-scheduler."


def load_workflow_scheduler(
    type_name: str,
    configuration: Mapping[str, str],
    data_dir: str,
    service: RefreshService | None,
    state_url: str | None = None,
) -> WorkflowScheduler[Any]:
    """The scheduler of ``type_name``, made by its factory with its prefixed options.

    Raises:
        ConfigurationError: no plug-in of that name, or its options are wrong.
    """
    found = {ep.name: ep for ep in entry_points(group=WORKFLOW_SCHEDULER_GROUP)}
    entry = found.get(type_name)
    if entry is None:
        known = ", ".join(sorted(found)) or "none"
        raise ConfigurationError(
            f"Unknown workflow-scheduler.type '{type_name}' (installed: {known}); a scheduler "
            f"is a plug-in of the entry-point group '{WORKFLOW_SCHEDULER_GROUP}'"
        )
    factory = entry.load()()
    if not isinstance(factory, WorkflowSchedulerFactory):
        raise ConfigurationError(
            f"Workflow scheduler '{type_name}' ({entry.value}) is not a WorkflowSchedulerFactory"
        )
    prefix = f"{OPTION_PREFIX}{type_name}."
    options = {k[len(prefix) :]: v for k, v in configuration.items() if k.startswith(prefix)}
    context = WorkflowSchedulerContext(dict(configuration), options, data_dir, service, state_url)
    return factory.create_workflow_scheduler(context)
