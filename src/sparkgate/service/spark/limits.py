"""How a result leaves Spark: the ``sql-gateway.result.*`` options as one value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["ResultLimits"]


@dataclass(frozen=True)
class ResultLimits:
    """Bounds on what one result may take from the engine, the gateway and the disk."""

    #: Partitions collected per Spark job when a result is collected.
    window: int = 2
    #: Results Spark estimates larger than this are relayed, not collected.
    direct_bytes: int = 32 << 20
    #: The largest Arrow batch a relaying task may send.
    max_batch_bytes: int = 64 << 20
    #: Unread bytes of a relayed partition spooled to disk before its task waits.
    spool_bytes: int = 1 << 30
    #: Where relayed partitions are spooled; None: the system's temporary directory.
    spool_dir: Path | None = None
