"""Whether the gateway can serve: its engine's state, for probes and operators."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["EngineState", "GatewayHealth"]


class EngineState(enum.Enum):
    """The Spark engine behind the gateway."""

    STARTING = "STARTING"
    UP = "UP"
    #: Dead; a new engine starts after the back-off (or never, past the restart limit).
    DOWN = "DOWN"
    RESTARTING = "RESTARTING"


@dataclass(frozen=True)
class GatewayHealth:
    """What the readiness probe answers: ready only while the engine is up."""

    state: EngineState
    #: Why the engine is not up (the last death's cause), else None.
    cause: str | None = None
    #: Engines started after a death since the gateway started.
    restarts: int = 0
    #: The gateway is shutting down: it finishes what runs and takes no new work.
    draining: bool = False

    @property
    def ready(self) -> bool:
        return self.state is EngineState.UP and not self.draining
