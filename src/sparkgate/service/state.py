"""Where the gateway keeps its own state: files under the data directory, or a database.

The job store, the session store and the catalog store each keep small JSON
records by key: a job's definition and status, a session's image, a
catalog's definition. :class:`Records` is that contract, with two homes:

* :class:`FileRecords`, the default: one ``<key>.json`` per record in a
  directory of the data directory, written atomically (a temporary file
  renamed over the old one, synced first), private to the gateway's OS user
  where it may hold credentials.
* :class:`DatabaseRecords`: rows of one table (``sparkgate_records``) in the
  database of ``sql-gateway.state.url``, any database SQLAlchemy speaks to
  (SQLite, PostgreSQL with ``postgresql+psycopg://``, …). Gateways given the
  same URL see each other's records: the state of one service.

A write that fails raises :class:`StateWriteError`, an :class:`OSError` for
both homes, so a store handles a full disk and an unreachable database alike;
:class:`RecordTakenError` when another gateway of the service has taken the
record over.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, unquote

import orjson

from sparkgate.api.errors import ConfigurationError

__all__ = [
    "DatabaseRecords",
    "FileRecords",
    "RecordTakenError",
    "Records",
    "StateDatabase",
    "StateWriteError",
    "gateway_id",
]

log = logging.getLogger(__name__)

_SUFFIX = ".json"


class StateWriteError(OSError):
    """A record could not be written or deleted (disk, permissions, database)."""


class RecordTakenError(StateWriteError):
    """The record is another gateway's now: it took this gateway's records over while
    this one was silent past its lease. This gateway must let go of it."""


class Records(Protocol):
    """JSON records by key, of one kind (jobs, sessions, catalogs)."""

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        """Store ``record`` under ``key``, replacing any; raises :class:`StateWriteError`."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``'s record if there is one; raises :class:`StateWriteError`."""
        ...

    def load(self) -> list[tuple[str, bytes]]:
        """Every record as ``(key, JSON text)``, by key; parsing is the store's."""
        ...

    def where(self, key: str) -> str:
        """Where ``key``'s record is, for messages (a path, or a table and key)."""
        ...

    @property
    def location(self) -> str:
        """Where the records are, for messages."""
        ...


