"""One gateway session: its own Spark session, properties and operations.

Each session owns ``SparkSession.newSession()``: its own SQL conf, temporary
views and functions and current catalog/database, over the one SparkContext.
Properties live here as strings (what Flink's clients send and read back);
those Spark understands (``spark.*``, ``hive.*``) are applied to the Spark
session too, so they take effect for this session only.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sparkgate.api.config import ConfigOption, Configuration
from sparkgate.api.errors import (
    ConfigurationError,
    ExecutionError,
    PermissionDeniedError,
    SessionNotFoundError,
)
from sparkgate.api.handles import SessionHandle
from sparkgate.api.session import SessionEnvironment
from sparkgate.service.operation.manager import OperationManager
from sparkgate.service.operation.operation import Operation
from sparkgate.service.operation.oplog import operation_context
from sparkgate.service.options import DENIED_SPARK_SETTINGS, SERVICE_OPTIONS
from sparkgate.service.session.context import SessionContext
from sparkgate.service.session.image import SessionImage
from sparkgate.service.session.recipe import SessionRecipe
from sparkgate.service.session.resources import SessionResources
from sparkgate.service.spark.confinement import PathRoots
from sparkgate.service.spark.jobs import cancel_tag, job_scope, to_execution_error
from sparkgate.service.spark.limits import ResultLimits
from sparkgate.service.spark.pools import remove_pool
from sparkgate.service.spark.release import released

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkgate.service.job.manager import JobManager

__all__ = [
    "FLINK_TIME_ZONE_KEY",
    "HIVESERVER2",
    "SPARK_TIME_ZONE_KEY",
    "Session",
    "is_spark_key",
    "may_act_on",
    "user_pool",
]

log = logging.getLogger(__name__)

#: Session properties choosing the session's scheduler pool: the gateway's, then the one
#: Spark's Thrift server reads.
POOL_KEYS = ("sql-gateway.session.scheduler.pool", "spark.sql.thriftserver.scheduler.pool")

# The gateway's typed options a session may set: their values are checked.
_TYPED_OPTIONS: dict[str, ConfigOption[Any]] = {o.key: o for o in SERVICE_OPTIONS}

_SPARK_PREFIXES = ("spark.", "hive.")

# One setting under two names: Flink's key drives Spark's session time zone, and
# Spark's key shows under Flink's, so current_timezone(), CAST(ts AS STRING) and
# the values the endpoints render agree.
FLINK_TIME_ZONE_KEY = "table.local-time-zone"
SPARK_TIME_ZONE_KEY = "spark.sql.session.timeZone"
_TIME_ZONE_KEYS = (FLINK_TIME_ZONE_KEY, SPARK_TIME_ZONE_KEY)
# Flink's value for "the system's zone": Spark's own default (the JVM's zone).
_SYSTEM_ZONE = "default"


def is_spark_key(key: str) -> bool:
    return key.startswith(_SPARK_PREFIXES)


#: The endpoint whose sessions get Spark's result shapes; every other, Flink's.
HIVESERVER2 = "hiveserver2"


class Session:
    """One gateway session; what its statements share is its :attr:`context`."""

    def __init__(
        self,
        handle: SessionHandle,
        environment: SessionEnvironment,
        spark: Callable[[Session], SparkSession],
        defaults: Mapping[str, str],
        operations: OperationManager,
        result_limits: ResultLimits | None = None,
        *,
        jobs: JobManager,
        host_statements: Collection[str] = (),
        path_roots: PathRoots | None = None,
    ) -> None:
        self.handle = handle
        self.environment = environment
        # Made at the first use, not at open: a session a client opens and never
        # uses (a pool's spare connection, a probe) costs the engine nothing.
        self._make_spark = spark
        self._spark: SparkSession | None = None
        # The Spark session being bound: settings go to it before others can see it.
        self._binding: SparkSession | None = None
        self._closed = False
        self.operations = operations
        self.result_limits = result_limits or ResultLimits()
        #: Kinds of host-touching Spark SQL this session may run (host_access).
        self.host_statements = frozenset(host_statements)
        #: Where its SQL may name files (confinement); None: anywhere.
        self.path_roots = path_roots
        #: Told when it closes, after its operations (the audit log).
        self.on_closed: Callable[[Session], None] | None = None
        #: The FAIR scheduler pool made for this session (pools.py): an authenticated
        #: user's sessions share one, so that users, not sessions, share the cores.
        principal = environment.principal
        self.shared_pool = principal is not None and principal.authenticated
        self.own_pool = (
            user_pool(principal.name)
            if principal is not None and principal.authenticated
            else f"session-{handle.identifier.hex[:12]}"
        )
        self.created = time.time()
        self.last_access = time.monotonic()
        self.context = SessionContext(jobs, defaults=dict(defaults), jars=list(environment.jars))
        self.resources = SessionResources(
            jobs.data_dir / "sessions" / handle.identifier.hex / "resources"
        )
        self._defaults = self.context.defaults
        self._properties = self.context.properties
        self._lock = threading.RLock()
        denied: tuple[str, ...] = Configuration(self._defaults).get(DENIED_SPARK_SETTINGS)
        self._denied = tuple(pattern.lower() for pattern in denied)
        # Spark settings among them reach Spark when its session is made (_bind);
        # one Spark fixes at start-up (Flink's client sends its whole flink-conf) is
        # kept, and said to stay unapplied, then.
        for key, value in environment.config.items():
            try:
                self.set(key, value)
            except ConfigurationError as exc:
                if not self._is_denied(key):
                    raise
                # A client's connection string may carry them (JDBC ;spark.executor.memory=):
                # kept as it was given, never applied.
                self._properties[key] = value
                log.warning("Session %s: %s is not applied: %s", handle, key, exc)

    @property
    def spark(self) -> SparkSession:
        """The session's Spark session, made (with its properties applied) at first use."""
        spark = self._spark
        if spark is not None:
            return spark
        with self._lock:
            if self._spark is None:
                if self._closed:
                    raise SessionNotFoundError(f"Session '{self.handle}' is closed")
                self._bind(self._make_spark(self))
            assert self._spark is not None
            return self._spark

    @property
    def has_spark(self) -> bool:
        """Whether the session's Spark session was made yet."""
        return self._spark is not None

    def _bind(self, spark: SparkSession) -> None:
        """Use ``spark`` from now on, with the session's properties applied to it
        first: another thread sees it only once they are (under ``_lock``)."""
        self._binding = spark
        try:
            zone = self._default_zone()
            if zone is not None:
                with contextlib.suppress(ExecutionError):
                    self._apply_spark(SPARK_TIME_ZONE_KEY, zone)
            for key, value in list(self._properties.items()):
                if self._is_denied(key):
                    continue  # kept as it was given, never applied
                try:
                    if key in _TIME_ZONE_KEYS:
                        self._set_time_zone(key, value)
                    elif is_spark_key(key):
                        self._apply_spark(key, value)
                except ExecutionError as exc:  # kept, but unapplied
                    log.warning("Session %s: %s stays unapplied: %s", self.handle, key, exc.message)
            self._spark = spark
        finally:
            self._binding = None

    def _target(self) -> SparkSession | None:
        """Where settings go: the Spark session being bound, else the bound one."""
        return self._binding if self._binding is not None else self._spark

    @property
    def flink_shapes(self) -> bool:
        """Whether the session's protocol reads Flink's result columns (names, shapes)."""
        version = self.environment.endpoint_version
        return version is None or version.endpoint != HIVESERVER2

    def touch(self) -> None:
        self.last_access = time.monotonic()

    @property
    def name(self) -> str | None:
        return self.environment.session_name

    # -- properties ------------------------------------------------------------
    def config(self) -> dict[str, str]:
        """Gateway defaults overlaid with this session's properties.

        Spark's session time zone is always there, its effective value when
        nobody set it (the JVM's zone): endpoints and clients render
        TIMESTAMP values in it, as Spark's own CAST(ts AS STRING) does.
        """
        with self._lock:
            merged = dict(self._defaults)
            merged.update(self._properties)
            if SPARK_TIME_ZONE_KEY not in merged:
                with contextlib.suppress(Exception):
                    merged[SPARK_TIME_ZONE_KEY] = self.time_zone()
            return merged

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._properties.get(key, self._defaults.get(key))

    def set(self, key: str, value: str) -> None:
        """Set one property; a value a typed gateway option cannot take is refused.

        Raises:
            ConfigurationError: ``value`` is not of ``key``'s type or choices.
        """
        self.check_setting(key, value)
        with self._lock:
            if key in _TIME_ZONE_KEYS:
                self._set_time_zone(key, value)
                return
            if is_spark_key(key):
                self._apply_spark(key, value)
            self._properties[key] = value

    def check_setting(self, key: str, value: str) -> None:
        """Refuse what :meth:`set` refuses, changing nothing: a denied Spark setting,
        or a value a typed gateway option cannot take (the option's own parse error).
        A statement's SET and its own options are checked so as they are submitted.

        Raises:
            ConfigurationError: naming ``key`` and what it takes.
        """
        self.check_settable(key)
        option = _TYPED_OPTIONS.get(key)
        if option is not None:
            try:
                option.parse(value)
            except ValueError as exc:
                raise ConfigurationError(f"Invalid value {value!r} for {key}: {exc}") from exc

    def check_settable(self, key: str) -> None:
        """Refuse a Spark setting of ``sql-gateway.security.denied-spark-settings``.

        Raises:
            ConfigurationError: ``key`` matches one of its patterns.
        """
        pattern = self._is_denied(key)
        if pattern:
            raise ConfigurationError(
                f"A session may not set '{key}': {DENIED_SPARK_SETTINGS.key} lists "
                f"'{pattern}' (it is the gateway's to choose)"
            )

    def _is_denied(self, key: str) -> str | None:
        """The deny-list pattern ``key`` matches, if any."""
        lowered = key.strip().lower()
        if not is_spark_key(lowered):
            return None
        return next((p for p in self._denied if fnmatch.fnmatchcase(lowered, p)), None)

    def _set_time_zone(self, key: str, value: str) -> None:
        if key == FLINK_TIME_ZONE_KEY and value.strip().lower() == _SYSTEM_ZONE:
            self._restore_time_zone()
            self._properties.pop(SPARK_TIME_ZONE_KEY, None)
            self._properties[FLINK_TIME_ZONE_KEY] = value
            return
        if self._target() is None:
            # Applied (and then kept under both keys) when the Spark session is
            # made; one Spark refuses stays the given key's alone, as here.
            self._properties[key] = value
            return
        self._apply_spark(SPARK_TIME_ZONE_KEY, value)
        for name in _TIME_ZONE_KEYS:
            self._properties[name] = value

    def _default_zone(self) -> str | None:
        """The zone the gateway's configuration sets, under either key."""
        for name in (SPARK_TIME_ZONE_KEY, FLINK_TIME_ZONE_KEY):
            zone = self._defaults.get(name)
            if zone and zone.strip().lower() != _SYSTEM_ZONE:
                return zone
        return None

    def _restore_time_zone(self) -> None:
        zone = self._default_zone()
        if zone is not None:
            self._apply_spark(SPARK_TIME_ZONE_KEY, zone)
        else:
            self._unset_spark(SPARK_TIME_ZONE_KEY)

    def time_zone(self) -> str:
        """Spark's effective session time zone (the JVM's unless set)."""
        return str(self.spark.conf.get(SPARK_TIME_ZONE_KEY))

    def reset(self, key: str | None = None) -> None:
        """Back to the gateway's defaults: one key, or every key."""
        with self._lock:
            keys = [key] if key is not None else list(self._properties)
            if any(name in _TIME_ZONE_KEYS for name in keys):
                for name in _TIME_ZONE_KEYS:
                    self._properties.pop(name, None)
                self._restore_time_zone()
                keys = [name for name in keys if name not in _TIME_ZONE_KEYS]
            for name in keys:
                self._properties.pop(name, None)
                if is_spark_key(name):
                    default = self._defaults.get(name)
                    if default is not None:
                        self._apply_spark(name, default)
                    else:
                        self._unset_spark(name)

    def _apply_spark(self, key: str, value: str) -> None:
        """Set ``key`` in the Spark session, once it is made (_bind applies it then)."""
        target = self._target()
        if target is None:
            return
        try:
            target.conf.set(key, value)
        except Exception as exc:
            raise to_execution_error(exc) from exc

    def _unset_spark(self, key: str) -> None:
        target = self._target()
        if target is not None:
            with contextlib.suppress(Exception):
                target.conf.unset(key)

    @contextlib.contextmanager
    def statement_config(self, config: Mapping[str, str]) -> Iterator[dict[str, str]]:
        """Apply operation-level options for one statement, then restore them.

        Spark options set here are visible to the session's other operations
        running at the same time: Spark has one SQL conf per session.
        """
        merged = self.config()
        merged.update(config)
        saved: dict[str, str | None] = {}
        config = dict(config)
        zone = config.get(FLINK_TIME_ZONE_KEY)
        if zone and zone.strip().lower() != _SYSTEM_ZONE:
            config.setdefault(SPARK_TIME_ZONE_KEY, zone)
        for key in config:
            self.check_settable(key)
        try:
            for key, value in config.items():
                if is_spark_key(key):
                    saved[key] = self.spark.conf.get(key, None)
                    self._apply_spark(key, value)
            yield merged
        finally:
            for key, old in saved.items():
                with contextlib.suppress(Exception):
                    if old is None:
                        self.spark.conf.unset(key)
                    else:
                        self.spark.conf.set(key, old)

    # -- operations -----------------------------------------------------------
    def operation_scope(
        self, operation: Operation, config: Mapping[str, str]
    ) -> AbstractContextManager[None]:
        """Where an operation runs: its options, job tag, description and log."""
        return _scope(self, operation, config)

    def interrupt(self, operation: Operation) -> None:
        if self._spark is not None:  # else it has started nothing in Spark
            cancel_tag(self._spark.sparkContext, operation.job_tag)

    def scheduler_pool(self) -> str:
        """The FAIR scheduler pool this session's jobs run in: its own unless set."""
        for key in POOL_KEYS:
            chosen = self.get(key)
            if chosen:
                return chosen
        return self.own_pool

    def image(self, operations: Mapping[str, bool] | None = None) -> SessionImage:
        """This session as data (session/image.py), with ``operations`` as its open ones."""
        with self._lock:
            recipe = SessionRecipe.from_json(self.context.recipe.to_json())
            return SessionImage(
                str(self.handle),
                self.environment,
                dict(self._properties),
                recipe,
                self.created,
                dict(operations or {}),
            )

    def rebind(self, spark: SparkSession) -> SessionRecipe:
        """Move this session onto a new engine's ``spark``.

        Its properties are applied to ``spark`` again; what else it had in its
        old Spark session is returned, as the statements to run again (which
        record themselves anew as they run).
        """
        with self._lock:
            self.context.temporary_tables.clear()
            self.context.jars[:] = self.environment.jars
            recipe, self.context.recipe = self.context.recipe, SessionRecipe()
            self._bind(spark)
        return recipe

    def close(self) -> None:
        # A first use binds under the lock: after this no Spark session is made, and
        # one a racing first use made is the one read here.
        with self._lock:
            self._closed = True
            spark = self._spark
        try:
            self.operations.close_all()
            if self.on_closed is not None:
                self.on_closed(self)
            self.resources.remove()
            # A user's pool stays for their next session; a session that never made
            # its Spark session has no pool.
            if not self.shared_pool and spark is not None:
                remove_pool(spark.sparkContext, self.own_pool)
        finally:
            if spark is not None:
                released(spark)  # it leaves the JVM in seconds, not hours


def user_pool(name: str) -> str:
    """The FAIR pool of an authenticated user's sessions."""
    readable = re.sub(r"[^A-Za-z0-9_.@-]", "_", name)[:40]
    return f"user-{readable}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def may_act_on(session: Session, owner: str | None, kind: str, name: str) -> None:
    """Refuse a user's session to stop, suspend or drop another user's ``kind``
    (an admin's, or one made without authentication, may)."""
    principal = session.environment.principal
    if principal is None or not principal.authenticated or principal.admin:
        return
    if owner is not None and owner != principal.name:
        raise PermissionDeniedError(
            f"The {kind} '{name}' belongs to user '{owner}'; '{principal.name}' may not change it"
        )


@contextlib.contextmanager
def _scope(session: Session, operation: Operation, config: Mapping[str, str]) -> Iterator[None]:
    with (
        operation_context(operation),
        session.statement_config(config),
        job_scope(
            session.spark.sparkContext,
            operation.job_tag,
            operation.statement,
            session.scheduler_pool(),
            session.environment.user,
        ),
    ):
        yield
