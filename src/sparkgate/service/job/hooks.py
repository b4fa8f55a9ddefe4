"""Finding job status hooks by name and calling them safely.

Hooks are plug-ins registered under the entry-point group
``sparkgate.job_status_hooks`` (the entry's name is the hook's name; its
value a :class:`JobStatusHook` class, factory or instance);
``sql-gateway.job.status-hooks`` lists the ones a gateway runs.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from sparkgate.api.errors import ConfigurationError
from sparkgate.api.jobs import HOOK_ENTRY_POINT_GROUP, JobInfo, JobStatus, JobStatusHook

__all__ = ["DurableHook", "DurableHookFactory", "load_hooks", "run_hooks"]

log = logging.getLogger(__name__)


@runtime_checkable
class DurableHook(Protocol):
    """A job's own hook that the job store keeps with the job (a CTAS's, say).

    A job the gateway process left unfinished comes back FAILED at the next
    start, and its durable hooks are made again from their records
    (:meth:`JobManager.register_durable_hook`'s factory for ``kind``) and told
    so: what the job left half-made is cleaned up even across a crash. A job's
    own hooks are strict on ``on_created``: one that raises fails the job
    before its work starts, and the submitter sees the error.
    """

    kind: str

    def record(self) -> dict[str, Any]:
        """What remaking the hook needs, as JSON values; read on every store write."""
        ...


#: Makes a durable hook of one kind again from its record.
DurableHookFactory = Callable[[Mapping[str, Any]], Any]


def load_hooks(names: Sequence[str]) -> list[JobStatusHook]:
    """The hooks named in ``names``, in that order; a name not found or a hook that
    does not load is a configuration error (the gateway does not start without it)."""
    if not names:
        return []
    entries = {e.name: e for e in entry_points(group=HOOK_ENTRY_POINT_GROUP)}
    hooks = []
    for name in names:
        entry = entries.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(entries), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            known = ", ".join(sorted(entries)) or "none"
            raise ConfigurationError(
                f"Unknown job status hook '{name}' in sql-gateway.job.status-hooks.{hint} "
                f"Installed hooks: {known}."
            )
        try:
            loaded: Any = entry.load()
            # A class or a factory function is called; an instance is used as is.
            if isinstance(loaded, type) or not isinstance(loaded, JobStatusHook):
                hook = loaded() if callable(loaded) else loaded
            else:
                hook = loaded
        except Exception as exc:
            raise ConfigurationError(
                f"Job status hook '{name}' ({entry.value}) failed to load: {exc}"
            ) from exc
        if not isinstance(hook, JobStatusHook):
            raise ConfigurationError(
                f"Job status hook '{name}' ({entry.value}) is not a JobStatusHook: it needs "
                "on_created, on_finished, on_failed and on_canceled."
            )
        hooks.append(hook)
        log.info("Job status hook '%s' enabled (%s)", name, entry.value)
    return hooks


def run_hooks(hooks: Iterable[JobStatusHook], job: JobInfo) -> None:
    """Tell every hook about ``job``'s status; one that raises is logged and skipped."""
    for hook in hooks:
        try:
            if job.status is JobStatus.CREATED:
                hook.on_created(job)
            elif job.status is JobStatus.FINISHED:
                hook.on_finished(job)
            elif job.status is JobStatus.FAILED:
                hook.on_failed(job, job.cause or "unknown cause")
            elif job.status is JobStatus.CANCELED:
                hook.on_canceled(job)
        except Exception as exc:
            log.error(
                "Job status hook %s failed on job %s (%s): %s: %s",
                type(hook).__name__,
                job.job_id,
                job.status.value,
                type(exc).__name__,
                exc,
                exc_info=True,
            )
