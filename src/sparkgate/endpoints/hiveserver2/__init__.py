"""The HiveServer2 endpoint: Thrift TCLIService (binary SASL/NOSASL and HTTP)."""

from __future__ import annotations

__all__: list[str] = []
