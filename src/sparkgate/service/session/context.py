"""Everything one session carries between its statements, in one place.

A :class:`SessionContext` belongs to one :class:`~.session.Session`: its
configuration (the gateway's defaults and the session's own properties), its
jars, the statement set in progress, its temporary connector tables and the
job manager its jobs go to. Nothing of a session lives in module-level state,
so sessions never see each other's and a closed session leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparkgate.service.modules import SessionModules
from sparkgate.service.session.recipe import SessionRecipe

if TYPE_CHECKING:
    from sparkgate.api.modules import ModuleFactory
    from sparkgate.service.catalogs.registry import CatalogRegistry
    from sparkgate.service.job.manager import JobManager
    from sparkgate.service.materialized.manager import MaterializedTableManager
    from sparkgate.service.streaming.resolve import TemporaryTable

__all__ = ["SessionContext"]


@dataclass
class SessionContext:
    """The per-session state the statement handlers read and change.

    ``statement_set`` is ``None`` outside ``BEGIN STATEMENT SET`` and the
    statements buffered so far inside it. ``temporary_tables`` maps a
    temporary connector table's lower-cased name to what the connector
    resolution keeps for it (:mod:`sparkgate.service.streaming.resolve`
    reads and writes it; the session owns it). ``temporary_functions`` maps a
    temporary catalog function's lower-cased name (Flink's ``CREATE TEMPORARY
    FUNCTION [c.db.]f``, a Spark temporary function ``f``) to the catalog and
    database it was made in, where SHOW FUNCTIONS lists it. ``catalogs`` is the gateway's
    catalog registry (CREATE CATALOG) and ``materialized`` its materialized
    tables, both shared by every session. ``recipe`` holds the statements that
    made the session's state in Spark, to make it again on a new engine.
    ``modules`` are its loaded and used modules, ``module_factories`` the
    gateway's module plug-ins.
    """

    jobs: JobManager
    defaults: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    jars: list[str] = field(default_factory=list)
    statement_set: list[Any] | None = None
    temporary_tables: dict[str, TemporaryTable] = field(default_factory=dict)
    temporary_functions: dict[str, tuple[str, str]] = field(default_factory=dict)
    catalogs: CatalogRegistry | None = None
    materialized: MaterializedTableManager | None = None
    recipe: SessionRecipe = field(default_factory=SessionRecipe)
    modules: SessionModules = field(default_factory=SessionModules)
    module_factories: Mapping[str, ModuleFactory] = field(default_factory=dict)

    @property
    def in_statement_set(self) -> bool:
        return self.statement_set is not None
