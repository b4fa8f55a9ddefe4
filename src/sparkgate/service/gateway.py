"""The GatewayService on Spark: the facade every endpoint and client calls.

This is the only object an endpoint sees. It owns the worker pool and the
session manager, and (when it started it) the SparkContext; ``start`` and
``stop`` bring them up and down in reverse order.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sparkgate import version
from sparkgate.api.auth import Credentials, Principal
from sparkgate.api.catalog import (
    CatalogTable,
    FunctionDefinition,
    FunctionInfo,
    ObjectIdentifier,
    TableInfo,
    TableKind,
)
from sparkgate.api.config import Configuration
from sparkgate.api.errors import (
    AuthenticationError,
    ConfigurationError,
    EngineUnavailableError,
    ExecutionError,
    GatewayError,
    IllegalStateError,
    PermissionDeniedError,
    SessionNotFoundError,
    SqlParseError,
    StatementTooLongError,
    UnsupportedStatementError,
)
from sparkgate.api.handles import OperationHandle, SessionHandle
from sparkgate.api.health import EngineState, GatewayHealth
from sparkgate.api.jobs import JobInfo, JobStatusHook
from sparkgate.api.results import (
    FetchOrientation,
    GatewayInfo,
    OperationInfo,
    ResultKind,
    ResultSet,
    ResultType,
)
from sparkgate.api.service import OperationProgress, StaticResult
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.api.status import OperationStatus, OperationType
from sparkgate.api.types import STRING, ResultSchema
from sparkgate.api.workflow import SCHEDULE_TIME_FORMAT, WorkflowScheduler
from sparkgate.security.authentication import Authentication
from sparkgate.service import catalog, completion, options
from sparkgate.service.applications import ScriptDeployer, read_script
from sparkgate.service.audit import AuditLog
from sparkgate.service.catalogs.registry import CatalogRegistry
from sparkgate.service.catalogs.store import CatalogStore, FileCatalogStore, InMemoryCatalogStore
from sparkgate.service.catalogs.types import load_catalog_types
from sparkgate.service.health import EngineWatch, RestartBudget
from sparkgate.service.job.job import Job
from sparkgate.service.job.manager import JobManager
from sparkgate.service.materialized.manager import (
    MaterializedSettings,
    MaterializedTableManager,
    Refresh,
)
from sparkgate.service.materialized.schedulers import load_workflow_scheduler
from sparkgate.service.metrics import GatewayMetrics, LiveState
from sparkgate.service.modules import SessionModules, load_module_factories
from sparkgate.service.operation.manager import OperationManager, UserStatements
from sparkgate.service.operation.operation import Execution, Executor, Operation
from sparkgate.service.operation.oplog import OperationLogHandler
from sparkgate.service.operation.pool import WorkerPool
from sparkgate.service.peers import ServicePeers, advertised_url
from sparkgate.service.result.fetcher import ResultFetcher, ResultTraits
from sparkgate.service.result.spool import ResultSpool, SpooledRows, SpoolStore
from sparkgate.service.session.image import SessionImage, SessionStore
from sparkgate.service.session.manager import SessionManager
from sparkgate.service.session.recipe import RecipeStep, SessionRecipe
from sparkgate.service.session.session import Session, may_act_on
from sparkgate.service.spark import packages
from sparkgate.service.spark.confinement import ANYWHERE, PathRoots, PathUse
from sparkgate.service.spark.host_access import remove_reflection
from sparkgate.service.spark.jobs import progress_for_tag
from sparkgate.service.spark.limits import ResultLimits
from sparkgate.service.spark.plans import parse_identifier, statement_scope
from sparkgate.service.spark.pools import add_pool
from sparkgate.service.state import RecordTakenError, StateDatabase, gateway_id
from sparkgate.service.statements import metadata
from sparkgate.service.statements.dispatch import (
    host_refusal,
    parsed_executor,
    statement_executor,
)
from sparkgate.service.statements.kinds import Statement
from sparkgate.service.statements.overwrite import HOOK_KIND as OVERWRITE_HOOK
from sparkgate.service.statements.overwrite import OverwriteHook
from sparkgate.service.statements.parse_limit import ParseLimit, ParseTimeoutError
from sparkgate.service.statements.parser import parse_statement
from sparkgate.service.statements.replan import Replan
from sparkgate.service.statements.results import table_result
from sparkgate.service.statements.settings_check import check_overlay, check_set
from sparkgate.service.statements.table_as import HOOK_KIND as TABLE_AS_HOOK
from sparkgate.service.statements.table_as import TableAsSelectHook
from sparkgate.service.streaming.strategy import restarter
from sparkgate.sql.secrets import (
    configure_redaction,
    mask_secrets,
    masked_options,
    remember_secrets,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkGatewayService"]

log = logging.getLogger(__name__)

_LOG_SCHEMA = ResultSchema.of(("log", STRING))
_ARROW_BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"
_LOST_SESSIONS_KEPT = 10_000
_DRAIN_POLL_S = 0.1


def _first_line(error: BaseException) -> str:
    return mask_secrets(str(error).strip().splitlines()[0]) if str(error).strip() else ""


def _then(
    first: Callable[[Operation], None] | None, then: Callable[[Operation], None]
) -> Callable[[Operation], None]:
    def both(operation: Operation) -> None:
        if first is not None:
            first(operation)
        then(operation)

    return both


def _ended_by_restart(handle: OperationHandle, running: bool) -> Operation:
    """An operation of a restored session, in ERROR: the process that held it is gone."""
    cause = (
        "The gateway restarted while this statement was running; run it again."
        if running
        else "The gateway restarted and did not keep this statement's result; run it again."
    )

    def gone(_operation: Operation) -> Execution:
        raise ExecutionError(cause)

    operation = Operation(gone)
    operation.handle = handle
    operation.run_inline()
    return operation


def _qualified_identifier(spark: SparkSession, identifier: str) -> tuple[str, str, str]:
    """``catalog.database.table`` (FLIP-448: the refresh API's identifier is fully
    qualified); a clear error for anything else."""
    try:
        parts = parse_identifier(spark, identifier)
    except Exception:
        parts = ()
    if len(parts) != 3:
        raise SqlParseError(
            f"The materialized table identifier '{identifier}' must be fully qualified: "
            "catalog.database.table"
        )
    return (parts[0], parts[1], parts[2])


def _catalog_store(config: Configuration, state: StateDatabase | None) -> CatalogStore:
    if config.get(options.CATALOG_STORE_KIND) == "generic_in_memory":
        return InMemoryCatalogStore()
    path = config.get(options.CATALOG_STORE_FILE_PATH)
    if state is not None and not path:
        return FileCatalogStore(state.records("catalogs"))  # the service's, not one gateway's
    directory = Path(path).expanduser() if path else Path(config.get(options.DATA_DIR)) / "catalogs"
    return FileCatalogStore(directory)


class SparkGatewayService:
    """FLIP-91's SqlGatewayService with Spark as the engine.

    Give it a running ``spark`` session (tests, an embedding application) or
    let :meth:`start` start the process's SparkContext from the ``spark.*``
    keys of ``config``.
    """

    def __init__(self, config: Configuration, spark: SparkSession | None = None) -> None:
        self.config = config
        # Its secret values are masked wherever they show (logs, operation logs, errors).
        configure_redaction(config.to_dict())  # spark.redaction.regex, as Spark reads it
        remember_secrets(config.to_dict(), pinned=True)
        self._spark = spark
        self._owns_spark = False
        self._spark_version: str | None = None  # of the engine's last start (for /v1/info)
        self._buffer_rows = config.get(options.RESULT_BUFFER_ROWS)
        self._batch_rows = config.get(options.RESULT_BATCH_ROWS)
        self._buffer_bytes = config.get(options.RESULT_BUFFER_SIZE)
        self._host_statements = config.get(options.ALLOWED_HOST_STATEMENTS)
        self._allowed_paths = config.get(options.ALLOWED_PATHS)
        self._path_roots: PathRoots | None = None  # qualified on Spark, at the first session
        self._max_statement_length = config.get(options.STATEMENT_MAX_LENGTH)
        self._parse_limit = ParseLimit.from_config(config)
        self._partition_window = config.get(options.RESULT_PARTITION_WINDOW)
        self._pool = WorkerPool(
            config.get(options.WORKER_THREADS_MIN),
            config.get(options.WORKER_THREADS_MAX),
            config.get(options.WORKER_KEEPALIVE_TIME).total_seconds(),
        )
        self._sessions = SessionManager(
            self._new_session,
            max_sessions=config.get(options.SESSION_MAX_NUM),
            idle_timeout=config.get(options.SESSION_IDLE_TIMEOUT).total_seconds(),
            check_interval=config.get(options.SESSION_CHECK_INTERVAL).total_seconds(),
            max_per_user=config.get(options.USER_MAX_SESSIONS),
        )
        self._user_statements = UserStatements(config.get(options.USER_MAX_RUNNING))
        data_dir = Path(config.get(options.DATA_DIR)).expanduser()
        # sql-gateway.state.url: jobs, sessions, catalogs and workflows in a database
        # (reached now: a wrong URL stops the start), else in files under the data dir.
        state_url = config.get(options.STATE_URL).strip()
        self._state = StateDatabase(state_url) if state_url else None
        if self._state is not None:
            self._state.create_tables()
        #: This gateway's name among those sharing the state database.
        self.gateway_id = gateway_id(data_dir) if self._state is not None else ""
        self._peers = (
            ServicePeers(
                self._state,
                self.gateway_id,
                advertised_url(config.to_dict(), config.get(options.STATE_ADVERTISED_URL)),
                config.get(options.STATE_LEASE).total_seconds(),
                self._take_over,
                self._follow_service,
            )
            if self._state is not None
            else None
        )
        self._takeover_lock = threading.Lock()
        # sql-gateway.session.persistent: open sessions kept across restarts.
        # A service of several gateways keeps every session, to hand it over.
        self._persistent = config.get(options.SESSION_PERSISTENT) or self._state is not None
        self._session_store = SessionStore(
            self._state.records("sessions", self.gateway_id)
            if self._state is not None
            else data_dir / "state" / "sessions"
        )
        self._store_lock = threading.Lock()
        self._stopping = False
        # sql-gateway.result.spool: query results kept in files (None: off).
        self._kept_results = (
            SpoolStore(
                Path(config.get(options.DATA_DIR)).expanduser() / "results",
                config.get(options.RESULT_SPOOL_MAX_SIZE),
                config.get(options.RESULT_SPOOL_RETENTION).total_seconds(),
            )
            if config.get(options.RESULT_SPOOL)
            else None
        )
        self._draining = False
        self.audit = (
            AuditLog(
                Path(config.get(options.DATA_DIR)) / "log" / "audit.log",
                config.get(options.AUDIT_MAX_FILE_SIZE),
                config.get(options.AUDIT_MAX_FILES),
            )
            if config.get(options.AUDIT_ENABLED)
            else AuditLog.off()
        )
        self._log_handler: OperationLogHandler | None = None
        hook_names: tuple[str, ...] = config.get(options.JOB_STATUS_HOOKS)
        self._job_manager = JobManager(
            Path(config.get(options.DATA_DIR)),
            max_ended=config.get(options.JOBSTORE_MAX_CAPACITY),
            ended_ttl_s=config.get(options.JOBSTORE_EXPIRATION_TIME).total_seconds(),
            hook_names=hook_names,
            records=None if self._state is None else self._state.records("jobs", self.gateway_id),
            checkpoint_dir=config.get(options.CHECKPOINTING_DIR),
            savepoint_dir=config.get(options.SAVEPOINT_DIR),
        )
        self._catalogs = CatalogRegistry(_catalog_store(config, self._state), load_catalog_types())
        self._module_factories = load_module_factories()
        # Made now, so a wrong authenticator option stops the gateway before it serves.
        names: tuple[str, ...] = config.get(options.AUTHENTICATION)
        admins: tuple[str, ...] = config.get(options.ADMINS)
        self.authentication = Authentication.from_config(
            names,
            admins,
            config,
            str(Path(config.get(options.DATA_DIR)).expanduser()),
        )
        # Resolved now, so an unknown scheduler type fails before anything starts.
        scheduler = load_workflow_scheduler(
            config.get(options.WORKFLOW_SCHEDULER_TYPE),
            config.to_dict(),
            str(Path(config.get(options.DATA_DIR))),
            self,
            state_url or None,
        )
        self._materialized = MaterializedTableManager(
            self._job_manager,
            self._catalogs,
            scheduler,
            MaterializedSettings(
                threshold=config.get(options.FRESHNESS_THRESHOLD),
                default_continuous=config.get(options.DEFAULT_FRESHNESS_CONTINUOUS),
                default_full=config.get(options.DEFAULT_FRESHNESS_FULL),
            ),
        )
        self.metrics = GatewayMetrics(
            LiveState(
                sessions=lambda: len(self._sessions),
                operations=lambda: [
                    status
                    for session in self._sessions.sessions()
                    for status in session.operations.statuses()
                ],
                jobs=lambda: [job.status.value for job in self._job_manager.jobs()],
                engine_restarts=lambda: self.health().restarts,
                failed_logins=lambda: self.authentication.failures,
            )
        )
        self._materialized.on_refresh = self.metrics.refreshed
        # POST .../scripts: applications get the gateway's Spark settings.
        self._deployer = ScriptDeployer(
            self._job_manager,
            self._job_manager.data_dir,
            {k: v for k, v in config.items() if k.startswith("spark.")},
        )
        # A CTAS or INSERT OVERWRITE the gateway died under is undone at the next start.
        self._job_manager.register_durable_hook(
            TABLE_AS_HOOK, lambda record: TableAsSelectHook.from_record(self.spark, record)
        )
        self._job_manager.register_durable_hook(
            OVERWRITE_HOOK, lambda record: OverwriteHook.from_record(self.spark, record)
        )
        self._started = False
        self._watch = EngineWatch(
            self._engine_failure,
            self._recover_engine,
            interval_s=config.get(options.ENGINE_CHECK_INTERVAL).total_seconds(),
            budget=RestartBudget(
                config.get(options.ENGINE_RESTART_ATTEMPTS),
                config.get(options.ENGINE_RESTART_WINDOW).total_seconds(),
            ),
            backoff_s=config.get(options.ENGINE_RESTART_BACKOFF).total_seconds(),
        )
        # Sessions that died with an engine or a restart, and what to tell their clients
        # (bounded: the oldest first to go).
        self._lost: OrderedDict[SessionHandle, str] = OrderedDict()
        # Sessions and streaming jobs waiting for a new engine, to be moved onto it.
        self._orphans: dict[SessionHandle, Session] = {}
        self._suspended: list[Job] = []
        self._job_manager.engine_alive = self._engine_alive

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        if self._started:
            return
        self._draining = False
        if self.config.get(options.OPERATION_LOG_ENABLED):
            self._log_handler = OperationLogHandler(level=logging.INFO)
            logging.getLogger("sparkgate").addHandler(self._log_handler)
            if logging.getLogger("sparkgate").getEffectiveLevel() > logging.INFO:
                logging.getLogger("sparkgate.service").setLevel(logging.INFO)
        self._pool.start()
        self._bring_up()
        self._started = True
        self._watch.up()
        self._watch.start()
        if self._peers is not None:
            self._peers.start()
        threading.Thread(target=self._warm_up, name="sparkgate-warm-up", daemon=True).start()
        log.info("Gateway service started on Spark %s", self.spark.version)

    def _bring_up(self, *, engine_only: bool = False) -> None:
        """Start (or adopt) the engine and what lives on it; ``engine_only`` for a new
        engine under the living gateway (its sessions and jobs carry over)."""
        if self._spark is None:
            from sparkgate.service.spark.engine import start_spark

            spark_conf = {k: v for k, v in self.config.items() if k.startswith("spark.")}
            data_dir = Path(self.config.get(options.DATA_DIR))
            self._spark = start_spark(spark_conf, data_dir)
            self._owns_spark = True
        self._spark_version = self.spark.version
        packages.configure(
            self.spark,
            packages.PackageSettings(
                Path(self.config.get(options.DATA_DIR)).expanduser() / "packages",
                self.config.get(options.CONNECTOR_REPOSITORY),
                {
                    packages.KAFKA.name: self.config.get(options.KAFKA_JARS),
                    packages.AVRO.name: self.config.get(options.AVRO_JARS),
                },
            ),
        )
        self._catalogs.load(self.spark)
        if not engine_only:
            self._job_manager.start()
        self._materialized.start(self.spark)
        # Result spools do not outlive their engine.
        shutil.rmtree(self._spool_dir, ignore_errors=True)
        if not engine_only:
            self._stopping = False
            images = self._session_store.load() if self._persistent else []
            if not self._persistent:
                self._session_store.discard()
            # Sessions that do not outlive the gateway take their resources with them.
            self._drop_resources(
                keep={SessionHandle.parse(i.handle).identifier.hex for i in images}
            )
            if self._kept_results is not None:
                self._kept_results.start()
            self._sessions.start()
            for image in images:
                self._restore(image)
            for job in self._job_manager.take_resumable():
                self._resume_after_restart(job)

    def _tear_down(self, *, engine_only: bool = False) -> None:
        if not engine_only:
            self._stopping = True  # persistent sessions stay in their store
            self._job_manager.begin_stop()  # statements' jobs cut off now fail as such
            self._sessions.stop()
        self._materialized.stop()
        if not engine_only:
            self._job_manager.stop(None if self._spark is None else self._spark.sparkContext)
        if self._owns_spark:
            from sparkgate.service.spark.engine import stop_spark

            stop_spark()
            self._spark = None
            self._owns_spark = False

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        self._watch.stop()
        self._tear_down()
        if self._peers is not None:
            self._peers.stop()  # after the jobs' savepoints: the others take over from them
        self._pool.stop()
        if self._log_handler is not None:
            logging.getLogger("sparkgate").removeHandler(self._log_handler)
            self._log_handler = None
        self.audit.close()
        if self._state is not None:
            self._state.close()
        log.info("Gateway service stopped")

    # -- engine health -----------------------------------------------------------
    def health(self) -> GatewayHealth:
        """Ready only while the engine is up and the gateway not shutting down (the
        readiness probe's answer)."""
        health = self._watch.health
        return replace(health, draining=True) if self._draining else health

    # -- shutting down -------------------------------------------------------------
    def drain(self, timeout_s: float, forced: Callable[[], bool] = lambda: False) -> bool:
        """Take no new sessions or statements (503), then wait up to ``timeout_s`` for
        running statements and result streams to end, or until ``forced()``.
        Returns whether everything ended; :meth:`stop` follows either way."""
        self._draining = True
        deadline = time.monotonic() + timeout_s
        busy = self._busy()
        if busy:
            log.info(
                "Shutting down: waiting up to %.0f s for %d running statements", timeout_s, busy
            )
        while busy:
            if forced():
                log.info("Shutting down now: %d statements are cut off", busy)
                return False
            if time.monotonic() >= deadline:
                log.warning(
                    "Shutting down: %d statements still running after %.0f s are cut off",
                    busy,
                    timeout_s,
                )
                return False
            time.sleep(_DRAIN_POLL_S)
            busy = self._busy()
        return True

    def _busy(self) -> int:
        return sum(session.operations.running() for session in self._sessions.sessions())

    def _require_accepting(self) -> None:
        """New work is refused while the gateway shuts down: the client retries elsewhere."""
        self._require_engine()
        if self._draining:
            raise EngineUnavailableError(
                "The gateway is shutting down and takes no new work; retry on another "
                "gateway or once it has restarted."
            )

    def _engine_failure(self) -> str | None:
        if not self._owns_spark:
            return None  # an engine of the embedding application: its owner watches it
        from sparkgate.service.spark.engine import engine_failure

        return engine_failure()

    def _recover_engine(self, cause: str) -> None:
        """Replace a dead engine, then move its sessions and streaming jobs onto the new one."""
        for session in self._sessions.detach_all():
            self._orphans[session.handle] = session
        self._suspended.extend(self._job_manager.suspend_streams())
        try:
            self._tear_down(engine_only=True)
        except Exception:  # parts of a dead engine fail to stop; what matters is gone
            log.debug("Tearing down after the engine's death", exc_info=True)
        self._spark = None  # a new engine is started, never the dead one adopted
        self._owns_spark = True
        self._bring_up(engine_only=True)
        orphans, self._orphans = self._orphans, {}
        for session in orphans.values():
            self._rebuild(session, cause)
        suspended, self._suspended = self._suspended, []
        remade: dict[int, str | None] = {}
        for job in suspended:
            self._resume(job, remade)

    def _resume(self, job: Job, remade: dict[int, str | None]) -> None:
        """Start a streaming job again from its checkpoints, in its session (made again
        first if it was closed before the death; ``remade`` says which were, and how)."""
        failure = None
        owner = job.owner
        if isinstance(owner, Session) and not self._sessions.holds(owner):
            if id(owner) not in remade:
                remade[id(owner)] = self._remake(owner)
            failure = remade[id(owner)]
        self._job_manager.resume_stream(self.spark.sparkContext, job, failure)

    def _remake(self, session: Session) -> str | None:
        """Make a closed session's state again for its jobs alone; why it failed, or None."""
        recipe = session.context.recipe
        session.operations = OperationManager(self._pool)  # the replay's alone
        try:
            session.rebind(self._engine_session())
            self._replay(session, recipe)
        except Exception as exc:
            return f"the state of its session could not be made again: {exc}"
        finally:
            session.operations.close_all()
        return None

    # -- across restarts ---------------------------------------------------------
    def _drop_resources(self, keep: set[str]) -> None:
        """Remove the session resources (put_session_resource) and kept results of
        sessions not in ``keep``."""
        data_dir = self._job_manager.data_dir
        for root in (data_dir / "sessions", data_dir / "results"):
            if not root.is_dir():
                continue
            for entry in root.iterdir():
                if entry.name not in keep:
                    shutil.rmtree(entry, ignore_errors=True)

    def _session_from(self, image: SessionImage, handle: SessionHandle) -> Session:
        """A session made again from ``image``: its properties, then its recipe run again."""
        session = self._new_session(handle, replace(image.environment, config=image.properties))
        try:
            if image.recipe.unrebuildable is not None:
                raise ExecutionError(image.recipe.unrebuildable)
            self._replay(session, image.recipe)
        except BaseException:
            with contextlib.suppress(Exception):
                session.close()
            raise
        return session

    def _restore(self, image: SessionImage) -> None:
        """Open again a session a past process kept (sql-gateway.session.persistent);
        its operations answer with an error saying what became of them."""
        handle = SessionHandle.parse(image.handle)
        try:
            session = self._session_from(image, handle)
        except Exception as exc:
            self._session_store.delete(handle.identifier.hex)
            why = f"the gateway restarted and its state could not be made again: {exc}"
            log.warning("Session %s is not restored: %s", handle, why)
            self._lost[handle] = f"Session '{handle}' was not restored ({why}); open a new session."
            return
        for text, running in image.operations.items():
            handle_ = OperationHandle.parse(text)
            kept = self._kept_result(handle, handle_)
            session.operations.restore(kept or _ended_by_restart(handle_, running))
        session.on_closed = self._closed_session
        self._sessions.adopt(session)
        self._persist(session)
        log.info("Session %s restored after the gateway's restart", handle)

    def _kept_result(self, session: SessionHandle, operation: OperationHandle) -> Operation | None:
        """An operation serving the result an earlier process kept for it, if any."""
        if self._kept_results is None:
            return None
        spool = self._kept_results.find(session.identifier.hex, operation.identifier.hex)
        if spool is None:
            return None
        rows = SpooledRows(spool, spool.paged_rows)
        traits = ResultTraits(is_query_result=True, result_kind=spool.result_kind)
        fetcher = ResultFetcher(spool.schema, rows, traits, spool, next_token=len(spool.pages))
        return Operation.of_kept_result(operation, fetcher)

    def _spool_for(
        self, session: Session
    ) -> Callable[[Operation, ResultSchema, ResultTraits], ResultSpool | None] | None:
        store = self._kept_results
        if store is None:
            return None

        def spool(operation: Operation, schema: ResultSchema, traits: ResultTraits) -> ResultSpool:
            name = operation.handle.identifier.hex
            return store.create(session.handle.identifier.hex, name, schema, traits.result_kind)

        return spool

    def _persist(self, session: Session) -> None:
        """Keep ``session``'s image in the session store (when sessions are persistent)."""
        if not self._persistent:
            return
        try:
            with self._store_lock:
                if self._sessions.holds(session):
                    image = session.image(session.operations.open_operations())
                    self._session_store.save(session.handle.identifier.hex, image)
        except RecordTakenError as exc:
            # Another gateway of the service serves it now: calls go there from here on.
            log.warning("Session %s: %s; closing it here", session.handle, exc)
            threading.Thread(
                target=self._let_go, args=(session.handle,), name="sparkgate-let-go", daemon=True
            ).start()

    def _let_go(self, handle: SessionHandle) -> None:
        with contextlib.suppress(SessionNotFoundError):
            self._sessions.close(handle)

    def _take_over(self, gateway: str) -> None:
        """Serve the sessions and jobs of ``gateway``, another gateway of this service
        that has ended, as if this one had restarted in its place."""
        state = self._state
        if state is None or not self._started or not self._engine_alive():
            return  # next time: the engine is needed to make its sessions again
        with self._takeover_lock:
            images = []
            for key, text in state.take("sessions", gateway, self.gateway_id):
                try:
                    images.append(SessionImage.from_json(json.loads(text)))
                except (ValueError, KeyError, TypeError, IndexError) as exc:
                    log.warning(
                        "Session record %s of gateway %s is unreadable: %s", key, gateway, exc
                    )
            for image in images:
                self._restore(image)
            self._job_manager.adopt(state.take("jobs", gateway, self.gateway_id))
            for job in self._job_manager.take_resumable():
                self._resume_after_restart(job)
        if images:
            log.warning("Took over %d sessions of gateway %s", len(images), gateway)

    def _follow_service(self) -> None:
        """Catalogs the other gateways of the service created, altered or dropped."""
        if self._started and self._engine_alive():
            self._catalogs.sync(self.spark)

    def has_peers(self) -> bool:
        return self._peers is not None

    def session_owner(self, session: SessionHandle) -> str | None:
        if self._peers is None or self._state is None or self._sessions.has(session):
            return None
        try:
            owner = self._state.owner_of("sessions", session.identifier.hex)
            if owner is None:
                return None
            if owner == self.gateway_id:
                # Taken over from an ended gateway, perhaps still being made again here.
                with self._takeover_lock:
                    return None
            url = self._peers.url_of(owner)
        except Exception as exc:
            raise EngineUnavailableError(
                f"The service's state database cannot be reached: {exc}"
            ) from None
        if url is not None:
            return url
        self._take_over(owner)  # it has ended: serve its sessions here
        return None

    def _resume_after_restart(self, job: Job) -> None:
        """Start again a streaming job the last process ran, from its checkpoints, in a
        session made again from the job's record."""
        failure = None
        try:
            record = job.resume or {}
            replan = Replan.from_json(record["replan"])
            image = SessionImage.from_json(record["session"])
            session = self._session_from(image, SessionHandle.create())
            job.owner = session
            job.restart = restarter(session, replan, replan.options.trigger_s)
        except Exception as exc:
            failure = f"its session could not be made again: {exc}"
        self._job_manager.resume_stream(
            self.spark.sparkContext, job, failure, where="after the gateway restarted"
        )

    def _engine_alive(self) -> bool:
        return self._watch.health.state is EngineState.UP and self._engine_failure() is None

    def _rebuild(self, session: Session, cause: str) -> None:
        """Give ``session`` a Spark session on the new engine and its state again,
        or lose it (with the reason) when that state cannot be made again."""
        recipe = session.context.recipe
        if not session.has_spark:  # never used: it makes one on the new engine when it is
            self._sessions.adopt(session)
            return
        try:
            if recipe.unrebuildable is not None:
                raise ExecutionError(recipe.unrebuildable)
            session.rebind(self._engine_session())
            self._add_pool(session)
            self._replay(session, recipe)
        except Exception as exc:  # a gateway error, or the new engine's
            self._lose(session, f"{cause}; its state could not be made again: {exc}")
            return
        self._sessions.adopt(session)
        log.info("Session %s moved to the new engine (%d rerun)", session.handle, len(recipe))

    def _replay(self, session: Session, recipe: SessionRecipe) -> None:
        """Run ``recipe``'s statements again; one that fails (it needs an object made
        after it) gets another pass, until a pass makes no progress."""
        # Its modules are made again by the recipe's module statements, from the start.
        session.context.modules = SessionModules()
        pending = recipe.steps
        while pending:
            failed: list[tuple[RecipeStep, GatewayError]] = []
            for step in pending:
                try:
                    for text in (*step.namespace, step.text):
                        self._run_inline(session, parse_statement(text))
                except GatewayError as exc:
                    failed.append((step, exc))
            if len(failed) == len(pending):
                step, error = failed[0]
                raise ExecutionError(f"{step.text!r} failed again: {error}") from error
            pending = [step for step, _ in failed]
        for text in recipe.namespace:
            self._run_inline(session, parse_statement(text))

    def _lose(self, session: Session, why: str) -> None:
        log.warning("Session %s is lost with the Spark engine: %s", session.handle, why)
        self._lost[session.handle] = (
            f"Session '{session.handle}' was lost with the Spark engine ({why}); "
            "open a new session."
        )
        while len(self._lost) > _LOST_SESSIONS_KEPT:
            self._lost.popitem(last=False)
        with contextlib.suppress(Exception):
            session.close()

    def _require_engine(self) -> None:
        health = self._watch.health
        if self._started and health.state in (EngineState.DOWN, EngineState.RESTARTING):
            raise EngineUnavailableError(
                f"The Spark engine is {health.state.value.lower()} ({health.cause}); retry shortly."
            )

    def _warm_up(self) -> None:
        """Load what the first completion needs (a Spark job) before anyone asks."""
        try:
            completion.sql_keywords(self.spark)
            catalog.system_function_names(self.spark)
        except Exception:  # only a cache: the first completion then pays instead
            log.debug("Completion warm-up failed", exc_info=True)

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            raise IllegalStateError("The gateway service is not started.")
        return self._spark

    @property
    def _spool_dir(self) -> Path:
        return self._job_manager.data_dir / "tmp" / "results"

    @property
    def session_count(self) -> int:
        return len(self._sessions)

    def _engine_session(self) -> SparkSession:
        """A new Spark session on the engine, set up as every gateway session's."""
        spark = self.spark.newSession()
        spark.conf.set(_ARROW_BATCH_CONF, str(self._batch_rows))
        self._catalogs.attach(spark)
        if "reflection" not in self._host_statements:
            remove_reflection(spark)
        return spark

    def _add_pool(self, session: Session) -> None:
        add_pool(
            self.spark.sparkContext,
            session.own_pool,
            self.config.get(options.SESSION_POOL_WEIGHT),
            self.config.get(options.SESSION_POOL_MIN_SHARE),
            fair_inside=session.shared_pool,
        )

    def _new_session(self, handle: SessionHandle, environment: SessionEnvironment) -> Session:
        roots = self._confinement()
        if roots is not None and environment.jars:
            jars = [PathUse(jar, "a session jar") for jar in environment.jars]
            message = roots.refusal(self.spark, jars)
            if message is not None:
                raise ConfigurationError(message)
        limits = ResultLimits(
            window=self._partition_window or 2 * self.spark.sparkContext.defaultParallelism,
            direct_bytes=self.config.get(options.RESULT_DIRECT_SIZE),
            max_batch_bytes=self.config.get(options.RESULT_MAX_BATCH_SIZE),
            spool_bytes=self.config.get(options.RESULT_SPOOL_SIZE),
            spool_dir=self._spool_dir,
        )
        principal = environment.principal
        user = None
        if principal is not None and principal.authenticated:
            user = (self._user_statements, principal.name)
        operations = OperationManager(
            self._pool, self.config.get(options.SESSION_MAX_RUNNING), user
        )
        if user is not None:
            self._user_statements.add(user[1], operations)
        session = Session(
            handle,
            environment,
            self._session_spark,
            self.config.to_dict(),
            operations,
            limits,
            jobs=self._job_manager,
            host_statements=self._host_statements,
            path_roots=roots,
        )
        session.context.catalogs = self._catalogs
        session.context.module_factories = self._module_factories
        session.context.materialized = self._materialized
        return session

    def _session_spark(self, session: Session) -> SparkSession:
        """A session's Spark session, made at its first use, in its scheduler pool."""
        if self._spark is None:  # between engines: a 503 to retry, as for any statement
            self._require_engine()
            raise EngineUnavailableError("The Spark engine is restarting; retry shortly.")
        with self._engine_calls("The session's Spark session was not made"):
            spark = self._engine_session()
            self._add_pool(session)
        return spark

    def _confinement(self) -> PathRoots | None:
        """The roots sessions' SQL may name files under; None when unconfined."""
        if self._path_roots is not None:
            return self._path_roots
        roots = self._allowed_paths
        if ANYWHERE in roots or (not roots and not self.authentication.enabled):
            return None
        spark = self._engine_session()
        if not roots:
            files = Path(self.config.get(options.DATA_DIR)) / "files"
            files.mkdir(parents=True, exist_ok=True)
            roots = (str(spark.conf.get("spark.sql.warehouse.dir")), str(files))
        self._path_roots = PathRoots.qualified(spark, roots)
        return self._path_roots

    @property
    def catalogs(self) -> CatalogRegistry:
        """The catalogs made with CREATE CATALOG, shared by every session."""
        return self._catalogs

    def _session(self, handle: SessionHandle) -> Session:
        self._require_engine()
        try:
            return self._sessions.get(handle)
        except SessionNotFoundError:
            message = self._lost.get(handle)
            if message is None:
                raise
            raise SessionNotFoundError(message) from None

    def _operation(self, session: SessionHandle, operation: OperationHandle) -> Operation:
        return self._session(session).operations.get(operation)

    def _new_operation(
        self,
        session: Session,
        executor: Executor,
        *,
        statement: str | None = None,
        timeout: float | None = None,
        config: Mapping[str, str] | None = None,
        operation_type: OperationType = OperationType.EXECUTE_STATEMENT,
        on_end: Callable[[Operation], None] | None = None,
        on_close: Callable[[Operation, OperationStatus], None] | None = None,
        spool: Callable[[Operation, ResultSchema, ResultTraits], ResultSpool | None] | None = None,
    ) -> Operation:
        extra = dict(config or {})

        def scope(op: Operation) -> AbstractContextManager[None]:
            return session.operation_scope(op, extra)

        if self._persistent or spool is not None:
            closed = on_close

            def on_close(op: Operation, status: OperationStatus) -> None:
                if closed is not None:
                    closed(op, status)
                kept = op.result_spool
                if kept is not None and not self._stopping:
                    kept.discard()  # the client is done with it
                self._persist(session)

        operation = Operation(
            executor,
            operation_type=operation_type,
            statement=statement,
            buffer_rows=self._buffer_rows,
            buffer_bytes=self._buffer_bytes,
            timeout=timeout,
            scope=scope,
            interrupt=session.interrupt,
            explain=self._explain_failure,
            on_end=on_end,
            on_close=on_close,
            spool=spool,
        )
        if self._persistent:
            operation.on_idle = lambda _op: self._persist(session)
        return operation

    def _explain_failure(
        self, exc: BaseException, doing: str = "The statement did not complete"
    ) -> BaseException:
        """A call cut off by the engine's death fails with that cause, as a 503 to
        retry, not with the broken connection to the dead JVM."""
        if isinstance(exc, GatewayError) and not isinstance(exc, ExecutionError):
            return exc
        if not self._owns_spark or self._engine_alive():
            return exc
        cause = self._watch.health.cause or self._engine_failure() or "it stopped"
        return EngineUnavailableError(
            f"{doing}: the Spark engine stopped ({cause}); retry it once the engine is back."
        )

    @contextlib.contextmanager
    def _engine_calls(self, doing: str) -> Iterator[None]:
        """Calls into Spark whose failure may be the engine dying under them, before
        the watch has seen it: then a 503 to retry, never a bare 500."""
        try:
            yield
        except GatewayError:
            raise
        except Exception as exc:
            explained = self._explain_failure(exc, doing)
            if explained is exc:
                raise
            raise explained from exc

    # -- sessions --------------------------------------------------------------
    def open_session(self, environment: SessionEnvironment) -> SessionHandle:
        self._require_accepting()
        remember_secrets(environment.config)
        with self._engine_calls("The session was not opened"):
            session = self._sessions.open(environment)
        session.on_closed = self._closed_session
        self.audit.record(
            "session-opened",
            session=str(session.handle),
            user=environment.user,
            address=environment.client_address,
            name=environment.session_name,
        )
        self._persist(session)
        return session.handle

    def _closed_session(self, session: Session) -> None:
        environment = session.environment
        self.audit.record(
            "session-closed",
            session=str(session.handle),
            user=environment.user,
            address=environment.client_address,
        )
        if self._stopping:
            return  # what persists of it stays for the next start
        if self._kept_results is not None:
            self._kept_results.remove_session(session.handle.identifier.hex)
        if self._persistent:
            with self._store_lock:
                self._session_store.delete(session.handle.identifier.hex)

    def close_session(self, session: SessionHandle) -> None:
        self._sessions.close(session)

    def render_metrics(self) -> bytes:
        return self.metrics.render()

    # -- authentication ----------------------------------------------------------
    def authenticate(self, credentials: Credentials) -> Principal | None:
        try:
            return self.authentication.authenticate(credentials)
        except AuthenticationError as exc:
            if credentials.user is not None or credentials.token is not None:
                self.audit.record(
                    "login-refused",
                    user=credentials.user,
                    address=credentials.address,
                    reason=str(exc),
                )
            raise

    def authorize_session(self, session: SessionHandle, principal: Principal | None) -> None:
        if principal is None or not principal.authenticated or principal.admin:
            return
        owner = self._session(session).environment.user
        if owner != principal.name:
            raise PermissionDeniedError(
                f"Session '{session}' belongs to another user; '{principal.name}' may not use it"
            )

    def get_session_config(self, session: SessionHandle) -> dict[str, str]:
        """The session's properties, secret values masked (as Spark's UI masks them)."""
        return masked_options(self._session(session).config())

    def get_session_endpoint_version(self, session: SessionHandle) -> EndpointVersion | None:
        return self._session(session).environment.endpoint_version

    def put_session_resource(self, session: SessionHandle, name: str, content: str) -> str:
        return self._session(session).resources.put(name, content)

    def get_session_resource(self, session: SessionHandle, name: str) -> str:
        return self._session(session).resources.get(name)

    def heartbeat(self, session: SessionHandle) -> None:
        self._session(session)

    def configure_session(
        self, session: SessionHandle, statement: str, timeout: float | None = None
    ) -> None:
        target = self._session(session)
        self._require_accepting()
        self._check_length(statement)
        parsed = self._parse_limit.parse(statement)
        if not parsed.allowed_in_configure_session:
            raise UnsupportedStatementError(
                "configure-session only accepts SET, RESET, CREATE, DROP, ALTER, USE, "
                f"ADD JAR, REMOVE JAR, LOAD and UNLOAD statements, not: {parsed.text}"
            )
        self._run_inline(target, parsed, timeout)

    def _run_inline(
        self, session: Session, parsed: Statement, timeout: float | None = None
    ) -> None:
        """Run a parsed statement on the caller's thread; raises its failure."""
        operation = self._new_operation(
            session,
            parsed_executor(session, parsed, parse_limit=self._parse_limit),
            statement=parsed.text,
            timeout=timeout,
        )
        session.operations.run_inline(operation)
        try:
            operation.wait_done()
            if operation.status is not OperationStatus.FINISHED:
                operation.fetch(0, 1)  # raises the failure
        finally:
            session.operations.close(operation.handle)

    # -- operations -----------------------------------------------------------
    def execute_statement(
        self,
        session: SessionHandle,
        statement: str,
        *,
        timeout: float | None = None,
        config: Mapping[str, str] | None = None,
    ) -> OperationHandle:
        target = self._session(session)
        self._require_accepting()
        environment = target.environment
        who = {
            "session": str(session),
            "user": environment.user,
            "address": environment.client_address,
        }
        try:
            self._check_length(statement)
            check_overlay(target, config)  # a bad typed value: a 400 naming its key, now
            with self._engine_calls("The statement was not submitted"):
                kind = self._refuse_at_once(target, statement)  # the checks ask Spark
        except GatewayError as exc:
            self.audit.statement(statement, outcome="REFUSED", error=_first_line(exc), **who)
            raise
        operation = self._new_operation(
            target,
            statement_executor(target, statement, config, parse_limit=self._parse_limit),
            statement=statement,
            timeout=timeout,
            config=config,
            on_end=self._measured(kind),
            on_close=self._audit_closed_operation(who),
            spool=self._spool_for(target),
        )
        self.audit.statement(statement, operation=str(operation.handle), kind=kind, **who)
        handle = target.operations.submit(operation)
        self._persist(target)
        return handle

    def _audit_closed_operation(
        self, who: Mapping[str, str | None]
    ) -> Callable[[Operation, OperationStatus], None]:
        def closed(operation: Operation, status: OperationStatus) -> None:
            started = operation.started or operation.created
            ended = operation.ended if status.is_terminal and operation.ended else time.time()
            error = operation.error
            self.audit.record(
                "statement-closed",
                operation=str(operation.handle),
                outcome=status.value,
                error=_first_line(error) if error is not None else None,
                rows=operation.rows_fetched,
                duration_ms=round((ended - started) * 1000),
                **who,
            )

        return closed

    def _measured(self, kind: str) -> Callable[[Operation], None]:
        def ended(operation: Operation) -> None:
            started = operation.started or operation.created
            outcome = operation.status.value.lower()
            self.metrics.statement_ended(kind, outcome, time.time() - started)

        return ended

    def _refuse_at_once(self, session: Session, statement: str) -> str:
        """A statement acting on the host is refused as it is submitted (a 4xx), not
        when it runs; the statement's own run checks again (statement sets, ...).
        Returns the statement's kind (metrics)."""
        with statement_scope():
            try:
                parsed = self._parse_limit.parse(statement)
            except ParseTimeoutError:
                raise  # a 400 now, not the same wait again in the operation
            except GatewayError:
                return "unparsed"  # the operation reports the parse error, as for any statement
            # Spark's parse within the limit (a 400 past it); host_refusal finds it cached.
            self._parse_limit.check_spark(session.spark, parsed)
            message = host_refusal(session, parsed)
            if message is not None:
                raise UnsupportedStatementError(message)
            check_set(session, parsed)  # SET of a value its typed option cannot take
            return type(parsed).__name__

    def submit_operation(
        self,
        session: SessionHandle,
        executor: Callable[[], StaticResult],
        operation_type: OperationType = OperationType.UNKNOWN,
    ) -> OperationHandle:
        target = self._session(session)
        self._require_accepting()

        def run(_op: Operation) -> Execution:
            result = executor()
            traits = ResultTraits(result_kind=ResultKind.SUCCESS_WITH_CONTENT)
            return Execution(result.schema, traits, [(b, None) for b in result.batches])

        operation = self._new_operation(target, run, operation_type=operation_type)
        return target.operations.submit(operation)

    def get_operation_info(
        self, session: SessionHandle, operation: OperationHandle
    ) -> OperationInfo:
        return self._operation(session, operation).info()

    def get_operation_progress(
        self, session: SessionHandle, operation: OperationHandle
    ) -> OperationProgress:
        op = self._operation(session, operation)
        return progress_for_tag(self.spark.sparkContext, op.job_tag, op.started)

    def get_operation_result_schema(
        self, session: SessionHandle, operation: OperationHandle, timeout: float | None = None
    ) -> ResultSchema:
        return self._operation(session, operation).result_schema(timeout)

    def cancel_operation(self, session: SessionHandle, operation: OperationHandle) -> None:
        self._operation(session, operation).cancel()

    def close_operation(self, session: SessionHandle, operation: OperationHandle) -> None:
        self._session(session).operations.close(operation)

    def fetch_results(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        token: int,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet:
        return self._counted(self._operation(session, operation).fetch(token, max_rows, wait))

    def _counted(self, page: ResultSet) -> ResultSet:
        self.metrics.fetched(page.num_rows, sum(batch.nbytes for batch in page.batches))
        return page

    def fetch_results_by_orientation(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        orientation: FetchOrientation,
        max_rows: int,
        wait: float = 0.0,
    ) -> ResultSet:
        op = self._operation(session, operation)
        return self._counted(op.fetch_orientation(orientation, max_rows, wait))

    def fetch_log(
        self,
        session: SessionHandle,
        operation: OperationHandle,
        orientation: FetchOrientation,
        max_rows: int,
    ) -> ResultSet:
        lines = self._operation(session, operation).read_log(orientation, max_rows)
        batch = pa.RecordBatch.from_arrays([pa.array(lines, type=pa.string())], names=["log"])
        return ResultSet(
            ResultType.PAYLOAD if lines else ResultType.EOS,
            next_token=None,
            schema=_LOG_SCHEMA,
            batches=(batch,),
            result_kind=ResultKind.SUCCESS_WITH_CONTENT,
        )

    # -- utilities ---------------------------------------------------------------
    def get_gateway_info(self) -> GatewayInfo:
        # Answered whatever the engine's state: the version known from its last start,
        # never a call into a JVM that may be dead or not there during a restart.
        engine = self._spark_version
        if engine is None:  # not started yet
            engine = self.spark.version
        return GatewayInfo("sparkgate", version(), engine)

    def complete_statement(
        self, session: SessionHandle, statement: str, position: int
    ) -> list[str]:
        self._check_length(statement)
        return completion.complete_statement(self._session(session).spark, statement, position)

    def _check_length(self, statement: str) -> None:
        limit = self._max_statement_length
        if len(statement) > limit:
            raise StatementTooLongError(
                f"The statement has {len(statement)} characters, more than "
                f"{options.STATEMENT_MAX_LENGTH.key} ({limit}) allows."
            )

    # -- catalog -----------------------------------------------------------------
    def get_current_catalog(self, session: SessionHandle) -> str:
        return catalog.current_catalog(self._session(session).spark)

    def get_current_database(self, session: SessionHandle) -> str:
        return catalog.current_database(self._session(session).spark)

    def list_catalogs(self, session: SessionHandle) -> list[str]:
        return catalog.list_catalogs(self._session(session).spark)

    def list_databases(self, session: SessionHandle, catalog_name: str) -> list[str]:
        return catalog.list_databases(self._session(session).spark, catalog_name)

    def list_tables(
        self,
        session: SessionHandle,
        catalog_name: str,
        database: str,
        kinds: frozenset[TableKind] = frozenset(TableKind),
    ) -> list[TableInfo]:
        spark = self._session(session).spark
        listed = catalog.list_tables(spark, catalog_name, database, set(kinds))
        return [*listed, *metadata.kept_tables(spark, catalog_name, database, kinds)]

    def get_table(self, session: SessionHandle, identifier: ObjectIdentifier) -> CatalogTable:
        found = self._session(session)
        return metadata.kept_table(found, identifier) or catalog.get_table(found.spark, identifier)

    def list_user_defined_functions(
        self, session: SessionHandle, catalog_name: str, database: str
    ) -> list[FunctionInfo]:
        return catalog.list_user_defined_functions(
            self._session(session).spark, catalog_name, database
        )

    def list_system_functions(self, session: SessionHandle) -> list[FunctionInfo]:
        return catalog.list_system_functions(self._session(session).spark)

    def get_function_definition(self, session: SessionHandle, name: str) -> FunctionDefinition:
        return catalog.get_function_definition(self._session(session).spark, name)

    # -- materialized tables -----------------------------------------------------------
    @property
    def materialized_tables(self) -> MaterializedTableManager:
        """The gateway's materialized tables and their workflow scheduler."""
        return self._materialized

    def refresh_materialized_table(
        self,
        session: SessionHandle,
        identifier: str,
        *,
        is_periodic: bool,
        schedule_time: str | None = None,
        dynamic_options: Mapping[str, str] | None = None,
        static_partitions: Mapping[str, str] | None = None,
        execution_config: Mapping[str, str] | None = None,
    ) -> OperationHandle:
        target = self._session(session)
        parts = _qualified_identifier(target.spark, identifier)
        if schedule_time is not None:
            try:
                datetime.strptime(schedule_time, SCHEDULE_TIME_FORMAT)
            except ValueError:
                raise SqlParseError(
                    f"Malformed scheduleTime '{schedule_time}': expected yyyy-MM-dd HH:mm:ss "
                    "(the gateway's local time)"
                ) from None
        request = Refresh(
            periodic=is_periodic,
            schedule_time=schedule_time,
            dynamic_options=dict(dynamic_options or {}),
            static_partitions=dict(static_partitions or {}),
            execution_config=dict(execution_config or {}),
        )

        existing = self._materialized.read(target.spark, parts)
        if existing is not None:
            may_act_on(target, existing.owner, "materialized table", existing.name)

        def run(_op: Operation) -> Execution:
            job = self._materialized.refresh(target.spark, parts, request)
            info = json.dumps({"spark.master": self.spark.sparkContext.master})
            return table_result(["job id", "cluster info"], [[job.id, info]])

        operation = self._new_operation(
            target,
            run,
            statement=f"REFRESH MATERIALIZED TABLE {identifier}",
            config=execution_config,
        )
        return target.operations.submit(operation)

    def embedded_workflow_scheduler(self) -> WorkflowScheduler[Any] | None:
        if self.config.get(options.WORKFLOW_SCHEDULER_TYPE) != "embedded":
            return None
        return self._materialized.scheduler

    # -- jobs ------------------------------------------------------------------------
    @property
    def jobs(self) -> JobManager:
        """The job manager (for hooks of its own: :meth:`JobManager.add_hook`)."""
        return self._job_manager

    def add_job_status_hook(self, hook: JobStatusHook) -> None:
        """Run ``hook`` on every job's status changes from now on (FLIP-218)."""
        self._job_manager.add_hook(hook)

    def list_jobs(self) -> list[JobInfo]:
        return [job.info() for job in self._job_manager.jobs()]

    def describe_job(self, job_id: str) -> JobInfo:
        return self._job_manager.get(job_id).info()

    def deploy_script(
        self,
        session: SessionHandle,
        script: str | None,
        script_uri: str | None,
        config: Mapping[str, str] | None = None,
    ) -> str:
        target = self._session(session)
        self._require_accepting()
        options = dict(config or {})
        for key in options:
            target.check_settable(key)  # the session's denied Spark settings hold here too
        if script_uri and not script and target.path_roots is not None:
            refusal = target.path_roots.refusal(
                self.spark, [PathUse(script_uri, "a script to deploy")]
            )
            if refusal is not None:
                raise PermissionDeniedError(refusal)
        text = read_script(script, script_uri)
        self._check_length(text)
        app_id = self._deployer.deploy(
            self.spark.sparkContext,
            text,
            target.image().properties,  # what the session set, not the gateway's defaults
            options,
            target.environment.user,
        )
        self.audit.record(
            "script-deployed",
            session=str(session),
            user=target.environment.user,
            address=target.environment.client_address,
            application=app_id,
        )
        return app_id

    def stop_job(
        self, job_id: str, *, with_savepoint: bool = False, drain: bool = False
    ) -> JobInfo:
        sc = self.spark.sparkContext
        job = self._job_manager.stop_job(sc, job_id, savepoint=with_savepoint, drain=drain)
        return job.info()
