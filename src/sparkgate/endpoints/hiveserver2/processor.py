"""The Thrift processor: PyHive's generated TCLIService processor, made robust.

Two changes to the generated ``Processor``:

* a call the server does not serve (impyla's ``GetLog`` and
  ``CloseImpalaOperation``, anything newer) answers a ``TApplicationException``
  ``UNKNOWN_METHOD`` and the connection stays usable. The generated code skips
  the arguments with Thrift's generic ``skip``, which decodes every string as
  UTF-8 and fails on the binary GUIDs of handles; here they are skipped as
  bytes.
* ``GetLog`` (an old Cloudera call the generated code routes) is one of those
  unknown calls: logs are read with ``FetchResults`` and ``fetchType=1``.
"""

from __future__ import annotations

import logging
from typing import Any

from TCLIService import TCLIService
from thrift.Thrift import TApplicationException, TMessageType, TType

__all__ = ["CLIServiceProcessor", "skip_value"]

log = logging.getLogger(__name__)

_UNSERVED = frozenset({"GetLog"})


def skip_value(iprot: Any, ttype: int) -> None:
    """Skip one value of type ``ttype``, reading strings as raw bytes."""
    if ttype == TType.STOP:
        return
    if ttype == TType.BOOL:
        iprot.readBool()
    elif ttype == TType.BYTE:
        iprot.readByte()
    elif ttype == TType.I16:
        iprot.readI16()
    elif ttype == TType.I32:
        iprot.readI32()
    elif ttype == TType.I64:
        iprot.readI64()
    elif ttype == TType.DOUBLE:
        iprot.readDouble()
    elif ttype == TType.STRING:
        iprot.readBinary()
    elif ttype == TType.STRUCT:
        iprot.readStructBegin()
        while True:
            _name, field_type, _fid = iprot.readFieldBegin()
            if field_type == TType.STOP:
                break
            skip_value(iprot, field_type)
            iprot.readFieldEnd()
        iprot.readStructEnd()
    elif ttype == TType.MAP:
        key_type, value_type, size = iprot.readMapBegin()
        for _ in range(size):
            skip_value(iprot, key_type)
            skip_value(iprot, value_type)
        iprot.readMapEnd()
    elif ttype in (TType.SET, TType.LIST):
        begin, end = (
            (iprot.readSetBegin, iprot.readSetEnd)
            if ttype == TType.SET
            else (iprot.readListBegin, iprot.readListEnd)
        )
        element_type, size = begin()
        for _ in range(size):
            skip_value(iprot, element_type)
        end()
    else:
        raise TApplicationException(
            TApplicationException.PROTOCOL_ERROR, f"cannot skip a value of Thrift type {ttype}"
        )


class CLIServiceProcessor(TCLIService.Processor):  # type: ignore[misc]
    def __init__(self, handler: Any) -> None:
        super().__init__(handler)
        for name in _UNSERVED:
            self._processMap.pop(name, None)

    def process(self, iprot: Any, oprot: Any) -> bool:
        name, _type, seqid = iprot.readMessageBegin()
        call = self._processMap.get(name)
        if call is None:
            skip_value(iprot, TType.STRUCT)
            iprot.readMessageEnd()
            log.info("HiveServer2 client called unknown method %s", name)
            error = TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Unknown function {name}"
            )
            oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
            error.write(oprot)
            oprot.writeMessageEnd()
            oprot.trans.flush()
            return True
        call(self, seqid, iprot, oprot)
        return True
