"""The client loops of a soak run, one thread each.

Every loop repeats one ``step`` until the run drains (its duration is over),
then finishes what it started; a :class:`Failure` is recorded by kind and the
loop goes on (after Retry-After for the documented 503 of a restarting
engine, with a new session when its session is gone). REST loops heartbeat
their session while they wait, as Flink's clients do, so only the sessions
left on purpose expire. The soak kills the engine once (bench/soak/restart.py):
the streaming job must commit batches again on the new engine.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bench.soak.errors import Failure, Halted, hs2_failure
from bench.soak.queries import (
    BIG_SELECT,
    BigCheck,
    Canonical,
    Verified,
    arrow_rows,
    canonical_rows,
)
from bench.soak.rest import Rest
from bench.soak.settings import SoakSettings
from bench.soak.stats import BigRead, Recorder

__all__ = [
    "ArrowReader",
    "BigSelect",
    "Client",
    "Context",
    "Hostile",
    "Hs2Client",
    "JsonReader",
    "SessionChurn",
    "StreamingJob",
    "last_committed_batch",
    "make_clients",
]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
ALLOW_OPTION = "sql-gateway.security.allowed-host-statements"
_OFFSETS = 1_000_000  # verified queries start anywhere below this id


@dataclass
class Context:
    """What every client shares: where the gateway is, the counters, the stop signals."""

    settings: SoakSettings
    url: str
    hs2_port: int
    recorder: Recorder
    scratch: Path
    started: float = field(default_factory=time.monotonic)
    # Set when the duration is over: finish the current work, start none.
    draining: threading.Event = field(default_factory=threading.Event)
    # Set to stop now: Ctrl-C, a dead gateway, or a drain that took too long.
    halt: threading.Event = field(default_factory=threading.Event)
    # When the sampler last saw a new engine serve (monotonic); sessions moved
    # onto it count as used then (docs/operations.md, Engine health).
    engine_back_at: float | None = None
    # Set while a big SELECT runs: the live heap is not sampled then (its batches).
    big_running: threading.Event = field(default_factory=threading.Event)
    # The soak's planned kills of the engine so far (bench/soak/restart.py).
    engine_kills: int = 0
    # The streaming job's checkpoint directory, and its last batch committed at the kill.
    streaming_checkpoint: Path | None = None
    batch_at_kill: int | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def heartbeat_s(self) -> float:
        idle, _ = self.settings.session_expiry()
        return max(1.0, idle / 3)


def last_committed_batch(checkpoint: Path | None) -> int:
    """The last batch a streaming job's queries committed: the highest entry of Spark's
    commit log (``<checkpoint>/<query>/commits/<batch>``; Spark deletes the old ones,
    so their count stops growing); -1 without a checkpoint or a commit."""
    if checkpoint is None:
        return -1
    return max(
        (int(e.name) for e in checkpoint.glob("*/commits/*") if e.name.isdigit()), default=-1
    )


class Client(threading.Thread):
    """A loop of ``step`` until the run drains; ``finish`` and ``close`` at the end."""

    kind: ClassVar[str] = "client"

    def __init__(self, ctx: Context, index: int = 0) -> None:
        super().__init__(name=f"{self.kind}-{index}", daemon=True)
        self.ctx = ctx
        self.index = index
        self.rng = random.Random(f"{self.kind}-{index}")  # the same queries on every run

    def run(self) -> None:
        try:
            while not self.ctx.draining.is_set():
                self.attempt(self.step)
            if not self.ctx.halt.is_set():
                self.attempt(self.finish)
        except Halted:
            pass
        except Exception as exc:  # a bug of the soak itself: report it, never hide it
            log.exception("%s crashed", self.name)
            self.ctx.recorder.problem("client crashed", f"{self.name}: {exc!r}")
        finally:
            self.close()

    def step(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Work after the duration (stop a job, count what is pending)."""

    def close(self) -> None:
        """Release connections and sessions."""

    def attempt(self, action: Callable[[], None]) -> bool:
        """Run ``action``; a :class:`Failure` is recorded and answered, not raised."""
        try:
            action()
            return True
        except Failure as failure:
            log.debug("%s: %s", self.name, failure)
            self.ctx.recorder.failure(self.name, failure)
            self.after_failure(failure)
            return False

    def after_failure(self, failure: Failure) -> None:
        # Retry-After on the documented 503; a short pause for anything else.
        self.ctx.halt.wait(min(failure.retry_after_s or 2.0, 30.0))

    def check(self, query: Verified, rows: list[Canonical], seconds: float) -> None:
        """Count a result read to the end; a mismatch is a lost result."""
        self.ctx.recorder.served(self.kind, seconds=seconds)
        problem = query.mismatch(rows)
        if problem is None:
            self.ctx.recorder.verified(self.kind, len(rows))
        else:
            self.ctx.recorder.problem("lost", f"{self.name}: {problem}")

    def next_query(self) -> Verified:
        return Verified(self.rng.randrange(_OFFSETS), self.rng.randint(2000, 5000))


