"""How long parsing one statement may take: ``sql-gateway.statement.parse-timeout``.

A statement is parsed twice before it runs: by the gateway's own parser
(:mod:`~sparkgate.service.statements.parser`, Python on the operation's
thread) and by Spark's (ANTLR in the JVM over py4j, through
:func:`~sparkgate.service.spark.plans.parse_statement`, whose cache the
handlers then share). Below the length cap both can still take minutes:
Spark's parser needed 3 s for 100 nested CASE expressions (2 KB), 8 s to give
up on 1,000 nested parentheses, and the gateway's splitter was quadratic in
open CASE keywords before its stack counted them.

- The gateway's parser runs under a deadline its loops check
  (:mod:`sparkgate.sql.deadline`): past the limit it stops at once.
- Spark's parser cannot be stopped from Python: ANTLR does not look at thread
  interrupts and the JVM no longer has ``Thread.stop``. It runs on a thread of
  its own; past the limit the statement fails and the parse is left to finish
  in the JVM (its result is cached as usual). At most :data:`MAX_ABANDONED`
  parses are left running at once; beyond that a parse past the limit keeps
  its worker until it ends and then fails the same way, so repeating slow
  statements cannot pile up work in the JVM. A text that ran past the limit is
  timed again when it comes back, past the parse cache (which its parse left
  running fills): running it would parse it again.

Both failures are :class:`~sparkgate.sql.deadline.ParseTimeoutError`, a
``StatementError`` whose message names the option.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import timedelta
from typing import TYPE_CHECKING, TypeAlias

from sparkgate.api.config import Configuration, format_duration
from sparkgate.service import options
from sparkgate.service.spark import plans
from sparkgate.service.statements.kinds import (
    AlterMaterializedTable,
    CompilePlan,
    CreateMaterializedTable,
    Dml,
    ExecuteStatementSet,
    MetadataQuery,
    SparkCommand,
    SparkQuery,
    Statement,
    TableAsSelect,
)
from sparkgate.service.statements.parser import parse_statement
from sparkgate.sql.deadline import ParseTimeoutError, parse_deadline

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["MAX_ABANDONED", "NO_LIMIT", "ParseLimit", "ParseTimeoutError", "spark_texts"]

log = logging.getLogger(__name__)

MAX_ABANDONED = 2
"""Spark parses past the limit left running in the JVM at once (process-wide)."""

# Threads that run Spark's parser. Kept, not made per parse: in PySpark's pinned
# thread mode every Python thread is a py4j connection and a JVM thread of its own.
_POOL_THREADS = 32
_pool: ThreadPoolExecutor | None = None
_SLOW_TEXTS_KEPT = 256

_lock = threading.Lock()
_abandoned = 0
# Digests of texts whose last parse ran past a limit. Process-wide, like the JVM and
# the parse cache (plans.py) that would answer for them at once next time.
_slow: OrderedDict[bytes, None] = OrderedDict()

_Timed: TypeAlias = "tuple[plans.StatementPlan | None, float]"


def _parse_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_POOL_THREADS, thread_name_prefix="sparkgate-spark-parse")
        return _pool


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _mark_slow(digest: bytes, slow: bool) -> None:
    with _lock:
        if not slow:
            _slow.pop(digest, None)
            return
        _slow[digest] = None
        _slow.move_to_end(digest)
        while len(_slow) > _SLOW_TEXTS_KEPT:
            _slow.popitem(last=False)


def _known_slow(digest: bytes) -> bool:
    with _lock:
        return digest in _slow


def _timed(spark: SparkSession, text: str) -> _Timed:
    """Spark's (cached) parse of ``text``, and how long it took."""
    started = time.monotonic()
    plan = plans.parse_statement(spark, text)
    return plan, time.monotonic() - started


def _timed_uncached(spark: SparkSession, text: str) -> _Timed:
    """How long Spark's parser takes on ``text`` now, past the cache: for a text that
    ran past the limit before, whose plan the cache may hold by now (its parse was
    left to finish) while running it would parse it again."""
    started = time.monotonic()
    with contextlib.suppress(Exception):  # a text Spark rejects: only the time counts
        plans.parse_plan(spark, text)
    return None, time.monotonic() - started


