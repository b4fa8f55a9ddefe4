"""Modules: LOAD / UNLOAD / USE MODULES and SHOW [FULL] MODULES, per session; a
plug-in module's functions are the session's while it is used, first module first."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from sparkgate.api.errors import ExecutionError
from sparkgate.api.modules import Module
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.gateway import SparkGatewayService
from tests.service.conftest import run


class Functions:
    def __init__(self, functions: Mapping[str, str]) -> None:
        self._functions = dict(functions)

    def functions(self) -> Mapping[str, str]:
        return self._functions


class Factory:
    def __init__(self, functions: Mapping[str, str]) -> None:
        self._functions = functions

    def create(self, options: Mapping[str, str]) -> Module:
        if options:
            raise ValueError("takes no options")
        return Functions(self._functions)


# Hive UDF classes on Spark's class path: pi() and e() under one name, to see which wins.
PI = "org.apache.hadoop.hive.ql.udf.UDFPI"
E = "org.apache.hadoop.hive.ql.udf.UDFE"


def test_the_built_in_modules_load_order_and_unload(service: SparkGatewayService) -> None:
    session = service.open_session(SessionEnvironment(session_name="modules"))
    try:
        assert run(service, session, "SHOW MODULES") == [("core",)]
        with pytest.raises(ExecutionError, match="A module with name 'core' already exists"):
            run(service, session, "LOAD MODULE core")
        with pytest.raises(ExecutionError, match="Available factory identifiers are: core, hive"):
            run(service, session, "LOAD MODULE Hive")
        with pytest.raises(ExecutionError, match="Option 'type' = 'hive' is not supported"):
            run(service, session, "LOAD MODULE myhive WITH ('type' = 'hive')")
        assert run(service, session, "LOAD MODULE hive") == [("OK",)]
        assert run(service, session, "SHOW FULL MODULES") == [("core", True), ("hive", True)]
        with pytest.raises(ExecutionError, match="Module 'hive' appears more than once"):
            run(service, session, "USE MODULES hive, core, hive")
        run(service, session, "USE MODULES hive, core")
        assert run(service, session, "SHOW MODULES") == [("hive",), ("core",)]
        run(service, session, "USE MODULES core")
        assert run(service, session, "SHOW FULL MODULES") == [("core", True), ("hive", False)]
        run(service, session, "UNLOAD MODULE core")
        assert run(service, session, "SHOW MODULES") == []
        with pytest.raises(ExecutionError, match="No module with name 'core' exists"):
            run(service, session, "UNLOAD MODULE core")
        other = service.open_session(SessionEnvironment(session_name="modules-other"))
        assert run(service, other, "SHOW MODULES") == [("core",)]  # per session
        service.close_session(other)
    finally:
        service.close_session(session)


def test_a_plug_in_modules_functions_follow_its_use(service: SparkGatewayService) -> None:
    factories = service._module_factories  # the gateway's plug-ins, as entry points give them
    factories["circle"] = Factory({"constant": PI})
    factories["growth"] = Factory({"constant": E})
    session = service.open_session(SessionEnvironment(session_name="plug-in"))
    try:
        with pytest.raises(ExecutionError, match="UNRESOLVED_ROUTINE"):
            run(service, session, "SELECT constant()")
        run(service, session, "LOAD MODULE circle")
        [(value,)] = run(service, session, "SELECT round(constant(), 5)")
        assert float(value) == 3.14159
        run(service, session, "LOAD MODULE growth")  # after circle: circle's still wins
        assert float(run(service, session, "SELECT round(constant(), 5)")[0][0]) == 3.14159
        run(service, session, "USE MODULES growth, circle, core")
        assert float(run(service, session, "SELECT round(constant(), 5)")[0][0]) == 2.71828
        run(service, session, "UNLOAD MODULE growth")
        assert float(run(service, session, "SELECT round(constant(), 5)")[0][0]) == 3.14159
        run(service, session, "USE MODULES core")
        with pytest.raises(ExecutionError, match="UNRESOLVED_ROUTINE"):
            run(service, session, "SELECT constant()")
    finally:
        service.close_session(session)
        del factories["circle"], factories["growth"]