class RestClient(Client):
    """A client with one REST session, made again when it is gone."""

    version: ClassVar[str] = "v4"

    def __init__(self, ctx: Context, index: int = 0) -> None:
        super().__init__(ctx, index)
        self.rest = Rest(ctx.url, self.version)
        self.session: str | None = None
        self.last_used = time.monotonic()

    def ensure_session(self) -> str:
        if self.session is None:
            self.session = self.rest.open_session(self.name)
            self.ctx.recorder.event("sessions opened by clients")
        self.last_used = time.monotonic()
        return self.session

    def after_failure(self, failure: Failure) -> None:
        if failure.session_gone:
            self.session = None
        super().after_failure(failure)

    def pause(self, seconds: float) -> None:
        """Wait ``seconds`` (less once the run drains), heartbeating the session."""
        deadline = time.monotonic() + seconds
        while not self.ctx.draining.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.ctx.draining.wait(min(left, self.ctx.heartbeat_s))
            if self.session and time.monotonic() - self.last_used >= self.ctx.heartbeat_s:
                self.attempt(self._heartbeat)

    def _heartbeat(self) -> None:
        if self.session is not None:
            self.rest.heartbeat(self.session)
            self.last_used = time.monotonic()

    def close(self) -> None:
        if self.session is not None and not self.ctx.halt.is_set():
            with contextlib.suppress(Failure):
                self.rest.close_session(self.session)
        self.rest.close()


class JsonReader(RestClient):
    """Verified results in Flink's JSON rows (V4)."""

    kind = "rest-json"

    def step(self) -> None:
        query, started = self.next_query(), time.monotonic()
        result = self.rest.json_result(self.ensure_session(), query.sql)
        self.check(query, canonical_rows(result.rows), time.monotonic() - started)
        self.pause(self.ctx.settings.think_s)


class JsonReaderV3(JsonReader):
    """The same on the V3 API, as an older Flink client speaks it."""

    version = "v3"


class ArrowReader(RestClient):
    """Verified results as Arrow IPC pages (``rowFormat=ARROW``)."""

    kind = "rest-arrow"

    def step(self) -> None:
        query, started = self.next_query(), time.monotonic()
        rows: list[tuple[Any, ...]] = []
        self.rest.arrow_result(
            self.ensure_session(), query.sql, lambda t: rows.extend(arrow_rows(t)), self.ctx.halt
        )
        self.check(query, canonical_rows(rows), time.monotonic() - started)
        self.pause(self.ctx.settings.think_s)


class Hs2Client(Client):
    """PyHive over the binary transport (NOSASL): a connection, a few queries, close.

    Statements run asynchronously and are polled, as Hive's JDBC driver (and
    so beeline) does: the polls keep the session in use. PyHive's default, a
    synchronous ExecuteStatement, sends nothing while a statement runs, so a
    statement longer than the idle timeout would lose its session.
    """

    kind = "hs2"
    queries_per_connection: ClassVar[int] = 3
    poll_s: ClassVar[float] = 0.5

    def step(self) -> None:
        try:
            self._one_connection()
        except (Failure, Halted):
            raise
        except Exception as exc:  # PyHive, Thrift and socket errors alike
            raise hs2_failure(exc) from exc
        self.ctx.draining.wait(self.ctx.settings.think_s)

    def _connect(self) -> Any:
        from pyhive import hive  # type: ignore[import-untyped]
        from thrift.transport import TSocket, TTransport

        sock = TSocket.TSocket(HOST, self.ctx.hs2_port)
        sock.setTimeout(300_000)  # ms; PyHive itself would wait forever
        transport = TTransport.TBufferedTransport(sock)  # what PyHive does for NOSASL
        return hive.connect(username=self.name, thrift_transport=transport)

    def _one_connection(self) -> None:
        connection = self._connect()
        self.ctx.recorder.event("hs2 connections")
        try:
            cursor = connection.cursor()
            for _ in range(self.queries_per_connection):
                query = self.next_query()
                started = time.monotonic()
                cursor.execute(query.sql, async_=True)
                self._wait_until_done(cursor)
                rows = canonical_rows(cursor.fetchall())
                self.check(query, rows, time.monotonic() - started)
                if self.ctx.draining.wait(self.ctx.settings.think_s):
                    break
        finally:
            with contextlib.suppress(Exception):
                connection.close()

    def _wait_until_done(self, cursor: Any) -> None:
        """Poll GetOperationStatus until the statement left its running states."""
        from pyhive import exc as pyhive_exc
        from TCLIService.ttypes import TOperationState

        running = (
            TOperationState.INITIALIZED_STATE,
            TOperationState.PENDING_STATE,
            TOperationState.RUNNING_STATE,
        )
        while True:
            status = cursor.poll(get_progress_update=False)
            if status.operationState == TOperationState.ERROR_STATE:
                raise pyhive_exc.OperationalError(status)
            if status.operationState not in running:
                return
            if self.ctx.halt.wait(self.poll_s):
                with contextlib.suppress(Exception):
                    cursor.cancel()
                raise Halted()