def spark_texts(statement: Statement) -> Iterator[str]:
    """The texts of ``statement`` that Spark's parser reads (inner statements too)."""
    if isinstance(statement, MetadataQuery):
        return  # short forms the gateway answers or shapes itself
    if isinstance(statement, TableAsSelect):
        yield statement.spark_text
    elif isinstance(statement, (SparkQuery, SparkCommand, Dml)):
        yield statement.text
    elif isinstance(statement, ExecuteStatementSet):
        for inner in statement.statements:
            yield from spark_texts(inner)
    elif isinstance(statement, CompilePlan):
        for inner in statement.inserts:
            yield from spark_texts(inner)
    elif isinstance(statement, (CreateMaterializedTable, AlterMaterializedTable)) and (
        statement.query
    ):
        yield statement.query


class ParseLimit:
    """Parses statements within ``timeout_s`` (0 or less: no limit)."""

    def __init__(self, timeout_s: float, *, max_abandoned: int = MAX_ABANDONED) -> None:
        self.timeout_s = timeout_s
        self.max_abandoned = max_abandoned

    @classmethod
    def from_config(cls, config: Configuration) -> ParseLimit:
        return cls(config.get(options.STATEMENT_PARSE_TIMEOUT).total_seconds())

    @property
    def enabled(self) -> bool:
        return self.timeout_s > 0

    def _error(self, parser: str, left_running: bool = False) -> ParseTimeoutError:
        key = options.STATEMENT_PARSE_TIMEOUT.key
        limit = format_duration(timedelta(seconds=self.timeout_s))
        tail = " (Spark finishes that parse in the background)" if left_running else ""
        return ParseTimeoutError(
            f"Parsing the statement took longer than {key} ({limit}) allows; {parser} was "
            f"stopped{tail}. Simplify the statement (fewer tokens, less nesting) or raise "
            f"{key}."
        )

    def parse(self, statement: str) -> Statement:
        """The gateway's parse of ``statement`` (see :func:`.parser.parse_statement`),
        stopped with :class:`ParseTimeoutError` past the limit."""
        message = str(self._error("the gateway's parser"))
        with parse_deadline(self.timeout_s, message):
            return parse_statement(statement)

    def check_spark(self, spark: SparkSession, statement: Statement) -> None:
        """Have Spark's parser read each text of ``statement`` it will read when the
        statement runs, within the limit; the handlers then find the plans cached."""
        if not self.enabled:
            return
        for text in spark_texts(statement):
            self.spark_parse(spark, text)

    def spark_parse(self, spark: SparkSession, text: str) -> plans.StatementPlan | None:
        """:func:`plans.parse_statement` of ``text`` within the limit."""
        if not self.enabled:
            return plans.parse_statement(spark, text)
        digest = _digest(text)
        # A text past the limit before is timed again, not taken from the cache: a
        # slow moment (a cold JVM, a busy machine) must not refuse it for ever.
        known_slow = _known_slow(digest)
        if not known_slow:
            # Parsed before: the answer is at hand, no thread hand-off to time it.
            cached, plan = plans.cached_statement(spark, text)
            if cached:
                return plan
        parse = _timed_uncached if known_slow else _timed
        with _lock:
            may_leave = _abandoned < self.max_abandoned
        if not may_leave:
            # Enough parses are left running: this one keeps its worker until it ends.
            _, elapsed = parse(spark, text)
            _mark_slow(digest, elapsed > self.timeout_s)
            if elapsed > self.timeout_s:
                raise self._error("Spark's parser")
        else:
            # In this statement's context: the parser settings it read are the worker's too.
            future = _parse_pool().submit(contextvars.copy_context().run, parse, spark, text)
            try:
                future.result(timeout=self.timeout_s)
            except FutureTimeout:
                _mark_slow(digest, True)
                self._leave_running(future)
                raise self._error("Spark's parser", left_running=True) from None
            if known_slow:
                _mark_slow(digest, False)
        return plans.parse_statement(spark, text)  # cached by now

    def _leave_running(self, future: Future[_Timed]) -> None:
        global _abandoned
        with _lock:
            _abandoned += 1
            running = _abandoned
        log.warning(
            "Spark's parser ran past %s (%s s): its statement failed, the parse is left to "
            "finish in the JVM (%d left running)",
            options.STATEMENT_PARSE_TIMEOUT.key,
            f"{self.timeout_s:g}",
            running,
        )

        def finished(done: Future[_Timed]) -> None:
            global _abandoned
            with _lock:
                _abandoned -= 1
            if not done.cancelled() and done.exception() is None:
                took = done.result()[1]
                log.info("A Spark parse left running past the limit ended after %.1f s", took)

        future.add_done_callback(finished)


NO_LIMIT = ParseLimit(0)
"""Parses without a time limit (the parsers' own behaviour)."""
