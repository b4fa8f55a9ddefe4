"""The statements that made a session's state, to make it again on a new engine.

A session's properties live in the gateway; the rest of its state lives in its
Spark session and dies with the engine: the current catalog and namespace,
temporary views and functions, session variables, temporary connector tables,
jars. The gateway remembers, for each such object, the last statement that
made it (and forgets it when it is dropped), together with the namespace
statement in force then, so that a temporary view's names resolve as they did.
After an engine death the gateway runs these statements again in a new Spark
session (docs/operations.md, "What survives an engine restart").
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_STEPS", "RecipeStep", "SessionRecipe"]

#: Past this many objects a session's state is not rebuilt (it is lost with its engine).
MAX_STEPS = 1000


@dataclass(frozen=True)
class RecipeStep:
    """One statement to run again, after ``namespace`` (the USE CATALOG and USE in
    force when it ran)."""

    key: str
    text: str
    namespace: tuple[str, ...]


class SessionRecipe:
    """The statements to run again on a new engine, oldest first."""

    def __init__(self) -> None:
        self._catalog: str | None = None
        self._database: str | None = None
        self._steps: OrderedDict[str, RecipeStep] = OrderedDict()
        self._overflowed = False

    def record(self, key: str, text: str) -> None:
        """``text`` made the object ``key``: it replaces what made it before, in place.

        ``catalog`` (USE CATALOG, SET CATALOG) and ``namespace`` (USE) are the
        session's current catalog and namespace: a new catalog's USE drops the
        namespace chosen in the one before.
        """
        if key == "catalog":
            self._catalog, self._database = text, None
            return
        if key == "namespace":
            self._database = text
            return
        if key not in self._steps and len(self._steps) >= MAX_STEPS:
            self._overflowed = True
            return
        self._steps[key] = RecipeStep(key, text, self.namespace)

    def __contains__(self, key: object) -> bool:
        """Whether a statement that made the object ``key`` is kept."""
        return key in self._steps

    def forget(self, key: str) -> None:
        """The object ``key`` was dropped."""
        self._steps.pop(key, None)
        if key.startswith("variable:"):
            self._steps.pop("variable-value:" + key.split(":", 1)[1], None)

    @property
    def namespace(self) -> tuple[str, ...]:
        """The statements that choose the current catalog and namespace."""
        return tuple(text for text in (self._catalog, self._database) if text is not None)

    @property
    def steps(self) -> list[RecipeStep]:
        return list(self._steps.values())

    @property
    def unrebuildable(self) -> str | None:
        """Why this state cannot be made again, or None."""
        if self._overflowed:
            return f"it made more than {MAX_STEPS} temporary objects"
        return None

    def __len__(self) -> int:
        return len(self._steps) + len(self.namespace)

    def to_json(self) -> dict[str, Any]:
        """The recipe as JSON data (a session or a job kept across a restart)."""
        return {
            "catalog": self._catalog,
            "database": self._database,
            "steps": [
                {"key": s.key, "text": s.text, "namespace": list(s.namespace)}
                for s in self._steps.values()
            ],
            "overflowed": self._overflowed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecipe:
        recipe = cls()
        recipe._catalog = data.get("catalog")
        recipe._database = data.get("database")
        for step in data.get("steps") or ():
            key = str(step["key"])
            recipe._steps[key] = RecipeStep(
                key, str(step["text"]), tuple(str(t) for t in step.get("namespace") or ())
            )
        recipe._overflowed = bool(data.get("overflowed"))
        return recipe