class StreamingJob(RestClient):
    """A streaming INSERT from datagen into blackhole that must stay RUNNING and,
    after the engine was killed, commit batches again on the new engine (it resumes
    from its checkpoint: docs/operations.md, Engine health)."""

    kind = "streaming"
    _DDL = (
        "CREATE TEMPORARY TABLE soak_src (id BIGINT, name STRING, amount DECIMAL(10, 2), "
        "ts TIMESTAMP(3)) WITH ('connector' = 'datagen', 'rows-per-second' = '{rate}')",
        "CREATE TEMPORARY TABLE soak_sink (id BIGINT, name STRING, amount DECIMAL(10, 2), "
        "ts TIMESTAMP(3)) WITH ('connector' = 'blackhole')",
        "SET 'execution.runtime-mode' = 'streaming'",
    )
    _INSERT = "INSERT INTO soak_sink SELECT id, upper(name), amount * 2, ts FROM soak_src"

    _RESUME_WAIT_S = 120.0  # after the duration, for a batch on the new engine

    def __init__(self, ctx: Context, index: int = 0) -> None:
        super().__init__(ctx, index)
        self.job_id: str | None = None
        self.resumed = False

    def step(self) -> None:
        if self.job_id is None or self.session is None:
            self._start_job()
        self.pause(self.ctx.settings.stream_check_every_s)
        if self.ctx.draining.is_set():
            return
        status = self._status()
        self.ctx.recorder.event("streaming job checks")
        if status == "RUNNING":
            self.ctx.recorder.event("streaming job RUNNING")
            self._check_resumed()
        else:
            self.ctx.recorder.problem("streaming job", f"job {self.job_id} is {status}")
            self.job_id = None  # start another, to keep the load on

    def _check_resumed(self) -> bool:
        """Whether the job committed a batch since the engine was killed (once counted)."""
        at_kill = self.ctx.batch_at_kill
        if self.resumed or at_kill is None or self.ctx.engine_back_at is None:
            return self.resumed
        now = last_committed_batch(self.ctx.streaming_checkpoint)
        if now > at_kill:
            self.resumed = True
            self.ctx.recorder.event("streaming job committed on the new engine")
            log.info(
                "Streaming job %s resumed: batch %d committed, %d the last at the kill",
                self.job_id,
                now,
                at_kill,
            )
        return self.resumed

    def _start_job(self) -> None:
        # A fresh session each time: the old one (if any) already has the tables.
        if self.session is not None:
            with contextlib.suppress(Failure):
                self.rest.close_session(self.session)
            self.session = None
        self.job_id = None
        session = self.ensure_session()
        rate = self.ctx.settings.stream_rows_per_second
        for statement in self._DDL:
            self.rest.json_result(session, statement.format(rate=rate))
            self.ctx.recorder.served(self.kind)
        result = self.rest.json_result(session, self._INSERT)
        self.ctx.recorder.served(self.kind)
        self.job_id = result.job_id or str(result.rows[0][0])
        self.ctx.recorder.event("streaming jobs started")
        log.info("Streaming job %s started", self.job_id)
        described = self.rest.json_result(session, f"DESCRIBE JOB '{self.job_id}'").record()
        self.ctx.recorder.served(self.kind)
        checkpoint = str(described.get("checkpoint") or "")
        self.ctx.streaming_checkpoint = (
            Path(checkpoint.removeprefix("file:")) if checkpoint else None
        )

    def _wait_resumed(self) -> bool:
        """Wait for a batch on the new engine, heartbeating the session meanwhile."""
        deadline = time.monotonic() + self._RESUME_WAIT_S
        while not self._check_resumed() and time.monotonic() < deadline:
            if self.ctx.halt.wait(2.0):
                break
            if time.monotonic() - self.last_used >= self.ctx.heartbeat_s:
                self.attempt(self._heartbeat)
        return self.resumed

    def _status(self) -> str:
        rows = self.rest.json_result(self.ensure_session(), "SHOW JOBS").rows
        self.ctx.recorder.served(self.kind)
        return next((str(r[2]) for r in rows if str(r[0]) == self.job_id), "missing")

    def finish(self) -> None:
        if self.job_id is None or self.session is None:
            return
        if self.ctx.batch_at_kill is not None and not self._wait_resumed():
            self.ctx.recorder.problem(
                "streaming job",
                f"job {self.job_id} committed no batch after the engine restart "
                f"(batch {self.ctx.batch_at_kill} the last at the kill)",
            )
        self.rest.json_result(self.session, f"STOP JOB '{self.job_id}'")
        self.ctx.recorder.served(self.kind)
        status = self._status()
        self.ctx.recorder.event(f"streaming job stopped: {status}")
        log.info("Streaming job %s stopped: %s", self.job_id, status)


