"""Compiled plans of the client's machine in gateway mode (FLIP-292).

``COMPILE [AND EXECUTE] PLAN``, ``EXECUTE PLAN`` and ``EXPLAIN PLAN`` name a
plan file. When the gateway is elsewhere, a plain path or ``file:`` URI is a
file of the client's machine: the REST executor puts it in the session (a
session resource the gateway removes when the session ends), sends the
statement naming ``sparkgate-resource:<name>`` instead, and after a COMPILE
writes the compiled plan back to the path.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from sparkgate.api.session import RESOURCE_SCHEME
from sparkgate.sql.lexer import TokenKind, tokenize
from sparkgate.sql.lexer import unquote as unquote_token
from sparkgate.sql.quoting import quote_string

__all__ = ["LocalPlan", "local_plan"]

_FORMS = (
    ("COMPILE", "PLAN"),
    ("COMPILE", "AND", "EXECUTE", "PLAN"),
    ("EXECUTE", "PLAN"),
    ("EXPLAIN", "PLAN"),
)


@dataclass(frozen=True)
class LocalPlan:
    """A plan statement naming a file of this machine."""

    path: Path
    compiles: bool
    statement: str
    """The statement naming the session resource instead of the path."""
    name: str


def _path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return Path(unquote(parsed.path))
    if parsed.scheme == "" or (len(parsed.scheme) == 1 and uri[1:2] == ":"):
        return Path(uri).expanduser()
    return None


def _name(path: Path) -> str:
    """A resource name: the file's name, made unique by its full path."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", path.name).lstrip("._-")[:150] or "plan"
    return f"{digest}-{stem}"


def local_plan(statement: str) -> LocalPlan | None:
    """The plan file of this machine ``statement`` names, if it is a plan
    statement naming one (for EXECUTE / EXPLAIN: a file that is there)."""
    tokens = [t for t in tokenize(statement) if not t.is_comment]
    words = tuple(t.upper for t in tokens[:5])
    for form in _FORMS:
        n = len(form)
        if words[:n] != form or len(tokens) <= n or tokens[n].kind is not TokenKind.STRING:
            continue
        uri_token = tokens[n]
        path = _path(unquote_token(uri_token).strip())
        compiles = form[0] == "COMPILE"
        if path is None or (not compiles and not path.is_file()):
            return None
        path = path.absolute()
        name = _name(path)
        rewritten = (
            statement[: uri_token.start]
            + quote_string(f"{RESOURCE_SCHEME}:{name}")
            + statement[uri_token.end :]
        )
        return LocalPlan(path, compiles, rewritten, name)
    return None
