"""What a CREATE TABLE AS / REPLACE TABLE AS job does to the catalog, as its
job status hook (FLIP-218) and its last step (FLIP-303).

Two levels, as the seed's table names them:

- not atomic (``table.rtas-ctas.atomicity-enabled`` false, Flink's default
  for CTAS): ``on_created`` creates the empty table, the job writes it, and
  ``on_failed`` / ``on_canceled`` drop it again;
- atomic (and every RTAS of an existing table): ``on_created`` creates a
  staging table beside the target (``__sparkgate_staging_<job>``), the job
  writes it and, as its last step, renames it to the target (RTAS: the old
  table is renamed aside first and dropped after); a failure or cancel drops
  the staging table and puts an old table back, so the target is untouched.

The hook is durable: the job store keeps its record, and a job the gateway
process left unfinished is cleaned up at the next start (see
:class:`sparkgate.service.job.hooks.DurableHook`). Every name the hook
derives comes from its ``token`` (unique per statement), so the clean-up needs
nothing else.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkgate.api.errors import ExecutionError
from sparkgate.api.jobs import JobInfo, NoopJobStatusHook
from sparkgate.service.catalog import quote_name
from sparkgate.service.catalogs.spark import SESSION_CATALOG
from sparkgate.service.spark.jobs import invalid, to_execution_error
from sparkgate.service.spark.plans import active_session
from sparkgate.service.streaming.strategy import invalidate_tables

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "HOOK_KIND",
    "TableAsSelectHook",
    "database_exists",
    "delete_directory",
    "delete_staged",
    "move_directory",
    "path_exists",
    "sibling_directory",
    "staging_directory",
    "staging_name",
    "table_exists",
]

log = logging.getLogger(__name__)

HOOK_KIND = "table-as-select"
_STAGING_PREFIX = "__sparkgate_staging_"
_BACKUP_PREFIX = "__sparkgate_replaced_"


def staging_name(
    target: tuple[str, ...], token: str, prefix: str = _STAGING_PREFIX
) -> tuple[str, ...]:
    """A name beside ``target`` (same catalog and database) that only one job uses."""
    return (*target[:-1], f"{prefix}{token}")


def table_exists(spark: SparkSession, name: tuple[str, ...]) -> bool:
    with active_session(spark):
        return bool(spark._jsparkSession.catalog().tableExists(quote_name(name)))


def _fs_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    sc = spark.sparkContext
    jvm = sc._jvm
    assert jvm is not None
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(sc._jsc.hadoopConfiguration()), hadoop_path


def same_directory(spark: SparkSession, first: str, second: str) -> bool:
    """Whether two paths name the same directory (as the file system qualifies them)."""
    fs, one = _fs_path(spark, first)
    _, two = _fs_path(spark, second)
    return bool(fs.makeQualified(one).equals(fs.makeQualified(two)))


def _holds_files(spark: SparkSession, path: str) -> bool:
    fs, target = _fs_path(spark, path)
    return bool(
        fs.exists(target) and (not fs.getFileStatus(target).isDirectory() or fs.listStatus(target))
    )


def sibling_directory(spark: SparkSession, path: str, token: str, role: str = "staging") -> str:
    """A directory beside ``path`` that only one job uses: ``.<name>.sparkgate-<role>-<token>``."""
    _, target = _fs_path(spark, path)
    return str(target.getParent().suffix(f"/.{target.getName()}.sparkgate-{role}-{token}"))


def staging_directory(spark: SparkSession, path: str, token: str) -> str:
    """A directory beside ``path`` for a job's files until they are published there;
    ``path`` itself must not hold files (they would become the table's rows)."""
    if _holds_files(spark, path):
        message = f"The path {path} is not empty: an atomic CREATE TABLE AS needs a new path."
        raise invalid(message)
    return sibling_directory(spark, path, token)


def path_exists(spark: SparkSession, path: str | None) -> bool:
    """Whether ``path`` (None: no path) exists on its file system."""
    if path is None:
        return False
    fs, target = _fs_path(spark, path)
    return bool(fs.exists(target))


def move_directory(spark: SparkSession, source: str, target: str) -> None:
    """Rename ``source`` to ``target`` (an empty ``target`` directory is replaced)."""
    fs, src = _fs_path(spark, source)
    _, dst = _fs_path(spark, target)
    if fs.exists(dst):
        if fs.listStatus(dst):
            raise ExecutionError(f"Cannot publish to {target}: files appeared there meanwhile")
        fs.delete(dst, True)
    else:
        fs.mkdirs(dst.getParent())  # a new partition's parent may not exist yet
    if not fs.rename(src, dst):
        raise ExecutionError(f"Could not move {source} to {target}")


def delete_directory(spark: SparkSession, path: str) -> None:
    fs, target = _fs_path(spark, path)
    fs.delete(target, True)


def delete_staged(
    spark: SparkSession, path: str, quiet_s: float = 2.0, limit_s: float = 20.0
) -> None:
    """Delete a cancelled job's staging directory, and again while it comes back.

    A killed task runs until it next looks at its kill flag, and Spark's status
    tracker stops counting the tasks of a stage once the stage is cancelled: a
    task may still make its attempt directory after the job is reported ended.
    The directory must stay gone ``quiet_s`` (at most ``limit_s`` in all).
    """
    deadline = time.monotonic() + limit_s
    gone_since = time.monotonic()
    delete_directory(spark, path)
    while time.monotonic() < deadline:
        if path_exists(spark, path):
            delete_directory(spark, path)
            gone_since = time.monotonic()
        elif time.monotonic() - gone_since >= quiet_s:
            return
        time.sleep(0.2)


def database_exists(spark: SparkSession, name: tuple[str, ...]) -> bool:
    """Whether the database (catalog, database) exists."""
    with active_session(spark):
        return bool(spark._jsparkSession.catalog().databaseExists(quote_name(name)))


def _table_or_view(spark: SparkSession, table: str, view: str, view_error: str) -> None:
    """Run the TABLE statement, or its VIEW twin where Spark says the name is a view
    (``print`` and ``blackhole`` tables are stored as views); then cached
    connector-table lookups are stale."""
    try:
        spark.sql(table).collect()
    except Exception as exc:
        if not (to_execution_error(exc).error_class or "").startswith(view_error):
            raise
        spark.sql(view).collect()
    invalidate_tables()


def _drop(spark: SparkSession, name: tuple[str, ...]) -> None:
    # PURGE: a managed table's files go now, not to a trash (V2 catalogs have no trash).
    purge = " PURGE" if name[0] == SESSION_CATALOG else ""
    quoted = quote_name(name)
    _table_or_view(
        spark,
        f"DROP TABLE IF EXISTS {quoted}{purge}",
        f"DROP VIEW IF EXISTS {quoted}",
        "WRONG_COMMAND_FOR_OBJECT_TYPE",
    )


def _rename(spark: SparkSession, source: tuple[str, ...], target: tuple[str, ...]) -> None:
    # The new name is relative to the catalog: database and table.
    renamed = f"{quote_name(source)} RENAME TO {quote_name(target[1:])}"
    _table_or_view(
        spark, f"ALTER TABLE {renamed}", f"ALTER VIEW {renamed}", "EXPECT_TABLE_NOT_VIEW"
    )


@dataclass
class TableAsSelectHook(NoopJobStatusHook):
    """The catalog side of one CTAS/RTAS job; ``target`` is fully qualified
    (catalog, database, table).

    ``create`` creates the table the job writes, by the name given (the
    target, or the staging table when ``atomic``); ``replacing`` says an
    existing target is to be replaced. ``created`` is set once
    :meth:`on_created` made it.

    A replaced table is renamed aside (``__sparkgate_replaced_<token>``) and
    dropped once the new one is in place: at publish time (atomic), or by
    :meth:`settle` once a streaming job runs. When the new table's directory
    (``target_path``) is the old one's, the old files are moved aside to
    ``backup_path`` at the same moment, so a failure puts them back.
    """

    spark: SparkSession
    token: str
    target: tuple[str, ...]
    atomic: bool
    replacing: bool = False
    create: Callable[[tuple[str, ...]], None] | None = None
    created: bool = False
    # A connector table: what makes the target's definition at publish time
    # (atomic), and its files' staging, final and backup directories (filesystem).
    finish: Callable[[], None] | None = None
    staging_path: str | None = None
    target_path: str | None = None
    backup_path: str | None = None

    kind = HOOK_KIND

    @property
    def staging(self) -> tuple[str, ...]:
        return staging_name(self.target, self.token)

    @property
    def backup(self) -> tuple[str, ...]:
        return staging_name(self.target, self.token, _BACKUP_PREFIX)

    @property
    def written(self) -> tuple[str, ...]:
        """The table the job writes."""
        return self.staging if self.atomic else self.target

    # -- the job store ------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "target": list(self.target),
            "atomic": self.atomic,
            "replacing": self.replacing,
            "created": self.created,
            "staging_path": self.staging_path,
            "target_path": self.target_path,
            "backup_path": self.backup_path,
        }

    @classmethod
    def from_record(cls, spark: SparkSession, record: Mapping[str, Any]) -> TableAsSelectHook:
        return cls(
            spark,
            str(record["token"]),
            tuple(str(part) for part in record["target"]),
            atomic=bool(record["atomic"]),
            replacing=bool(record.get("replacing")),
            created=bool(record.get("created")),
            staging_path=record.get("staging_path"),
            target_path=record.get("target_path"),
            backup_path=record.get("backup_path"),
        )

    # -- FLIP-218 -----------------------------------------------------------------
    def on_created(self, job: JobInfo) -> None:
        if self.create is None:
            return
        if not self.atomic and self.replacing:
            self._set_aside()
        self.create(self.written)
        self.created = True
        log.info("Job %s created table %s", job.job_id, ".".join(self.written))

    def on_failed(self, job: JobInfo, cause: str) -> None:
        self.clean_up()

    def on_canceled(self, job: JobInfo) -> None:
        self.clean_up()

    # -- the job's last step, and undoing it --------------------------------------
    def _set_aside(self) -> None:
        """The table being replaced (and its files) out of the target's way."""
        if table_exists(self.spark, self.target):
            _rename(self.spark, self.target, self.backup)
        if self.backup_path is not None and path_exists(self.spark, self.target_path):
            assert self.target_path is not None
            move_directory(self.spark, self.target_path, self.backup_path)

    def _forget_replaced(self) -> None:
        _drop(self.spark, self.backup)
        if self.backup_path is not None:
            delete_directory(self.spark, self.backup_path)

    def publish(self) -> None:
        """Atomic mode, once the rows are written: the staging table becomes the target.

        A failure on the way leaves states :meth:`clean_up` undoes.
        """
        if not self.atomic:
            return
        if self.replacing:
            self._set_aside()
        if self.finish is not None:  # a connector table
            if self.staging_path is not None and self.target_path is not None:
                move_directory(self.spark, self.staging_path, self.target_path)
            _drop(self.spark, self.staging)
            self.finish()
        else:
            _rename(self.spark, self.staging, self.target)
        self._forget_replaced()
        log.info("CTAS %s published table %s", self.token, ".".join(self.target))

    def settle(self) -> None:
        """A streaming REPLACE whose job runs: the replaced table is gone for good."""
        self._forget_replaced()

    def clean_up(self) -> None:
        """Leave the catalog and the files as they were before the job: nothing it made
        stays, and a table it replaced is back, unless the replacement had finished."""
        spark = self.spark
        # Staged files were moved to the target's path when their directory is gone.
        moved = (
            self.created
            and self.staging_path is not None
            and not path_exists(spark, self.staging_path)
        )
        backed_up = table_exists(spark, self.backup)
        ours = (self.created and not self.atomic) or backed_up
        if self.atomic:
            _drop(spark, self.staging)
            if self.staging_path is not None:
                delete_staged(spark, self.staging_path)
        if table_exists(spark, self.target) and (self.atomic or not ours):
            # The old table is still in place, or the new one was published.
            self._forget_replaced()
            shown = ".".join(self.target)
            log.info("CTAS %s: %s stays, nothing else of the job's", self.token, shown)
            return
        if ours:
            _drop(spark, self.target)
        if self.target_path is not None:
            if path_exists(spark, self.backup_path):
                assert self.backup_path is not None
                delete_directory(spark, self.target_path)
                move_directory(spark, self.backup_path, self.target_path)
            elif moved:
                delete_directory(spark, self.target_path)
        if backed_up:
            _rename(spark, self.backup, self.target)
        log.info("CTAS %s: what the job made is dropped", self.token)
