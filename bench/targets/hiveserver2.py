"""sparkgate over HiveServer2 (Thrift), driven by PyHive like the Thrift server.

The slot is ready: once ``sparkgate.endpoints.hiveserver2`` exists, start the
gateway with that endpoint (see :func:`bench.servers.start_rest_gateway` for
the pattern) and reuse :class:`bench.targets.thrift.ThriftTarget`'s session,
which speaks the same protocol. Until then the target reports itself as not
available and the run goes on without it.
"""

from __future__ import annotations

import importlib.util

from bench.targets.base import Session, Target

__all__ = ["HiveServer2Target"]


class HiveServer2Target(Target):
    name = "hs2"
    label = "sparkgate HiveServer2"
    modes = ("rows",)

    def unavailable(self) -> str | None:
        try:
            found = importlib.util.find_spec("sparkgate.endpoints.hiveserver2")
        except (ImportError, ValueError):
            found = None
        if found is None:
            return "not available yet: sparkgate has no HiveServer2 endpoint"
        return "the HiveServer2 endpoint exists, but this benchmark does not drive it yet"

    def launch(self) -> None:
        raise NotImplementedError

    def wait_ready(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        pass

    def open_session(self, mode: str | None = None) -> Session:
        raise NotImplementedError
