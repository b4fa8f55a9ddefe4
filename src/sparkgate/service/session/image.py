"""A session as data: what makes it again in a new gateway process.

A :class:`SessionImage` holds a session's handle, who opened it and how, the
properties set in it, and its recipe (the statements that made its state in
Spark: current catalog and database, temporary views and connector tables,
functions, variables, jars). A streaming job keeps the image of the session
that submitted it, so that it can be started again after a restart; with
``sql-gateway.session.persistent`` the :class:`SessionStore` keeps every open
session's image, so a client holding a session handle continues after one.

The operations a session had open are kept too, by handle only: after a
restart they answer with an error saying what became of them.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkgate.api.auth import Principal
from sparkgate.api.session import EndpointVersion, SessionEnvironment
from sparkgate.service.session.recipe import SessionRecipe
from sparkgate.service.state import FileRecords, Records, RecordTakenError

__all__ = ["SessionImage", "SessionStore"]

log = logging.getLogger(__name__)

_VERSION = 1


@dataclass
class SessionImage:
    """A session's handle, environment, properties, recipe and open operations."""

    handle: str
    environment: SessionEnvironment
    properties: dict[str, str]
    recipe: SessionRecipe
    created: float
    #: Operation handle -> whether it was still running (True) or had ended.
    operations: dict[str, bool] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        env = self.environment
        principal = env.principal
        return {
            "version": _VERSION,
            "handle": self.handle,
            "session_name": env.session_name,
            "endpoint": None
            if env.endpoint_version is None
            else [env.endpoint_version.endpoint, env.endpoint_version.version],
            "config": dict(env.config),
            "jars": list(env.jars),
            "user": env.user,
            "principal": None
            if principal is None
            else [principal.name, principal.mechanism, principal.admin],
            "client_address": env.client_address,
            "properties": dict(self.properties),
            "recipe": self.recipe.to_json(),
            "created": self.created,
            "operations": dict(self.operations),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionImage:
        endpoint = data.get("endpoint")
        principal = data.get("principal")
        environment = SessionEnvironment(
            session_name=data.get("session_name"),
            endpoint_version=None if not endpoint else EndpointVersion(*endpoint),
            config={str(k): str(v) for k, v in (data.get("config") or {}).items()},
            jars=tuple(str(j) for j in data.get("jars") or ()),
            user=data.get("user"),
            principal=None
            if not principal
            else Principal(str(principal[0]), str(principal[1]), bool(principal[2])),
            client_address=data.get("client_address"),
        )
        return cls(
            handle=str(data["handle"]),
            environment=environment,
            properties={str(k): str(v) for k, v in (data.get("properties") or {}).items()},
            recipe=SessionRecipe.from_json(data.get("recipe") or {}),
            created=float(data.get("created") or 0.0),
            operations={str(k): bool(v) for k, v in (data.get("operations") or {}).items()},
        )


class SessionStore:
    """Session images: one ``<handle hex>.json`` each in a directory, readable by
    the gateway's OS user alone (a session's properties and connector tables may
    hold credentials), or rows of the state database."""

    def __init__(self, records: Path | Records) -> None:
        self.records: Records = (
            FileRecords(records, private=True) if isinstance(records, Path) else records
        )

    def save(self, name: str, image: SessionImage) -> None:
        """Store ``image`` as ``name``; a failure is logged, never raised to the caller,
        but :class:`~sparkgate.service.state.RecordTakenError`: the session is another
        gateway's now."""
        try:
            self.records.put(name, image.to_json())
        except RecordTakenError:
            raise
        except OSError as exc:
            log.warning("Could not store session %s: %s", image.handle, exc)

    def delete(self, name: str) -> None:
        try:
            self.records.delete(name)
        except OSError as exc:
            log.warning("Could not remove session %s: %s", name, exc)

    def discard(self) -> None:
        """Forget the images an earlier run kept in files (sessions are not persistent
        now). Images in a state database belong to the whole service: they stay."""
        if isinstance(self.records, FileRecords):
            shutil.rmtree(self.records.directory, ignore_errors=True)

    def load(self) -> list[SessionImage]:
        """Every readable image (an unreadable one is logged and skipped)."""
        try:
            records = self.records.load()
        except OSError as exc:
            log.error("Could not read the session store: %s", exc)
            return []
        images = []
        for key, text in records:
            try:
                images.append(SessionImage.from_json(json.loads(text)))
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                log.warning(
                    "Skipping unreadable session record %s: %s", self.records.where(key), exc
                )
        return images
