"""Modules: sets of functions a session loads, orders and unloads (Flink's
``LOAD MODULE``, ``USE MODULES``, ``UNLOAD MODULE``, ``SHOW [FULL] MODULES``).

A module plug-in is a :class:`ModuleFactory` registered under the entry-point
group ``sparkgate.modules``; its name is the module's name, as in Flink (the
``hive`` of ``LOAD MODULE hive``). The built-in ``core`` and ``hive`` modules
are registered the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

__all__ = ["MODULES_GROUP", "Module", "ModuleFactory"]

MODULES_GROUP = "sparkgate.modules"


@runtime_checkable
class Module(Protocol):
    """What a loaded module gives a session."""

    def functions(self) -> Mapping[str, str]:
        """Function name to the JVM class that implements it (a Hive UDF or a
        Spark ``UserDefinedFunction`` class, as ``CREATE FUNCTION ... AS`` takes).

        While the module is in use the functions are the session's temporary
        functions; where two modules in use name the same function, the one
        first in ``USE MODULES`` order is the one called.
        """
        ...


@runtime_checkable
class ModuleFactory(Protocol):
    """Makes a module for ``LOAD MODULE <name> [WITH (options)]``."""

    def create(self, options: Mapping[str, str]) -> Module:
        """The module, with ``options`` from the WITH clause; raises ``ValueError``
        naming an option it does not take."""
        ...
