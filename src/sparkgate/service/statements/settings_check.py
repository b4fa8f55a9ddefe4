"""Settings refused as a statement is submitted, not when it runs.

A ``SET`` of a value the gateway's typed option cannot take (an unknown choice,
an unparsable duration or size), and a statement's own options (REST
``executionConfig``, HiveServer2 ``confOverlay``) holding one, are refused
before any operation is made: a 400 (an error status over HiveServer2) naming
the key and what it takes, as the same value is refused at session open. The
statement's run checks again (``Session.set``, ``Session.statement_config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkgate.service.statements.kinds import Set, Statement

if TYPE_CHECKING:
    from sparkgate.service.session.session import Session

__all__ = ["check_overlay", "check_set"]


def check_set(session: Session, statement: Statement) -> None:
    """Refuse a SET the session would refuse when it ran.

    Raises:
        ConfigurationError: naming the key and what it takes.
    """
    if isinstance(statement, Set):
        session.check_setting(statement.key, statement.value)


def check_overlay(session: Session, overlay: Mapping[str, str] | None) -> None:
    """Refuse a statement's own options the session would refuse as SETs.

    Raises:
        ConfigurationError: naming the key and what it takes.
    """
    for key, value in (overlay or {}).items():
        if value == "":
            session.check_settable(key)  # empty: the option's default, as the run reads it
        else:
            session.check_setting(key, value)
