"""sparkgate over HiveServer2 (Thrift), driven by PyHive exactly like the Thrift server.

The gateway runs with only its HiveServer2 endpoint (binary transport,
NOSASL, the same authentication the Thrift server target uses), so the two
targets differ in the server alone: same client, same calls, same fetch size.
"""

from __future__ import annotations

import importlib.util
import logging
import time

from bench.servers import free_port, start_rest_gateway
from bench.targets.thrift import ThriftTarget

__all__ = ["HiveServer2Target"]


class HiveServer2Target(ThriftTarget):
    name = "hs2"
    label = "sparkgate HiveServer2"

    def unavailable(self) -> str | None:
        if importlib.util.find_spec("sparkgate.endpoints.hiveserver2") is None:
            return "sparkgate has no HiveServer2 endpoint"
        try:
            import pyhive.hive  # noqa: F401
            import thrift  # noqa: F401
        except ImportError as exc:
            return f"PyHive/thrift not installed ({exc}); run make bench"
        return None

    def launch(self) -> None:
        logging.getLogger("pyhive").setLevel(logging.WARNING)
        self.port = free_port()
        self._launched_at = time.monotonic()
        # The REST options the helper sets are harmless: REST is not started.
        self._process = start_rest_gateway(
            self.work_dir,
            self.settings.spark,
            free_port(),
            name="gateway-hs2",
            extra_options={
                "sql-gateway.endpoint.type": "hiveserver2",
                "sql-gateway.endpoint.hiveserver2.port": str(self.port),
                "sql-gateway.endpoint.hiveserver2.transport-mode": "binary",
                "sql-gateway.endpoint.hiveserver2.authentication": "NOSASL",
                # One thread per binary connection, as the Thrift server: the
                # idle-sessions workload holds 1,000 of them (same as its 2048).
                "sql-gateway.endpoint.hiveserver2.worker-threads": "2048",
            },
        )