class SessionChurn(RestClient):
    """Sessions opened on every API version, used once and left to expire."""

    kind = "sessions"
    _VERSIONS = ("v1", "v2", "v3", "v4")
    _MARGIN_S = 30.0  # the expiry check may run late on a busy machine

    def __init__(self, ctx: Context, index: int = 0) -> None:
        super().__init__(ctx, index)
        self.by_version = {v: Rest(ctx.url, v) for v in self._VERSIONS}
        self.left: list[tuple[str, str, float]] = []  # version, handle, last use
        self.opened = 0

    def step(self) -> None:
        version = self._VERSIONS[self.opened % len(self._VERSIONS)]
        rest = self.by_version[version]
        handle = rest.open_session(f"churn-{self.opened}")
        self.opened += 1
        self.ctx.recorder.event("sessions left to expire")
        # The operation stays open too: the session's expiry must take it along.
        started = time.monotonic()
        rows = rest.json_result(handle, "SELECT 1 AS one", close=False).rows
        self.ctx.recorder.served(self.kind, seconds=time.monotonic() - started)
        if rows != [[1]]:
            self.ctx.recorder.problem("lost", f"{self.name}: SELECT 1 answered {rows}")
        self.left.append((version, handle, time.monotonic()))
        self._check_expired()
        self.pause(self.ctx.settings.churn_every_s)

    def _check_expired(self) -> None:
        idle, check = self.ctx.settings.session_expiry()
        due = idle + check + self._MARGIN_S
        now = time.monotonic()
        for entry in [e for e in self.left if now - e[2] >= due]:
            version, handle, used = entry
            self.left.remove(entry)
            if self.by_version[version].session_status(handle) == 404:
                self.ctx.recorder.event("sessions expired")
            elif self.ctx.engine_back_at is not None and self.ctx.engine_back_at > used:
                # Moved onto a new engine since (which marks it used), and the
                # status call just used it again: it should expire from now.
                self.ctx.recorder.event("sessions kept by an engine restart")
                self.left.append((version, handle, time.monotonic()))
            else:
                self.ctx.recorder.problem(
                    "session not expired", f"{handle} open {now - used:.0f} s after its last use"
                )

    def finish(self) -> None:
        self._check_expired()
        self.ctx.recorder.event("sessions not yet due at the end", len(self.left))

    def close(self) -> None:
        super().close()
        for rest in self.by_version.values():
            rest.close()