class FileRecords:
    """One ``<key>.json`` per record in ``directory`` (keys are quoted into names)."""

    def __init__(self, directory: Path, *, private: bool = False) -> None:
        self.directory = directory
        self._private = private

    def _path(self, key: str) -> Path:
        # Any key is a safe file name once quoted ('/' and '.' too).
        return self.directory / (quote(key, safe="").replace(".", "%2E") + _SUFFIX)

    def where(self, key: str) -> str:
        return str(self._path(key))

    @property
    def location(self) -> str:
        return str(self.directory)

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        target = self._path(key)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}-", suffix=".tmp", dir=self.directory)
        except OSError as exc:
            raise StateWriteError(f"Could not write {target}: {exc}") from exc
        try:
            if self._private:
                os.fchmod(fd, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise StateWriteError(f"Could not write {target}: {exc}") from exc

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise StateWriteError(f"Could not remove {self._path(key)}: {exc}") from exc

    def load(self) -> list[tuple[str, bytes]]:
        if not self.directory.is_dir():
            return []
        found = []
        for path in sorted(self.directory.glob(f"*{_SUFFIX}")):
            try:
                found.append((unquote(path.name[: -len(_SUFFIX)]), path.read_bytes()))
            except OSError as exc:
                log.warning("Skipping unreadable record %s: %s", path, exc)
        return found


def gateway_id(data_dir: Path) -> str:
    """This gateway's name in a shared state database: made once per data directory
    (``<data-dir>/state/gateway-id``), so a restarted gateway finds its own records."""
    path = data_dir / "state" / "gateway-id"
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".gateway-id-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(uuid.uuid4().hex + "\n")
    try:
        os.link(tmp, path)  # the first of two gateways starting at once wins
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return path.read_text(encoding="ascii").strip()


class StateDatabase:
    """The database of ``sql-gateway.state.url``: its engine and the gateway's tables.

    Made once per gateway; the tables are created if missing (by any number of
    gateways at once).
    """

    RECORDS_TABLE = "sparkgate_records"
    GATEWAYS_TABLE = "sparkgate_gateways"

    def __init__(self, url: str) -> None:
        import sqlalchemy as sa
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise ConfigurationError(
                f"sql-gateway.state.url is not a SQLAlchemy URL: {exc}"
            ) from None
        #: The URL with its password hidden, for messages.
        self.display = parsed.render_as_string(hide_password=True)
        self.url = url
        try:
            # pre_ping: a connection the database closed (a restart of PostgreSQL)
            # is replaced instead of failing the next write.
            self.engine = sa.create_engine(parsed, pool_pre_ping=True)
        except (NoSuchModuleError, ModuleNotFoundError) as exc:
            raise ConfigurationError(
                f"sql-gateway.state.url {self.display}: no driver for it ({exc}); for "
                "PostgreSQL install sparkgate[postgres] (psycopg) and write "
                "postgresql+psycopg://…"
            ) from None
        self.metadata = sa.MetaData()
        self.records_table = sa.Table(
            self.RECORDS_TABLE,
            self.metadata,
            sa.Column("kind", sa.String(32), primary_key=True),
            sa.Column("key", sa.String(512), primary_key=True),
            sa.Column("record", sa.LargeBinary, nullable=False),
            sa.Column("updated", sa.Float, nullable=False),
            # The gateway whose record it is (sessions and jobs are served by one).
            sa.Column("owner", sa.String(64), nullable=False, index=True),
        )
        # The live gateways of the service: each writes its heartbeat every few seconds.
        self.gateways_table = sa.Table(
            self.GATEWAYS_TABLE,
            self.metadata,
            sa.Column("id", sa.String(64), primary_key=True),
            sa.Column("url", sa.String(512), nullable=False),
            sa.Column("heartbeat", sa.Float, nullable=False),
        )
        self._create_lock = threading.Lock()
        self._created = False

    def create_tables(self) -> None:
        """Create the gateway's tables that are missing.

        Raises:
            ConfigurationError: the database cannot be reached, with its cause.
        """
        from sqlalchemy.exc import (
            IntegrityError,
            OperationalError,
            ProgrammingError,
            SQLAlchemyError,
        )

        with self._create_lock:
            if self._created:
                return
            try:
                try:
                    self.metadata.create_all(self.engine, checkfirst=True)
                except (IntegrityError, ProgrammingError, OperationalError):
                    # Another gateway created them between the check and the CREATE.
                    self.metadata.create_all(self.engine, checkfirst=True)
            except SQLAlchemyError as exc:
                raise ConfigurationError(
                    f"The state database {self.display} cannot be used: {_cause(exc)}"
                ) from None
            self._created = True

    def records(self, kind: str, owner: str = "") -> DatabaseRecords:
        """The records of ``kind`` (``jobs``, ``sessions``, ``catalogs``), those of the
        gateway ``owner`` only when given (shared by every gateway when empty)."""
        self.create_tables()
        return DatabaseRecords(self, kind, owner)

    def close(self) -> None:
        self.engine.dispose()

    # -- the gateways of one service ---------------------------------------------------
    def upsert(
        self, table: Any, match: Any, values: Mapping[str, Any], identity: Mapping[str, Any]
    ) -> bool:
        """Update the row ``match`` finds with ``values``, else insert ``identity`` and
        ``values``, in one transaction. False when the insert met a row ``match`` did not
        find (another writer's). Raises SQLAlchemy's errors."""
        from sqlalchemy.exc import IntegrityError

        try:
            with self.engine.begin() as connection:
                if connection.execute(table.update().where(match).values(**values)).rowcount:
                    return True
                connection.execute(table.insert().values(**identity, **values))
                return True
        except IntegrityError:
            return False

    def heartbeat(self, gateway: str, url: str) -> None:
        """Say ``gateway`` is alive and serves at ``url``; raises :class:`StateWriteError`."""
        from sqlalchemy.exc import SQLAlchemyError

        table = self.gateways_table
        values = {"url": url, "heartbeat": time.time()}
        try:
            for _ in range(3):  # a row inserted meanwhile is updated on the next try
                if self.upsert(table, table.c.id == gateway, values, {"id": gateway}):
                    return
        except SQLAlchemyError as exc:
            raise StateWriteError(f"Could not write to {self.display}: {_cause(exc)}") from exc

    def leave(self, gateway: str) -> None:
        """``gateway`` stops: the others may take over its records at once."""
        from sqlalchemy.exc import SQLAlchemyError

        table = self.gateways_table
        try:
            with self.engine.begin() as connection:
                connection.execute(table.delete().where(table.c.id == gateway))
        except SQLAlchemyError as exc:
            log.warning("Could not leave %s: %s", self.display, _cause(exc))

    def alive(self, lease_s: float) -> dict[str, str]:
        """The gateways whose last heartbeat is at most ``lease_s`` old, with their URLs."""
        table = self.gateways_table
        query = _select(table.c.id, table.c.url).where(table.c.heartbeat >= time.time() - lease_s)
        with self.engine.connect() as connection:
            return {str(gid): str(url) for gid, url in connection.execute(query)}

    def owners(self) -> set[str]:
        """Every gateway that owns a record (the service's own records have none)."""
        table = self.records_table
        query = _select(table.c.owner).where(table.c.owner != "").distinct()
        with self.engine.connect() as connection:
            return {str(owner) for (owner,) in connection.execute(query)}

    def owner_of(self, kind: str, key: str) -> str | None:
        """The gateway that owns the record ``kind``/``key``; None if there is none."""
        table = self.records_table
        query = _select(table.c.owner).where((table.c.kind == kind) & (table.c.key == key))
        with self.engine.connect() as connection:
            owner = connection.execute(query).scalar()
        return None if owner is None else str(owner)

    def take(self, kind: str, previous: str, new: str) -> list[tuple[str, bytes]]:
        """Make ``new`` the owner of ``previous``'s records of ``kind``; the records it
        got. Atomic per record: of two gateways taking at once, each record goes to one."""
        table = self.records_table
        statement = (
            table.update()
            .where((table.c.kind == kind) & (table.c.owner == previous))
            .values(owner=new, updated=time.time())
            .returning(table.c.key, table.c.record)
        )
        with self.engine.begin() as connection:
            taken = [(str(key), bytes(record)) for key, record in connection.execute(statement)]
        return sorted(taken)


def _select(*columns: Any) -> Any:
    # sqlalchemy is imported where a state database is used: most gateways have none,
    # and it is 0.2 s of every start-up.
    from sqlalchemy import select

    return select(*columns)


def _cause(exc: BaseException) -> str:
    """A database error's own message (the DB-API exception's), on one line."""
    original = getattr(exc, "orig", None) or exc
    return " ".join(str(original).split())


class DatabaseRecords:
    """Records of one kind in the state database's ``sparkgate_records`` table: of
    one gateway (``owner``) or, with an empty owner, of the whole service."""

    def __init__(self, database: StateDatabase, kind: str, owner: str = "") -> None:
        self._database = database
        self._table = database.records_table
        self.kind = kind
        self.owner = owner

    @property
    def location(self) -> str:
        return f"{self._database.display} ({self._table.name}: {self.kind})"

    def where(self, key: str) -> str:
        return f"{self._database.display} ({self._table.name}: {self.kind}/{key})"

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        data = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
        table = self._table
        match = (table.c.kind == self.kind) & (table.c.key == key)
        if self.owner:
            # Never over a record another gateway took over (this one was thought dead).
            match &= table.c.owner == self.owner
        values = {"record": data, "updated": time.time(), "owner": self.owner}
        try:
            for _ in range(3):
                if self._database.upsert(table, match, values, {"kind": self.kind, "key": key}):
                    return
                if self.owner:
                    raise RecordTakenError(
                        f"{self.where(key)} is another gateway's now: it took it over"
                    )
                # Inserted by another gateway meanwhile: update it on the next try.
        except SQLAlchemyError as exc:
            raise StateWriteError(f"Could not write {self.where(key)}: {_cause(exc)}") from exc
        raise StateWriteError(f"Could not write {self.where(key)}: it keeps changing")

    def delete(self, key: str) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        table = self._table
        try:
            match = (table.c.kind == self.kind) & (table.c.key == key)
            if self.owner:
                match &= table.c.owner == self.owner
            with self._database.engine.begin() as connection:
                connection.execute(table.delete().where(match))
        except SQLAlchemyError as exc:
            raise StateWriteError(f"Could not remove {self.where(key)}: {_cause(exc)}") from exc

    def load(self) -> list[tuple[str, bytes]]:
        """Every record of this kind; an unreachable database raises :class:`StateWriteError`."""
        from sqlalchemy.exc import SQLAlchemyError

        table = self._table
        query = (
            table.select()
            .with_only_columns(table.c.key, table.c.record)
            .where(table.c.kind == self.kind)
            .order_by(table.c.key)
        )
        if self.owner:
            query = query.where(table.c.owner == self.owner)
        try:
            with self._database.engine.connect() as connection:
                return [(str(key), bytes(record)) for key, record in connection.execute(query)]
        except SQLAlchemyError as exc:
            raise StateWriteError(
                f"Could not read {self.kind} from {self._database.display}: {_cause(exc)}"
            ) from exc
