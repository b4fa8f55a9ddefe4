"""The password file: salted PBKDF2-SHA256 hashes, never plain text.

One user per line, ``user:pbkdf2_sha256:<iterations>:<salt hex>:<hash hex>``;
blank lines and ``#`` comments are ignored; the file is written with mode
0600. ``sparkgate user add|passwd|remove|list`` manages the gateway's; run as
a module for any file (the password is read from the terminal, or from stdin
with ``--stdin``)::

    python -m sparkgate.security.passwords FILE add USER
    python -m sparkgate.security.passwords FILE remove USER
"""

from __future__ import annotations

import argparse
import getpass
import hashlib
import hmac
import logging
import os
import secrets
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ALGORITHM",
    "DEFAULT_ITERATIONS",
    "PasswordFile",
    "hash_password",
    "main",
    "users",
    "verify_password",
]

log = logging.getLogger(__name__)

ALGORITHM = "pbkdf2_sha256"
DEFAULT_ITERATIONS = 200_000


def hash_password(password: str, *, iterations: int = DEFAULT_ITERATIONS) -> str:
    """The stored form ``pbkdf2_sha256:<iterations>:<salt>:<hash>`` of a password."""
    salt = secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    return f"{ALGORITHM}:{iterations}:{salt.hex()}:{digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a stored hash (constant-time comparison)."""
    try:
        algorithm, iterations, salt, expected = stored.split(":")
        if algorithm != ALGORITHM:
            return False
        digest = hashlib.pbkdf2_hmac(
            "sha256", password.encode("utf-8"), bytes.fromhex(salt), int(iterations)
        )
        return hmac.compare_digest(digest, bytes.fromhex(expected))
    except ValueError:
        return False


@dataclass(frozen=True)
class _Entry:
    user: str
    stored: str


def _read(path: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, stored = line.partition(":")
        if not sep or not user or stored.count(":") != 3:
            log.warning("%s:%d: not a 'user:%s:...' line; ignored", path, number, ALGORITHM)
            continue
        entries[user] = stored
    return entries


class PasswordFile:
    """Checks user names and passwords; re-reads the file when it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._mtime: float | None = None
        self._entries: dict[str, str] = {}
        self._load()  # fail at start-up, not at the first login

    def _load(self) -> dict[str, str]:
        with self._lock:
            mtime = self.path.stat().st_mtime
            if mtime != self._mtime:
                self._entries = _read(self.path)
                self._mtime = mtime
            return self._entries

    def check(self, user: str, password: str) -> bool:
        try:
            stored = self._load().get(user)
        except OSError:
            log.exception("Cannot read the password file %s", self.path)
            return False
        if stored is None:
            # Spend the same time as a real check, so user names cannot be probed.
            verify_password(password, hash_password("", iterations=DEFAULT_ITERATIONS))
            return False
        return verify_password(password, stored)


def users(path: Path) -> list[str]:
    """The users of the file at ``path`` (none when it does not exist)."""
    return sorted(_read(path)) if path.exists() else []


def _write(path: Path, entries: dict[str, str]) -> None:
    text = "".join(f"{user}:{stored}\n" for user, stored in sorted(entries.items()))
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sparkgate.security.passwords",
        description="Add, replace or remove users of a password file.",
    )
    parser.add_argument("file", type=Path, help="the password file (created if missing)")
    parser.add_argument("action", choices=("add", "remove"))
    parser.add_argument("user")
    parser.add_argument(
        "--stdin", action="store_true", help="read the password from standard input"
    )
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    args = parser.parse_args(argv)
    if ":" in args.user or not args.user.strip():
        parser.error("a user name must be non-empty and must not contain ':'")
    entries = _read(args.file) if args.file.exists() else {}
    if args.action == "remove":
        if entries.pop(args.user, None) is None:
            print(f"no user {args.user!r} in {args.file}", file=sys.stderr)
            return 1
    else:
        if args.stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass(f"Password for {args.user}: ")
        if not password:
            parser.error("the password must not be empty")
        entries[args.user] = hash_password(password, iterations=args.iterations)
    _write(args.file, entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