class Hostile(RestClient):
    """One session sending the statements that act on the host; each must be refused."""

    kind = "hostile"

    def __init__(self, ctx: Context, index: int = 0) -> None:
        super().__init__(ctx, index)
        self.target = ctx.scratch / "insert-overwrite-target"
        self.target.mkdir(parents=True, exist_ok=True)
        self.sentinel = self.target / "sentinel.txt"
        self.sentinel.write_text("must survive\n", encoding="utf-8")
        self.statements = {
            "transform": "SELECT TRANSFORM(id) USING 'cat' AS (x string) FROM range(1)",
            "reflection": "SELECT reflect('java.lang.System', 'exit', 3)",
            "insert-directory": f"INSERT OVERWRITE LOCAL DIRECTORY '{self.target}' SELECT 1",
            "add-file": "ADD FILE '/etc/hosts'",
        }

    def step(self) -> None:
        restarts, kills = self._restarts(), self.ctx.engine_kills
        for kind, statement in self.statements.items():
            self._expect_refusal(kind, statement)
        # A round the soak's own kill of the engine overlapped proves nothing either way.
        self._check_nothing_happened(restarts if kills == self.ctx.engine_kills else None)
        self.ctx.recorder.event("hostile rounds")
        self.pause(self.ctx.settings.hostile_every_s)

    def _expect_refusal(self, kind: str, statement: str) -> None:
        session = self.ensure_session()
        try:
            rows = self.rest.json_result(session, statement).rows
        except Failure as failure:
            if failure.expected or failure.session_gone:
                raise  # the engine restarts or the session is gone: not about this statement
            if ALLOW_OPTION in failure.message:
                self.ctx.recorder.served(self.kind)
                self.ctx.recorder.event(f"refused: {kind}")
                self.ctx.recorder.event(f"refused with {failure.channel} {failure.status}")
            else:
                self.ctx.recorder.problem(
                    "refusal without the option", f"{kind}: {failure.kind}: {failure.message[:300]}"
                )
            return
        self.ctx.recorder.problem("harmful ran", f"{kind} answered {rows[:3]}")

    def _restarts(self) -> int | None:
        status, body = self.rest.readiness()
        return int(body["restarts"]) if status == 200 and "restarts" in body else None

    def _check_nothing_happened(self, restarts_before: int | None) -> None:
        restarts_after = self._restarts()
        if None not in (restarts_before, restarts_after) and restarts_after != restarts_before:
            self.ctx.recorder.problem(
                "harmful ran", f"the engine restarted ({restarts_before} -> {restarts_after})"
            )
        entries = sorted(p.name for p in self.target.iterdir())
        if entries != [self.sentinel.name] or self.sentinel.read_text("utf-8") != "must survive\n":
            self.ctx.recorder.problem("harmful ran", f"{self.target} now holds {entries}")
        files = self.rest.json_result(self.ensure_session(), "LIST FILES").rows
        self.ctx.recorder.served(self.kind)
        if files:
            self.ctx.recorder.problem("harmful ran", f"LIST FILES shows {files}")


class BigSelect(RestClient):
    """Now and then, ``SELECT id, id * 2 AS d FROM range(50000000)`` read to the end as Arrow."""

    kind = "big-select"
    _NOT_IN_LAST_S = 120.0  # do not start one that would mostly run after the duration

    def __init__(self, ctx: Context, index: int = 0) -> None:
        super().__init__(ctx, index)
        self.due = ctx.settings.big_first_after_s

    def step(self) -> None:
        settings = self.ctx.settings
        while self.ctx.elapsed() < self.due and not self.ctx.draining.is_set():
            self.pause(min(self.due - self.ctx.elapsed(), 5.0))
        late = self.ctx.elapsed() > settings.duration_s - self._NOT_IN_LAST_S
        if self.ctx.draining.is_set() or (late and self.ctx.recorder.big_reads):
            self.pause(settings.duration_s)  # nothing more to do but heartbeat
            return
        self.due = self.ctx.elapsed() + settings.big_every_s
        self._read(settings.big_rows)

    def _read(self, rows: int) -> None:
        check, started, at = BigCheck(rows), time.monotonic(), self.ctx.elapsed()
        log.info("Big SELECT of %d rows starts", rows)
        self.ctx.big_running.set()
        try:
            self.rest.arrow_result(
                self.ensure_session(), BIG_SELECT.format(rows=rows), check.add, self.ctx.halt
            )
        except Failure as failure:
            if failure.expected:  # cut off by an engine restart: read it again after
                self.due = self.ctx.elapsed()
                self.ctx.recorder.event("big SELECT cut off by an engine restart")
            else:
                self.ctx.recorder.big_read(BigRead(at, check.rows, 0.0, False, failure.kind))
            raise
        finally:
            self.ctx.big_running.clear()
        seconds = time.monotonic() - started
        self.ctx.recorder.served(self.kind, seconds=seconds)
        problem = check.mismatch()
        if problem is None:
            self.ctx.recorder.verified(self.kind, check.rows)
        else:
            self.ctx.recorder.problem("lost", f"{self.name}: {problem}")
        self.ctx.recorder.big_read(BigRead(at, check.rows, seconds, problem is None, problem or ""))
        log.info("Big SELECT read %d rows in %.0f s (%s)", check.rows, seconds, problem or "ok")


def make_clients(ctx: Context) -> list[Client]:
    """The run's clients, as many of each as the settings say."""
    s = ctx.settings
    readers: list[Client] = [
        (JsonReader if i % 2 == 0 else JsonReaderV3)(ctx, i) for i in range(s.json_readers)
    ]
    readers += [ArrowReader(ctx, i) for i in range(s.arrow_readers)]
    readers += [Hs2Client(ctx, i) for i in range(s.hs2_clients)]
    return [*readers, StreamingJob(ctx), SessionChurn(ctx), Hostile(ctx), BigSelect(ctx)]
